//! The first response of each payload in a crawl's WARC files, by its
//! digest: a later response with the same payload is written as a revisit
//! of it (WARC 1.1, 6.7.1, profile `identical-payload-digest`), not as a
//! second copy of the bytes.
//!
//! Kept in memory (about 40 bytes a payload: a hash of the digest, the
//! file and the offset), rebuilt from the CDXJ indexes when the sink
//! opens or rewinds; the original's URI and date are read from its record
//! when a copy comes, which also rules out a collision of the hashes.

use std::collections::HashMap;
use std::io::{self, BufRead};
use std::path::Path;

#[derive(Debug, Default)]
pub(crate) struct Payloads {
    first: HashMap<u64, (u32, u64)>,
}

impl Payloads {
    /// The payloads of the responses that files `0..=last` of `dir` index.
    pub(crate) fn load(dir: &Path, last: usize) -> io::Result<Payloads> {
        let mut payloads = Payloads::default();
        for n in 0..=last {
            let path = dir.join(format!("crawl-{n:05}.cdxj"));
            let file = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for line in io::BufReader::new(file).lines() {
                let line = line?;
                let Some(json) = line.splitn(3, ' ').nth(2) else {
                    continue;
                };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
                    continue;
                };
                let (Some(digest), Some(offset)) = (v["digest"].as_str(), v["offset"].as_str())
                else {
                    continue;
                };
                if v["mime"] == "warc/revisit" {
                    continue;
                }
                if let Ok(offset) = offset.parse() {
                    payloads.insert(digest, n as u32, offset);
                }
            }
        }
        Ok(payloads)
    }

    /// Where the first response with payload `digest` is, if any.
    pub(crate) fn get(&self, digest: &str) -> Option<(u32, u64)> {
        self.first.get(&key(digest)).copied()
    }

    /// Notes a response with payload `digest` (the earliest one stays).
    pub(crate) fn insert(&mut self, digest: &str, file: u32, offset: u64) {
        let at = self.first.entry(key(digest)).or_insert((file, offset));
        *at = (*at).min((file, offset));
    }
}

fn key(digest: &str) -> u64 {
    nearcrawl_simhash::hash::fnv1a(digest.as_bytes())
}
