//! The seen set: a 64-bit fingerprint of every URL ever queued, in memory
//! (8 bytes per URL) and in an append-only file (see the frontier).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, RwLock};

use url::Url;

/// A hasher for keys that are already uniform 64-bit hashes.
#[derive(Debug, Default)]
struct AsIs(u64);

impl Hasher for AsIs {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Every URL's fingerprint ever queued: a sorted array, and a hash set of
/// the latest merged into it when it grows past an eighth of it, so memory
/// is ~8.5 bytes per URL (a hash set alone takes 10-20).
#[derive(Debug, Default)]
struct Fingerprints {
    sorted: Vec<u64>,
    /// Where each run of `sorted` sharing its top bits starts.
    starts: Starts,
    recent: HashSet<u64, BuildHasherDefault<AsIs>>,
}

impl Fingerprints {
    fn contains(&self, fp: u64) -> bool {
        self.recent.contains(&fp) || self.starts.run(&self.sorted, fp).binary_search(&fp).is_ok()
    }

    fn insert(&mut self, fp: u64) {
        if self.contains(fp) {
            return;
        }
        self.recent.insert(fp);
        if self.recent.len() > (self.sorted.len() / 8).max(4096) {
            self.merge();
        }
    }

    /// Merges the recent set into the sorted array from the back, in
    /// place: a second array would double the memory at each merge.
    fn merge(&mut self) {
        let mut recent: Vec<u64> = self.recent.drain().collect();
        recent.sort_unstable();
        let (mut i, mut j) = (self.sorted.len(), recent.len());
        self.sorted.resize(i + j, 0);
        while j > 0 {
            let k = i + j - 1;
            if i > 0 && self.sorted[i - 1] > recent[j - 1] {
                self.sorted[k] = self.sorted[i - 1];
                i -= 1;
            } else {
                self.sorted[k] = recent[j - 1];
                j -= 1;
            }
        }
        self.starts = Starts::of(&self.sorted);
    }

    fn len(&self) -> usize {
        self.sorted.len() + self.recent.len()
    }
}

/// Where the runs of a sorted array of fingerprints that share their top
/// bits start: a lookup reads one run of about [`RUN`] fingerprints, a
/// cache line, where a binary search of the whole array jumped through ~17
/// of them (each link a page has that was not scoped yet is looked up).
/// Fingerprints are SipHashes, so runs are about even. Half a byte per
/// fingerprint.
#[derive(Debug, Default)]
struct Starts {
    /// `at[b]`: the first fingerprint whose top bits are `b` or more; one
    /// more at the end (the array's length).
    at: Vec<u32>,
    /// 64 less the top bits' count.
    shift: u32,
}

/// Fingerprints per run, on average.
const RUN: usize = 8;

impl Starts {
    fn of(sorted: &[u64]) -> Starts {
        let runs = (sorted.len() / RUN).max(1).next_power_of_two();
        let bits = runs.trailing_zeros();
        if bits == 0 || sorted.len() > u32::MAX as usize {
            return Starts::default();
        }
        let shift = 64 - bits;
        let mut at = Vec::with_capacity(runs + 1);
        let mut i = 0;
        for b in 0..runs as u64 {
            while i < sorted.len() && sorted[i] >> shift < b {
                i += 1;
            }
            at.push(i as u32);
        }
        at.push(sorted.len() as u32);
        Starts { at, shift }
    }

    /// The run of `sorted` (the array these starts were made of) that
    /// would hold `fp`.
    fn run<'s>(&self, sorted: &'s [u64], fp: u64) -> &'s [u64] {
        if self.at.is_empty() {
            return sorted;
        }
        let b = (fp >> self.shift) as usize;
        &sorted[self.at[b] as usize..self.at[b + 1] as usize]
    }
}

/// The seen set, shared: see [`Frontier::seen_set`].
#[derive(Debug, Clone, Default)]
pub struct SeenSet(Arc<RwLock<Fingerprints>>);

impl SeenSet {
    pub fn contains(&self, url: &Url) -> bool {
        self.0.read().expect("not poisoned").contains(seen_fp(url))
    }

    /// Replaces the set with `fps` (read from the file, in any order).
    pub(super) fn load(&self, mut fps: Vec<u64>) {
        fps.sort_unstable();
        fps.dedup();
        fps.shrink_to_fit();
        let mut set = self.0.write().expect("not poisoned");
        set.starts = Starts::of(&fps);
        set.sorted = fps;
        set.recent.clear();
    }

    pub(super) fn insert_all(&self, fps: &[u64]) {
        let mut set = self.0.write().expect("not poisoned");
        for &fp in fps {
            set.insert(fp);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.0.read().expect("not poisoned").len()
    }
}

/// The seen set's fingerprint of `url`: its 64-bit SipHash.
///
/// Why not the URL: 8 bytes a URL instead of ~80, on disk and in memory.
/// The price is that a URL whose fingerprint equals an earlier URL's is
/// taken as seen and never fetched: with n URLs, any such pair occurs with
/// probability about n²/2⁶⁵ (3·10⁻⁸ in a crawl of a million URLs, 3·10⁻⁴
/// at 10⁸). Heritrix's seen set is made the same way (64-bit
/// fingerprints, `BdbUriUniqFilter`).
pub(super) fn seen_fp(url: &Url) -> u64 {
    siphasher::sip::SipHasher13::new_with_keys(SEEN_KEY_0, SEEN_KEY_1).hash(url.as_str().as_bytes())
}

/// Fixed SipHash keys: fingerprints are stored, so they must not change
/// between runs or versions.
const SEEN_KEY_0: u64 = 0x6e65_6172_6372_6177; // "nearcraw"
const SEEN_KEY_1: u64 = 0x6c2d_7365_656e_2d31; // "l-seen-1"

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_stay_found_across_merges() {
        let mut f = Fingerprints::default();
        let fp = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for i in 0..50_000 {
            f.insert(fp(i));
            f.insert(fp(i / 2));
        }
        assert_eq!(f.len(), 50_000);
        assert!(f.sorted.len() > 40_000, "merged into the sorted part");
        assert!(f.sorted.windows(2).all(|w| w[0] < w[1]));
        assert!((0..50_000).all(|i| f.contains(fp(i))));
        assert!(!f.contains(fp(50_000)));
        assert!(!f.starts.at.is_empty(), "read by runs");
    }

    #[test]
    fn each_fingerprint_is_found_in_its_run_and_no_other_is() {
        // Uneven as well as even: the ends of the range, a crowd sharing
        // top bits, and runs left empty.
        let mut fps: Vec<u64> = (0..20_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        fps.extend([0, 1, u64::MAX, u64::MAX - 1]);
        fps.extend((0..3_000).map(|i| (7 << 58) | (i * 3)));
        let set = SeenSet::default();
        set.load(fps.clone());
        let f = set.0.read().unwrap();
        assert!(!f.starts.at.is_empty());
        assert!(fps.iter().all(|&fp| f.contains(fp)));
        let absent = (0..20_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1);
        let absent: Vec<u64> = absent
            .chain((0..3_000).map(|i| (7 << 58) | (i * 3 + 1)))
            .collect();
        for fp in absent {
            assert_eq!(
                f.contains(fp),
                f.sorted.binary_search(&fp).is_ok(),
                "{fp:x}"
            );
        }
    }
}
