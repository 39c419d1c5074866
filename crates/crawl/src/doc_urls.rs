//! Every document's URL, by document id, in an append-only file beside the
//! store (`docs`): what a duplicate's record names as its original.
//!
//! Why a file: ids are handed out in order and never change, and a URL is
//! read only when a later page duplicates its document. As store keys they
//! cost ~90 bytes live and several times that in sled's log on disk; here
//! each costs its URL and two bytes.
//!
//! How it stays exact: URLs of documents made since the last checkpoint are
//! held in memory (the outbox holds them too, durably); a checkpoint
//! appends them, syncs the file, and only then records its length in the
//! store with the checkpoint. At open the file is cut back to the recorded
//! length, and recovery adds the outbox's documents again.
//!
//! Ids a crash or a restart skipped (see `DOC_BLOCK` in [`crate::state`])
//! are written as empty records, so a record's place is its id.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Records per group: the offset of every group's first record is kept in
/// memory (half a byte per record); a lookup reads its group.
const GROUP: u64 = 16;

/// How long the file was at a checkpoint, as the store records it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Length {
    pub records: u64,
    pub bytes: u64,
}

impl Length {
    pub(crate) fn to_bytes(self) -> [u8; 16] {
        let mut b = [0; 16];
        b[..8].copy_from_slice(&self.records.to_be_bytes());
        b[8..].copy_from_slice(&self.bytes.to_be_bytes());
        b
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Option<Length> {
        Some(Length {
            records: u64::from_be_bytes(b.get(..8)?.try_into().ok()?),
            bytes: u64::from_be_bytes(b.get(8..16)?.try_into().ok()?),
        })
    }
}

#[derive(Debug)]
pub(crate) struct DocUrls {
    file: File,
    len: Length,
    /// Offset of record g × GROUP, for every group g.
    group_starts: Vec<u64>,
    /// Ids in the file with no URL (skipped), as ranges `start..end`.
    gaps: Vec<(u64, u64)>,
    /// Documents made since the last [`save`](DocUrls::save).
    unsaved: BTreeMap<u64, String>,
}

impl DocUrls {
    /// Opens the file at `path`, cut back to `recorded`.
    pub(crate) fn open(path: &Path, recorded: Length) -> io::Result<DocUrls> {
        let file = crate::outbox::open_cut_back(path, recorded.bytes)?;
        let mut urls = DocUrls {
            file,
            len: Length::default(),
            group_starts: Vec::new(),
            gaps: Vec::new(),
            unsaved: BTreeMap::new(),
        };
        urls.index(recorded)?;
        Ok(urls)
    }

    /// Reads the file once: where its groups start and which ids are gaps.
    fn index(&mut self, recorded: Length) -> io::Result<()> {
        let file = self.file.try_clone()?;
        let mut reader = BufReader::with_capacity(1 << 16, file.take(recorded.bytes));
        let mut head = [0u8; 2];
        let mut skip = Vec::new();
        while self.len.bytes < recorded.bytes {
            reader.read_exact(&mut head)?;
            let n = u16::from_be_bytes(head);
            skip.resize(usize::from(n), 0);
            reader.read_exact(&mut skip)?;
            self.note(n);
        }
        if self.len != recorded {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the document URLs hold {} records, the crawl state names {}",
                    self.len.records, recorded.records
                ),
            ));
        }
        Ok(())
    }

    /// Counts a record of `n` bytes appended at the end.
    fn note(&mut self, n: u16) {
        let id = self.len.records;
        if id % GROUP == 0 {
            self.group_starts.push(self.len.bytes);
        }
        if n == 0 {
            match self.gaps.last_mut() {
                Some(gap) if gap.1 == id => gap.1 += 1,
                _ => self.gaps.push((id, id + 1)),
            }
        }
        self.len.records += 1;
        self.len.bytes += 2 + u64::from(n);
    }

    /// Notes document `doc`'s URL (saved at the next checkpoint).
    pub(crate) fn add(&mut self, doc: u64, url: &str) {
        self.unsaved.insert(doc, url.to_string());
    }

    /// Whether `doc` has a URL here (one noted and not saved yet, too).
    pub(crate) fn contains(&self, doc: u64) -> bool {
        self.unsaved.contains_key(&doc) || (doc < self.len.records && !self.in_gap(doc))
    }

    fn in_gap(&self, doc: u64) -> bool {
        let i = self.gaps.partition_point(|gap| gap.1 <= doc);
        self.gaps.get(i).is_some_and(|gap| gap.0 <= doc)
    }

    /// The URL of `doc`, if it has one here.
    pub(crate) fn get(&self, doc: u64) -> io::Result<Option<String>> {
        if let Some(url) = self.unsaved.get(&doc) {
            return Ok(Some(url.clone()));
        }
        if !self.contains(doc) {
            return Ok(None);
        }
        let group = (doc / GROUP) as usize;
        let start = self.group_starts[group];
        let end = self
            .group_starts
            .get(group + 1)
            .copied()
            .unwrap_or(self.len.bytes);
        let mut bytes = vec![0; (end - start) as usize];
        self.file.read_exact_at(&mut bytes, start)?;
        let mut rest = &bytes[..];
        let url = std::iter::from_fn(|| next_record(&mut rest))
            .nth((doc % GROUP) as usize)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, format!("document {doc}'s URL"))
            })?;
        Ok(Some(String::from_utf8_lossy(url).into_owned()))
    }

    /// Appends the URLs noted since the last save (ids skipped before them
    /// as empty records), durably; the file's length after, for the store.
    pub(crate) fn save(&mut self) -> io::Result<Length> {
        let mut unsaved = std::mem::take(&mut self.unsaved);
        // Ids below the file's end are in it already (none, in order).
        let unsaved = unsaved.split_off(&self.len.records);
        let Some(&last) = unsaved.keys().next_back() else {
            return Ok(self.len);
        };
        let mut bytes = Vec::new();
        let mut lengths = Vec::new();
        for id in self.len.records..=last {
            let url = unsaved.get(&id).map_or(&[][..], |u| {
                // A URL longer than a record holds is cut (URLs that long
                // are refused before they are fetched).
                &u.as_bytes()[..u.len().min(u16::MAX as usize)]
            });
            bytes.extend_from_slice(&(url.len() as u16).to_be_bytes());
            bytes.extend_from_slice(url);
            lengths.push(url.len() as u16);
        }
        self.file.write_all_at(&bytes, self.len.bytes)?;
        self.file.sync_data()?;
        lengths.into_iter().for_each(|n| self.note(n));
        Ok(self.len)
    }
}

/// The record at the head of `rest` (its bytes), moving past it; None if
/// `rest` is cut short.
fn next_record<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = usize::from(u16::from_be_bytes(rest.get(..2)?.try_into().ok()?));
    let record = rest.get(2..2 + n)?;
    *rest = &rest[2 + n..];
    Some(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_saved_at_checkpoints_survive_and_unrecorded_tails_are_cut() {
        let path = std::env::temp_dir().join(format!("nearcrawl-docs-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut d = DocUrls::open(&path, Length::default()).unwrap();
        for id in 0..40 {
            d.add(id, &format!("http://a.example/{id}"));
        }
        assert!(d.contains(39) && !d.contains(40));
        let recorded = d.save().unwrap();
        // A restart skipped ids 40..100; one more checkpoint's worth is
        // saved, but the store never recorded it (a crash in between).
        d.add(100, "http://a.example/100");
        assert_eq!(d.get(100).unwrap().as_deref(), Some("http://a.example/100"));
        let later = d.save().unwrap();
        assert_eq!(later.records, 101);
        assert!(!d.contains(70), "a skipped id is no document");
        assert_eq!(d.get(70).unwrap(), None);
        drop(d);

        let d = DocUrls::open(&path, recorded).unwrap();
        assert_eq!(d.get(17).unwrap().as_deref(), Some("http://a.example/17"));
        assert_eq!(d.get(39).unwrap().as_deref(), Some("http://a.example/39"));
        assert!(!d.contains(100), "cut back to what the store named");
        drop(d);
        let d = DocUrls::open(&path, later).unwrap_err();
        assert_eq!(
            d.kind(),
            io::ErrorKind::InvalidData,
            "a state naming more is an error"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
