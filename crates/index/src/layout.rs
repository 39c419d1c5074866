//! How the 64 bits are cut into blocks and which blocks key each table.
//!
//! Two fingerprints within Hamming distance k differ in at most k of b
//! blocks, so they agree exactly on at least b - k blocks (pigeonhole). One
//! table per choice of b - k blocks, keyed on those blocks, finds every such
//! pair: C(b, k) tables. More blocks mean longer keys, so fewer candidates
//! per probe, but more tables (memory, probes). Manku, Jain and Das Sarma,
//! "Detecting near-duplicates for web crawling", WWW 2007.

use std::fmt;

/// Most tables a layout may have unless k leaves no other choice: each
/// table holds every fingerprint once (8 bytes), and the index aims at
/// under 100 bytes of RAM per fingerprint.
const MAX_TABLES: usize = 10;
/// Largest bucket array per table, in bits: 2^20 buckets of 24-byte headers
/// is 24 MiB a table.
const MAX_BUCKET_BITS: u32 = 20;
/// Rough costs for choosing a layout: a probe is a cache miss on the
/// bucket, a candidate a sequential XOR and popcount.
const PROBE_NS: f64 = 100.0;
const CANDIDATE_NS: f64 = 0.5;

/// A band layout: the block cuts and the tables keyed on them.
#[derive(Clone, PartialEq, Eq)]
pub struct Layout {
    k: u32,
    /// (shift, width) of each block, from the low bits up.
    blocks: Vec<(u32, u32)>,
    tables: Vec<TableKey>,
    bucket_bits: u32,
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct TableKey {
    /// Indices into `blocks`, low to high.
    blocks: Vec<usize>,
    key_bits: u32,
}

impl Layout {
    /// The layout with the lowest estimated query cost for distance `k` at
    /// `capacity` fingerprints, within the table budget.
    pub fn choose(k: u32, capacity: u64) -> Layout {
        assert!(k < 64, "k must be below 64");
        let mut best: Option<(f64, Layout)> = None;
        for b in k + 1..=(k + 8).min(64) {
            if b > k + 1 && choose_count(u64::from(b), u64::from(k)) > 1000 {
                break;
            }
            let layout = Layout::with_blocks(k, b, capacity);
            let fits = layout.tables.len() <= MAX_TABLES;
            let cost = layout.estimated_query_ns(capacity);
            let better = match &best {
                None => true,
                Some((c, l)) => {
                    let best_fits = l.tables.len() <= MAX_TABLES;
                    if fits != best_fits {
                        fits
                    } else if fits {
                        cost < *c
                    } else {
                        // Nothing fits the budget: fewest tables.
                        layout.tables.len() < l.tables.len()
                    }
                }
            };
            if better {
                best = Some((cost, layout));
            }
        }
        best.expect("at least one block count").1
    }

    /// The layout with `b` blocks (k < b <= 64), bucket arrays sized for
    /// `capacity`.
    pub fn with_blocks(k: u32, b: u32, capacity: u64) -> Layout {
        assert!(k < b && b <= 64, "need k < b <= 64 (k={k}, b={b})");
        // The first 64 % b blocks are one bit wider.
        let mut blocks = Vec::with_capacity(b as usize);
        let mut shift = 0;
        for i in 0..b {
            let width = 64 / b + u32::from(i < 64 % b);
            blocks.push((shift, width));
            shift += width;
        }
        let tables: Vec<TableKey> = combinations(b as usize, (b - k) as usize)
            .into_iter()
            .map(|c| TableKey {
                key_bits: c.iter().map(|&i| blocks[i].1).sum(),
                blocks: c,
            })
            .collect();
        let wanted = (64 - capacity.max(1).leading_zeros())
            .saturating_sub(2)
            .max(8);
        let bucket_bits = wanted.min(MAX_BUCKET_BITS);
        Layout {
            k,
            blocks,
            tables,
            bucket_bits,
        }
    }

    /// The distance this layout finds every match within.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// How many blocks the 64 bits are cut into.
    pub fn blocks(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// How many tables (copies of each fingerprint) the layout keeps.
    pub fn tables(&self) -> usize {
        self.tables.len()
    }

    /// Bits of the bucket index of table `t`.
    pub(crate) fn bucket_bits(&self, t: usize) -> u32 {
        self.tables[t].key_bits.min(self.bucket_bits)
    }

    /// Candidates one query scans, on average, among `n` random
    /// fingerprints: every fingerprint in the probed bucket of each table.
    pub fn expected_candidates(&self, n: u64) -> f64 {
        (0..self.tables.len())
            .map(|t| n as f64 / (1u64 << self.bucket_bits(t)) as f64)
            .sum()
    }

    fn estimated_query_ns(&self, n: u64) -> f64 {
        self.tables.len() as f64 * PROBE_NS + self.expected_candidates(n) * CANDIDATE_NS
    }

    /// The bucket of `fp` in table `t`: the table's key blocks gathered into
    /// one number, cut to the bucket bits.
    #[inline]
    pub(crate) fn bucket(&self, t: usize, fp: u64) -> usize {
        let table = &self.tables[t];
        let mut key = 0u64;
        for &i in &table.blocks {
            let (shift, width) = self.blocks[i];
            let block = (fp >> shift) & (u64::MAX >> (64 - width));
            key = key.checked_shl(width).unwrap_or(0) | block;
        }
        (key >> (table.key_bits - self.bucket_bits(t))) as usize
    }

    /// Stored form: k, block count and bucket bits, each as one byte after
    /// a format tag.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        vec![
            b'L',
            1,
            self.k as u8,
            self.blocks.len() as u8,
            self.bucket_bits as u8,
        ]
    }

    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Layout> {
        match bytes {
            [b'L', 1, k, b, bits] if k < b && *b <= 64 => {
                let mut l = Layout::with_blocks(u32::from(*k), u32::from(*b), 1);
                l.bucket_bits = u32::from(*bits).min(MAX_BUCKET_BITS);
                Some(l)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "k={}: {} blocks, {} tables, {}-bit buckets",
            self.k,
            self.blocks.len(),
            self.tables.len(),
            self.bucket_bits
        )
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// C(n, r), saturating.
fn choose_count(n: u64, r: u64) -> u64 {
    let r = r.min(n - r);
    (0..r).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Every way to pick `r` of `n` indices, each in increasing order.
fn combinations(n: usize, r: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(r);
    fn rec(start: usize, n: usize, r: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == r {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            if n - i < r - cur.len() {
                break;
            }
            cur.push(i);
            rec(i + 1, n, r, cur, out);
            cur.pop();
        }
    }
    rec(0, n, r, &mut cur, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_all_64_bits() {
        for b in 1..=64 {
            let l = Layout::with_blocks(0, b, 1000);
            let total: u32 = l.blocks.iter().map(|b| b.1).sum();
            assert_eq!(total, 64);
            assert_eq!(l.blocks.last().map(|b| b.0 + b.1), Some(64));
        }
    }

    #[test]
    fn table_counts_are_binomials() {
        assert_eq!(Layout::with_blocks(3, 4, 1).tables(), 4);
        assert_eq!(Layout::with_blocks(3, 5, 1).tables(), 10);
        assert_eq!(Layout::with_blocks(3, 6, 1).tables(), 20);
        assert_eq!(choose_count(6, 3), 20);
        assert_eq!(choose_count(64, 1), 64);
    }

    #[test]
    fn choice_follows_capacity() {
        // k=3: four 16-bit bands up to tens of millions, then 5 blocks.
        assert_eq!(Layout::choose(3, 10_000_000).blocks(), 4);
        assert_eq!(Layout::choose(3, 1_000_000_000).blocks(), 5);
        assert_eq!(Layout::choose(0, 1000).tables(), 1);
        for k in 0..=12 {
            let l = Layout::choose(k, 1_000_000);
            assert_eq!(l.k(), k);
            assert!(l.tables() <= MAX_TABLES || l.blocks() == k + 1, "{l}");
        }
    }

    #[test]
    fn buckets_stay_in_range() {
        for (k, b) in [(0, 1), (3, 4), (3, 5), (6, 7), (10, 11)] {
            let l = Layout::with_blocks(k, b, 1 << 24);
            for t in 0..l.tables() {
                for fp in [0, u64::MAX, 0x0123_4567_89ab_cdef] {
                    assert!(l.bucket(t, fp) < 1 << l.bucket_bits(t));
                }
            }
        }
    }

    #[test]
    fn stored_form_round_trips() {
        let l = Layout::choose(5, 5_000_000);
        assert_eq!(Layout::from_bytes(&l.to_bytes()), Some(l));
        assert_eq!(Layout::from_bytes(b"junk"), None);
        assert_eq!(Layout::from_bytes(&[b'L', 1, 9, 4, 16]), None);
    }
}
