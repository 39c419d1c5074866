//! A page's name: the words of its title that its host does not repeat,
//! and what two names say of two pages.
//!
//! Pages generated from one template (API docs, product pages, intrinsics)
//! can share almost all of their text and still document different things:
//! `Integer` and `Long`, `i8` and `i16`, `MultiButtonUI` and
//! `MultiMenuItemUI` (word-3-shingle Jaccard 0.93 on javadoc). What tells
//! them apart is the name, and a site puts the name in the title. The rest
//! of a title is the host's template (`(Java SE 17 & JDK 17)`, `- Rust`),
//! taken out by statistics: a *template word* is in at least half of the
//! host's titles, once it has [`MIN_TITLES`]. (The site's own name, which
//! a page declares or its host spells, is taken out before, from the
//! first page on: [`crate::page_name`].)
//!
//! Two names on one host weigh as evidence by how rare the words are in
//! which they differ:
//! - a word in few of the host's titles names one item (`Integer`,
//!   `_mm_max_ps`, `AtomicI16`): names that differ there are two items,
//!   however alike their text ([`Names::Different`]);
//! - a *section word* is in at least one title in [`SECTION_SHARE`] (and
//!   in [`MIN_SECTION_TITLES`]): a namespace, a module, an architecture
//!   (`std`, `alloc`, `x86_64`, `aarch64`). An item's name is in the
//!   titles of its own few pages; a section's is in all of its pages'.
//!   Titles that are the same word for word but for section words
//!   swapped in place (`Vec in std::vec`, `Vec in alloc::vec`) are one
//!   item under two paths (a re-export, an alias) or two items of a family
//!   (`Weather in Adams County`): [`Names::Qualified`], a duplicate only
//!   where the texts are near identical. A section's first pages carry a
//!   word the host has not counted often yet; where the page's URL has it
//!   as a folder (`/core/marker/trait.Sized.html`), it is a section word
//!   of that page, swapped for a counted one ([`directory_words`]). An
//!   item's name is a file's, not a folder's. A word added or left out is not
//!   a swap: `atomic<long long>` and `atomic<unsigned long long>` (doxygen,
//!   where `unsigned` is in 1% of the titles) are two items.
//!
//! Why these numbers: in rust-doc's 22,000 titles an item's name is in at
//! most 23 (`IntoIter`, a name many modules give an item; `Vec` 15,
//! `Iterator` 4), and every word in 64 to 400 names a module, a crate or
//! an architecture (`unix` 64, `slice` 122, `alloc` 234, `wasm32` 320;
//! `std` is in 1,469, `x86_64` in 5,018, `core` in 18,000); javadoc's
//! packages (`jdi`, `util`, `swing`) are in 146 to 980 of its 10,000.
//! One title in 256 and 64 titles lie between the two on both sites.
//!
//! Across hosts names are weak evidence: two editors title one story
//! (42% of the syndicated article pairs the gate was measured on carried
//! rewritten headlines), so two hosts' names that differ say nothing
//! ([`Names::Unknown`]) and the text decides.
//!
//! Words are runs of letters, digits and underscores (an identifier is one
//! word: `_mm_add_ps`, `x86_64`), lowercased, and every other visible
//! character alone, since in names symbols matter (`_Tp` and `_Tp[]`,
//! `Future<R>` and `Future<R&>`). Counts per host are a
//! [`TitleCounts`](crate::title_counts::TitleCounts) table.

use std::collections::{HashMap, HashSet};

use crate::error::IndexError;
use crate::title_counts::{TitleCounts, title_word};

/// Titles a host needs before any of its title words counts as template.
pub const MIN_TITLES: u32 = 8;
/// A section word is in at least one of this many of its host's titles.
pub(crate) const SECTION_SHARE: u32 = 256;
/// ... and in at least this many: a family of a few dozen pages (a
/// directory of copy-pasted sources, the titles a type name is in) is not
/// a namespace. On doxygen (3,800 titles) pb_ds's directories of 10-30
/// sources, each file near identical to its namesakes, passed as sections
/// at 1 in 256 alone (91 pages dropped as copies of other files).
pub(crate) const MIN_SECTION_TITLES: u32 = 64;
/// Title words kept per page (a title longer than this is cut).
pub(crate) const MAX_TITLE_WORDS: usize = 64;

/// The words of a page's name, in order, as [`TITLE_WORD_BITS`](crate::title_counts::TITLE_WORD_BITS)-bit
/// hashes (see the module doc).
pub(crate) fn title_words(title: &str) -> Vec<u32> {
    let mut words = Vec::new();
    title_tokens(title, |token| {
        if words.len() < MAX_TITLE_WORDS {
            words.push(word_key(&token.to_lowercase()));
        }
    });
    words
}

/// A title's tokens as written: runs of letters, digits and underscores,
/// and every other visible character alone.
fn title_tokens(title: &str, mut f: impl FnMut(&str)) {
    let mut start = None;
    for (i, c) in title.char_indices() {
        if c.is_alphanumeric() || c == '_' {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            f(&title[s..i]);
        }
        if !c.is_whitespace() {
            f(&title[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        f(&title[s..]);
    }
}

/// A title word (lowercased) as the model counts it.
fn word_key(word: &str) -> u32 {
    use nearcrawl_simhash::hash::{fmix64, fnv1a};
    title_word(fmix64(fnv1a(word.as_bytes())) as u32)
}

/// Which of a title's words (bit `i` for word `i` of [`title_words`])
/// name a folder of the page's URL, spelled as the folder is: `core` in
/// `Sized in core::marker` at `/core/marker/trait.Sized.html`, not `Sized`
/// (the file's name, an item's), nor javadoc's class `DocTree` in
/// `/com/sun/source/doctree/`.
pub(crate) fn directory_words(title: &str, url: &str) -> u64 {
    let Some(mut segments) = path_segments(url) else {
        return 0;
    };
    segments.next_back(); // the file
    let folders: Vec<&str> = segments
        .flat_map(|folder| folder.split(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| !w.is_empty())
        .collect();
    let (mut mask, mut i) = (0u64, 0);
    title_tokens(title, |token| {
        if i < MAX_TITLE_WORDS.min(64) && folders.contains(&token) {
            mask |= 1 << i;
        }
        i += 1;
    });
    mask
}

/// The segments of the path of `url`, a URL as the `url` crate writes it
/// (`Url::as_str`; the crawl's are): what `Url::path_segments` gives, read
/// off the string. Parsing it again, its host through IDNA, was half of
/// this module's time on API docs.
fn path_segments(url: &str) -> Option<std::str::Split<'_, char>> {
    let (_, rest) = url.split_once("://")?;
    let path = &rest[rest.find('/')?..];
    let path = path.split(['?', '#']).next().unwrap_or(path);
    Some(path[1..].split('/'))
}

/// The key of a host (or any group of pages sharing a template).
pub(crate) fn host_key(host: &str) -> u64 {
    nearcrawl_simhash::hash::fmix64(nearcrawl_simhash::hash::fnv1a(
        host.to_ascii_lowercase().as_bytes(),
    ))
}

/// What two titles say of two pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// Names on one host that differ in a word naming an item: different
    /// pages, however alike their text.
    Different,
    /// Names on one host that differ only in section words: one item
    /// under two paths, if the texts are near identical.
    Qualified,
    /// The same name, not empty: the same item, if the text agrees.
    Same,
    /// A title missing, two titles of nothing but template words, or two
    /// hosts' names that differ: no evidence. (On one host a name of only
    /// template words and one with a word of its own differ: sphinx's
    /// `Index` and `Index – Y`, once its index pages made `index` template,
    /// had one extracted text.)
    Unknown,
}

/// Hosts whose counts go to sled in one batch.
const FLUSH_HOSTS: usize = 256;
/// Counts kept in memory past a flush: a broad crawl meets millions of
/// hosts, and most are finished long before it ends. Past this many the
/// cache is emptied at a flush (everything in it is written then) and
/// read back from sled host by host as needed.
const CACHED_HOSTS: usize = 16_384;
/// A host's counts are written again once its titles grew by this share
/// since they last were (and at [`TitleModel::flush_all`]): a large host's
/// table is up to 50 KB, and writing it at every checkpoint filled sled's
/// log. They are statistics: a crash loses a few counts, which only makes
/// fewer words template or section words (fewer duplicates, never false
/// ones).
const REWRITE_GROWTH: u32 = 8;

#[derive(Debug, Default)]
struct Host {
    counts: TitleCounts,
    /// Titles when last written.
    written: u32,
}

/// Title-word counts of every host, kept in a sled tree and cached.
#[derive(Debug)]
pub(crate) struct TitleModel {
    tree: sled::Tree,
    /// Counts of an earlier version (Misra-Gries summaries), read once.
    earlier: sled::Tree,
    hosts: HashMap<u64, Host>,
    dirty: HashSet<u64>,
    cache_limit: usize,
}

impl TitleModel {
    pub(crate) fn open_in(db: &sled::Db) -> Result<Self, IndexError> {
        Ok(TitleModel {
            tree: db.open_tree("dedup.title_counts")?,
            earlier: db.open_tree("dedup.titles")?,
            hosts: HashMap::new(),
            dirty: HashSet::new(),
            cache_limit: CACHED_HOSTS,
        })
    }

    fn counts(&mut self, host: u64) -> Result<&mut Host, IndexError> {
        if !self.hosts.contains_key(&host) {
            let key = host.to_be_bytes();
            let bad = || IndexError::Corrupt(format!("title counts of host {host:x}"));
            let counts = match self.tree.get(key)? {
                Some(b) => TitleCounts::from_bytes(&b).ok_or_else(bad)?,
                None => match self.earlier.get(key)? {
                    Some(b) => TitleCounts::from_summary(&b).ok_or_else(bad)?,
                    None => TitleCounts::default(),
                },
            };
            let written = counts.titles();
            self.hosts.insert(host, Host { counts, written });
        }
        Ok(self.hosts.get_mut(&host).expect("inserted above"))
    }

    /// Counts the title of a judged page.
    pub(crate) fn add(&mut self, host: u64, words: &[u32]) -> Result<(), IndexError> {
        if !words.is_empty() {
            self.counts(host)?.counts.add(words);
            self.dirty.insert(host);
        }
        Ok(())
    }

    /// What two pages' titles say of whether they are the same page.
    #[cfg(test)]
    pub(crate) fn compare(
        &mut self,
        a: (u64, &[u32]),
        b: (u64, &[u32]),
    ) -> Result<Names, IndexError> {
        self.compare_placed(a, 0, b)
    }

    /// [`compare`](TitleModel::compare), knowing which of `a`'s title
    /// words name a directory of its URL ([`directory_words`]).
    pub(crate) fn compare_placed(
        &mut self,
        a: (u64, &[u32]),
        a_directories: u64,
        b: (u64, &[u32]),
    ) -> Result<Names, IndexError> {
        if a.1.is_empty() || b.1.is_empty() {
            return Ok(Names::Unknown);
        }
        let name_a = self.name(a)?;
        let name_b = self.name(b)?;
        if name_a == name_b {
            return Ok(if name_a.is_empty() {
                Names::Unknown
            } else {
                Names::Same
            });
        }
        if a.0 != b.0 {
            return Ok(Names::Unknown);
        }
        // Whole titles, template words in: a namespace that is template
        // (rust-doc's `core`, in 82% of its titles) is still swapped for
        // another (`std`). A section's first pages carry a word its host
        // has not counted often yet (`core` was in 4 titles when its first
        // page met `std`'s, in 1,441): a word that names a directory of
        // the page's URL is a section of that page, as counted sections
        // are of every page.
        let counts = &self.counts(a.0)?.counts;
        let section =
            |i: usize, w: u32| is_section(counts, w) || (i < 64 && a_directories & (1 << i) != 0);
        let swapped_sections = a.1.len() == b.1.len()
            && a.1
                .iter()
                .zip(b.1)
                .enumerate()
                .all(|(i, (&x, &y))| x == y || (section(i, x) && is_section(counts, y)));
        if swapped_sections {
            Ok(Names::Qualified)
        } else {
            Ok(Names::Different)
        }
    }

    /// Keys of the two rarest words of a name among its host's titles
    /// (template words left out; the earlier first among equals), each
    /// with the host: the words a copy of the item under another path
    /// keeps.
    pub(crate) fn rarest(
        &mut self,
        host: u64,
        words: &[u32],
    ) -> Result<[Option<u32>; 2], IndexError> {
        let counts = &self.counts(host)?.counts;
        let mut ranked: Vec<(u32, usize, u32)> = words
            .iter()
            .enumerate()
            .filter(|&(_, &w)| !is_template(counts, w))
            .map(|(i, &w)| (counts.count(w), i, w))
            .collect();
        ranked.sort_unstable();
        ranked.dedup_by_key(|r| r.2);
        let key = |r: Option<&(u32, usize, u32)>| {
            r.map(|&(_, _, w)| nearcrawl_simhash::hash::fmix64(host ^ u64::from(w)) as u32)
        };
        Ok([key(ranked.first()), key(ranked.get(1))])
    }

    /// A title without its host's template words.
    fn name(&mut self, (host, words): (u64, &[u32])) -> Result<Vec<u32>, IndexError> {
        let counts = &self.counts(host)?.counts;
        Ok(words
            .iter()
            .copied()
            .filter(|&w| !is_template(counts, w))
            .collect())
    }

    /// Writes the counts of hosts that grew by [`REWRITE_GROWTH`] since
    /// they were last written, all changed ones when the cache is to be
    /// emptied, a few hundred hosts per batch: sled keeps every node a
    /// batch rewrites until the batch ends, so one batch for ten thousand
    /// hosts held 12 MiB at the checkpoint, the crawl's peak.
    pub(crate) fn flush(&mut self) -> Result<(), IndexError> {
        let emptying = self.hosts.len() > self.cache_limit;
        let hosts = &mut self.hosts;
        let due: Vec<u64> = self
            .dirty
            .iter()
            .copied()
            .filter(|h| {
                emptying
                    || hosts.get(h).is_none_or(|h| {
                        h.counts.titles() - h.written >= (h.written / REWRITE_GROWTH).max(1)
                    })
            })
            .collect();
        for chunk in due.chunks(FLUSH_HOSTS) {
            let mut batch = sled::Batch::default();
            for host in chunk {
                self.dirty.remove(host);
                if let Some(h) = hosts.get_mut(host) {
                    batch.insert(&host.to_be_bytes(), h.counts.to_bytes());
                    h.written = h.counts.titles();
                }
            }
            self.tree.apply_batch(batch)?;
        }
        if emptying {
            hosts.clear();
        }
        Ok(())
    }
}

fn is_template(counts: &TitleCounts, word: u32) -> bool {
    counts.titles() >= MIN_TITLES && counts.count(word) * 2 >= counts.titles()
}

fn is_section(counts: &TitleCounts, word: u32) -> bool {
    let n = counts.count(word);
    n >= MIN_SECTION_TITLES && n * SECTION_SHARE >= counts.titles()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_words_need_half_the_titles_of_an_established_host() {
        let mut s = TitleCounts::default();
        let mut suffix = title_words("(Java SE 17 & JDK 17)");
        suffix.sort_unstable();
        suffix.dedup();
        for i in 0..MIN_TITLES - 1 {
            s.add(&title_words(&format!("Class{i} (Java SE 17 & JDK 17)")));
        }
        assert!(!is_template(&s, suffix[0]), "not before MIN_TITLES");
        s.add(&title_words("Long (Java SE 17 & JDK 17)"));
        assert!(suffix.iter().all(|w| is_template(&s, *w)));
        assert!(!is_template(&s, title_words("Long")[0]));
        // Many distinct names do not push the template words out.
        for i in 0..1000 {
            s.add(&title_words(&format!(
                "Name{i} Other{i} (Java SE 17 & JDK 17)"
            )));
        }
        assert!(suffix.iter().all(|w| is_template(&s, *w)));
    }

    #[test]
    fn directory_words_are_the_title_words_of_the_urls_folders() {
        // sized in core : : marker - rust
        let at = |url: &str| directory_words("Sized in core::marker - Rust", url);
        assert_eq!(
            at("https://h.example/core/marker/trait.Sized.html"),
            1 << 2 | 1 << 5
        );
        // The file names the item; a query is no folder.
        assert_eq!(
            at("https://h.example/core/Sized.html?in=marker#rust"),
            1 << 2
        );
        assert_eq!(at("https://h.example/Sized"), 0);
        assert_eq!(at("https://h.example"), 0);
        // Words of a folder's name, spelled as in the title.
        assert_eq!(
            at("https://h.example/core/marker-docs/x.html"),
            1 << 2 | 1 << 5
        );
        assert_eq!(at("https://h.example/Core/Marker/x.html"), 0);
        // A port, user and password, a fragment with a slash; no path.
        assert_eq!(
            at("http://u:p@h.example:8080/core/marker/x.html#a/rust"),
            1 << 2 | 1 << 5
        );
        assert_eq!(at("https://h.example/core/x.html?q=/marker/"), 1 << 2);
        assert_eq!(at("mailto:core@marker.example"), 0);
        for u in [
            "https://h.example",
            "https://h.example/",
            "http://u:p@h.example:8080/a/b/c.html?q=/x/#y/z",
            "https://h.example/a%20b/%C3%A9/c/?q",
            "https://[::1]:8080/a//b/",
            "file:///usr/share/doc/index.html",
        ] {
            let url = url::Url::parse(u).unwrap();
            let parsed: Option<Vec<&str>> = url.path_segments().map(|s| s.collect());
            let read: Option<Vec<&str>> = path_segments(url.as_str()).map(|s| s.collect());
            assert_eq!(read, parsed, "{u}");
        }
        let class = "Uses of DocTree in com.sun.source.doctree";
        let url = "https://h.example/com/sun/source/doctree/class-use/DocTree.html";
        // uses of doctree in com . sun . source . doctree
        assert_eq!(
            directory_words(class, url),
            1 << 4 | 1 << 6 | 1 << 8 | 1 << 10
        );
        assert_eq!(title_words(class).len(), 11);
    }

    #[test]
    fn identifiers_are_one_word() {
        assert_eq!(title_words("_mm_add_ps").len(), 1);
        assert_eq!(title_words("x86_64").len(), 1);
        assert_ne!(title_words("x86_64"), title_words("x86"));
        assert_eq!(title_words("std::vec").len(), 4);
    }

    /// A rust-doc-like host: items under the namespaces `std` (one title
    /// in 10) and `alloc` (one in 100), intrinsics under two architectures.
    fn rustdoc_host(m: &mut TitleModel, h: u64) {
        for i in 0..10_000 {
            let title = match i % 100 {
                0 => format!("Item{i} in alloc::m{} - Rust", i % 7),
                1..=10 => format!("Item{i} in std::m{} - Rust", i % 7),
                11..=40 => format!("_mm_op{i}_ps in core::arch::x86 - Rust"),
                41..=70 => format!("_mm_op{i}_ps in core::arch::x86_64 - Rust"),
                _ => format!("Item{i} in core::m{} - Rust", i % 7),
            };
            m.add(h, &title_words(&title)).unwrap();
        }
    }

    #[test]
    fn names_that_differ_in_section_words_only_are_qualified() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let mut m = TitleModel::open_in(&db).unwrap();
        let h = host_key("doc.rust-lang.example");
        rustdoc_host(&mut m, h);
        let cmp = |m: &mut TitleModel, a: &str, b: &str| {
            m.compare((h, &title_words(a)), (h, &title_words(b)))
                .unwrap()
        };
        // Re-exports: the same item under two namespaces.
        for (a, b) in [
            ("Vec in std::vec - Rust", "Vec in alloc::vec - Rust"),
            (
                "Option in std::option - Rust",
                "Option in core::option - Rust",
            ),
            (
                "_mm_add_ps in core::arch::x86 - Rust",
                "_mm_add_ps in core::arch::x86_64 - Rust",
            ),
        ] {
            assert_eq!(cmp(&mut m, a, b), Names::Qualified, "{a} / {b}");
        }
        // Items: a word that names one item differs.
        for (a, b) in [
            (
                "_mm_max_ps in core::arch::x86 - Rust",
                "_mm_min_ps in core::arch::x86 - Rust",
            ),
            ("i8 - Rust", "i16 - Rust"),
            (
                "AtomicI32 in std::sync::atomic - Rust",
                "AtomicI16 in std::sync::atomic - Rust",
            ),
            (
                "Vec in std::vec - Rust",
                "VecDeque in alloc::collections - Rust",
            ),
            ("Map Key in std - Rust", "Key Map in std - Rust"),
        ] {
            assert_eq!(cmp(&mut m, a, b), Names::Different, "{a} / {b}");
        }
        assert_eq!(
            cmp(&mut m, "Vec in std::vec - Rust", "Vec in std::vec - Rust"),
            Names::Same
        );
    }

    #[test]
    fn a_word_added_or_left_out_is_no_swap() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let mut m = TitleModel::open_in(&db).unwrap();
        let h = host_key("gcc.example");
        // Doxygen: type words in many titles.
        for i in 0..1000 {
            let ty = [
                "long",
                "unsigned long",
                "long long",
                "unsigned long long",
                "int",
            ][i % 5];
            m.add(
                h,
                &title_words(&format!("libstdc++: Class{i}< {ty} > Member List")),
            )
            .unwrap();
        }
        let cmp = |m: &mut TitleModel, a: &str, b: &str| {
            m.compare((h, &title_words(a)), (h, &title_words(b)))
                .unwrap()
        };
        assert_eq!(
            cmp(
                &mut m,
                "libstdc++: atomic< long long > Member List",
                "libstdc++: atomic< unsigned long long > Member List"
            ),
            Names::Different
        );
        assert_eq!(
            cmp(
                &mut m,
                "libstdc++: atomic< long > Member List",
                "libstdc++: atomic< int > Member List"
            ),
            Names::Qualified
        );
    }

    #[test]
    fn names_on_two_hosts_that_differ_are_no_evidence() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let mut m = TitleModel::open_in(&db).unwrap();
        let (a, b) = (host_key("a.example"), host_key("b.example"));
        let first = title_words("Storm closes the coast road");
        let rewritten = title_words("Coast road shut as storm hits");
        assert_eq!(
            m.compare((a, &first), (b, &rewritten)).unwrap(),
            Names::Unknown
        );
        assert_eq!(m.compare((a, &first), (b, &first)).unwrap(), Names::Same);
        assert_eq!(
            m.compare((a, &first), (a, &rewritten)).unwrap(),
            Names::Different
        );
    }

    #[test]
    fn counts_are_written_as_hosts_grow_and_read_back() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let mut m = TitleModel::open_in(&db).unwrap();
        let h = host_key("docs.example");
        for i in 0..100 {
            m.add(h, &title_words(&format!("Item{i} - Example Docs")))
                .unwrap();
            m.flush().unwrap();
        }
        let written = TitleCounts::from_bytes(&m.tree.get(h.to_be_bytes()).unwrap().unwrap())
            .unwrap()
            .titles();
        // Rewritten only as the host grew by an eighth: not at every flush.
        assert_eq!(written, 91);
        m.add(h, &title_words("Last - Example Docs")).unwrap();
        let mut again = TitleModel::open_in(&db).unwrap();
        assert_eq!(again.counts(h).unwrap().counts.titles(), written);
        m.cache_limit = 0;
        m.flush().unwrap();
        let mut again = TitleModel::open_in(&db).unwrap();
        assert_eq!(again.counts(h).unwrap().counts.titles(), 101);
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
        for i in 0..MIN_TITLES {
            m.add(h, &title_words(&format!("Item{i} - Example Docs")))
                .unwrap();
        }
        let int = title_words("Integer - Example Docs");
        let long = title_words("Long - Example Docs");
        assert_eq!(m.compare((h, &int), (h, &long)).unwrap(), Names::Different);
        assert_eq!(m.compare((h, &int), (h, &int)).unwrap(), Names::Same);
        // Another host's template is only template there once it has
        // titles; until then the names differ, which across hosts says
        // nothing.
        let copy = title_words("Integer | Mirror");
        assert_eq!(
            m.compare((other, &copy), (h, &int)).unwrap(),
            Names::Unknown
        );
        for i in 0..MIN_TITLES {
            m.add(other, &title_words(&format!("Thing{i} | Mirror")))
                .unwrap();
        }
        assert_eq!(m.compare((other, &copy), (h, &int)).unwrap(), Names::Same);
        // No title, or only template words: no evidence.
        assert_eq!(m.compare((h, &[]), (h, &long)).unwrap(), Names::Unknown);
        let bare = title_words("Example Docs");
        assert_eq!(m.compare((h, &bare), (h, &bare)).unwrap(), Names::Unknown);
        assert_eq!(m.compare((h, &bare), (h, &int)).unwrap(), Names::Different);
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
