//! One-permutation MinHash sketches: a small, fixed-size summary of a
//! document's shingle set whose agreement estimates Jaccard similarity.

/// Bins of a sketch.
pub const SKETCH_BINS: usize = 128;
const EMPTY: u16 = u16::MAX;
const BIN_SHIFT: u32 = 64 - SKETCH_BINS.trailing_zeros();
/// Mixes the bits of a band key, one to one: tables bucket keys by their top
/// bits, and a bin whose minimum is a phrase many pages share would
/// otherwise put all those pages in one bucket.
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// LSH bands of a sketch ([`Sketch::band_keys`]), two bins each.
pub const BANDS: usize = 16;
/// Bins kept at 16 bits when stored: the bands' (two sketches' 16-bit
/// minima agree by chance 1 time in 65,536, which keeps band keys apart).
const WIDE_BINS: usize = 2 * BANDS;
/// Bits the other bins keep (b-bit minwise hashing, Li and König, WWW
/// 2010): two different minima then agree by chance 1 time in 63, which
/// [`Sketch::similarity`] takes out again.
const NARROW_BITS: u32 = 6;
/// Bytes of a stored sketch: 64 for the band bins, 72 for the 96 others (4
/// to 3 bytes), against 256 for every bin's 16 bits.
pub const SKETCH_BYTES: usize =
    WIDE_BINS * 2 + (SKETCH_BINS - WIDE_BINS) * NARROW_BITS as usize / 8;
/// The stored form of earlier versions with 8-bit narrow bins.
const BYTE_SKETCH_BYTES: usize = WIDE_BINS * 2 + (SKETCH_BINS - WIDE_BINS);
const NARROW_EMPTY: u8 = (1 << NARROW_BITS) - 1;
/// An empty 8-bit bin of earlier versions.
const BYTE_EMPTY: u8 = u8::MAX;

/// A bin's value as stored in [`NARROW_BITS`]; `NARROW_EMPTY` only for an
/// empty bin.
fn narrow(v: u16) -> u8 {
    if v == EMPTY {
        NARROW_EMPTY
    } else {
        (v as u8 & NARROW_EMPTY).min(NARROW_EMPTY - 1)
    }
}

/// A narrow bin's value as a sketch holds it.
fn widen(b: u8) -> u16 {
    if b == NARROW_EMPTY {
        EMPTY
    } else {
        u16::from(b)
    }
}

use nearcrawl_simhash::hash::fmix64;

/// 128 one-permutation MinHash values: the 32 of the LSH bands with 16
/// bits, the others with 6; [`SKETCH_BYTES`] per document.
///
/// Each feature hash goes to the bin named by its top 7 bits; a bin keeps
/// the smallest remaining value seen, and stores its low bits (b-bit
/// MinHash: two different minima agree by chance 1 time in 65,536 or 63,
/// see [`NARROW_BITS`]). One
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
        for (i, (v, &m)) in values.iter_mut().zip(&self.mins).enumerate() {
            if m != u64::MAX {
                // Keep EMPTY for empty bins only.
                let full = (m as u16).min(EMPTY - 1);
                *v = if i < WIDE_BINS {
                    full
                } else {
                    widen(narrow(full))
                };
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
    ///
    /// Two different minima agree in a narrow bin 1 time in 63, so of the
    /// narrow bins filled in both, the agreeing ones hold about one chance
    /// agreement for every 62 that disagree: those are taken out, and an
    /// unrelated pair reads 0, not 0.012.
    pub fn similarity(&self, other: &Sketch) -> f32 {
        let mut either = 0u32;
        let mut agree = [0u32; 2];
        let mut disagree = 0u32;
        for (i, (&a, &b)) in self.values.iter().zip(&other.values).enumerate() {
            let any = a != EMPTY || b != EMPTY;
            let narrow = usize::from(i >= WIDE_BINS);
            either += u32::from(any);
            agree[narrow] += u32::from(any && a == b);
            disagree += u32::from(narrow == 1 && a != EMPTY && b != EMPTY && a != b);
        }
        if either == 0 {
            return 0.0;
        }
        let chance = disagree as f32 / ((1u32 << NARROW_BITS) - 2) as f32;
        let narrow = (agree[1] as f32 - chance).max(0.0);
        (agree[0] as f32 + narrow) / either as f32
    }

    /// Of `bins` (bit i for bin i) that are filled in `other`, the share
    /// where this sketch holds the same value, chance agreements of narrow
    /// bins taken out as in [`similarity`](Sketch::similarity); and how
    /// many bins that is. A bin agrees when the smallest shingle of `other`
    /// there is this text's smallest too: over the bins whose smallest
    /// shingle is of one part of `other`, it estimates the share of that
    /// part this text holds, less what its own shingles push out (a text
    /// holding all of `other` and a tenth more reads 0.9).
    pub(crate) fn share_held(&self, other: &Sketch, bins: u128) -> (f32, u32) {
        let mut filled = 0u32;
        let mut agree = [0u32; 2];
        let mut disagree = 0u32;
        for (i, (&a, &b)) in self.values.iter().zip(&other.values).enumerate() {
            if bins >> i & 1 == 0 || b == EMPTY {
                continue;
            }
            let narrow = usize::from(i >= WIDE_BINS);
            filled += 1;
            agree[narrow] += u32::from(a == b);
            disagree += u32::from(narrow == 1 && a != EMPTY && a != b);
        }
        if filled == 0 {
            return (0.0, 0);
        }
        let chance = disagree as f32 / ((1u32 << NARROW_BITS) - 2) as f32;
        let narrow = (agree[1] as f32 - chance).max(0.0);
        ((agree[0] as f32 + narrow) / filled as f32, filled)
    }

    /// The bins where the two sketches hold the same value (bit i for bin
    /// i): where, but for chance, their texts hold the same shingle.
    pub(crate) fn agreeing_bins(&self, other: &Sketch) -> u128 {
        self.values
            .iter()
            .zip(&other.values)
            .enumerate()
            .filter(|(_, (a, b))| **a != EMPTY && a == b)
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    /// The sketch's LSH band keys: band b is bins 2b and 2b + 1 side by
    /// side, so two sketches share it with probability about J² (J their
    /// Jaccard similarity), and share at least one of [`BANDS`] with
    /// probability 1 - (1 - J²)^BANDS: 0.990 at J = 0.5, 0.29 at J = 0.15.
    /// `None` for an empty sketch.
    ///
    /// Empty bins (texts of fewer features than bins) borrow the value of
    /// a bin chosen by a probe sequence that depends on the bin only
    /// (optimal densification, Shrivastava, ICML 2017): two sketches with
    /// the same empty bin follow the same sequence, so the collision
    /// probability stays J.
    pub fn band_keys(&self) -> Option<[u32; BANDS]> {
        if self.values.iter().all(|&v| v == EMPTY) {
            return None;
        }
        let value = |bin: usize| -> u32 {
            let mut v = self.values[bin];
            let mut attempt = 0u64;
            while v == EMPTY {
                attempt += 1;
                let probe = fmix64((bin as u64) << 32 | attempt) >> BIN_SHIFT;
                v = self.values[probe as usize];
            }
            u32::from(v)
        };
        let mut keys = [0u32; BANDS];
        for (b, key) in keys.iter_mut().enumerate() {
            *key = fmix32(value(2 * b) << 16 | value(2 * b + 1));
        }
        Some(keys)
    }

    /// The stored form, [`SKETCH_BYTES`] long: the band bins' 16 bits, then
    /// the other bins' low [`NARROW_BITS`], four to three bytes.
    pub fn to_bytes(&self) -> [u8; SKETCH_BYTES] {
        let mut out = [0u8; SKETCH_BYTES];
        let (wide, narrow_out) = out.split_at_mut(WIDE_BINS * 2);
        for (chunk, v) in wide.chunks_exact_mut(2).zip(&self.values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        let narrow_bins = self.values[WIDE_BINS..].chunks_exact(4);
        for (three, four) in narrow_out.chunks_exact_mut(3).zip(narrow_bins) {
            let packed = four
                .iter()
                .rev()
                .fold(0u32, |p, &v| p << NARROW_BITS | u32::from(narrow(v)));
            three.copy_from_slice(&packed.to_le_bytes()[..3]);
        }
        out
    }

    /// Reads [`to_bytes`](Sketch::to_bytes), or the forms of earlier
    /// versions: 256 bytes (every bin's 16 bits) or 160 (8-bit narrow
    /// bins), whose narrow bins are cut to this version's width.
    pub fn from_bytes(bytes: &[u8]) -> Option<Sketch> {
        let mut values = [EMPTY; SKETCH_BINS];
        // Every form starts with the band bins' 16 bits.
        let (wide, rest) = bytes.split_at_checked(WIDE_BINS * 2)?;
        for (v, chunk) in values.iter_mut().zip(wide.chunks_exact(2)) {
            *v = u16::from_le_bytes([chunk[0], chunk[1]]);
        }
        let narrow_values = &mut values[WIDE_BINS..];
        match bytes.len() {
            SKETCH_BYTES => {
                for (four, three) in narrow_values.chunks_exact_mut(4).zip(rest.chunks_exact(3)) {
                    let packed = u32::from_le_bytes([three[0], three[1], three[2], 0]);
                    for (k, v) in four.iter_mut().enumerate() {
                        *v = widen((packed >> (NARROW_BITS * k as u32)) as u8 & NARROW_EMPTY);
                    }
                }
            }
            BYTE_SKETCH_BYTES => {
                for (v, &b) in narrow_values.iter_mut().zip(rest) {
                    *v = if b == BYTE_EMPTY {
                        EMPTY
                    } else {
                        widen(narrow(b.into()))
                    };
                }
            }
            len if len == SKETCH_BINS * 2 => {
                for (v, chunk) in narrow_values.iter_mut().zip(rest.chunks_exact(2)) {
                    *v = widen(narrow(u16::from_le_bytes([chunk[0], chunk[1]])));
                }
            }
            _ => return None,
        }
        Some(Sketch { values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn chance_agreements_of_narrow_bins_are_taken_out() {
        // Mean over many pairs, so the sampling noise (±0.044 a pair at
        // J = 0.5) averages out and a bias of a chance agreement in 63
        // narrow bins (+0.012 unrelated, +0.006 at J = 0.5) would show.
        let (mut unrelated, mut half, pairs) = (0.0, 0.0, 400u64);
        for p in 0..pairs {
            let base = p * 100_000;
            let a = set(base..base + 900);
            unrelated += f64::from(a.similarity(&set(base + 50_000..base + 50_900)));
            // |A∩B| = 600, |A∪B| = 1200.
            half += f64::from(a.similarity(&set(base + 300..base + 900 + 300)));
        }
        let (unrelated, half) = (unrelated / pairs as f64, half / pairs as f64);
        assert!(unrelated < 0.004, "unrelated pairs read {unrelated}");
        assert!((half - 0.5).abs() < 0.005, "pairs at J = 0.5 read {half}");
    }

    #[test]
    fn share_held_reads_the_bins_asked() {
        // Other: a part of 300 shingles shared with this text, a part of
        // 300 its own; this text holds the first part and 30 more.
        let other = set(0..600);
        let this = Sketch::of((0..300).chain(10_000..10_030).map(fmix64));
        let first_part = Sketch::of((0..300).map(fmix64));
        let own = !first_part.agreeing_bins(&other);
        let (all, n) = this.share_held(&other, u128::MAX);
        assert!(n > 120, "{n}");
        assert!((all - 300.0 / 630.0).abs() < 0.1, "{all}");
        let (held, _) = this.share_held(&first_part, !own);
        assert!(held > 0.8, "{held}");
        let (held, n) = this.share_held(&other, own);
        assert!(held < 0.05 && n > 40, "{held} over {n}");
    }

    #[test]
    fn empty_and_small_sets() {
        let empty = Sketch::of([]);
        assert_eq!(empty.similarity(&empty), 0.0);
        assert_eq!(empty.similarity(&set(0..10)), 0.0);
        assert_eq!(set(0..3).similarity(&set(0..3)), 1.0);
    }

    #[test]
    fn band_keys_collide_as_the_sets_overlap() {
        let shared = |a: &Sketch, b: &Sketch| {
            let (a, b) = (a.band_keys().unwrap(), b.band_keys().unwrap());
            a.iter().zip(&b).filter(|(x, y)| x == y).count()
        };
        // Many pairs at J = 0.6 (|A∩B| = 750 of |A∪B| = 1250): about
        // J² = 0.36 of the bands agree.
        let (mut agree, pairs) = (0, 200u64);
        for p in 0..pairs {
            let base = p * 10_000;
            agree += shared(&set(base..base + 1000), &set(base + 250..base + 1250));
        }
        let rate = agree as f64 / (pairs as f64 * BANDS as f64);
        assert!((rate - 0.36).abs() < 0.05, "{rate}");
        // Unrelated sets share none; a small set's empty bins are filled.
        assert_eq!(shared(&set(0..1000), &set(50_000..51_000)), 0);
        assert_eq!(shared(&set(0..5), &set(0..5)), BANDS);
        assert_eq!(Sketch::of([]).band_keys(), None);
    }

    #[test]
    fn bytes_round_trip_as_alike_as_the_sketch() {
        for a in [set(0..300), set(0..5), set(0..1)] {
            let stored = Sketch::from_bytes(&a.to_bytes()).unwrap();
            assert_eq!(stored.to_bytes(), a.to_bytes());
            assert_eq!(stored.band_keys(), a.band_keys());
            let b = set(100..400);
            assert_eq!(stored.similarity(&b), a.similarity(&b));
            assert_eq!(stored.similarity(&a), 1.0);
        }
        // The 256-byte form of earlier versions: all bins with 16 bits.
        let mut b = SketchBuilder::default();
        (0..300).for_each(|i| b.add(fmix64(i)));
        let mut old = Vec::new();
        for &m in &b.mins {
            let v = if m == u64::MAX {
                EMPTY
            } else {
                (m as u16).min(EMPTY - 1)
            };
            old.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(Sketch::from_bytes(&old), Some(set(0..300)));
        // The 160-byte form of earlier versions: narrow bins with 8 bits.
        let mut bytes8 = old[..WIDE_BINS * 2].to_vec();
        for chunk in old.chunks_exact(2).skip(WIDE_BINS) {
            let v = u16::from_le_bytes([chunk[0], chunk[1]]);
            bytes8.push(if v == EMPTY {
                BYTE_EMPTY
            } else {
                (v as u8).min(BYTE_EMPTY - 1)
            });
        }
        assert_eq!(bytes8.len(), BYTE_SKETCH_BYTES);
        assert_eq!(Sketch::from_bytes(&bytes8), Some(set(0..300)));
        assert_eq!(Sketch::from_bytes(&[1, 2, 3]), None);
    }
}
