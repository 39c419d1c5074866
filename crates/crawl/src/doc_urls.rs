//! Every document's URL, by document id, in an append-only file beside the
//! store (`docs`): what a duplicate's record names as its original.
//!
//! Why a file: ids are handed out in order and never change, and a URL is
//! read only when a later page duplicates its document. As store keys they
//! cost ~90 bytes live and several times that in sled's log on disk; here
//! each costs two or three bytes and the part of its URL that differs from
//! the URL before it.
//!
//! Front coding: pages found one after another mostly share their site and
//! path (javadoc: 81 bytes a URL, 37 shared with the one before), so a
//! record holds the URL's suffix after the prefix it shares with the
//! previous record of its group. The first record of a group is whole, so
//! a lookup decodes one group. A record's head is a big-endian u16: top
//! bit clear, a whole URL of that many bytes (what earlier versions wrote
//! throughout, so their files read the same); top bit set, one byte of
//! shared prefix length, then a suffix of the head's other 15 bits.
//!
//! How it stays exact: URLs of documents made since the last checkpoint are
//! held in memory (the outbox holds them too, durably); a checkpoint
//! appends them, syncs the file, and only then records its length in the
//! store with the checkpoint. At open the file is cut back to the recorded
//! length, and recovery adds the outbox's documents again.
//!
//! Ids a crash or a restart skipped (see `DOC_BLOCK` in [`crate::embedded::state`])
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

/// How a file being indexed may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// Cut back to a recorded length: whole.
    Whole,
    /// Another crawl's, as a crash may have left it.
    MayBeTorn,
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
    /// The last record in the file (empty for a gap or none), which the
    /// next one is front-coded against.
    last: Vec<u8>,
}

impl DocUrls {
    /// Opens the file at `path`, cut back to `recorded`.
    pub(crate) fn open(path: &Path, recorded: Length) -> io::Result<DocUrls> {
        let file = crate::append_file::open_cut_back(path, recorded.bytes)?;
        let mut urls = DocUrls::of(file);
        urls.index(recorded.bytes, Tail::Whole)?;
        if urls.len != recorded {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the document URLs hold {} records, the crawl state names {}",
                    urls.len.records, recorded.records
                ),
            ));
        }
        Ok(urls)
    }

    /// Opens another crawl's file to read, whole (a torn last record
    /// aside), never changing it.
    pub(crate) fn read_only(path: &Path) -> io::Result<DocUrls> {
        let file = File::open(path)?;
        let on_disk = file.metadata()?.len();
        let mut urls = DocUrls::of(file);
        urls.index(on_disk, Tail::MayBeTorn)?;
        Ok(urls)
    }

    fn of(file: File) -> DocUrls {
        DocUrls {
            file,
            len: Length::default(),
            group_starts: Vec::new(),
            gaps: Vec::new(),
            unsaved: BTreeMap::new(),
            last: Vec::new(),
        }
    }

    /// Reads the file's first `bytes` once: where its groups start, which
    /// ids are gaps, and the last URL.
    fn index(&mut self, bytes: u64, tail: Tail) -> io::Result<()> {
        let file = self.file.try_clone()?;
        let mut reader = BufReader::with_capacity(1 << 16, file.take(bytes));
        let mut last = Vec::new();
        while self.len.bytes < bytes {
            match read_record(&mut reader, &mut last) {
                Ok(n) => self.note(n, last.is_empty()),
                Err(_) if tail == Tail::MayBeTorn => break,
                Err(e) => return Err(e),
            }
        }
        self.last = last;
        Ok(())
    }

    /// Counts a record of `bytes` bytes (head included) appended at the end.
    fn note(&mut self, bytes: usize, gap: bool) {
        let id = self.len.records;
        if id.is_multiple_of(GROUP) {
            self.group_starts.push(self.len.bytes);
        }
        if gap {
            match self.gaps.last_mut() {
                Some(gap) if gap.1 == id => gap.1 += 1,
                _ => self.gaps.push((id, id + 1)),
            }
        }
        self.len.records += 1;
        self.len.bytes += bytes as u64;
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
        let mut url = Vec::new();
        for _ in 0..=doc % GROUP {
            read_record(&mut rest, &mut url)?;
        }
        Ok(Some(String::from_utf8_lossy(&url).into_owned()))
    }

    /// Calls `f` with every URL here, saved and not.
    pub(crate) fn each_url(&self, mut f: impl FnMut(&str)) -> io::Result<()> {
        // A clone shares the file's offset (which positional reads and
        // writes leave alone): from the start.
        let mut file = self.file.try_clone()?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0))?;
        let mut reader = BufReader::with_capacity(1 << 16, file.take(self.len.bytes));
        let (mut url, mut read) = (Vec::new(), 0);
        while read < self.len.bytes {
            read += read_record(&mut reader, &mut url)? as u64;
            if !url.is_empty() {
                f(&String::from_utf8_lossy(&url));
            }
        }
        self.unsaved.values().for_each(|u| f(u));
        Ok(())
    }

    /// Appends the URLs noted since the last save (ids skipped before them
    /// as empty records), durably; the file's length after, for the store.
    pub(crate) fn save(&mut self) -> io::Result<Length> {
        let mut unsaved = std::mem::take(&mut self.unsaved);
        // Ids below the file's end are in it already (none, in order).
        let unsaved = unsaved.split_off(&self.len.records);
        let Some(&last_id) = unsaved.keys().next_back() else {
            return Ok(self.len);
        };
        let mut bytes = Vec::new();
        let mut notes = Vec::new();
        let mut last = std::mem::take(&mut self.last);
        for id in self.len.records..=last_id {
            let url = unsaved.get(&id).map_or(&[][..], |u| {
                // A URL longer than a record holds is cut (URLs that long
                // are refused before they are fetched).
                &u.as_bytes()[..u.len().min(MAX_SUFFIX)]
            });
            let shared = if id % GROUP == 0 {
                0
            } else {
                shared_prefix(&last, url)
            };
            let before = bytes.len();
            write_record(&mut bytes, url, shared);
            notes.push((bytes.len() - before, url.is_empty()));
            last.clear();
            last.extend_from_slice(url);
        }
        self.file.write_all_at(&bytes, self.len.bytes)?;
        self.file.sync_data()?;
        notes.into_iter().for_each(|(n, gap)| self.note(n, gap));
        self.last = last;
        Ok(self.len)
    }
}

/// The longest URL a record holds, and the longest suffix.
const MAX_SUFFIX: usize = (1 << 15) - 1;
/// Marks a front-coded record's head.
const FRONT_CODED: u16 = 1 << 15;

/// How many leading bytes `url` shares with `last`, up to what one byte
/// counts (records are bytes; a URL is decoded only once it is whole).
fn shared_prefix(last: &[u8], url: &[u8]) -> usize {
    last.iter()
        .zip(url)
        .take(usize::from(u8::MAX))
        .take_while(|(a, b)| a == b)
        .count()
}

/// Appends the record of `url`, front-coded when it shares a prefix with
/// the record before it.
fn write_record(out: &mut Vec<u8>, url: &[u8], shared: usize) {
    if shared < 2 {
        out.extend_from_slice(&(url.len() as u16).to_be_bytes());
        out.extend_from_slice(url);
        return;
    }
    let suffix = &url[shared..];
    out.extend_from_slice(&(suffix.len() as u16 | FRONT_CODED).to_be_bytes());
    out.push(shared as u8);
    out.extend_from_slice(suffix);
}

/// Reads the next record into `url` (which holds the record before it);
/// returns the record's size in bytes.
fn read_record(from: &mut impl Read, url: &mut Vec<u8>) -> io::Result<usize> {
    let bad =
        |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("document URLs: {what}"));
    let mut head = [0u8; 2];
    from.read_exact(&mut head)?;
    let head = u16::from_be_bytes(head);
    let (shared, n, size) = if head & FRONT_CODED == 0 {
        (0, usize::from(head), 2)
    } else {
        let mut shared = [0u8];
        from.read_exact(&mut shared)?;
        let shared = usize::from(shared[0]);
        if shared > url.len() {
            return Err(bad("a record shares more than the one before holds"));
        }
        (shared, usize::from(head & !FRONT_CODED), 3)
    };
    url.truncate(shared);
    let start = url.len();
    url.resize(start + n, 0);
    from.read_exact(&mut url[start..])?;
    Ok(size + n)
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

    #[test]
    fn every_url_is_read_back_after_a_reopen() {
        let dir =
            std::env::temp_dir().join(format!("nearcrawl-doc-urls-each-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("docs");
        let mut urls = DocUrls::open(&path, Length::default()).unwrap();
        for i in 0..40 {
            urls.add(i, &format!("http://a.test/p/{i}"));
        }
        let len = urls.save().unwrap();
        drop(urls);
        let mut urls = DocUrls::open(&path, len).unwrap();
        urls.add(40, "http://a.test/unsaved");
        let mut seen = Vec::new();
        urls.each_url(|u| seen.push(u.to_string())).unwrap();
        assert_eq!(seen.len(), 41);
        assert_eq!(seen[7], "http://a.test/p/7");
        assert_eq!(seen[40], "http://a.test/unsaved");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn urls_are_front_coded_within_groups_and_plain_records_still_read() {
        let path = std::env::temp_dir().join(format!("nearcrawl-docs-fc-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let urls: Vec<String> = (0..50u64)
            .map(|id| match id {
                // Sharing a prefix that ends inside a two-byte character.
                7 => "http://a.example/caf\u{e9}/x".to_string(),
                8 => "http://a.example/caf\u{e8}/y".to_string(),
                // Shorter than the URL before it, and a prefix of it.
                9 => "http://a.example/caf".to_string(),
                _ => format!("http://a.example/api/java.base/java/util/Class{id}.html"),
            })
            .collect();
        let mut d = DocUrls::open(&path, Length::default()).unwrap();
        for (id, url) in urls.iter().enumerate().take(20) {
            d.add(id as u64, url);
        }
        d.save().unwrap();
        // A gap in the middle of a group, then more.
        for (id, url) in urls.iter().enumerate().skip(23) {
            d.add(id as u64, url);
        }
        let recorded = d.save().unwrap();
        let whole: u64 = (0..50)
            .filter(|id| !(20..23).contains(id))
            .map(|id| 2 + urls[id].len() as u64)
            .sum::<u64>()
            + 3 * 2;
        assert!(
            recorded.bytes * 2 < whole,
            "{} bytes front-coded, {whole} whole",
            recorded.bytes
        );
        drop(d);
        let d = DocUrls::open(&path, recorded).unwrap();
        for (id, url) in urls.iter().enumerate() {
            let want = (!(20..23).contains(&id)).then(|| url.clone());
            assert_eq!(d.get(id as u64).unwrap(), want, "document {id}");
        }
        drop(d);

        // A file as earlier versions wrote it: every record whole.
        let mut plain = Vec::new();
        for url in &urls[..20] {
            plain.extend_from_slice(&(url.len() as u16).to_be_bytes());
            plain.extend_from_slice(url.as_bytes());
        }
        std::fs::write(&path, &plain).unwrap();
        let recorded = Length {
            records: 20,
            bytes: plain.len() as u64,
        };
        let mut d = DocUrls::open(&path, recorded).unwrap();
        assert_eq!(d.get(17).unwrap().as_deref(), Some(urls[17].as_str()));
        d.add(20, &urls[21]);
        let later = d.save().unwrap();
        drop(d);
        let d = DocUrls::open(&path, later).unwrap();
        assert_eq!(d.get(19).unwrap().as_deref(), Some(urls[19].as_str()));
        assert_eq!(d.get(20).unwrap().as_deref(), Some(urls[21].as_str()));
        std::fs::remove_file(&path).unwrap();
    }
}
