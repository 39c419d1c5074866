//! Per-bit vote counting: the inner loop of simhash.
//!
//! Both counters are branch-free per bit. [`UnitVotes`] counts one vote per
//! feature occurrence with SWAR byte counters (eight 64-bit adds per feature
//! instead of 64 adds); [`WeightedVotes`] adds a signed weight per bit.

/// Counts, per bit, how many features had that bit set; every feature weighs 1.
#[derive(Debug, Clone)]
pub(crate) struct UnitVotes {
    /// `lanes[j]` holds eight byte counters, for bits `j, j+8, ..., j+56`.
    lanes: [u64; 8],
    pending: u32,
    ones: [u32; 64],
    total: u32,
}

const LOW_BIT_OF_EACH_BYTE: u64 = 0x0101_0101_0101_0101;

impl UnitVotes {
    pub(crate) fn new() -> Self {
        UnitVotes {
            lanes: [0; 8],
            pending: 0,
            ones: [0; 64],
            total: 0,
        }
    }

    #[inline]
    pub(crate) fn add(&mut self, h: u64) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += (h >> j) & LOW_BIT_OF_EACH_BYTE;
        }
        self.pending += 1;
        // A byte counter holds 255 before it would carry into its neighbour.
        if self.pending == 255 {
            self.spill();
        }
    }

    /// Adds every hash of `hs`; the same as calling [`add`](Self::add) on
    /// each, with the counters kept in registers across the batch.
    pub(crate) fn add_all(&mut self, hs: &[u64]) {
        let mut lanes = self.lanes;
        for &h in hs {
            for (j, lane) in lanes.iter_mut().enumerate() {
                *lane += (h >> j) & LOW_BIT_OF_EACH_BYTE;
            }
            self.pending += 1;
            if self.pending == 255 {
                self.lanes = lanes;
                self.spill();
                lanes = [0; 8];
            }
        }
        self.lanes = lanes;
    }

    fn spill(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for byte in 0..8 {
                self.ones[byte * 8 + j] += ((*lane >> (8 * byte)) & 0xff) as u32;
            }
            *lane = 0;
        }
        self.total += self.pending;
        self.pending = 0;
    }

    /// Bit i is 1 when more than half of the features had it set (the vote
    /// sum is > 0; a tie gives 0).
    pub(crate) fn finish(&mut self) -> u64 {
        self.spill();
        let mut out = 0u64;
        for (i, &ones) in self.ones.iter().enumerate() {
            out |= u64::from(2 * ones > self.total) << i;
        }
        out
    }
}

/// Sums a signed weight per bit: +w where the feature has a 1, -w for a 0.
#[derive(Debug, Clone)]
pub(crate) struct WeightedVotes {
    sums: [f32; 64],
}

impl WeightedVotes {
    pub(crate) fn new() -> Self {
        WeightedVotes { sums: [0.0; 64] }
    }

    /// Adds the votes of the features counted by `unit`, each with `weight`.
    pub(crate) fn add_unit(&mut self, unit: &mut UnitVotes, weight: f32) {
        unit.spill();
        if unit.total == 0 {
            return;
        }
        for (s, &ones) in self.sums.iter_mut().zip(&unit.ones) {
            *s += (2 * i64::from(ones) - i64::from(unit.total)) as f32 * weight;
        }
    }

    #[inline]
    pub(crate) fn add(&mut self, h: u64, weight: f32) {
        for (i, s) in self.sums.iter_mut().enumerate() {
            // (bit * 2 - 1) is +1 or -1: no branch.
            let sign = ((h >> i) & 1) as f32 * 2.0 - 1.0;
            *s += sign * weight;
        }
    }

    /// Bit i is 1 only when its sum is > 0.
    pub(crate) fn finish(&self) -> u64 {
        let mut out = 0u64;
        for (i, &s) in self.sums.iter().enumerate() {
            out |= u64::from(s > 0.0) << i;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain definition: per bit, +1 for a one and -1 for a zero.
    fn reference(hs: &[u64]) -> u64 {
        let mut out = 0;
        for i in 0..64 {
            let sum: i64 = hs
                .iter()
                .map(|h| if h >> i & 1 == 1 { 1 } else { -1 })
                .sum();
            if sum > 0 {
                out |= 1 << i;
            }
        }
        out
    }

    #[test]
    fn unit_votes_match_reference_across_spills() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in [0usize, 1, 2, 3, 254, 255, 256, 1000, 5000] {
            let hs: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                })
                .collect();
            let mut v = UnitVotes::new();
            hs.iter().for_each(|&h| v.add(h));
            assert_eq!(v.finish(), reference(&hs), "n={n}");
            let mut batched = UnitVotes::new();
            hs.chunks(100).for_each(|c| batched.add_all(c));
            assert_eq!(batched.finish(), reference(&hs), "batched n={n}");
            let mut w = WeightedVotes::new();
            hs.iter().for_each(|&h| w.add(h, 1.0));
            assert_eq!(w.finish(), reference(&hs), "weighted n={n}");
        }
    }

    #[test]
    fn unit_votes_fold_into_weighted() {
        let hs = [0xf0f0u64, 0xff00, 0x0ff0, u64::MAX];
        let mut unit = UnitVotes::new();
        hs[..3].iter().for_each(|&h| unit.add(h));
        let mut w = WeightedVotes::new();
        w.add(hs[3], 1.5);
        w.add_unit(&mut unit, 1.0);
        let mut plain = WeightedVotes::new();
        hs[..3].iter().for_each(|&h| plain.add(h, 1.0));
        plain.add(hs[3], 1.5);
        assert_eq!(w.finish(), plain.finish());
    }

    #[test]
    fn ties_give_zero() {
        let mut v = UnitVotes::new();
        v.add(u64::MAX);
        v.add(0);
        assert_eq!(v.finish(), 0);
        let mut w = WeightedVotes::new();
        w.add(u64::MAX, 2.0);
        w.add(0, 2.0);
        assert_eq!(w.finish(), 0);
    }
}
