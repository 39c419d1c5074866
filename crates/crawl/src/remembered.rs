//! A gate that remembers earlier crawls: their documents are imported into
//! a new crawl's gate once, at its start, so a page near a page of an
//! earlier corpus is a duplicate of it (its links not followed), recorded
//! with the earlier URL and crawl (`[dedup] remember`, `crawl
//! --dedup-against DIR`; a recrawl remembers the crawl it refreshes).
//!
//! Why an import and not a second gate to ask: one lookup per page, and a
//! remembered document costs what a document of the crawl's own costs
//! (its record is copied: ~190 bytes of disk, ~100 of memory). The earlier
//! crawls' directories are only read; their URLs are read from them when
//! a page duplicates one of their documents.
//!
//! A remembered document's id has its top bit set and the crawl's place
//! in the list above its own id ([`Remembered::id`]).

use std::path::{Path, PathBuf};

use nearcrawl_index::Deduper;

use crate::doc_urls::DocUrls;

const REMEMBERED: u64 = 1 << 63;
const ID_BITS: u32 = 48;

#[derive(Debug, thiserror::Error)]
pub enum RememberError {
    #[error(
        "{0}: no crawl state (state/gate.records and state/docs): give an earlier crawl's output directory"
    )]
    NotACrawl(PathBuf),
    #[error("{0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("the gate: {0}")]
    Index(#[from] nearcrawl_index::IndexError),
    #[error(
        "this crawl's gate holds documents but not the remembered crawls: they are imported \
         when a crawl starts (use a new output directory)"
    )]
    TooLate,
    #[error("this crawl remembers {was}; the config asks for {now}: it cannot change midway")]
    Changed { was: String, now: String },
}

/// The earlier crawls a crawl's gate remembers, and their documents' URLs.
#[derive(Debug, Default)]
pub struct Remembered {
    crawls: Vec<(PathBuf, DocUrls)>,
}

impl Remembered {
    /// Whether `dir` holds a gate and document URLs to remember (an
    /// embedded crawl's output).
    pub fn readable(dir: &Path) -> bool {
        dir.join("state/docs").is_file() && records(dir).is_file()
    }

    /// The earlier crawls in `dirs` (output directories), read only.
    pub fn open(dirs: &[PathBuf]) -> Result<Remembered, RememberError> {
        let mut crawls = Vec::new();
        for dir in dirs {
            let docs = dir.join("state/docs");
            if !Remembered::readable(dir) {
                return Err(RememberError::NotACrawl(dir.clone()));
            }
            let urls = DocUrls::read_only(&docs).map_err(|e| RememberError::Read(docs, e))?;
            crawls.push((dir.clone(), urls));
        }
        Ok(Remembered { crawls })
    }

    /// The id in this crawl's gate of document `doc` of crawl `crawl`.
    pub fn id(crawl: usize, doc: u64) -> u64 {
        REMEMBERED | ((crawl as u64) << ID_BITS) | doc
    }

    /// The crawl (its place in the list) and id there of a remembered
    /// document; none for a document of this crawl's own.
    pub fn split(doc: u64) -> Option<(usize, u64)> {
        let crawl = (doc & !REMEMBERED) >> ID_BITS;
        (doc & REMEMBERED != 0).then_some((crawl as usize, doc & ((1 << ID_BITS) - 1)))
    }

    /// The URL of a remembered document, if its crawl committed it.
    pub fn url_of(&self, doc: u64) -> Option<String> {
        let (crawl, id) = Remembered::split(doc)?;
        self.crawls.get(crawl)?.1.get(id).ok().flatten()
    }

    /// What the state records of the list, to notice a change.
    pub fn names(&self) -> String {
        let dirs: Vec<String> = (self.crawls.iter())
            .map(|(d, _)| d.display().to_string())
            .collect();
        dirs.join("\n")
    }

    /// Makes `dedup` hold these crawls, given which ones its owner
    /// recorded it holds (`recorded`, none if it never recorded any):
    /// imports them into a gate that has judged nothing yet (`judged`: its
    /// owner knows it has) and flushes it; refuses a change of crawls, or a
    /// gate that judged pages without them. Returns the names to record,
    /// once imported.
    pub fn bring_into(
        &self,
        dedup: &mut Deduper,
        recorded: Option<&str>,
        judged: bool,
    ) -> Result<Option<String>, RememberError> {
        let names = self.names();
        match recorded {
            Some(was) if was == names => return Ok(None),
            Some(was) => {
                let was = was.to_string();
                return Err(RememberError::Changed { was, now: names });
            }
            None if self.is_empty() => return Ok(None),
            None if judged || dedup.indexed() > 0 => return Err(RememberError::TooLate),
            None => {}
        }
        let t = std::time::Instant::now();
        let mut n = 0;
        for (crawl, (dir, _)) in self.crawls.iter().enumerate() {
            n += dedup.remember(&records(dir), |doc| Remembered::id(crawl, doc))?;
        }
        dedup.flush()?;
        let secs = t.elapsed().as_secs_f64();
        tracing::info!(
            documents = n,
            secs,
            "the gate remembers the earlier crawls' documents"
        );
        Ok(Some(names))
    }

    pub fn is_empty(&self) -> bool {
        self.crawls.is_empty()
    }

    /// The directory of the crawl a remembered document is from.
    pub fn crawl_of(&self, doc: u64) -> Option<&Path> {
        let (crawl, _) = Remembered::split(doc)?;
        self.crawls.get(crawl).map(|(d, _)| d.as_path())
    }
}

fn records(dir: &Path) -> PathBuf {
    dir.join("state").join(nearcrawl_index::RECORDS_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_say_their_crawl_and_their_own_id() {
        assert_eq!(Remembered::split(12), None);
        let id = Remembered::id(3, 12_345);
        assert_eq!(Remembered::split(id), Some((3, 12_345)));
        assert_ne!(Remembered::id(0, 7), 7);
    }
}
