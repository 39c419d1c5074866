//! The frontier: URLs waiting to be fetched, URLs being fetched, and every
//! URL ever queued, all on disk in sled.
//!
//! Per-host queues, lowest depth first within a host (breadth-first), and
//! hosts served in turn so one large host cannot starve the others. Only
//! the list of hosts with pending URLs is kept in memory.
//!
//! The frontier lives in keys of the crawl's one state tree (see
//! [`crate::state`]) so that what a page adds to it is written in the same
//! atomic batch as the page's other effects. [`Frontier::pop`] moves a URL
//! from the queue to the in-flight set, and [`Frontier::open_in`] puts
//! whatever is still in flight back in the queue: a crash loses no URL.

use std::collections::{HashSet, VecDeque};

use url::Url;

use crate::state::Writes;

const QUEUE: u8 = b'q';
const IN_FLIGHT: u8 = b'i';
const SEEN: u8 = b's';

/// A URL to fetch and how many links it is from a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub url: Url,
    pub depth: u32,
    /// host 0x00 depth(u32 BE) seq(u64 BE): the entry's place in the queue,
    /// and its key while in flight.
    key: Vec<u8>,
}

impl Entry {
    /// Removes the entry from the in-flight set, in `writes`: the URL is
    /// done.
    pub fn finish(&self, writes: &mut Writes) {
        writes.remove(prefixed(IN_FLIGHT, &self.key));
    }
}

#[derive(Debug)]
pub struct Frontier {
    tree: sled::Tree,
    rotation: VecDeque<String>,
    in_rotation: HashSet<String>,
    seq: u64,
    queued: usize,
}

fn prefixed(tag: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(rest.len() + 1);
    k.push(tag);
    k.extend_from_slice(rest);
    k
}

fn host_prefix(host: &str) -> Vec<u8> {
    let mut k = vec![QUEUE];
    k.extend_from_slice(host.as_bytes());
    k.push(0);
    k
}

/// See [`Frontier::seen_set`].
#[derive(Debug, Clone)]
pub struct SeenSet(sled::Tree);

impl SeenSet {
    pub fn contains(&self, url: &Url) -> bool {
        self.0
            .contains_key(prefixed(SEEN, url.as_str().as_bytes()))
            .unwrap_or(false)
    }
}

/// The URLs added to the frontier by writes not yet applied.
#[derive(Debug, Default)]
pub struct Additions {
    urls: HashSet<String>,
    hosts: Vec<String>,
    queued: usize,
}

impl Frontier {
    /// Opens the frontier kept in `tree`, resuming what is there: URLs that
    /// were in flight when the last run ended go back in the queue.
    pub fn open_in(tree: &sled::Tree) -> Result<Frontier, sled::Error> {
        let mut requeue = sled::Batch::default();
        let mut back = 0usize;
        for item in tree.scan_prefix([IN_FLIGHT]) {
            let (key, url) = item?;
            requeue.remove(key.clone());
            requeue.insert(prefixed(QUEUE, &key[1..]), url);
            back += 1;
        }
        if back > 0 {
            tree.apply_batch(requeue)?;
        }
        let mut f = Frontier {
            tree: tree.clone(),
            rotation: VecDeque::new(),
            in_rotation: HashSet::new(),
            seq: 0,
            queued: 0,
        };
        // One pass over the queue's keys: the hosts with pending URLs, and a
        // sequence number above every one in use.
        for key in tree.scan_prefix([QUEUE]).keys() {
            let key = key?;
            f.queued += 1;
            let Some(nul) = key.iter().position(|&b| b == 0) else {
                continue;
            };
            let host = String::from_utf8_lossy(&key[1..nul]).into_owned();
            if key.len() == nul + 13 {
                let seq = u64::from_be_bytes(key[nul + 5..].try_into().unwrap());
                f.seq = f.seq.max(seq + 1);
            }
            if f.in_rotation.insert(host.clone()) {
                f.rotation.push_back(host);
            }
        }
        Ok(f)
    }

    /// Queues `url` at `depth`, in `writes`, unless it was ever queued
    /// before (or is in `adds`); true if it was new. The caller
    /// canonicalizes and checks scope first, applies the writes, then calls
    /// [`added`](Frontier::added) with `adds`.
    pub fn push(
        &mut self,
        batch: &mut Writes,
        adds: &mut Additions,
        url: &Url,
        depth: u32,
    ) -> Result<bool, sled::Error> {
        if adds.urls.contains(url.as_str()) || self.was_seen(url)? {
            return Ok(false);
        }
        adds.urls.insert(url.as_str().to_string());
        batch.insert(prefixed(SEEN, url.as_str().as_bytes()), []);
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let mut key = host_prefix(&host);
        key.extend_from_slice(&depth.to_be_bytes());
        key.extend_from_slice(&self.seq.to_be_bytes());
        self.seq += 1;
        batch.insert(key, url.as_str());
        adds.hosts.push(host);
        adds.queued += 1;
        Ok(true)
    }

    /// Records `url` as seen without queueing it (a redirect target that
    /// was just fetched), in `writes`.
    pub fn mark_seen(&self, batch: &mut Writes, url: &Url) {
        batch.insert(prefixed(SEEN, url.as_str().as_bytes()), []);
    }

    /// Takes note of URLs pushed in a batch that has now been applied.
    pub fn added(&mut self, adds: Additions) {
        self.queued += adds.queued;
        for host in adds.hosts {
            if self.in_rotation.insert(host.clone()) {
                self.rotation.push_back(host);
            }
        }
    }

    /// Queues and applies at once (seeds, sitemaps): true if `url` was new.
    pub fn push_now(&mut self, url: &Url, depth: u32) -> Result<bool, sled::Error> {
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        let new = self.push(&mut writes, &mut adds, url, depth)?;
        self.tree.apply_batch(writes.into_batch())?;
        self.added(adds);
        Ok(new)
    }

    /// The next URL: the next host in turn, its lowest-depth URL. It moves
    /// to the in-flight set until [`Entry::finish`] is applied.
    pub fn pop(&mut self) -> Result<Option<Entry>, sled::Error> {
        while let Some(host) = self.rotation.pop_front() {
            let prefix = host_prefix(&host);
            let mut items = self.tree.scan_prefix(&prefix);
            let Some(item) = items.next() else {
                self.in_rotation.remove(&host);
                continue;
            };
            let (key, value) = item?;
            let more = items.next().is_some();
            drop(items);
            // In flight first, then out of the queue: a crash in between
            // leaves the same key in both, and reopening merges them. (Two
            // plain writes: a batch would take sled's global write lock.)
            self.tree
                .insert(prefixed(IN_FLIGHT, &key[1..]), value.clone())?;
            self.tree.remove(&key)?;
            self.queued = self.queued.saturating_sub(1);
            if more {
                self.rotation.push_back(host);
            } else {
                self.in_rotation.remove(&host);
            }
            let depth = u32::from_be_bytes(
                key[prefix.len()..prefix.len() + 4]
                    .try_into()
                    .unwrap_or([0; 4]),
            );
            let entry_key = key[1..].to_vec();
            match Url::parse(&String::from_utf8_lossy(&value)) {
                Ok(url) => {
                    return Ok(Some(Entry {
                        url,
                        depth,
                        key: entry_key,
                    }));
                }
                Err(_) => {
                    // Not written by us: drop it.
                    self.tree.remove(prefixed(IN_FLIGHT, &entry_key))?;
                    continue;
                }
            }
        }
        Ok(None)
    }

    /// URLs waiting.
    pub fn len(&self) -> usize {
        self.queued
    }

    pub fn is_empty(&self) -> bool {
        self.queued == 0
    }

    /// Whether `url` was ever queued.
    pub fn was_seen(&self, url: &Url) -> Result<bool, sled::Error> {
        self.tree
            .contains_key(prefixed(SEEN, url.as_str().as_bytes()))
    }

    /// A handle that answers [`was_seen`](Frontier::was_seen) without the
    /// frontier: a caller can drop links seen long ago before taking the
    /// lock it keeps the frontier under (and must ask `push` again for the
    /// rest, which decides).
    pub fn seen_set(&self) -> SeenSet {
        SeenSet(self.tree.clone())
    }

    /// URLs ever queued (a scan: for tests and reports, not the hot path).
    pub fn seen(&self) -> usize {
        self.tree.scan_prefix([SEEN]).count()
    }

    /// URLs in flight (a scan: for tests and reports).
    pub fn in_flight(&self) -> usize {
        self.tree.scan_prefix([IN_FLIGHT]).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn tree() -> sled::Tree {
        let db = sled::Config::new().temporary(true).open().unwrap();
        db.open_tree("t").unwrap()
    }

    fn drain(f: &mut Frontier) -> Vec<String> {
        std::iter::from_fn(|| f.pop().unwrap())
            .map(|e| e.url.to_string())
            .collect()
    }

    #[test]
    fn hosts_take_turns_and_depth_comes_first() {
        let t = tree();
        let mut f = Frontier::open_in(&t).unwrap();
        for i in 0..5 {
            f.push_now(&u(&format!("https://big.example/{i}")), 2)
                .unwrap();
        }
        f.push_now(&u("https://big.example/shallow"), 1).unwrap();
        f.push_now(&u("https://small.example/a"), 1).unwrap();
        f.push_now(&u("https://small.example/b"), 1).unwrap();
        assert!(
            !f.push_now(&u("https://small.example/a"), 0).unwrap(),
            "seen before"
        );
        assert_eq!(f.len(), 8);
        assert_eq!(
            drain(&mut f),
            [
                "https://big.example/shallow",
                "https://small.example/a",
                "https://big.example/0",
                "https://small.example/b",
                "https://big.example/1",
                "https://big.example/2",
                "https://big.example/3",
                "https://big.example/4",
            ]
        );
        assert!(f.is_empty());
        assert_eq!(f.seen(), 8);
        assert_eq!(f.in_flight(), 8, "popped, not finished");
    }

    #[test]
    fn a_batch_adds_nothing_until_applied_and_dedupes_its_own_urls() {
        let t = tree();
        let mut f = Frontier::open_in(&t).unwrap();
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        assert!(
            f.push(&mut writes, &mut adds, &u("https://a.example/1"), 1)
                .unwrap()
        );
        assert!(
            !f.push(&mut writes, &mut adds, &u("https://a.example/1"), 1)
                .unwrap()
        );
        assert!(f.pop().unwrap().is_none());
        t.apply_batch(writes.into_batch()).unwrap();
        f.added(adds);
        assert_eq!(f.len(), 1);
        assert_eq!(drain(&mut f), ["https://a.example/1"]);
    }

    #[test]
    fn reopened_frontier_resumes_and_requeues_what_was_in_flight() {
        let t = tree();
        {
            let mut f = Frontier::open_in(&t).unwrap();
            f.push_now(&u("https://a.example/1"), 0).unwrap();
            f.push_now(&u("https://a.example/2"), 1).unwrap();
            f.push_now(&u("https://b.example/1"), 0).unwrap();
            let done = f.pop().unwrap().unwrap();
            assert_eq!(done.url.as_str(), "https://a.example/1");
            let mut writes = Writes::default();
            done.finish(&mut writes);
            t.apply_batch(writes.into_batch()).unwrap();
            // Popped and never finished: the run "crashed" with it in flight.
            assert_eq!(
                f.pop().unwrap().unwrap().url.as_str(),
                "https://b.example/1"
            );
        }
        let mut f = Frontier::open_in(&t).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f.in_flight(), 0);
        assert!(
            f.was_seen(&u("https://a.example/1")).unwrap(),
            "finished URLs stay seen"
        );
        assert!(!f.push_now(&u("https://a.example/1"), 0).unwrap());
        assert!(f.push_now(&u("https://a.example/3"), 1).unwrap());
        let mut rest = drain(&mut f);
        rest.sort();
        assert_eq!(
            rest,
            [
                "https://a.example/2",
                "https://a.example/3",
                "https://b.example/1"
            ]
        );
    }
}
