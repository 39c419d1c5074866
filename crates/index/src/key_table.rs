//! An in-memory multimap from 32-bit keys to 32-bit slots: one band of the
//! gate's MinHash LSH, or its title table.
//!
//! About four and a half bytes per entry and nothing else per entry: a
//! merged part in compressed-sparse-row form (the entries of bucket b, by
//! the key's top bits, are at `offsets[b]..offsets[b + 1]`), and a small
//! part of recent inserts in coarser buckets, merged in when it passes an
//! eighth of the whole. A hash map of vectors would cost five to ten times
//! as much.
//!
//! A merged entry is bit-packed: the key's bits below its bucket's (the
//! bucket holds the top ones) and the slot in as many bits as the largest
//! slot needs. With ~16 entries a bucket, those two widths sum to ~36 bits
//! whatever the table's size (2^20 entries: 16 + 20; 2^26: 10 + 26), where
//! whole 16- and 32-bit fields took 48. The bucket offsets are a fixed
//! 256 KiB per table at least.

/// Entries kept per key. A key that many documents share is text that
/// many pages repeat (a template's phrase under both bins of a band); those
/// documents are found through their other bands, and a query reads at
/// most this many per key.
pub(crate) const MAX_PER_KEY: usize = 16;

/// Average merged entries per bucket: a probe reads about two cache lines.
const ENTRIES_PER_BUCKET: u64 = 16;
const MIN_BUCKET_BITS: u32 = 16;
const MAX_BUCKET_BITS: u32 = 26;
/// Recent buckets are 2^RECENT_SHIFT times coarser than merged ones.
const RECENT_SHIFT: u32 = 3;
const MIN_RECENT: usize = 4_096;

/// Merged entries, `key_bits + slot_bits` bits each, little-endian, read
/// with one unaligned 8-byte load (a width is at most 16 + 32 bits, and 7
/// more of offset into the first byte still fit).
#[derive(Debug)]
struct Packed {
    /// Eight bytes of padding at the end, so every load is in bounds.
    bytes: Vec<u8>,
    len: usize,
    key_bits: u32,
    slot_bits: u32,
}

impl Packed {
    fn new(len: usize, key_bits: u32, slot_bits: u32) -> Packed {
        let width = (key_bits + slot_bits) as usize;
        Packed {
            bytes: vec![0; (len * width).div_ceil(8) + 8],
            len,
            key_bits,
            slot_bits,
        }
    }

    #[inline]
    fn width(&self) -> usize {
        (self.key_bits + self.slot_bits) as usize
    }

    /// The bits from bit `bit` on (the entry starting there is in the low
    /// `width` of them).
    #[inline]
    fn load(&self, bit: usize) -> u64 {
        let at = bit / 8;
        let bytes: [u8; 8] = self.bytes[at..at + 8].try_into().expect("8 bytes");
        u64::from_le_bytes(bytes) >> (bit % 8)
    }

    /// The bits of `key` an entry keeps.
    #[inline]
    fn low(&self, key: u32) -> u32 {
        (u64::from(key) & mask(self.key_bits)) as u32
    }

    /// Entry `i`: the key's low `key_bits` and the slot.
    #[inline]
    fn get(&self, i: usize) -> (u32, u32) {
        let w = self.load(i * self.width());
        let key = (w & mask(self.key_bits)) as u32;
        (key, ((w >> self.key_bits) & mask(self.slot_bits)) as u32)
    }

    /// The slots of entries `run` whose key's low bits are `low`, in order.
    #[inline]
    fn slots_of(&self, run: std::ops::Range<usize>, low: u32) -> impl Iterator<Item = u32> + '_ {
        let (width, key_mask, slot_mask) =
            (self.width(), mask(self.key_bits), mask(self.slot_bits));
        run.filter_map(move |i| {
            let w = self.load(i * width);
            ((w & key_mask) as u32 == low).then(|| ((w >> self.key_bits) & slot_mask) as u32)
        })
    }

    /// Writes entry `i` (still zero) from a whole key and its slot.
    fn set(&mut self, i: usize, key: u32, slot: u32) {
        debug_assert!(u64::from(slot) <= mask(self.slot_bits));
        let bit = i * self.width();
        let value = u64::from(self.low(key)) | u64::from(slot) << self.key_bits;
        let at = bit / 8;
        let mut bytes: [u8; 8] = self.bytes[at..at + 8].try_into().expect("8 bytes");
        bytes = (u64::from_le_bytes(bytes) | value << (bit % 8)).to_le_bytes();
        self.bytes[at..at + 8].copy_from_slice(&bytes);
    }
}

fn mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

#[derive(Debug)]
pub(crate) struct KeyTable {
    bucket_bits: u32,
    offsets: Vec<u32>,
    /// Grouped by bucket, insertion order within one.
    merged: Packed,
    /// `key << 32 | slot`.
    recent: Vec<Vec<u64>>,
    recent_len: usize,
    /// The largest slot inserted: sizes the merged slots.
    max_slot: u32,
}

impl KeyTable {
    /// A table whose buckets suit `expected` entries (it grows past that).
    pub(crate) fn new(expected: u64) -> KeyTable {
        let bucket_bits = bucket_bits_for(expected);
        KeyTable {
            bucket_bits,
            offsets: vec![0; (1 << bucket_bits) + 1],
            merged: Packed::new(0, 32 - bucket_bits, 1),
            recent: vec![Vec::new(); 1 << (bucket_bits - RECENT_SHIFT)],
            recent_len: 0,
            max_slot: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.merged.len + self.recent_len
    }

    /// Loads the memory a [`get`](KeyTable::get) of `key` reads. A gate
    /// check looks up one key in each of 16 tables, each a few cache
    /// misses: touching all of them first lets the misses overlap.
    #[inline]
    pub(crate) fn touch(&self, key: u32) -> u64 {
        let run = self.merged_run(key);
        let recent = self.recent_run(key);
        let e = if run.is_empty() {
            0
        } else {
            self.merged.load(run.start * self.merged.width())
        };
        e ^ recent.first().copied().unwrap_or(0)
    }

    /// Appends to `out` the slots held under `key`, earliest first, at most
    /// [`MAX_PER_KEY`].
    pub(crate) fn get(&self, key: u32, out: &mut Vec<u32>) {
        let start = out.len();
        let low = self.merged.low(key);
        for slot in self.merged.slots_of(self.merged_run(key), low) {
            out.push(slot);
            if out.len() - start == MAX_PER_KEY {
                return;
            }
        }
        for &e in self.recent_run(key) {
            if (e >> 32) as u32 == key {
                out.push(e as u32);
                if out.len() - start == MAX_PER_KEY {
                    return;
                }
            }
        }
    }

    /// Adds `slot` under `key` unless the key already holds
    /// [`MAX_PER_KEY`] slots. Returns whether it was added.
    pub(crate) fn insert(&mut self, key: u32, slot: u32) -> bool {
        let low = self.merged.low(key);
        let held = self.merged.slots_of(self.merged_run(key), low).count()
            + self
                .recent_run(key)
                .iter()
                .filter(|&&e| (e >> 32) as u32 == key)
                .count();
        if held >= MAX_PER_KEY {
            return false;
        }
        let r = self.bucket(key) >> RECENT_SHIFT;
        self.recent[r].push(u64::from(key) << 32 | u64::from(slot));
        self.recent_len += 1;
        self.max_slot = self.max_slot.max(slot);
        if self.recent_len > (self.merged.len / 8).max(MIN_RECENT) {
            self.merge();
        }
        true
    }

    /// Bytes held: entries, bucket offsets, recent buckets.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.merged.bytes.capacity()
            + self.offsets.capacity() * 4
            + self
                .recent
                .iter()
                .map(|r| r.capacity() * 8 + 24)
                .sum::<usize>()
    }

    fn bucket(&self, key: u32) -> usize {
        (key >> (32 - self.bucket_bits)) as usize
    }

    fn merged_run(&self, key: u32) -> std::ops::Range<usize> {
        let b = self.bucket(key);
        self.offsets[b] as usize..self.offsets[b + 1] as usize
    }

    fn recent_run(&self, key: u32) -> &[u64] {
        &self.recent[self.bucket(key) >> RECENT_SHIFT]
    }

    /// Every entry as (key, slot): the merged part bucket by bucket, then
    /// the recent one, each in insertion order.
    fn for_each(&self, mut f: impl FnMut(u32, u32)) {
        for b in 0..(1usize << self.bucket_bits) {
            let high = (b as u32) << (32 - self.bucket_bits);
            for i in self.offsets[b] as usize..self.offsets[b + 1] as usize {
                let (low, slot) = self.merged.get(i);
                f(high | low, slot);
            }
        }
        for &e in self.recent.iter().flatten() {
            f((e >> 32) as u32, e as u32);
        }
    }

    /// Folds the recent entries into the merged part, buckets resized for
    /// the new total and slots for the largest, by a stable counting sort
    /// (two passes: count, then place): within a key, earlier slots stay
    /// first. Peak memory is the old and the new packed arrays.
    fn merge(&mut self) {
        let total = self.len();
        let bits = bucket_bits_for(total as u64).max(self.bucket_bits);
        let bucket = |key: u32| (key >> (32 - bits)) as usize;
        let mut offsets = vec![0u32; (1 << bits) + 1];
        self.for_each(|key, _| offsets[bucket(key) + 1] += 1);
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let slot_bits = 32 - self.max_slot.leading_zeros().min(31);
        let mut merged = Packed::new(total, 32 - bits, slot_bits);
        let mut next = offsets.clone();
        self.for_each(|key, slot| {
            let at = &mut next[bucket(key)];
            merged.set(*at as usize, key, slot);
            *at += 1;
        });
        self.merged = merged;
        self.offsets = offsets;
        self.bucket_bits = bits;
        self.recent = vec![Vec::new(); 1 << (bits - RECENT_SHIFT)];
        self.recent_len = 0;
    }
}

fn bucket_bits_for(entries: u64) -> u32 {
    let buckets = (entries / ENTRIES_PER_BUCKET).max(1);
    (64 - buckets.leading_zeros()).clamp(MIN_BUCKET_BITS, MAX_BUCKET_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_simhash::hash::fmix64;

    #[test]
    fn finds_every_slot_of_a_key_in_order_across_merges() {
        let mut t = KeyTable::new(10);
        let key = |i: u32| fmix64(u64::from(i % 5_000)) as u32;
        for slot in 0..30_000u32 {
            t.insert(key(slot), slot);
        }
        assert_eq!(t.len(), 30_000);
        for i in [0u32, 17, 4_999] {
            let mut out = Vec::new();
            t.get(key(i), &mut out);
            let want: Vec<u32> = (0..6).map(|j| i + 5_000 * j).collect();
            assert_eq!(out, want);
        }
        let mut out = Vec::new();
        t.get(12345, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_key_holds_at_most_max_per_key() {
        let mut t = KeyTable::new(0);
        let added = (0..100).filter(|&s| t.insert(7, s)).count();
        assert_eq!(added, MAX_PER_KEY);
        let mut out = Vec::new();
        t.get(7, &mut out);
        assert_eq!(out, (0..MAX_PER_KEY as u32).collect::<Vec<_>>());
    }

    /// Past 2^20 entries the buckets split and the slots widen: every key
    /// still gives its slots, in order, as a plain map of vectors does.
    #[test]
    fn agrees_with_a_map_as_buckets_split_and_slots_widen() {
        let mut t = KeyTable::new(0);
        let mut model: std::collections::HashMap<u32, Vec<u32>> = Default::default();
        let n = 1_300_000u64;
        for i in 0..n {
            // Keys repeat, one past MAX_PER_KEY; slots jump
            // to 32 bits halfway.
            let key = if i % 1_000 == 0 {
                7
            } else {
                fmix64(i % 400_000) as u32
            };
            let slot = if i < n / 2 {
                i as u32
            } else {
                (i as u32) | 0x8000_0000
            };
            let slots = model.entry(key).or_default();
            assert_eq!(t.insert(key, slot), slots.len() < MAX_PER_KEY);
            if slots.len() < MAX_PER_KEY {
                slots.push(slot);
            }
        }
        assert!(t.bucket_bits > MIN_BUCKET_BITS, "{}", t.bucket_bits);
        assert_eq!(t.merged.slot_bits, 32);
        for i in (0..400_000u64).step_by(97).chain([399_999]) {
            let key = if i == 0 { 7 } else { fmix64(i) as u32 };
            let mut out = Vec::new();
            t.get(key, &mut out);
            assert_eq!(out, model.get(&key).cloned().unwrap_or_default());
            let mut missing = Vec::new();
            t.get(key ^ 1, &mut missing);
            assert_eq!(missing, model.get(&(key ^ 1)).cloned().unwrap_or_default());
        }
    }
}
