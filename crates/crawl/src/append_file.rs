//! An append-only file whose tail since the last save is journaled in the
//! outbox: the frontier's queue and seen set live in two of these.
//!
//! Why: kept as store keys, queued URLs and seen fingerprints churned the
//! store (each URL written, moved and deleted; random 8-byte keys touching
//! every node), and the store's memory grew with them: about 200 MB at a
//! million URLs. Appended to files, they cost their own bytes on disk and
//! nothing in the store.
//!
//! How it stays exact (as [`crate::doc_urls`] and the outbox do): appends
//! are not synced one by one. Each group's appended bytes, with the offset
//! they were written at, go into the group's outbox block, which is synced
//! before the group's batch is applied. A save syncs the file and records
//! its length in a store batch. At open the file is cut back to the
//! recorded length and the outbox's tails are written again, in order: so
//! the file holds exactly what the applied batches wrote.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes appended to one of the frontier's files by one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tail {
    /// Which file (a tag of the frontier's).
    pub file: u8,
    /// The file's length before the append.
    pub at: u64,
    pub bytes: Vec<u8>,
}

#[derive(Debug)]
pub(crate) struct AppendFile {
    file: File,
    len: u64,
}

impl AppendFile {
    /// Opens (or creates) the file at `path`, cut back to `recorded` bytes,
    /// then writes again the `tails` appended since (those the file holds
    /// already, from a later save, are skipped).
    pub(crate) fn open<'a>(
        path: &Path,
        recorded: u64,
        tails: impl IntoIterator<Item = &'a Tail>,
    ) -> io::Result<AppendFile> {
        let mut f = AppendFile {
            file: open_cut_back(path, recorded)?,
            len: recorded,
        };
        for t in tails {
            let end = t.at + t.bytes.len() as u64;
            if end <= f.len {
                continue;
            }
            if t.at != f.len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: the outbox holds bytes {}..{end}, but the file ends at {}",
                        path.display(),
                        t.at,
                        f.len
                    ),
                ));
            }
            f.append(&t.bytes)?;
        }
        Ok(f)
    }

    /// Appends `bytes` (not synced); the offset they start at.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.len;
        self.file.write_all_at(bytes, at)?;
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Reads `buf.len()` bytes (fewer at the end of the file) at `offset`.
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let want = buf.len().min(self.len.saturating_sub(offset) as usize);
        self.file.read_exact_at(&mut buf[..want], offset)?;
        Ok(want)
    }

    /// Makes every append durable; the length to record.
    pub(crate) fn sync(&self) -> io::Result<u64> {
        self.file.sync_data()?;
        Ok(self.len)
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Drops the bytes past `len` (appended by a group that failed).
    pub(crate) fn cut_to(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.len = len;
        Ok(())
    }

    /// The whole file, from the start (opening a frontier).
    pub(crate) fn reader(&self) -> impl io::Read + '_ {
        io::BufReader::with_capacity(
            1 << 20,
            ReadFrom {
                file: &self.file,
                at: 0,
                end: self.len,
            },
        )
    }
}

/// Reads a file by offset (the file's cursor is not used: appends and
/// reads give their offsets).
struct ReadFrom<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl io::Read for ReadFrom<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min(self.end.saturating_sub(self.at) as usize);
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Opens (or creates) the append-only file at `path`, cut back to the
/// `recorded` bytes the store names: bytes past them were appended by a
/// batch or checkpoint that did not make it. Fewer bytes than that is an
/// error, not a silent loss.
pub(crate) fn open_cut_back(path: &Path, recorded: u64) -> io::Result<File> {
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
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_cut_back_and_its_tails_written_again() {
        let path = std::env::temp_dir().join(format!("nearcrawl-append-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let tail = |at, bytes: &[u8]| Tail {
            file: 0,
            at,
            bytes: bytes.to_vec(),
        };
        let mut f = AppendFile::open(&path, 0, []).unwrap();
        assert_eq!(f.append(b"abc").unwrap(), 0);
        let saved = f.sync().unwrap();
        assert_eq!(f.append(b"de").unwrap(), 3);
        f.append(b"lost").unwrap();
        drop(f);
        // The store recorded 3 bytes; the outbox holds the group "de" and
        // an older one the file already has.
        let tails = [tail(0, b"abc"), tail(3, b"de")];
        let f = AppendFile::open(&path, saved, &tails).unwrap();
        let mut buf = [0; 16];
        assert_eq!(f.read_at(&mut buf, 0).unwrap(), 5);
        assert_eq!(&buf[..5], b"abcde");
        drop(f);
        let gap = [tail(9, b"x")];
        assert!(
            AppendFile::open(&path, saved, &gap).is_err(),
            "a tail past the end is an error, not a hole"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
