//! The frontier: URLs waiting to be fetched, and every URL ever queued,
//! both on disk in sled.
//!
//! Per-host queues, lowest depth first within a host (breadth-first), and
//! hosts served in turn so one large host cannot starve the others. Only
//! the list of hosts with pending URLs is kept in memory.

use std::collections::{HashSet, VecDeque};

use url::Url;

/// A URL to fetch and how many links it is from a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub url: Url,
    pub depth: u32,
}

#[derive(Debug)]
pub struct Frontier {
    /// host 0x00 depth(u32 BE) seq(u64 BE) -> URL
    queue: sled::Tree,
    /// URL -> () for every URL ever queued.
    seen: sled::Tree,
    rotation: VecDeque<String>,
    in_rotation: HashSet<String>,
    seq: u64,
}

fn host_prefix(host: &str) -> Vec<u8> {
    let mut k = host.as_bytes().to_vec();
    k.push(0);
    k
}

impl Frontier {
    /// Opens the frontier kept in trees of `db`, resuming what is there.
    pub fn open_in(db: &sled::Db) -> Result<Frontier, sled::Error> {
        let queue = db.open_tree("frontier.queue")?;
        let seen = db.open_tree("frontier.seen")?;
        let mut f = Frontier {
            queue,
            seen,
            rotation: VecDeque::new(),
            in_rotation: HashSet::new(),
            seq: 0,
        };
        // One pass over the keys: the hosts with pending URLs, and a
        // sequence number above every one in use.
        for key in f.queue.iter().keys() {
            let key = key?;
            let Some(nul) = key.iter().position(|&b| b == 0) else {
                continue;
            };
            let host = String::from_utf8_lossy(&key[..nul]).into_owned();
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

    /// Queues `url` at `depth` unless it was ever queued before; true if
    /// it was new. The caller canonicalizes and checks scope first.
    pub fn push(&mut self, url: &Url, depth: u32) -> Result<bool, sled::Error> {
        if self.seen.insert(url.as_str(), &[])?.is_some() {
            return Ok(false);
        }
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let mut key = host_prefix(&host);
        key.extend_from_slice(&depth.to_be_bytes());
        key.extend_from_slice(&self.seq.to_be_bytes());
        self.seq += 1;
        self.queue.insert(key, url.as_str())?;
        if self.in_rotation.insert(host.clone()) {
            self.rotation.push_back(host);
        }
        Ok(true)
    }

    /// The next URL: the next host in turn, its lowest-depth URL.
    pub fn pop(&mut self) -> Result<Option<Entry>, sled::Error> {
        while let Some(host) = self.rotation.pop_front() {
            let prefix = host_prefix(&host);
            let Some(item) = self.queue.scan_prefix(&prefix).next() else {
                self.in_rotation.remove(&host);
                continue;
            };
            let (key, value) = item?;
            self.queue.remove(&key)?;
            if self.queue.scan_prefix(&prefix).next().is_some() {
                self.rotation.push_back(host);
            } else {
                self.in_rotation.remove(&host);
            }
            let depth = u32::from_be_bytes(
                key[prefix.len()..prefix.len() + 4]
                    .try_into()
                    .unwrap_or([0; 4]),
            );
            match Url::parse(&String::from_utf8_lossy(&value)) {
                Ok(url) => return Ok(Some(Entry { url, depth })),
                Err(_) => continue, // not written by us: skip
            }
        }
        Ok(None)
    }

    /// Records `url` as seen without queueing it (a redirect target that
    /// was just fetched).
    pub fn mark_seen(&mut self, url: &Url) -> Result<(), sled::Error> {
        self.seen.insert(url.as_str(), &[])?;
        Ok(())
    }

    /// URLs waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// URLs ever queued.
    pub fn seen(&self) -> usize {
        self.seen.len()
    }

    /// Whether `url` was ever queued.
    pub fn was_seen(&self, url: &Url) -> Result<bool, sled::Error> {
        self.seen.contains_key(url.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn db() -> sled::Db {
        sled::Config::new().temporary(true).open().unwrap()
    }

    #[test]
    fn hosts_take_turns_and_depth_comes_first() {
        let db = db();
        let mut f = Frontier::open_in(&db).unwrap();
        for i in 0..5 {
            f.push(&u(&format!("https://big.example/{i}")), 2).unwrap();
        }
        f.push(&u("https://big.example/shallow"), 1).unwrap();
        f.push(&u("https://small.example/a"), 1).unwrap();
        f.push(&u("https://small.example/b"), 1).unwrap();
        assert!(
            !f.push(&u("https://small.example/a"), 0).unwrap(),
            "seen before"
        );
        assert_eq!(f.len(), 8);
        let order: Vec<String> = std::iter::from_fn(|| f.pop().unwrap())
            .map(|e| e.url.to_string())
            .collect();
        assert_eq!(
            order,
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
    }

    #[test]
    fn reopened_frontier_resumes() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-frontier-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let db = sled::open(&dir).unwrap();
            let mut f = Frontier::open_in(&db).unwrap();
            f.push(&u("https://a.example/1"), 0).unwrap();
            f.push(&u("https://a.example/2"), 1).unwrap();
            f.push(&u("https://b.example/1"), 0).unwrap();
            assert_eq!(
                f.pop().unwrap().unwrap().url.as_str(),
                "https://a.example/1"
            );
            db.flush().unwrap();
        }
        // sled lets go of its file lock from a background thread.
        let start = std::time::Instant::now();
        let db = loop {
            match sled::open(&dir) {
                Ok(db) => break db,
                Err(e) if start.elapsed() < std::time::Duration::from_secs(5) => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("{e}"),
            }
        };
        let mut f = Frontier::open_in(&db).unwrap();
        assert_eq!(f.len(), 2);
        assert!(
            f.was_seen(&u("https://a.example/1")).unwrap(),
            "popped URLs stay seen"
        );
        assert!(!f.push(&u("https://a.example/1"), 0).unwrap());
        assert!(f.push(&u("https://a.example/3"), 1).unwrap());
        let rest: Vec<String> = std::iter::from_fn(|| f.pop().unwrap())
            .map(|e| e.url.to_string())
            .collect();
        assert_eq!(rest.len(), 3);
        assert!(rest.contains(&"https://a.example/3".to_string()));
        drop(f);
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
