//! A worker's outcomes between its checkpoints, on its own disk: what makes
//! its outputs exact after `kill -9`.
//!
//! A worker writes a fetched URL's outcomes here (and syncs) *before* it
//! acknowledges the URL in the cluster, and pushes them into its outputs
//! after. A checkpoint makes the outputs durable and starts a new outbox
//! file. After a crash the outputs are cut back to the last checkpoint and
//! the outbox's entries pushed again, those the cluster says were
//! acknowledged ([`SharedFrontier::acked`](crate::SharedFrontier::acked)):
//! an entry not acknowledged belongs to a URL whose lease lapsed, which
//! another fetch counts.
//!
//! Files: `position.json` (the outputs' position at the last checkpoint,
//! the worker's statistics then, and the outbox file in use), written by
//! rename; `outbox-N` (entries: length, checksum, partition, lease id,
//! outcomes). A torn last entry (a crash mid-write) was never synced, so
//! never acknowledged: it is dropped.
//!
//! Every page's text (and body, for an archive) passes through here, so an
//! entry is encoded once, where it is sent: the JSON of its page records
//! goes on to the outputs ([`send_all`](nearcrawl_crawl::sink::send_all)).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nearcrawl_crawl::sink::{Outcome, Position, outbox_checksum};
use nearcrawl_crawl::stats::Stats;
use serde::{Deserialize, Serialize};

/// One URL's outcomes, named by its lease.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub partition: u32,
    pub id: u64,
    /// What the URL adds to the worker's statistics.
    pub stats: Stats,
    pub outcomes: Vec<Outcome>,
}

impl Entry {
    /// The entry as [`Outbox::append`] takes it.
    pub fn appending(&self) -> Appending<'_> {
        Appending {
            partition: self.partition,
            id: self.id,
            stats: &self.stats,
            outcomes: &self.outcomes,
        }
    }
}

/// An [`Entry`] to append, borrowed from the finished fetch that keeps its
/// outcomes for the outputs: copying them cost a copy of every page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Appending<'a> {
    pub partition: u32,
    pub id: u64,
    pub stats: &'a Stats,
    pub outcomes: &'a [Outcome],
}

/// What the last checkpoint left.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Saved {
    pub generation: u64,
    pub sink: Position,
    pub stats: Stats,
}

pub(crate) struct Outbox {
    dir: PathBuf,
    generation: u64,
    file: File,
}

const POSITION: &str = "position.json";

impl Outbox {
    /// Opens the outbox in `dir` (made if new): the last checkpoint, and
    /// the entries written since.
    pub fn open(dir: &Path) -> io::Result<(Outbox, Saved, Vec<Entry>)> {
        std::fs::create_dir_all(dir)?;
        let saved: Saved = match std::fs::read(dir.join(POSITION)) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", dir.join(POSITION).display()),
                )
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Saved::default(),
            Err(e) => return Err(e),
        };
        let path = file_of(dir, saved.generation);
        let entries = match std::fs::read(&path) {
            Ok(bytes) => read_entries(&bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        // Entries are appended after the whole ones (a torn tail is cut).
        let whole: u64 = entries.iter().map(|(len, _)| *len).sum();
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?
            .set_len(whole)?;
        let outbox = Outbox {
            dir: dir.to_path_buf(),
            generation: saved.generation,
            file: OpenOptions::new().append(true).open(&path)?,
        };
        outbox.remove_others()?;
        Ok((outbox, saved, entries.into_iter().map(|(_, e)| e).collect()))
    }

    /// Appends `entries` and makes them durable. Returns, entry by entry,
    /// the JSON of its page records, in order.
    pub fn append<'a>(
        &mut self,
        entries: impl IntoIterator<Item = Appending<'a>>,
    ) -> io::Result<Vec<Vec<Vec<u8>>>> {
        let (mut bytes, mut json, mut page_json) = (Vec::new(), Vec::new(), Vec::new());
        for e in entries {
            // The length and checksum go first, once the payload is known.
            let head = bytes.len();
            bytes.extend_from_slice(&[0; 8]);
            bytes.extend_from_slice(&e.partition.to_be_bytes());
            bytes.extend_from_slice(&e.id.to_be_bytes());
            let stats = serde_json::to_vec(e.stats).map_err(io::Error::other)?;
            bytes.extend_from_slice(&(stats.len() as u32).to_be_bytes());
            bytes.extend_from_slice(&stats);
            let mut pages = Vec::new();
            for o in e.outcomes {
                o.encode_keeping_json(&mut bytes, &mut json, &mut pages)?;
            }
            page_json.push(pages);
            let payload = &bytes[head + 8..];
            let (len, sum) = (payload.len() as u32, checksum(payload));
            bytes[head..head + 4].copy_from_slice(&len.to_be_bytes());
            bytes[head + 4..head + 8].copy_from_slice(&sum.to_be_bytes());
        }
        self.file.write_all(&bytes)?;
        self.file.sync_data()?;
        Ok(page_json)
    }

    /// Records a checkpoint: the outputs are durable at `sink` (so every
    /// entry so far is in them); a new, empty outbox file takes over.
    pub fn checkpoint(&mut self, sink: Position, stats: &Stats) -> io::Result<()> {
        let next = self.generation + 1;
        let file = File::create(file_of(&self.dir, next))?;
        file.sync_all()?;
        let saved = Saved {
            generation: next,
            sink,
            stats: stats.clone(),
        };
        let tmp = self.dir.join("position.json.tmp");
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec(&saved).map_err(io::Error::other)?)?;
        f.sync_all()?;
        std::fs::rename(&tmp, self.dir.join(POSITION))?;
        File::open(&self.dir)?.sync_all()?;
        self.generation = next;
        self.file = OpenOptions::new()
            .append(true)
            .open(file_of(&self.dir, next))?;
        self.remove_others()
    }

    /// Outbox files of other generations: older ones (their entries are in
    /// the outputs) or a newer one a crash left before its checkpoint was
    /// recorded (empty).
    fn remove_others(&self) -> io::Result<()> {
        for e in std::fs::read_dir(&self.dir)? {
            let name = e?.file_name();
            let name = name.to_string_lossy();
            if let Some(g) = name.strip_prefix("outbox-") {
                if g.parse::<u64>().is_ok_and(|g| g != self.generation) {
                    std::fs::remove_file(self.dir.join(&*name))?;
                }
            }
        }
        Ok(())
    }
}

fn file_of(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("outbox-{generation}"))
}

/// Whole entries, each with its length on disk; stops at the first torn
/// or damaged one.
fn read_entries(mut bytes: &[u8]) -> Vec<(u64, Entry)> {
    let mut out = Vec::new();
    while bytes.len() >= 8 {
        let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
        let sum = u32::from_be_bytes(bytes[4..8].try_into().unwrap());
        let Some(payload) = bytes.get(8..8 + len) else {
            break;
        };
        if checksum(payload) != sum && earlier_checksum(payload) != sum {
            break;
        }
        let Some(entry) = decode(payload) else {
            break;
        };
        out.push((8 + len as u64, entry));
        bytes = &bytes[8 + len..];
    }
    out
}

/// partition, lease id, statistics (length, JSON), outcomes.
fn decode(payload: &[u8]) -> Option<Entry> {
    let partition = u32::from_be_bytes(payload.get(..4)?.try_into().ok()?);
    let id = u64::from_be_bytes(payload.get(4..12)?.try_into().ok()?);
    let len = u32::from_be_bytes(payload.get(12..16)?.try_into().ok()?) as usize;
    let stats = serde_json::from_slice(payload.get(16..16 + len)?).ok()?;
    let outcomes = Outcome::decode_all(payload.get(16 + len..)?)?;
    Some(Entry {
        partition,
        id,
        stats,
        outcomes,
    })
}

/// The checksum of an entry, as the embedded outbox's.
fn checksum(bytes: &[u8]) -> u32 {
    outbox_checksum([bytes])
}

/// The checksum entries had before [`checksum`] (FNV-1a, 32 bits, a byte
/// at a time): an outbox a crash left under an earlier version still
/// replays. A damaged entry passes either by chance one time in 2^31.
fn earlier_checksum(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_crawl::sink::ErrorRecord;

    fn entry(id: u64) -> Entry {
        Entry {
            partition: 3,
            id,
            stats: Stats {
                fetched: id,
                ..Stats::default()
            },
            outcomes: vec![Outcome::Error(ErrorRecord {
                url: format!("http://h/{id}"),
                kind: "status".into(),
                detail: "404".into(),
            })],
        }
    }

    #[test]
    fn entries_survive_a_reopen_a_torn_tail_is_cut_and_a_checkpoint_empties_it() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-outbox-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (mut outbox, saved, entries) = Outbox::open(&dir).unwrap();
        assert_eq!((saved.generation, entries.len()), (0, 0));
        let (one, two) = (entry(1), entry(2));
        outbox.append([one.appending(), two.appending()]).unwrap();
        drop(outbox);
        // A crash mid-write leaves half an entry.
        let path = file_of(&dir, 0);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[0, 0, 0, 40, 1, 2]).unwrap();
        drop(f);
        let (mut outbox, _, entries) = Outbox::open(&dir).unwrap();
        assert_eq!(entries, vec![entry(1), entry(2)]);
        outbox.append([entry(3).appending()]).unwrap();
        let (mut outbox, _, entries) = {
            drop(outbox);
            Outbox::open(&dir).unwrap()
        };
        assert_eq!(entries.len(), 3, "appended after the cut tail");
        let stats = Stats {
            fetched: 3,
            ..Stats::default()
        };
        outbox
            .checkpoint(serde_json::json!({"pages": 10}), &stats)
            .unwrap();
        drop(outbox);
        let (_, saved, entries) = Outbox::open(&dir).unwrap();
        assert_eq!(saved.generation, 1);
        assert_eq!(saved.sink, serde_json::json!({"pages": 10}));
        assert_eq!(saved.stats.fetched, 3);
        assert!(entries.is_empty());
        assert!(!path.exists(), "the old generation is gone");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn appending_returns_each_page_records_json_and_earlier_entries_still_read() {
        use nearcrawl_crawl::sink::PageRecord;
        let dir =
            std::env::temp_dir().join(format!("nearcrawl-outbox-json-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let page = |url: &str| {
            Outcome::Page(PageRecord {
                url: url.into(),
                final_url: url.into(),
                status: 200,
                fetched_at: 1,
                depth: 0,
                title: Some("A title".into()),
                lang: None,
                language: Some("en".into()),
                text: "Some text, \"quoted\".".into(),
                simhash: "00ff".into(),
                content_hash: "ab".into(),
                outlinks: 0,
                duplicate_of: None,
                replaces: None,
            })
        };
        let mut with_pages = entry(4);
        with_pages.outcomes = vec![
            page("http://h/a"),
            entry(4).outcomes[0].clone(),
            page("http://h/b"),
        ];
        let (mut outbox, _, _) = Outbox::open(&dir).unwrap();
        let json = outbox
            .append([entry(1).appending(), with_pages.appending()])
            .unwrap();
        let want = |o: &Outcome| match o {
            Outcome::Page(p) => serde_json::to_vec(p).unwrap(),
            _ => unreachable!(),
        };
        assert_eq!(json[0], Vec::<Vec<u8>>::new());
        assert_eq!(
            json[1],
            vec![want(&with_pages.outcomes[0]), want(&with_pages.outcomes[2])]
        );
        drop(outbox);
        // An entry as an earlier version wrote it, checksummed by FNV-1a;
        // then one damaged after it was written, which is cut.
        let path = file_of(&dir, 0);
        let written = std::fs::read(&path).unwrap();
        let first_len = 8 + u32::from_be_bytes(written[..4].try_into().unwrap()) as usize;
        let payload = &written[8..first_len];
        let mut earlier = written[..4].to_vec();
        earlier.extend_from_slice(&earlier_checksum(payload).to_be_bytes());
        earlier.extend_from_slice(payload);
        let mut damaged = earlier.clone();
        *damaged.last_mut().unwrap() ^= 1;
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&earlier).unwrap();
        f.write_all(&damaged).unwrap();
        drop(f);
        let (_, _, entries) = Outbox::open(&dir).unwrap();
        assert_eq!(entries, vec![entry(1), with_pages, entry(1)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
