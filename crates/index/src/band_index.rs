//! The band index: in-memory band tables over a durable sled log.

use std::collections::HashMap;
use std::path::Path;

use fnv::FnvBuildHasher;
use nearcrawl_simhash::Fingerprint;

use crate::error::IndexError;
use crate::layout::Layout;

/// What an index is asked to find, and for how many fingerprints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexConfig {
    /// Find every earlier fingerprint within this Hamming distance.
    pub k: u32,
    /// How many fingerprints the index is expected to hold; picks the layout.
    pub capacity: u64,
    /// Force a block count instead of choosing one from `capacity`.
    pub blocks: Option<u32>,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            k: 3,
            capacity: 10_000_000,
            blocks: None,
        }
    }
}

/// An earlier fingerprint found near the one asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    /// The earliest document inserted with that fingerprint.
    pub doc: u64,
    pub fingerprint: Fingerprint,
    pub distance: u32,
}

/// Up to this many tables, a query touches all its buckets before scanning.
const MAX_PREFETCH_TABLES: usize = 8;

/// Entries per log record written at a flush; larger flushes are split.
const RECORD_ENTRIES: usize = 65_536;

/// Finds, among the fingerprints inserted so far, all within distance k of
/// a query.
///
/// Storage: sled holds the durable log of (fingerprint, document) entries,
/// packed many to a record (one sled key per flush, not per fingerprint:
/// a key costs about 140 bytes on disk); the band tables live in memory and
/// are rebuilt from the log at open. Each table keeps every fingerprint in
/// the bucket of its key blocks, so a query reads one bucket per table and
/// checks each fingerprint there with one XOR and popcount.
///
/// A fingerprint inserted again (by a later document) keeps its first
/// document: matches name the earliest.
#[derive(Debug)]
pub struct BandIndex {
    layout: Layout,
    tables: Vec<Table>,
    /// Documents of the fingerprints in the tables' merged parts, parallel
    /// to `tables[0].fps`.
    merged_docs: Vec<u64>,
    /// Documents of the fingerprints not merged yet.
    recent_docs: HashMap<u64, u64, FnvBuildHasher>,
    db: sled::Db,
    log: sled::Tree,
    /// Entries inserted since the last flush, encoded as in the log.
    pending: RecordWriter,
    next_record: u64,
}

/// One band table: a merged part in compressed-sparse-row form (the
/// fingerprints of bucket b are `fps[offsets[b]..offsets[b + 1]]`, one
/// contiguous run per probe) and a small part of recent inserts, bucketed
/// coarser, merged in when it grows past a sixteenth of the whole.
#[derive(Debug)]
struct Table {
    bucket_bits: u32,
    offsets: Vec<u32>,
    fps: Vec<u64>,
    recent_bits: u32,
    recent: Vec<Vec<u64>>,
}

impl Table {
    fn new(bucket_bits: u32) -> Self {
        let recent_bits = bucket_bits.saturating_sub(4).max(1);
        Table {
            bucket_bits,
            offsets: vec![0; (1 << bucket_bits) + 1],
            fps: Vec::new(),
            recent_bits,
            recent: vec![Vec::new(); 1 << recent_bits],
        }
    }

    #[inline]
    fn merged(&self, bucket: usize) -> &[u64] {
        &self.fps[self.offsets[bucket] as usize..self.offsets[bucket + 1] as usize]
    }

    #[inline]
    fn recent(&self, bucket: usize) -> &[u64] {
        &self.recent[bucket >> (self.bucket_bits - self.recent_bits)]
    }

    fn push_recent(&mut self, bucket: usize, fp: u64) {
        let shift = self.bucket_bits - self.recent_bits;
        self.recent[bucket >> shift].push(fp);
    }

    /// Rebuilds the merged part from `entries` in order, `bucket` giving
    /// each fingerprint's bucket, by counting sort: stable, so bucket runs
    /// keep insertion order. Buckets are computed twice rather than stored:
    /// a few shifts each, against 4 bytes per entry of peak memory.
    fn build(&mut self, entries: &[(u64, u64)], bucket: impl Fn(u64) -> usize) {
        self.fps = Vec::new();
        for r in &mut self.recent {
            *r = Vec::new();
        }
        let mut counts = vec![0u32; (1 << self.bucket_bits) + 1];
        for &(fp, _) in entries {
            counts[bucket(fp) + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut fps = vec![0u64; entries.len()];
        let mut next = counts.clone();
        for &(fp, _) in entries {
            let slot = &mut next[bucket(fp)];
            fps[*slot as usize] = fp;
            *slot += 1;
        }
        self.offsets = counts;
        self.fps = fps;
    }

    fn recent_len(&self) -> usize {
        self.recent.iter().map(Vec::len).sum()
    }
}

impl BandIndex {
    /// Opens (or creates) an index in its own sled database at `path`.
    pub fn open(path: impl AsRef<Path>, config: IndexConfig) -> Result<Self, IndexError> {
        let db = crate::store::open_db(path.as_ref())?;
        Self::open_in(&db, "simhash", config)
    }

    /// Opens (or creates) an index in trees named after `name` of an open
    /// sled database, beside other state of the caller's.
    pub fn open_in(db: &sled::Db, name: &str, config: IndexConfig) -> Result<Self, IndexError> {
        let meta = db.open_tree(format!("{name}.meta"))?;
        let log = db.open_tree(format!("{name}.log"))?;
        let wanted = match config.blocks {
            Some(b) if b <= config.k || b > 64 => {
                return Err(IndexError::Config(format!(
                    "blocks must be above k={} and at most 64, got {b}",
                    config.k
                )));
            }
            Some(b) => Layout::with_blocks(config.k, b, config.capacity),
            None if config.k >= 64 => {
                return Err(IndexError::Config(format!(
                    "k must be below 64, got {}",
                    config.k
                )));
            }
            None => Layout::choose(config.k, config.capacity),
        };
        let layout = match meta.get("layout")? {
            None => {
                meta.insert("layout", wanted.to_bytes())?;
                wanted
            }
            Some(bytes) => {
                let stored = Layout::from_bytes(&bytes).ok_or_else(|| {
                    IndexError::Corrupt(format!("unreadable layout record {bytes:?}"))
                })?;
                let blocks_differ = config.blocks.is_some_and(|b| b != stored.blocks());
                if stored.k() != config.k || blocks_differ {
                    return Err(IndexError::LayoutMismatch {
                        stored: stored.to_string(),
                        requested: wanted.to_string(),
                    });
                }
                stored
            }
        };
        let mut index = BandIndex {
            tables: (0..layout.tables())
                .map(|t| Table::new(layout.bucket_bits(t)))
                .collect(),
            layout,
            merged_docs: Vec::new(),
            recent_docs: HashMap::default(),
            db: db.clone(),
            log,
            pending: RecordWriter::default(),
            next_record: 0,
        };
        index.replay()?;
        Ok(index)
    }

    /// Rebuilds the tables from the log: every entry read once, duplicates
    /// of a fingerprint dropped (the first document wins), then each table
    /// built by counting sort, one thread per core.
    fn replay(&mut self) -> Result<(), IndexError> {
        let mut entries: Vec<(u64, u64)> = Vec::new();
        for record in self.log.iter() {
            let (key, value) = record?;
            let key: [u8; 8] = key
                .as_ref()
                .try_into()
                .map_err(|_| IndexError::Corrupt(format!("log key {key:?} is not 8 bytes")))?;
            self.next_record = u64::from_be_bytes(key) + 1;
            decode_record(&value, &mut entries)
                .ok_or_else(|| IndexError::Corrupt(format!("log record {key:?} is truncated")))?;
        }
        // The writer never logs a fingerprint twice, but a log is input:
        // drop repeats, keeping the first. Sorting (fingerprint, position)
        // pairs by value keeps the first of each run first.
        let mut sorted: Vec<(u64, u32)> = entries
            .iter()
            .enumerate()
            .map(|(i, &(fp, _))| (fp, i as u32))
            .collect();
        sorted.sort_unstable();
        let repeats: Vec<u32> = sorted
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| w[1].1)
            .collect();
        drop(sorted);
        if !repeats.is_empty() {
            let mut keep = vec![true; entries.len()];
            for i in repeats {
                keep[i as usize] = false;
            }
            let mut i = 0;
            entries.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        self.rebuild(entries);
        Ok(())
    }

    /// Makes `entries` (in insertion order, distinct fingerprints) the whole
    /// merged part of every table.
    fn rebuild(&mut self, entries: Vec<(u64, u64)>) {
        let layout = &self.layout;
        let tables = &mut self.tables;
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(tables.len())
            .max(1);
        let per_thread = tables.len().div_ceil(threads);
        std::thread::scope(|s| {
            let mut first = 0;
            for chunk in tables.chunks_mut(per_thread) {
                let entries = &entries;
                let start = first;
                first += chunk.len();
                s.spawn(move || {
                    for (j, table) in chunk.iter_mut().enumerate() {
                        let t = start + j;
                        table.build(entries, |fp| layout.bucket(t, fp));
                    }
                });
            }
        });
        // Table 0's runs hold fingerprints in insertion order within each
        // bucket; lay the documents out the same way.
        let t0 = &self.tables[0];
        let mut next: Vec<u32> = t0.offsets.clone();
        let mut docs = vec![0u64; entries.len()];
        for &(fp, doc) in &entries {
            let slot = &mut next[layout.bucket(0, fp)];
            docs[*slot as usize] = doc;
            *slot += 1;
        }
        self.merged_docs = docs;
        self.recent_docs = HashMap::default();
    }

    /// Folds the recent inserts into the merged parts.
    fn merge_recent(&mut self) {
        let t0 = &self.tables[0];
        let mut entries: Vec<(u64, u64)> = Vec::with_capacity(self.len());
        // Merged entries keep their order; recent ones follow in no
        // particular order (a bucket's run order is not part of any answer).
        for (i, &fp) in t0.fps.iter().enumerate() {
            entries.push((fp, self.merged_docs[i]));
        }
        for bucket in &t0.recent {
            for &fp in bucket {
                entries.push((fp, self.recent_docs[&fp]));
            }
        }
        // Free the old arrays before the new ones are built.
        self.merged_docs = Vec::new();
        self.rebuild(entries);
    }

    /// The layout in use (stored with the index at creation).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The distance the index answers for.
    pub fn k(&self) -> u32 {
        self.layout.k()
    }

    /// Distinct fingerprints held.
    pub fn len(&self) -> usize {
        self.merged_docs.len() + self.recent_docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The document recorded for `fp`, if the index holds it exactly.
    /// The document held for a fingerprint, if any (the earliest inserted).
    pub fn doc_of(&self, fp: u64) -> Option<u64> {
        if let Some(&d) = self.recent_docs.get(&fp) {
            return Some(d);
        }
        let t0 = &self.tables[0];
        let b = self.layout.bucket(0, fp);
        let start = t0.offsets[b] as usize;
        t0.merged(b)
            .iter()
            .position(|&c| c == fp)
            .map(|i| self.merged_docs[start + i])
    }

    /// Records `fp` for `doc`. Returns false, and keeps the earlier document,
    /// if the same fingerprint is already held. Durable after [`flush`].
    ///
    /// [`flush`]: BandIndex::flush
    pub fn insert(&mut self, fp: Fingerprint, doc: u64) -> bool {
        if self.doc_of(fp.0).is_some() {
            return false;
        }
        for (t, table) in self.tables.iter_mut().enumerate() {
            table.push_recent(self.layout.bucket(t, fp.0), fp.0);
        }
        self.recent_docs.insert(fp.0, doc);
        self.pending.push(fp.0, doc);
        if self.recent_docs.len() > (self.merged_docs.len() / 16).max(65_536) {
            self.merge_recent();
        }
        true
    }

    /// Every held fingerprint within distance k of `fp`, closest first (then
    /// earliest document).
    pub fn query(&self, fp: Fingerprint) -> Vec<Match> {
        let k = self.layout.k();
        let mut runs: [&[u64]; 2 * MAX_PREFETCH_TABLES] = [&[]; 2 * MAX_PREFETCH_TABLES];
        let mut found: Vec<u64> = Vec::new();
        let mut scan = |run: &[u64]| {
            for &c in run {
                if (c ^ fp.0).count_ones() <= k {
                    found.push(c);
                }
            }
        };
        if self.tables.len() <= MAX_PREFETCH_TABLES {
            // Touch one word per cache line of every run before scanning
            // any: the loads are independent, so the memory system fetches
            // the lines of all tables at once instead of table by table.
            let mut touch = 0u64;
            for (t, table) in self.tables.iter().enumerate() {
                let b = self.layout.bucket(t, fp.0);
                runs[2 * t] = table.merged(b);
                runs[2 * t + 1] = table.recent(b);
            }
            for run in &runs {
                for &c in run.iter().step_by(8) {
                    touch = touch.wrapping_add(c);
                }
            }
            std::hint::black_box(touch);
            for run in &runs {
                scan(run);
            }
        } else {
            for (t, table) in self.tables.iter().enumerate() {
                let b = self.layout.bucket(t, fp.0);
                scan(table.merged(b));
                scan(table.recent(b));
            }
        }
        if found.is_empty() {
            return Vec::new();
        }
        // A match within k shows up in every table whose key blocks it
        // shares.
        found.sort_unstable();
        found.dedup();
        let mut matches: Vec<Match> = found
            .into_iter()
            .map(|c| Match {
                doc: self.doc_of(c).expect("every table entry has a document"),
                fingerprint: Fingerprint(c),
                distance: (c ^ fp.0).count_ones(),
            })
            .collect();
        matches.sort_by_key(|m| (m.distance, m.doc));
        matches
    }

    /// The crawler's question, answered and recorded in one step: the
    /// closest earlier match (earliest document on ties), or `None` after
    /// recording `fp` for `doc`.
    pub fn check_insert(&mut self, fp: Fingerprint, doc: u64) -> Option<Match> {
        match self.query(fp).into_iter().next() {
            Some(m) => Some(m),
            None => {
                self.insert(fp, doc);
                None
            }
        }
    }

    /// Writes every insert since the last flush to the log and waits for
    /// the disk: after it returns, a crash loses none of them.
    pub fn flush(&mut self) -> Result<(), IndexError> {
        for record in self.pending.take_records() {
            self.log.insert(self.next_record.to_be_bytes(), record)?;
            self.next_record += 1;
        }
        self.db.flush()?;
        Ok(())
    }

    /// Bytes of fingerprint data held in memory: table entries, bucket
    /// offsets and the document lists.
    pub fn memory_bytes(&self) -> usize {
        let tables: usize = self
            .tables
            .iter()
            .map(|t| {
                t.fps.capacity() * 8
                    + t.offsets.capacity() * 4
                    + t.recent
                        .iter()
                        .map(|r| r.capacity() * 8 + 24)
                        .sum::<usize>()
            })
            .sum();
        tables + self.merged_docs.capacity() * 8 + self.recent_docs.capacity() * 17
    }

    /// Fingerprints waiting to be merged into the tables' sorted parts.
    #[doc(hidden)]
    pub fn recent_len(&self) -> usize {
        self.tables[0].recent_len()
    }
}

impl Drop for BandIndex {
    fn drop(&mut self) {
        // Best effort; callers who need durability call flush() and see
        // its errors.
        let _ = self.flush();
    }
}

/// Log records: per entry, the fingerprint (8 bytes, little-endian), then
/// the document as a zigzag varint of its difference from the previous
/// entry's document: about 9 bytes per entry when documents are numbered in
/// order, instead of 16.
#[derive(Debug, Default)]
struct RecordWriter {
    records: Vec<Vec<u8>>,
    entries_in_last: usize,
    prev_doc: u64,
}

impl RecordWriter {
    fn push(&mut self, fp: u64, doc: u64) {
        if self.records.is_empty() || self.entries_in_last == RECORD_ENTRIES {
            self.records.push(Vec::new());
            self.entries_in_last = 0;
            self.prev_doc = 0;
        }
        let out = self.records.last_mut().unwrap();
        out.extend_from_slice(&fp.to_le_bytes());
        let delta = doc.wrapping_sub(self.prev_doc) as i64;
        let mut z = ((delta << 1) ^ (delta >> 63)) as u64;
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
        self.prev_doc = doc;
        self.entries_in_last += 1;
    }

    fn take_records(&mut self) -> Vec<Vec<u8>> {
        self.entries_in_last = 0;
        std::mem::take(&mut self.records)
    }
}

/// Every (fingerprint, document) entry of the log of the index named
/// `name` in `db`, in insertion order (for converting older gate state).
pub(crate) fn log_entries(db: &sled::Db, name: &str) -> Result<Vec<(u64, u64)>, IndexError> {
    let mut entries = Vec::new();
    for record in db.open_tree(format!("{name}.log"))?.iter() {
        let (key, value) = record?;
        decode_record(&value, &mut entries)
            .ok_or_else(|| IndexError::Corrupt(format!("log record {key:?} is truncated")))?;
    }
    Ok(entries)
}

/// Appends the entries of one record; `None` if it is cut short.
fn decode_record(bytes: &[u8], out: &mut Vec<(u64, u64)>) -> Option<()> {
    let mut i = 0;
    let mut prev = 0u64;
    while i < bytes.len() {
        let fp = u64::from_le_bytes(bytes.get(i..i + 8)?.try_into().ok()?);
        i += 8;
        let mut z = 0u64;
        let mut shift = 0;
        loop {
            let b = *bytes.get(i)?;
            i += 1;
            if shift > 63 {
                return None;
            }
            z |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let delta = ((z >> 1) as i64) ^ -((z & 1) as i64);
        prev = prev.wrapping_add(delta as u64);
        out.push((fp, prev));
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut w = RecordWriter::default();
        let entries = [
            (1u64, 0u64),
            (2, 1),
            (3, 5),
            (4, 2),
            (5, u64::MAX),
            (6, 0),
            (u64::MAX, 1 << 40),
        ];
        for &(fp, doc) in &entries {
            w.push(fp, doc);
        }
        let records = w.take_records();
        assert_eq!(records.len(), 1);
        let mut out = Vec::new();
        decode_record(&records[0], &mut out).unwrap();
        assert_eq!(out, entries);
        assert!(decode_record(&records[0][..records[0].len() - 1], &mut Vec::new()).is_none());
        // Sequential documents cost one varint byte.
        let mut w = RecordWriter::default();
        for d in 0..100 {
            w.push(d, d);
        }
        assert_eq!(w.take_records()[0].len(), 900);
    }
}
