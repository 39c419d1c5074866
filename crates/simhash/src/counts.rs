//! Per-document feature counts for sublinear tf weighting.

/// An open-addressing table of feature hash -> occurrences, reused across
/// documents.
///
/// Hand-written rather than a `HashMap` because it is on the per-token hot
/// path: keys are already finalized hashes (their low bits index the table
/// directly), nothing is ever removed, and clearing touches only the slots
/// the last document used.
#[derive(Debug, Clone)]
pub(crate) struct FeatureCounts {
    keys: Vec<u64>,
    /// 0 marks an empty slot.
    counts: Vec<u32>,
    used: Vec<u32>,
}

impl FeatureCounts {
    pub(crate) fn new() -> Self {
        Self::with_slots(1024)
    }

    /// A table with no slots, as a placeholder while one is borrowed out.
    pub(crate) fn empty() -> Self {
        FeatureCounts {
            keys: Vec::new(),
            counts: Vec::new(),
            used: Vec::new(),
        }
    }

    fn with_slots(slots: usize) -> Self {
        FeatureCounts {
            keys: vec![0; slots],
            counts: vec![0; slots],
            used: Vec::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        for &i in &self.used {
            self.counts[i as usize] = 0;
        }
        self.used.clear();
    }

    #[inline]
    pub(crate) fn add(&mut self, key: u64) {
        // Keep the load at or under one half.
        if self.used.len() * 2 >= self.keys.len() {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = key as usize & mask;
        loop {
            if self.counts[i] == 0 {
                self.keys[i] = key;
                self.counts[i] = 1;
                self.used.push(i as u32);
                return;
            }
            if self.keys[i] == key {
                self.counts[i] += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let mut bigger = Self::with_slots((self.keys.len() * 2).max(1024));
        for &i in &self.used {
            let (key, count) = (self.keys[i as usize], self.counts[i as usize]);
            bigger.add(key);
            let j = *bigger.used.last().unwrap() as usize;
            bigger.counts[j] = count;
        }
        *self = bigger;
    }

    /// Every distinct key with its count, in first-seen order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.used
            .iter()
            .map(|&i| (self.keys[i as usize], self.counts[i as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_a_hashmap_through_growth_and_reuse() {
        let mut t = FeatureCounts::with_slots(4);
        for round in 0..3u64 {
            t.clear();
            let mut want = std::collections::HashMap::new();
            for i in 0..5000u64 {
                // Colliding low bits on purpose: multiples of 1024.
                let k = (i % 700) * 1024 + round;
                t.add(k);
                *want.entry(k).or_insert(0u32) += 1;
            }
            let got: std::collections::HashMap<u64, u32> = t.iter().collect();
            assert_eq!(got, want);
        }
    }
}
