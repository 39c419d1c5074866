//! The gate's document records, packed many to a sled value.
//!
//! One sled key per record costs about 140 bytes of disk and a few
//! microseconds per write; records are written and read by slot (0, 1, 2,
//! … in recording order), so they are packed [`CHUNK`] to a value keyed by
//! the chunk number. The last, partial chunk stays in memory and is
//! written at each flush, whole, until it fills.

use crate::error::IndexError;

/// Records per sled value: a read of one candidate loads ~10 KB.
const CHUNK: u32 = 32;

#[derive(Debug)]
pub(crate) struct RecordLog {
    tree: sled::Tree,
    /// Records held: the whole chunks in the tree, then `tail`.
    len: u32,
    /// The records of the last chunk, not full yet.
    tail: Vec<Vec<u8>>,
    /// Whether `tail` has records its stored copy lacks.
    tail_dirty: bool,
}

impl RecordLog {
    pub(crate) fn open(tree: sled::Tree) -> RecordLog {
        RecordLog {
            tree,
            len: 0,
            tail: Vec::new(),
            tail_dirty: false,
        }
    }

    /// Reads every stored record in slot order, handing each to `f`; must
    /// be called once, before any other use.
    pub(crate) fn load(&mut self, mut f: impl FnMut(u32, &[u8])) -> Result<(), IndexError> {
        for entry in self.tree.iter() {
            let (key, value) = entry?;
            let chunk = chunk_of(&key)?;
            if !self.tail.is_empty() || chunk != self.len / CHUNK {
                return Err(IndexError::Corrupt(format!(
                    "gate record chunk {chunk} follows {} records",
                    self.len
                )));
            }
            for record in decode(&value)? {
                f(self.len, record);
                self.len += 1;
                if self.len % CHUNK != 0 {
                    self.tail.push(record.to_vec());
                } else {
                    self.tail.clear();
                }
            }
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Stores a record as the next slot, which it returns.
    pub(crate) fn push(&mut self, record: Vec<u8>) -> Result<u32, IndexError> {
        let slot = self.len;
        self.tail.push(record);
        self.len += 1;
        self.tail_dirty = true;
        if self.tail.len() as u32 == CHUNK {
            self.write_tail()?;
            self.tail.clear();
        }
        Ok(slot)
    }

    /// Calls `f` with the bytes of the record in `slot`.
    pub(crate) fn with<T>(&self, slot: u32, f: impl FnOnce(&[u8]) -> T) -> Result<T, IndexError> {
        if slot >= self.len {
            return Err(IndexError::Corrupt(format!(
                "gate record {slot} is missing"
            )));
        }
        let tail_start = self.len - self.tail.len() as u32;
        if slot >= tail_start {
            return Ok(f(&self.tail[(slot - tail_start) as usize]));
        }
        let chunk = self
            .tree
            .get((slot / CHUNK).to_be_bytes())?
            .ok_or_else(|| IndexError::Corrupt(format!("gate record {slot} is missing")))?;
        let records = decode(&chunk)?;
        records
            .get((slot % CHUNK) as usize)
            .map(|r| f(r))
            .ok_or_else(|| IndexError::Corrupt(format!("gate record {slot} is missing")))
    }

    /// Writes the partial last chunk, if it changed (durable once the
    /// database is flushed).
    pub(crate) fn write_partial(&mut self) -> Result<(), IndexError> {
        if self.tail_dirty && !self.tail.is_empty() {
            self.write_tail()?;
        }
        Ok(())
    }

    fn write_tail(&mut self) -> Result<(), IndexError> {
        let chunk = (self.len - 1) / CHUNK;
        let mut value = Vec::with_capacity(self.tail.iter().map(|r| r.len() + 2).sum());
        for r in &self.tail {
            value.extend_from_slice(&(r.len() as u16).to_le_bytes());
            value.extend_from_slice(r);
        }
        self.tree.insert(chunk.to_be_bytes(), value)?;
        self.tail_dirty = false;
        Ok(())
    }
}

fn chunk_of(key: &[u8]) -> Result<u32, IndexError> {
    key.try_into()
        .map(u32::from_be_bytes)
        .map_err(|_| IndexError::Corrupt(format!("gate record chunk key {key:?}")))
}

/// The records of a chunk: each a 2-byte length, then its bytes.
fn decode(mut chunk: &[u8]) -> Result<Vec<&[u8]>, IndexError> {
    let mut out = Vec::with_capacity(CHUNK as usize);
    while !chunk.is_empty() {
        let len = chunk
            .get(..2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
            .filter(|&len| chunk.len() >= 2 + len)
            .ok_or_else(|| IndexError::Corrupt("a gate record chunk is cut short".into()))?;
        out.push(&chunk[2..2 + len]);
        chunk = &chunk[2 + len..];
    }
    if out.len() > CHUNK as usize {
        return Err(IndexError::Corrupt(
            "a gate record chunk is too long".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_flushes_and_reopening_at_any_length() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = crate::store::open_db(&dir).unwrap();
        let record = |i: u32| vec![i as u8; (i % 7) as usize];
        let mut log = RecordLog::open(db.open_tree("r").unwrap());
        log.load(|_, _| panic!("empty")).unwrap();
        for n in [0u32, 5, 31, 32, 33, 70, 100] {
            while log.len() < n {
                log.push(record(log.len())).unwrap();
            }
            log.write_partial().unwrap();
            let mut seen = Vec::new();
            let mut reopened = RecordLog::open(db.open_tree("r").unwrap());
            reopened
                .load(|slot, r| seen.push((slot, r.to_vec())))
                .unwrap();
            assert_eq!(seen, (0..n).map(|i| (i, record(i))).collect::<Vec<_>>());
            for slot in (0..n).step_by(3) {
                assert_eq!(reopened.with(slot, <[u8]>::to_vec).unwrap(), record(slot));
                assert_eq!(log.with(slot, <[u8]>::to_vec).unwrap(), record(slot));
            }
            assert!(log.with(n, |_| ()).is_err());
            log = reopened;
        }
        drop(log);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
