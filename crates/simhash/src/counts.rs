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
    /// (key, count); count 0 marks an empty slot. Only the first `active`
    /// slots are in use: a small document keeps its table small (and in L1
    /// cache) even after a large one has grown the allocation.
    slots: Vec<(u64, u32)>,
    active: usize,
    /// Indices of the occupied slots, in first-seen order; room for every
    /// slot that may fill before the table grows, so an insert can write its
    /// index unconditionally. Clearing and iterating touch only these.
    used: Vec<u32>,
    len: usize,
}

/// The table grows at one half full.
const MAX_LOAD_DIVISOR: usize = 2;
const MIN_SLOTS: usize = 64;
/// Slots kept allocated between documents at most (1 MiB): a table grown
/// for one huge document (a million-word index page took 19 MB) is let go
/// rather than kept by every pooled fingerprinter for the rest of a crawl.
const KEEP_SLOTS: usize = 1 << 16;

impl FeatureCounts {
    pub(crate) fn new() -> Self {
        FeatureCounts {
            slots: Vec::new(),
            active: 0,
            used: Vec::new(),
            len: 0,
        }
    }

    /// Empties the table and sizes it for about `expected` distinct keys.
    pub(crate) fn reset(&mut self, expected: usize) {
        let active = (expected * MAX_LOAD_DIVISOR)
            .next_power_of_two()
            .max(MIN_SLOTS);
        if self.slots.len() > KEEP_SLOTS.max(active) {
            *self = FeatureCounts::new();
        }
        for &i in &self.used[..self.len] {
            self.slots[i as usize].1 = 0;
        }
        self.len = 0;
        self.resize_active(active);
    }

    /// Makes `active` slots (a power of two) usable; they must be empty.
    fn resize_active(&mut self, active: usize) {
        if self.slots.len() < active {
            self.slots.resize(active, (0, 0));
            self.used.resize(active / MAX_LOAD_DIVISOR + 1, 0);
        }
        self.active = active;
    }

    /// Counts one occurrence of each key.
    pub(crate) fn add_all(&mut self, mut keys: &[u64]) {
        while !keys.is_empty() {
            // Each key adds at most one distinct key, so this many keys
            // cannot overfill the table.
            let room = self.active / MAX_LOAD_DIVISOR - self.len;
            if room == 0 {
                self.grow();
                continue;
            }
            let (now, later) = keys.split_at(keys.len().min(room));
            self.len = insert(
                &mut self.slots[..self.active],
                &mut self.used,
                self.len,
                now,
            );
            keys = later;
        }
    }

    /// Doubles the active slots and re-inserts, keeping first-seen order.
    fn grow(&mut self) {
        let entries: Vec<(u64, u32)> = self.iter().collect();
        for &i in &self.used[..self.len] {
            self.slots[i as usize].1 = 0;
        }
        self.len = 0;
        self.resize_active((self.active * 2).max(MIN_SLOTS));
        let mask = self.active - 1;
        for (key, count) in entries {
            let mut i = key as usize & mask;
            while self.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (key, count);
            self.used[self.len] = i as u32;
            self.len += 1;
        }
    }

    /// Every distinct key with its count, in first-seen order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.used[..self.len]
            .iter()
            .map(|&i| self.slots[i as usize])
    }
}

/// Counts `keys` into `slots` (a power of two long, with room for them
/// all), noting each new key's slot in `used`; returns the new number of
/// distinct keys.
///
/// A free function over slices, not a method: the compiler then knows the
/// slot stores cannot touch `used` or the counters, and keeps those in
/// registers across the loop instead of reloading them after every store.
#[inline]
fn insert(slots: &mut [(u64, u32)], used: &mut [u32], mut len: usize, keys: &[u64]) -> usize {
    let mask = slots.len() - 1;
    for &key in keys {
        let mut i = key as usize & mask;
        // One exit test for "empty" and "found": zero when the count is
        // (empty) or the keys agree (found). Two tests compile to two
        // branches, and which one exits is a coin toss; this one branch
        // rarely goes round.
        while (slots[i].0 ^ key).min(u64::from(slots[i].1)) != 0 {
            i = (i + 1) & mask;
        }
        // New or seen before, without a branch on which: whether a feature
        // repeats is a coin toss the branch predictor cannot learn.
        let slot = &mut slots[i];
        let is_new = slot.1 == 0;
        slot.0 = key;
        slot.1 += 1;
        used[len] = i as u32;
        len += usize::from(is_new);
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_grown_for_a_huge_document_is_let_go() {
        let mut t = FeatureCounts::new();
        t.reset(0);
        for k in 0..(KEEP_SLOTS as u64) {
            t.add_all(&[k * 7919]);
        }
        assert!(t.slots.len() > KEEP_SLOTS);
        t.reset(100);
        assert!(t.slots.len() <= KEEP_SLOTS);
        t.add_all(&[5]);
        assert_eq!(t.iter().collect::<Vec<_>>(), [(5, 1)]);
    }

    #[test]
    fn counts_match_a_hashmap_through_growth_and_reuse() {
        let mut t = FeatureCounts::new();
        for round in 0..3u64 {
            t.reset(round as usize * 10);
            let mut want = std::collections::HashMap::new();
            // Colliding low bits on purpose: multiples of 1024.
            let keys: Vec<u64> = (0..5000u64).map(|i| (i % 700) * 1024 + round).collect();
            for &k in &keys {
                *want.entry(k).or_insert(0u32) += 1;
            }
            // Batches of several sizes, so the table grows inside a batch.
            for batch in keys.chunks(1 + round as usize * 150) {
                t.add_all(batch);
            }
            let got: std::collections::HashMap<u64, u32> = t.iter().collect();
            assert_eq!(got, want);
        }
    }
}
