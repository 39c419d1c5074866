//! A page's name: the words of its title that its host does not repeat.
//!
//! Pages generated from one template (API docs, product pages, intrinsics)
//! can share almost all of their text and still document different things:
//! `Integer` and `Long`, `int8` and `int16`, `MultiButtonUI` and
//! `MultiMenuItemUI` (word-3-shingle Jaccard 0.93 on javadoc). What tells
//! them apart is the name, and a site puts the name in the title. The rest
//! of a title is the host's template (`(Java SE 17 & JDK 17)`, `- Rust`,
//! `| Example News`), which a copy on another host or a redesign changes.
//!
//! So the gate keeps, per host, how often each title word occurs, and two
//! pages can only be duplicates when their titles, each without its host's
//! template words, are the same words in the same order. A template word
//! is one in at least half of the host's titles, once the host has
//! [`MIN_TITLES`] of them; until then every title word is a name word (the
//! cold start errs towards keeping pages). A page without a title gives no
//! evidence either way. The crawler passes the title and the main heading
//! together: some generators put the name in only one of them.
//!
//! The counts are a Misra–Gries summary of [`COUNTERS`] words per host:
//! every word in more than 1/(COUNTERS+1) of the host's titles is kept,
//! its count short by at most that share, so the half-of-titles test is
//! never wrong by more than 6 points. About 150 bytes per host.

use std::collections::{HashMap, HashSet};

use crate::error::IndexError;

/// Titles a host needs before any of its title words counts as template.
pub const MIN_TITLES: u32 = 8;
/// Words tracked per host.
const COUNTERS: usize = 16;
/// Title words kept per page (a title longer than this is cut).
pub(crate) const MAX_TITLE_WORDS: usize = 64;

/// Bits of a title word's hash: stored in 3 bytes. Two names that differ
/// in one word compare the same by chance 1 time in 16.8 million.
pub(crate) const TITLE_WORD_BITS: u32 = 24;
const TITLE_WORD_MASK: u32 = (1 << TITLE_WORD_BITS) - 1;

/// A title word's hash as the gate compares it; hashes of earlier versions
/// (32 bits) are cut to it when read.
pub(crate) fn title_word(hash: u32) -> u32 {
    hash & TITLE_WORD_MASK
}

/// The words of a page's title (and heading), in order, as
/// [`TITLE_WORD_BITS`]-bit hashes: runs of letters and digits, lowercased,
/// and every other visible character alone, since in names symbols matter
/// (`_Tp` and `_Tp[]`, `Future<R>` and `Future<R&>`).
pub(crate) fn title_words(title: &str) -> Vec<u32> {
    use nearcrawl_simhash::hash::{fmix64, fnv1a};
    let mut words = Vec::new();
    let mut word = String::new();
    let push = |w: &str, words: &mut Vec<u32>| {
        if words.len() < MAX_TITLE_WORDS {
            words.push(title_word(fmix64(fnv1a(w.as_bytes())) as u32));
        }
    };
    for c in title.chars() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
            continue;
        }
        if !word.is_empty() {
            push(&word, &mut words);
            word.clear();
        }
        if !c.is_whitespace() {
            push(c.encode_utf8(&mut [0; 4]), &mut words);
        }
    }
    if !word.is_empty() {
        push(&word, &mut words);
    }
    words
}

/// The key of a host (or any group of pages sharing a template).
pub(crate) fn host_key(host: &str) -> u64 {
    nearcrawl_simhash::hash::fmix64(nearcrawl_simhash::hash::fnv1a(
        host.to_ascii_lowercase().as_bytes(),
    ))
}

#[derive(Debug, Clone, Default)]
struct Summary {
    titles: u32,
    counts: Vec<(u32, u32)>,
}

impl Summary {
    fn add(&mut self, words: &[u32]) {
        self.titles += 1;
        let mut distinct = words.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        for w in distinct {
            if let Some(c) = self.counts.iter_mut().find(|c| c.0 == w) {
                c.1 += 1;
            } else if self.counts.len() < COUNTERS {
                self.counts.push((w, 1));
            } else {
                // Misra–Gries: the new word and every counter lose one.
                self.counts.iter_mut().for_each(|c| c.1 -= 1);
                self.counts.retain(|c| c.1 > 0);
            }
        }
    }

    fn is_template(&self, word: u32) -> bool {
        self.titles >= MIN_TITLES
            && self
                .counts
                .iter()
                .any(|&(w, n)| w == word && n * 2 >= self.titles)
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(4 + self.counts.len() * 8);
        b.extend_from_slice(&self.titles.to_le_bytes());
        for (w, n) in &self.counts {
            b.extend_from_slice(&w.to_le_bytes());
            b.extend_from_slice(&n.to_le_bytes());
        }
        b
    }

    fn from_bytes(b: &[u8]) -> Option<Summary> {
        if b.len() < 4 || (b.len() - 4) % 8 != 0 {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        Some(Summary {
            titles: u32_at(0),
            counts: (4..b.len())
                .step_by(8)
                .map(|i| (title_word(u32_at(i)), u32_at(i + 4)))
                .collect(),
        })
    }
}

/// What two titles say of two pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// Different names: different pages, however alike their text.
    Different,
    /// The same name, not empty: the same item, if the text agrees.
    Same,
    /// A title missing, or nothing but template words: no evidence.
    Unknown,
}

/// Hosts whose summaries go to sled in one batch.
const FLUSH_HOSTS: usize = 256;
/// Summaries kept in memory past a flush: a broad crawl meets millions of
/// hosts (~200 B of summary each), and most are finished long before it
/// ends. Past this many the cache is emptied at a flush (everything in it
/// is written then) and read back from sled host by host as needed.
const CACHED_HOSTS: usize = 16_384;

/// Title-word statistics of every host, kept in a sled tree and cached.
#[derive(Debug)]
pub(crate) struct TitleModel {
    tree: sled::Tree,
    hosts: HashMap<u64, Summary>,
    dirty: HashSet<u64>,
    cache_limit: usize,
}

impl TitleModel {
    pub(crate) fn open_in(db: &sled::Db) -> Result<Self, IndexError> {
        Ok(TitleModel {
            tree: db.open_tree("dedup.titles")?,
            hosts: HashMap::new(),
            dirty: HashSet::new(),
            cache_limit: CACHED_HOSTS,
        })
    }

    fn summary(&mut self, host: u64) -> Result<&mut Summary, IndexError> {
        if !self.hosts.contains_key(&host) {
            let s = match self.tree.get(host.to_be_bytes())? {
                Some(b) => Summary::from_bytes(&b).ok_or_else(|| {
                    IndexError::Corrupt(format!("title summary of host {host:x}"))
                })?,
                None => Summary::default(),
            };
            self.hosts.insert(host, s);
        }
        Ok(self.hosts.get_mut(&host).expect("inserted above"))
    }

    /// Counts the title of a page recorded as new.
    pub(crate) fn add(&mut self, host: u64, words: &[u32]) -> Result<(), IndexError> {
        if !words.is_empty() {
            self.summary(host)?.add(words);
            self.dirty.insert(host);
        }
        Ok(())
    }

    /// What two pages' titles say of whether they are the same page: with
    /// each host's template words taken out, are the two titles the same
    /// words in the same order?
    pub(crate) fn compare(
        &mut self,
        a: (u64, &[u32]),
        b: (u64, &[u32]),
    ) -> Result<Names, IndexError> {
        if a.1.is_empty() || b.1.is_empty() {
            return Ok(Names::Unknown);
        }
        let name = self.name(a)?;
        if name != self.name(b)? {
            Ok(Names::Different)
        } else if name.is_empty() {
            Ok(Names::Unknown)
        } else {
            Ok(Names::Same)
        }
    }

    /// A title without its host's template words.
    fn name(&mut self, (host, words): (u64, &[u32])) -> Result<Vec<u32>, IndexError> {
        let summary = self.summary(host)?;
        Ok(words
            .iter()
            .copied()
            .filter(|w| !summary.is_template(*w))
            .collect())
    }

    /// Writes the summaries changed since the last flush, a few hundred
    /// hosts per batch: sled keeps every node a batch rewrites until the
    /// batch ends, so one batch for ten thousand hosts held 12 MiB at the
    /// checkpoint, the crawl's peak. The summaries are statistics, so a
    /// crash between two batches costs nothing but a few counts.
    pub(crate) fn flush(&mut self) -> Result<(), IndexError> {
        let dirty: Vec<u64> = self.dirty.drain().collect();
        for chunk in dirty.chunks(FLUSH_HOSTS) {
            let mut batch = sled::Batch::default();
            for host in chunk {
                if let Some(s) = self.hosts.get(host) {
                    batch.insert(&host.to_be_bytes(), s.to_bytes());
                }
            }
            self.tree.apply_batch(batch)?;
        }
        if self.hosts.len() > self.cache_limit {
            self.hosts = HashMap::new();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_words_need_half_the_titles_of_an_established_host() {
        let mut s = Summary::default();
        let mut suffix = title_words("(Java SE 17 & JDK 17)");
        suffix.sort_unstable();
        suffix.dedup();
        for i in 0..MIN_TITLES - 1 {
            s.add(&title_words(&format!("Class{i} (Java SE 17 & JDK 17)")));
        }
        assert!(!s.is_template(suffix[0]), "not before MIN_TITLES");
        s.add(&title_words("Long (Java SE 17 & JDK 17)"));
        assert!(suffix.iter().all(|w| s.is_template(*w)));
        assert!(!s.is_template(title_words("Long")[0]));
        // Many distinct names do not push the template words out.
        for i in 0..1000 {
            s.add(&title_words(&format!(
                "Name{i} Other{i} (Java SE 17 & JDK 17)"
            )));
        }
        assert!(suffix.iter().all(|w| s.is_template(*w)));
        assert_eq!(Summary::from_bytes(&s.to_bytes()).unwrap().titles, s.titles);
    }

    #[test]
    fn names_differ_when_a_non_template_word_differs() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-names-{}", std::process::id()));
        let db = sled::Config::new()
            .temporary(true)
            .path(&dir)
            .open()
            .unwrap();
        let mut m = TitleModel::open_in(&db).unwrap();
        let (h, other) = (host_key("docs.example"), host_key("mirror.example"));
        for i in 0..20 {
            m.add(h, &title_words(&format!("Item{i} - Example Docs")))
                .unwrap();
        }
        let int = title_words("Integer - Example Docs");
        let long = title_words("Long - Example Docs");
        assert_eq!(m.compare((h, &int), (h, &long)).unwrap(), Names::Different);
        assert_eq!(m.compare((h, &int), (h, &int)).unwrap(), Names::Same);
        // Another host's template is only template there once it has titles.
        let copy = title_words("Integer | Mirror");
        assert_eq!(
            m.compare((other, &copy), (h, &int)).unwrap(),
            Names::Different
        );
        for i in 0..20 {
            m.add(other, &title_words(&format!("Thing{i} | Mirror")))
                .unwrap();
        }
        assert_eq!(m.compare((other, &copy), (h, &int)).unwrap(), Names::Same);
        // No title, or only template words: no evidence.
        assert_eq!(m.compare((h, &[]), (h, &long)).unwrap(), Names::Unknown);
        let bare = title_words("Example Docs");
        assert_eq!(m.compare((h, &bare), (h, &bare)).unwrap(), Names::Unknown);
        // Emptied past its limit at a flush, the cache reads the same
        // statistics back from sled.
        m.cache_limit = 1;
        m.flush().unwrap();
        assert!(m.hosts.is_empty());
        assert_eq!(m.compare((h, &int), (h, &long)).unwrap(), Names::Different);
        assert_eq!(m.compare((other, &copy), (h, &int)).unwrap(), Names::Same);
        // Digits, word counts and symbols are part of names.
        for (a, b) in [
            ("i8", "i16"),
            ("unsigned long", "unsigned long long"),
            ("default_delete<_Tp>", "default_delete<_Tp[]>"),
            ("Map Key", "Key Map"),
        ] {
            let a = title_words(&format!("{a} - Example Docs"));
            let b = title_words(&format!("{b} - Example Docs"));
            assert_eq!(m.compare((h, &a), (h, &b)).unwrap(), Names::Different);
        }
    }
}
