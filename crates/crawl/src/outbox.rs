//! The outbox: the outcomes of every batch applied since the last
//! checkpoint, in an append-only file beside the store.
//!
//! Why a file and not store keys: every page's text passes through the
//! outbox, and written as store keys then deleted at each checkpoint it
//! left the store's log full of dead data (4-6 KB per page on disk, most of
//! the state). Appended to a file that each checkpoint empties, it costs
//! nothing once the checkpoint is made.
//!
//! How it stays exact: a group's outcomes are appended and made durable
//! *before* the group's batch is applied, and the batch records the
//! outbox's new length. So whatever batches made it into the store, the
//! outbox holds their outcomes up to the recorded length; bytes past it
//! belong to a batch that did not make it (its URLs are still in flight)
//! and are cut off at open.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::sink::Outcome;

#[derive(Debug)]
pub(crate) struct Outbox {
    file: File,
    len: u64,
}

impl Outbox {
    /// Opens the outbox at `path`, cut to `recorded` bytes (what the
    /// store's applied batches name).
    pub(crate) fn open(path: &Path, recorded: u64) -> io::Result<Outbox> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let on_disk = file.metadata()?.len();
        if on_disk < recorded {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {on_disk} bytes, but the crawl state names {recorded}",
                    path.display()
                ),
            ));
        }
        if on_disk > recorded {
            file.set_len(recorded)?;
            file.sync_data()?;
        }
        Ok(Outbox {
            file,
            len: recorded,
        })
    }

    /// Appends `outcomes` as one block (zstd-compressed: page texts are
    /// most of it), durable on return; the outbox's length after it.
    pub(crate) fn append(&mut self, outcomes: &[Outcome]) -> io::Result<u64> {
        let mut bytes = Vec::new();
        for o in outcomes {
            o.encode(&mut bytes);
        }
        let packed = zstd::bulk::compress(&bytes, 1)?;
        let mut block = Vec::with_capacity(packed.len() + 8);
        block.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        block.extend_from_slice(&(packed.len() as u32).to_be_bytes());
        block.extend_from_slice(&packed);
        self.file.seek(SeekFrom::Start(self.len))?;
        self.file.write_all(&block)?;
        self.file.sync_data()?;
        self.len += block.len() as u64;
        Ok(self.len)
    }

    /// Every block, in order.
    pub(crate) fn read_all(&mut self) -> io::Result<Vec<Vec<Outcome>>> {
        let mut bytes = Vec::with_capacity(self.len as usize);
        self.file.seek(SeekFrom::Start(0))?;
        (&mut self.file).take(self.len).read_to_end(&mut bytes)?;
        let mut blocks = Vec::new();
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let block = next_block(&mut rest).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "outbox block at byte {} is unreadable",
                        bytes.len() - rest.len()
                    ),
                )
            })?;
            blocks.push(block);
        }
        Ok(blocks)
    }

    /// Empties the outbox (after the store recorded length 0).
    pub(crate) fn clear(&mut self) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.sync_data()?;
        self.len = 0;
        Ok(())
    }
}

/// Decodes the block at the head of `rest` and moves past it.
fn next_block(rest: &mut &[u8]) -> Option<Vec<Outcome>> {
    let raw = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let packed = u32::from_be_bytes(rest.get(4..8)?.try_into().ok()?) as usize;
    let body = rest.get(8..8 + packed)?;
    let bytes = zstd::bulk::decompress(body, raw).ok()?;
    *rest = &rest[8 + packed..];
    Outcome::decode_all(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::ErrorRecord;

    fn error(n: u32) -> Outcome {
        Outcome::Error(ErrorRecord {
            url: format!("http://a.example/{n}"),
            kind: "status".into(),
            detail: "404".into(),
        })
    }

    #[test]
    fn blocks_past_the_recorded_length_are_cut_at_open() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-outbox-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let mut o = Outbox::open(&dir, 0).unwrap();
        let first = o.append(&[error(1), error(2)]).unwrap();
        o.append(&[error(3)]).unwrap();
        drop(o);
        // The second block's batch never made it: the store names `first`.
        let mut o = Outbox::open(&dir, first).unwrap();
        assert_eq!(o.read_all().unwrap(), vec![vec![error(1), error(2)]]);
        let second = o.append(&[error(4)]).unwrap();
        assert_eq!(o.read_all().unwrap()[1], vec![error(4)]);
        o.clear().unwrap();
        assert!(o.read_all().unwrap().is_empty());
        drop(o);
        assert!(
            Outbox::open(&dir, second).is_err(),
            "a state naming more than the file holds is an error, not a silent loss"
        );
        std::fs::remove_file(&dir).unwrap();
    }
}
