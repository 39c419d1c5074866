//! The gate's document records, in an append-only file.
//!
//! Records are only ever appended, and read by slot (0, 1, 2, … in
//! recording order), so they need no B-tree: in sled one key per record
//! cost ~140 bytes of disk besides the record, and packed values still
//! left the log half again as large as its data. Here the file is the
//! records, each a 2-byte length and its bytes.
//!
//! How it stays exact: [`flush`](RecordLog::flush) makes the file durable,
//! then stores its length (records and bytes) in a sled tree, which the
//! caller's database flush makes durable in turn. At open the file is cut
//! back to that length: records appended after the last flush are gone,
//! as they would be from any other part of the gate.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;

use crate::error::IndexError;

/// Records per group: the file offset of every group's first record is
/// kept in memory (half a byte per record); a read loads its group.
const GROUP: u32 = 16;
/// Appended bytes held before they are written to the file.
const BUFFER: usize = 1 << 20;
const LENGTH_KEY: &[u8] = b"records";
/// Complete groups kept once read (about 4 KB each): the gate reads the
/// same candidates for many pages (a template's pages share its bands),
/// and each read of the file was a system call and a zeroed buffer under
/// the crawl's lock.
const CACHED_GROUPS: usize = 256;

#[derive(Debug)]
pub(crate) struct RecordLog {
    file: File,
    meta: sled::Tree,
    len: u32,
    /// Bytes in the file.
    written: u64,
    /// Appended bytes not in the file yet; they follow `written`.
    buffer: Vec<u8>,
    /// Offset of record g × GROUP, for every group g.
    group_starts: Vec<u64>,
    /// Complete groups read lately. A group is complete once the next has
    /// begun, and never changes after (records are only appended, and cut
    /// back only when the file is opened).
    cache: Mutex<GroupCache>,
}

/// The bytes of complete groups, by group; the oldest read goes first.
#[derive(Debug, Default)]
struct GroupCache {
    groups: HashMap<u32, Box<[u8]>>,
    order: VecDeque<u32>,
}

impl GroupCache {
    fn insert(&mut self, group: u32, bytes: Box<[u8]>) {
        if self.order.len() == CACHED_GROUPS
            && let Some(oldest) = self.order.pop_front()
        {
            self.groups.remove(&oldest);
        }
        self.order.push_back(group);
        self.groups.insert(group, bytes);
    }
}

impl RecordLog {
    /// Opens the records at `path`, cut back to the length `meta` holds,
    /// and hands every record to `f` in slot order.
    pub(crate) fn open(
        path: &Path,
        meta: sled::Tree,
        mut f: impl FnMut(u32, &[u8]),
    ) -> Result<RecordLog, IndexError> {
        let (len, bytes) = match meta.get(LENGTH_KEY)? {
            None => (0, 0),
            Some(v) if v.len() == 12 => (
                u32::from_be_bytes(v[..4].try_into().unwrap()),
                u64::from_be_bytes(v[4..].try_into().unwrap()),
            ),
            Some(v) => return Err(IndexError::Corrupt(format!("gate records length {v:?}"))),
        };
        let io = |e: std::io::Error| IndexError::Io(format!("{}: {e}", path.display()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let on_disk = file.metadata().map_err(io)?.len();
        if on_disk < bytes {
            return Err(IndexError::Corrupt(format!(
                "{}: {on_disk} bytes, but the gate's state names {bytes}",
                path.display()
            )));
        }
        if on_disk > bytes {
            file.set_len(bytes).map_err(io)?;
            file.sync_data().map_err(io)?;
        }
        let mut log = RecordLog {
            file,
            meta,
            len: 0,
            written: bytes,
            buffer: Vec::new(),
            group_starts: Vec::new(),
            cache: Mutex::default(),
        };
        log.load(bytes, &mut f).map_err(io)?;
        if log.len != len {
            return Err(IndexError::Corrupt(format!(
                "{}: {} records, but the gate's state names {len}",
                path.display(),
                log.len
            )));
        }
        Ok(log)
    }

    fn load(&mut self, bytes: u64, f: &mut impl FnMut(u32, &[u8])) -> std::io::Result<()> {
        let mut reader = BufReader::with_capacity(BUFFER, (&self.file).take(bytes));
        let mut at = 0u64;
        let mut record = Vec::new();
        while at < bytes {
            let mut length = [0u8; 2];
            reader.read_exact(&mut length)?;
            record.resize(usize::from(u16::from_le_bytes(length)), 0);
            reader.read_exact(&mut record)?;
            if self.len.is_multiple_of(GROUP) {
                self.group_starts.push(at);
            }
            f(self.len, &record);
            self.len += 1;
            at += 2 + record.len() as u64;
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Appends a record (at most 65,535 bytes) as the next slot, which it
    /// returns.
    pub(crate) fn push(&mut self, record: &[u8]) -> Result<u32, IndexError> {
        let length = u16::try_from(record.len())
            .map_err(|_| IndexError::Config(format!("a {}-byte gate record", record.len())))?;
        if self.len.is_multiple_of(GROUP) {
            self.group_starts.push(self.end());
        }
        self.buffer.extend_from_slice(&length.to_le_bytes());
        self.buffer.extend_from_slice(record);
        let slot = self.len;
        self.len += 1;
        if self.buffer.len() >= BUFFER {
            self.write_buffer()?;
        }
        Ok(slot)
    }

    /// Calls `f` with the bytes of the record in `slot`.
    pub(crate) fn with<T>(&self, slot: u32, f: impl FnOnce(&[u8]) -> T) -> Result<T, IndexError> {
        let missing = || IndexError::Corrupt(format!("gate record {slot} is missing"));
        if slot >= self.len {
            return Err(missing());
        }
        let group = slot / GROUP;
        let complete = (group as usize) + 1 < self.group_starts.len();
        let mut cache = self.cache.lock().expect("a gate thread panicked");
        if complete && let Some(bytes) = cache.groups.get(&group) {
            return record_in(bytes, slot).map(f).ok_or_else(missing);
        }
        let bytes = self.read_group(group, slot)?;
        let found = record_in(&bytes, slot).map(f).ok_or_else(missing);
        if complete {
            cache.insert(group, bytes.into_boxed_slice());
        }
        found
    }

    /// The bytes of `group` (which holds `slot`), from the file and the
    /// buffer after it.
    fn read_group(&self, group: u32, slot: u32) -> Result<Vec<u8>, IndexError> {
        let group = group as usize;
        let start = self.group_starts[group];
        let end = self
            .group_starts
            .get(group + 1)
            .copied()
            .unwrap_or(self.end());
        let mut bytes = vec![0u8; (end - start) as usize];
        let from_file = self.written.saturating_sub(start).min(end - start) as usize;
        self.file
            .read_exact_at(&mut bytes[..from_file], start)
            .map_err(|e| IndexError::Io(format!("reading gate record {slot}: {e}")))?;
        let rest = bytes.len() - from_file;
        if rest > 0 {
            // The rest follows the file's end, in the buffer.
            let buffered = (start + from_file as u64 - self.written) as usize;
            bytes[from_file..].copy_from_slice(&self.buffer[buffered..buffered + rest]);
        }
        Ok(bytes)
    }

    /// Makes every record durable in the file and names the new length in
    /// `meta` (durable once the caller flushes its database).
    pub(crate) fn flush(&mut self) -> Result<(), IndexError> {
        self.write_buffer()?;
        self.file
            .sync_data()
            .map_err(|e| IndexError::Io(format!("syncing the gate records: {e}")))?;
        let mut length = self.len.to_be_bytes().to_vec();
        length.extend_from_slice(&self.written.to_be_bytes());
        self.meta.insert(LENGTH_KEY, length)?;
        Ok(())
    }

    fn end(&self) -> u64 {
        self.written + self.buffer.len() as u64
    }

    fn write_buffer(&mut self) -> Result<(), IndexError> {
        self.file
            .write_all_at(&self.buffer, self.written)
            .map_err(|e| IndexError::Io(format!("writing the gate records: {e}")))?;
        self.written += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

/// The record of `slot` in the bytes of its group.
fn record_in(bytes: &[u8], slot: u32) -> Option<&[u8]> {
    let mut at = 0;
    for _ in 0..slot % GROUP {
        let length = bytes.get(at..at + 2)?;
        at += 2 + usize::from(u16::from_le_bytes([length[0], length[1]]));
    }
    let length = bytes.get(at..at + 2)?;
    let length = usize::from(u16::from_le_bytes([length[0], length[1]]));
    bytes.get(at + 2..at + 2 + length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_flushes_and_reopening_and_unflushed_ones_are_cut() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = crate::store::open_db(&dir).unwrap();
        let path = dir.join("records");
        let record = |i: u32| vec![i as u8; (i % 7) as usize];
        let meta = || db.open_tree("meta").unwrap();
        let mut log = RecordLog::open(&path, meta(), |_, _| panic!("empty")).unwrap();
        for n in [0u32, 5, 16, 17, 40, 100] {
            while log.len() < n {
                log.push(&record(log.len())).unwrap();
            }
            for slot in 0..n {
                assert_eq!(log.with(slot, <[u8]>::to_vec).unwrap(), record(slot));
            }
            log.flush().unwrap();
            // Appended after the flush: lost at reopening.
            log.push(&record(n)).unwrap();
            log.write_buffer().unwrap();
            let mut seen = Vec::new();
            log = RecordLog::open(&path, meta(), |slot, r| seen.push((slot, r.to_vec()))).unwrap();
            assert_eq!(seen, (0..n).map(|i| (i, record(i))).collect::<Vec<_>>());
            for slot in 0..n {
                assert_eq!(log.with(slot, <[u8]>::to_vec).unwrap(), record(slot));
            }
            assert!(log.with(n, |_| ()).is_err());
        }
        // A file shorter than its recorded length is an error, not a loss.
        drop(log);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(10)
            .unwrap();
        assert!(RecordLog::open(&path, meta(), |_, _| {}).is_err());
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn records_read_back_alike_from_the_cache_while_groups_fill() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-cached-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = crate::store::open_db(&dir).unwrap();
        let meta = db.open_tree("meta").unwrap();
        let mut log = RecordLog::open(&dir.join("records"), meta, |_, _| {}).unwrap();
        let record = |i: u32| vec![(i * 31) as u8; (i % 11) as usize + 1];
        let n = (CACHED_GROUPS as u32 + 3) * GROUP;
        for slot in 0..n {
            log.push(&record(slot)).unwrap();
            // Its group is still filling: read, but not kept.
            assert_eq!(log.with(slot, <[u8]>::to_vec).unwrap(), record(slot));
            if slot % 97 == 0 {
                log.write_buffer().unwrap();
            }
        }
        // Twice over: the first pass fills the cache past its size, the
        // second reads what it kept and what it let go.
        for _ in 0..2 {
            for slot in (0..n).rev() {
                assert_eq!(log.with(slot, <[u8]>::to_vec).unwrap(), record(slot));
            }
        }
        let cache = log.cache.lock().unwrap();
        assert_eq!(cache.groups.len(), CACHED_GROUPS);
        assert_eq!(cache.order.len(), CACHED_GROUPS);
        drop(cache);
        drop(log);
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
