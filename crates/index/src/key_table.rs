//! An in-memory multimap from 32-bit keys to 32-bit slots: one band of the
//! gate's MinHash LSH, or its title table.
//!
//! Six bytes per entry and nothing else per entry: a merged part in
//! compressed-sparse-row form (the entries of bucket b, by the key's top
//! bits, are at `offsets[b]..offsets[b + 1]`), and a small part of recent
//! inserts in coarser buckets, merged in when it passes an eighth of the
//! whole. A hash map of vectors would cost four to eight times as much.
//!
//! A merged entry keeps the slot and only the low 16 bits of its key: there
//! are at least 2^16 buckets, so the bucket holds the top 16 bits (a fixed
//! 256 KiB of offsets per table, against 2 bytes per entry saved).

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

/// A merged entry: the low 16 bits of its key and its slot, six bytes
/// together, so a probe's key and slot come in one cache miss.
#[derive(Debug, Clone, Copy)]
struct Entry([u8; 6]);

impl Entry {
    fn new(key: u16, slot: u32) -> Entry {
        let (k, s) = (key.to_le_bytes(), slot.to_le_bytes());
        Entry([k[0], k[1], s[0], s[1], s[2], s[3]])
    }

    #[inline]
    fn key(&self) -> u16 {
        u16::from_le_bytes([self.0[0], self.0[1]])
    }

    #[inline]
    fn slot(&self) -> u32 {
        u32::from_le_bytes([self.0[2], self.0[3], self.0[4], self.0[5]])
    }
}

#[derive(Debug)]
pub(crate) struct KeyTable {
    bucket_bits: u32,
    offsets: Vec<u32>,
    /// Grouped by bucket, insertion order within one.
    entries: Vec<Entry>,
    /// `key << 32 | slot`.
    recent: Vec<Vec<u64>>,
    recent_len: usize,
}

impl KeyTable {
    /// A table whose buckets suit `expected` entries (it grows past that).
    pub(crate) fn new(expected: u64) -> KeyTable {
        let bucket_bits = bucket_bits_for(expected);
        KeyTable {
            bucket_bits,
            offsets: vec![0; (1 << bucket_bits) + 1],
            entries: Vec::new(),
            recent: vec![Vec::new(); 1 << (bucket_bits - RECENT_SHIFT)],
            recent_len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len() + self.recent_len
    }

    /// Loads the memory a [`get`](KeyTable::get) of `key` reads. A gate
    /// check looks up one key in each of 16 tables, each a few cache
    /// misses: touching all of them first lets the misses overlap.
    #[inline]
    pub(crate) fn touch(&self, key: u32) -> u64 {
        let run = self.merged_run(key);
        let recent = self.recent_run(key);
        let e = self.entries.get(run.start).map_or(0, |e| e.slot());
        u64::from(e) ^ recent.first().copied().unwrap_or(0)
    }

    /// Appends to `out` the slots held under `key`, earliest first, at most
    /// [`MAX_PER_KEY`].
    pub(crate) fn get(&self, key: u32, out: &mut Vec<u32>) {
        let start = out.len();
        let (low, recent) = (key as u16, self.recent_run(key));
        let run = self.merged_run(key);
        for e in &self.entries[run] {
            if e.key() == low {
                out.push(e.slot());
                if out.len() - start == MAX_PER_KEY {
                    return;
                }
            }
        }
        for &e in recent {
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
        let run = self.merged_run(key);
        let held = self.entries[run]
            .iter()
            .filter(|e| e.key() == key as u16)
            .count()
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
        if self.recent_len > (self.entries.len() / 8).max(MIN_RECENT) {
            self.merge();
        }
        true
    }

    /// Bytes held: entries, bucket offsets, recent buckets.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
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

    /// Folds the recent entries into the merged part, buckets resized for
    /// the new total, by a stable counting sort: within a key, earlier
    /// slots stay first. A merged entry's key is its bucket's bits and the
    /// low 16 it keeps. Peak memory is the old and the new entry arrays.
    fn merge(&mut self) {
        let total = self.len();
        let bits = bucket_bits_for(total as u64).max(self.bucket_bits);
        let old_bits = self.bucket_bits;
        let mut entries: Vec<(u32, u32)> = Vec::with_capacity(total);
        for b in 0..(1usize << old_bits) {
            let high = (b as u32) << (32 - old_bits);
            let run = self.offsets[b] as usize..self.offsets[b + 1] as usize;
            for e in &self.entries[run] {
                entries.push((high | u32::from(e.key()), e.slot()));
            }
        }
        self.entries = Vec::new();
        for &e in self.recent.iter().flatten() {
            entries.push(((e >> 32) as u32, e as u32));
        }
        self.recent = Vec::new();
        let bucket = |key: u32| (key >> (32 - bits)) as usize;
        let mut counts = vec![0u32; (1 << bits) + 1];
        for &(key, _) in &entries {
            counts[bucket(key) + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut merged = vec![Entry([0; 6]); total];
        let mut next = counts.clone();
        for &(key, slot) in &entries {
            let at = &mut next[bucket(key)];
            merged[*at as usize] = Entry::new(key as u16, slot);
            *at += 1;
        }
        self.entries = merged;
        self.offsets = counts;
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
}
