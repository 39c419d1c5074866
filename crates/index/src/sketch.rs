//! One-permutation MinHash sketches: a small, fixed-size summary of a
//! document's shingle set whose agreement estimates Jaccard similarity.

/// Bins of a sketch.
pub const SKETCH_BINS: usize = 128;
const EMPTY: u16 = u16::MAX;
const BIN_SHIFT: u32 = 64 - SKETCH_BINS.trailing_zeros();

/// 128 one-permutation MinHash values of 16 bits: 256 bytes per document.
///
/// Each feature hash goes to the bin named by its top 7 bits; a bin keeps
/// the smallest remaining value seen, and stores its low 16 bits (b-bit
/// MinHash: two different minima agree by chance 1 time in 65,536). One
/// hash per feature instead of 128, so sketching costs about as much as
/// reading the features.
#[derive(Clone, PartialEq, Eq)]
pub struct Sketch {
    values: [u16; SKETCH_BINS],
}

impl std::fmt::Debug for Sketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let filled = self.values.iter().filter(|&&v| v != EMPTY).count();
        write!(f, "Sketch({filled}/{SKETCH_BINS} bins filled)")
    }
}

/// Builds a [`Sketch`] from feature hashes (well-mixed 64-bit values).
#[derive(Debug, Clone)]
pub struct SketchBuilder {
    mins: [u64; SKETCH_BINS],
}

impl Default for SketchBuilder {
    fn default() -> Self {
        SketchBuilder {
            mins: [u64::MAX; SKETCH_BINS],
        }
    }
}

impl SketchBuilder {
    #[inline]
    pub fn add(&mut self, h: u64) {
        let bin = (h >> BIN_SHIFT) as usize;
        let rest = h & (u64::MAX >> (64 - BIN_SHIFT));
        self.mins[bin] = self.mins[bin].min(rest);
    }

    pub fn finish(&self) -> Sketch {
        let mut values = [EMPTY; SKETCH_BINS];
        for (v, &m) in values.iter_mut().zip(&self.mins) {
            if m != u64::MAX {
                // Keep EMPTY for empty bins only.
                *v = (m as u16).min(EMPTY - 1);
            }
        }
        Sketch { values }
    }
}

impl Sketch {
    /// The sketch of a set of feature hashes.
    pub fn of(features: impl IntoIterator<Item = u64>) -> Sketch {
        let mut b = SketchBuilder::default();
        features.into_iter().for_each(|h| b.add(h));
        b.finish()
    }

    /// Estimated Jaccard similarity of the two feature sets: agreeing bins
    /// over bins that are filled in either sketch (0 when both are empty).
    pub fn similarity(&self, other: &Sketch) -> f32 {
        let mut agree = 0u32;
        let mut either = 0u32;
        for (&a, &b) in self.values.iter().zip(&other.values) {
            let any = a != EMPTY || b != EMPTY;
            either += u32::from(any);
            agree += u32::from(any && a == b);
        }
        if either == 0 {
            0.0
        } else {
            agree as f32 / either as f32
        }
    }

    pub fn to_bytes(&self) -> [u8; SKETCH_BINS * 2] {
        let mut out = [0u8; SKETCH_BINS * 2];
        for (chunk, v) in out.chunks_exact_mut(2).zip(&self.values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Sketch> {
        if bytes.len() != SKETCH_BINS * 2 {
            return None;
        }
        let mut values = [EMPTY; SKETCH_BINS];
        for (v, chunk) in values.iter_mut().zip(bytes.chunks_exact(2)) {
            *v = u16::from_le_bytes([chunk[0], chunk[1]]);
        }
        Some(Sketch { values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_simhash::hash::fmix64;

    fn set(range: std::ops::Range<u64>) -> Sketch {
        Sketch::of(range.map(fmix64))
    }

    #[test]
    fn estimates_jaccard() {
        let a = set(0..1000);
        assert_eq!(a.similarity(&a), 1.0);
        // |A∩B| = 500, |A∪B| = 1500: J = 1/3.
        let j = a.similarity(&set(500..1500));
        assert!((j - 1.0 / 3.0).abs() < 0.12, "{j}");
        let j = a.similarity(&set(100..1000));
        assert!((j - 0.9).abs() < 0.08, "{j}");
        assert!(a.similarity(&set(5000..6000)) < 0.05);
    }

    #[test]
    fn empty_and_small_sets() {
        let empty = Sketch::of([]);
        assert_eq!(empty.similarity(&empty), 0.0);
        assert_eq!(empty.similarity(&set(0..10)), 0.0);
        assert_eq!(set(0..3).similarity(&set(0..3)), 1.0);
    }

    #[test]
    fn bytes_round_trip() {
        let a = set(0..300);
        assert_eq!(Sketch::from_bytes(&a.to_bytes()), Some(a));
        assert_eq!(Sketch::from_bytes(&[1, 2, 3]), None);
    }
}
