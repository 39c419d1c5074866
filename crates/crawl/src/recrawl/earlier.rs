//! What an earlier crawl saw of each page, read from its `visits.jsonl`.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use nearcrawl_fetch::Validators;
use url::Url;

use crate::sink::VisitRecord;

/// The file of visits every crawl writes in its output directory.
pub const VISITS_FILE: &str = "visits.jsonl";
/// The file a recrawl names the crawl it refreshed in (its output
/// directory): the next recrawl reads that crawl's visits first, so pages
/// a recrawl did not reach (its time or page budget spent) are not lost.
pub const REFRESHED_FILE: &str = "refreshed-crawl";
/// Crawls followed back through [`REFRESHED_FILE`]s, at most.
const MAX_CHAIN: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum RecrawlError {
    #[error("{0}: no visits to refresh (written by crawls since visits were recorded)")]
    NoVisits(PathBuf),
    #[error("{0}: a crawl refreshes an earlier crawl into another output directory")]
    SameDir(PathBuf),
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An earlier crawl's last visit of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Earlier {
    pub depth: u32,
    pub fetched_at: u64,
    /// When the version it saw was first fetched.
    pub version_at: u64,
    pub validators: Validators,
    /// [`super::stable_hash`] of its text, if it had one.
    pub text_hash: Option<u64>,
    pub bytes: u64,
    pub interval_secs: u64,
    /// The archived payload's digest, if it was archived.
    pub digest: Option<String>,
}

impl Earlier {
    /// When the page falls due again.
    pub fn due_at(&self) -> u64 {
        self.fetched_at.saturating_add(self.interval_secs)
    }
}

/// Every page an earlier crawl visited and did not find gone, by URL.
#[derive(Debug, Default)]
pub struct EarlierCrawl {
    pages: HashMap<String, Earlier>,
    /// Lines of its `visits.jsonl` that did not parse (skipped).
    pub bad_lines: usize,
}

impl EarlierCrawl {
    /// Reads the visits of the crawl in `dirs` (each worker's output of a
    /// cluster crawl, or one), after those of the crawls it refreshed; a
    /// URL's last visit counts.
    pub fn read_all(dirs: &[PathBuf]) -> Result<EarlierCrawl, RecrawlError> {
        // Generations, newest first: each names the crawls it refreshed.
        let mut generations = vec![dirs.to_vec()];
        while generations.len() < MAX_CHAIN {
            let mut before: Vec<PathBuf> = Vec::new();
            for dir in generations.last().unwrap() {
                let Ok(named) = std::fs::read_to_string(dir.join(REFRESHED_FILE)) else {
                    continue;
                };
                for d in named.lines().map(PathBuf::from) {
                    if !d.join(VISITS_FILE).is_file() {
                        tracing::warn!(crawl = %d.display(), "an earlier crawl of the chain is gone: its pages that later crawls did not reach are not asked again");
                    } else if !before.contains(&d) {
                        before.push(d);
                    }
                }
            }
            if before.is_empty() {
                break;
            }
            generations.push(before);
        }
        let mut crawl = EarlierCrawl::default();
        for generation in generations.iter().rev() {
            for dir in generation {
                crawl.read_visits(dir)?;
            }
        }
        Ok(crawl)
    }

    /// [`read_all`](EarlierCrawl::read_all) of one directory.
    pub fn read(dir: &Path) -> Result<EarlierCrawl, RecrawlError> {
        EarlierCrawl::read_all(&[dir.to_path_buf()])
    }

    /// Reads `dir`'s visits over those read before.
    fn read_visits(&mut self, dir: &Path) -> Result<(), RecrawlError> {
        let crawl = self;
        let path = dir.join(VISITS_FILE);
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(RecrawlError::NoVisits(path));
            }
            Err(source) => return Err(RecrawlError::Read { path, source }),
        };
        for line in std::io::BufReader::new(file).lines() {
            let line = line.map_err(|source| RecrawlError::Read {
                path: path.clone(),
                source,
            })?;
            match serde_json::from_str::<VisitRecord>(&line) {
                Ok(v) if v.change == super::Change::Gone.name() => {
                    crawl.pages.remove(&v.url);
                }
                Ok(v) => {
                    let (url, earlier) = earlier_of(v);
                    crawl.pages.insert(url, earlier);
                }
                Err(_) if line.trim().is_empty() => {}
                Err(_) => crawl.bad_lines += 1,
            }
        }
        if crawl.bad_lines > 0 {
            tracing::warn!(path = %path.display(), lines = crawl.bad_lines, "visits that did not parse were skipped");
        }
        Ok(())
    }

    /// The earlier visit of `url`, if any.
    pub fn get(&self, url: &Url) -> Option<&Earlier> {
        self.pages.get(url.as_str())
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The pages to ask again, with their depths, the longest overdue
    /// first (then by URL, so the order is the same on every worker).
    pub fn seeds(&self) -> Vec<(Url, u32)> {
        let mut due: Vec<(&String, &Earlier)> = self.pages.iter().collect();
        due.sort_by(|a, b| (a.1.due_at(), a.0).cmp(&(b.1.due_at(), b.0)));
        due.into_iter()
            .filter_map(|(url, e)| Some((Url::parse(url).ok()?, e.depth)))
            .collect()
    }
}

fn earlier_of(v: VisitRecord) -> (String, Earlier) {
    let earlier = Earlier {
        depth: v.depth,
        fetched_at: v.fetched_at,
        version_at: v.version_at,
        validators: Validators {
            etag: v.etag,
            last_modified: v.last_modified,
        },
        text_hash: u64::from_str_radix(&v.text_hash, 16).ok(),
        bytes: v.bytes,
        interval_secs: v.interval_secs,
        digest: v.digest,
    };
    (v.url, earlier)
}
