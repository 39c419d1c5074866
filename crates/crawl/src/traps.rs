//! Duplicate traps: a section of a site whose recent pages are mostly
//! duplicates (a calendar, faceted search, session ids in URLs, a mirror)
//! is cut off.
//!
//! The gate already keeps a duplicate's links out of the frontier, but a
//! trap queues its URLs from the pages that were new: a category page
//! that links to a thousand facet combinations, each a near copy of the
//! others. Counting, per section, how many of the last `window` judged
//! pages were duplicates finds such sections while their URLs are still
//! queued. The signal is the gate's own verdicts, so it needs no URL
//! patterns.
//!
//! Why sections and not hosts: a documentation site with a mirrored copy
//! reached late in the crawl made its whole host a trap, and pages of the
//! original still queued were lost (4 of javadoc's overview pages). A
//! section is the host and the first path segment ([`section`]).
//!
//! Only a duplicate of a page in its own directory counts
//! ([`copies_own_directory`]): a trap makes copies of its neighbours (a
//! facet's combinations, session ids, a calendar's days). Pages that copy
//! pages of another directory (a module that re-exports another's items,
//! an architecture's intrinsics the same as another's, a mirror) are kept
//! out page by page by the gate, their links with them, while the pages
//! of their own still come: rust-doc's `core` is mostly copies of `std`'s
//! and of its own other architectures' pages, and cut off as a trap it
//! lost 4,265 items documented nowhere else (`bench/docs_gate.py
//! rustdoc`).

use std::collections::{HashMap, HashSet};

use url::Url;

use crate::sink::{ErrorRecord, Outcome};
use crate::stats::TrappedHost;

/// The part of a site a trap is judged on: the host and the URL's first
/// path segment when the path goes deeper (`host/mirror/`), else the
/// host's top level (`host/`, where query-string traps live).
pub fn section(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    let mut segments = url.path_segments().into_iter().flatten();
    match (segments.next(), segments.next()) {
        (Some(first), Some(_)) => format!("{host}/{first}/"),
        _ => format!("{host}/"),
    }
}

/// Whether a duplicate of `original` (its URL, where known) counts
/// towards `url`'s section becoming a trap: when the two are in one
/// directory of one host, or the original is not known.
pub fn copies_own_directory(url: &Url, original: Option<&str>) -> bool {
    let directory = |u: &Url| {
        let path = u.path();
        (
            u.host_str().map(str::to_string),
            path[..path.rfind('/').map_or(0, |i| i + 1)].to_string(),
        )
    };
    match original.and_then(|o| Url::parse(o).ok()) {
        Some(original) => directory(&original) == directory(url),
        None => true,
    }
}

/// The duplicates among `window` judged pages that make a trap: at least
/// `share` of the window. The one spelling of the rule: the embedded
/// detector counts with it, and a cluster hands it to its frontier's
/// script.
pub fn trap_threshold(window: u32, share: f32) -> u32 {
    (0..=window)
        .find(|&d| d as f32 >= share * window as f32)
        .unwrap_or(window)
}

/// What both engines record of a section `url`'s page made a trap: the
/// error record that says why its other URLs are skipped, and the entry
/// `stats.json` lists.
pub fn trap_record(url: &Url, trap: &Trap) -> (Outcome, TrappedHost) {
    let section = section(url);
    let (duplicates, window) = (trap.duplicates, trap.window);
    tracing::warn!(
        section,
        "duplicate trap: {duplicates} of its last {window} pages were duplicates"
    );
    let record = Outcome::Error(ErrorRecord {
        url: url.to_string(),
        kind: "duplicate_trap".into(),
        detail: format!(
            "{section}: {duplicates} of its last {window} pages were duplicates; its other URLs \
             are skipped"
        ),
    });
    let listed = TrappedHost {
        host: url.host_str().unwrap_or("").into(),
        section,
        duplicates,
        window,
    };
    (record, listed)
}

/// The last judged pages of each section that has not made a full window
/// clean yet; about 40 bytes per section while it is being crawled.
#[derive(Debug)]
pub struct TrapDetector {
    window: u32,
    /// Duplicates in a window that make a trap.
    threshold: u32,
    sections: HashMap<String, Recent>,
    /// Sections reported: cut off for good, as the cluster's script keeps
    /// them.
    trapped: HashSet<String>,
}

/// The last `len` verdicts, newest in bit 0 (1 = duplicate).
#[derive(Debug, Default, Clone, Copy)]
struct Recent {
    bits: u64,
    len: u32,
}

/// Why a host was cut off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    pub duplicates: u32,
    pub window: u32,
}

impl TrapDetector {
    /// A section is a trap when at least `share` of its last `window`
    /// judged pages (at most 64; 0 turns detection off) were duplicates.
    pub fn new(window: u32, share: f32) -> TrapDetector {
        let window = window.min(64);
        TrapDetector {
            window,
            threshold: trap_threshold(window, share),
            sections: HashMap::new(),
            trapped: HashSet::new(),
        }
    }

    /// Notes a judged page of `section`; returns the trap when this page
    /// makes the section one. A section is reported once: its later pages
    /// (in flight when it was cut off) count no more.
    pub fn judged(&mut self, section: &str, duplicate: bool) -> Option<Trap> {
        if self.window == 0 || self.trapped.contains(section) {
            return None;
        }
        let recent = self.sections.entry(section.to_string()).or_default();
        recent.bits = (recent.bits << 1) | u64::from(duplicate);
        recent.len = (recent.len + 1).min(self.window);
        if recent.len < self.window {
            return None;
        }
        let mask = if self.window == 64 {
            u64::MAX
        } else {
            (1u64 << self.window) - 1
        };
        let duplicates = (recent.bits & mask).count_ones();
        if duplicates >= self.threshold {
            self.sections.remove(section);
            self.trapped.insert(section.to_string());
            return Some(Trap {
                duplicates,
                window: self.window,
            });
        }
        if duplicates == 0 {
            // A clean window: nothing to remember until the next duplicate.
            self.sections.remove(section);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_the_host_and_the_first_segment_of_deeper_paths() {
        let s = |u: &str| section(&Url::parse(u).unwrap());
        assert_eq!(
            s("http://a.example:8080/mirror/java/lang/Long.html"),
            "a.example/mirror/"
        );
        assert_eq!(s("http://a.example/search?f=1"), "a.example/");
        assert_eq!(s("http://a.example/"), "a.example/");
        assert_eq!(s("http://a.example/docs/"), "a.example/docs/");
    }

    #[test]
    fn only_copies_of_a_pages_own_directory_count() {
        let url = Url::parse("http://a.example/core/arch/arm/fn.vaddq_f32.html").unwrap();
        let own = Some("http://a.example/core/arch/arm/fn.vaddq_f64.html");
        assert!(copies_own_directory(&url, own));
        for other in [
            "http://a.example/core/arch/aarch64/fn.vaddq_f32.html",
            "http://a.example/std/arch/arm/fn.vaddq_f32.html",
            "http://b.example/core/arch/arm/fn.vaddq_f64.html",
        ] {
            assert!(!copies_own_directory(&url, Some(other)), "{other}");
        }
        assert!(copies_own_directory(&url, None));
        let search = Url::parse("http://shop.example/search?f=2").unwrap();
        assert!(copies_own_directory(
            &search,
            Some("http://shop.example/search?f=1")
        ));
        assert!(copies_own_directory(&search, Some("http://shop.example/")));
    }

    /// `tests/fixtures/trap_verdicts.txt`, which the cluster's script is
    /// tested on too.
    #[test]
    fn the_shared_table_of_verdicts() {
        let table = include_str!("../../../tests/fixtures/trap_verdicts.txt");
        let cases = table
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
        for case in cases {
            let (given, want) = case.split_once(" -> ").unwrap();
            let [window, share, verdicts] = given.split(' ').collect::<Vec<_>>()[..] else {
                panic!("{case}")
            };
            let mut t = TrapDetector::new(window.parse().unwrap(), share.parse().unwrap());
            let traps: Vec<String> = (verdicts.chars().enumerate())
                .filter(|&(_, v)| v != '-')
                .filter_map(|(i, v)| Some((i + 1, t.judged("h/s/", v == '1')?)))
                .map(|(page, trap)| format!("{page}:{}", trap.duplicates))
                .collect();
            let traps = if traps.is_empty() {
                "none".to_string()
            } else {
                traps.join(" ")
            };
            assert_eq!(traps, want, "{case}");
        }
    }

    #[test]
    fn a_host_of_mostly_duplicates_is_a_trap_once_its_window_is_full() {
        let mut t = TrapDetector::new(10, 0.8);
        // Mostly new pages, with duplicates here and there: never a trap.
        for i in 0..100 {
            assert_eq!(t.judged("fine.example", i % 4 == 0), None);
        }
        // Seven duplicates in ten: not enough.
        for i in 0..10 {
            assert_eq!(t.judged("mixed.example", i % 10 < 7), None);
        }
        // Eight in the last ten: a trap, reported once.
        let verdicts = [true, true, false, true, true, true, false, true, true, true];
        let found: Vec<_> = verdicts
            .iter()
            .filter_map(|d| t.judged("calendar.example", *d))
            .collect();
        assert_eq!(
            found,
            [Trap {
                duplicates: 8,
                window: 10
            }]
        );
        assert_eq!(t.judged("calendar.example", true), None, "reported once");
        // Too few pages to judge a host: not a trap.
        let mut t = TrapDetector::new(10, 0.8);
        for _ in 0..9 {
            assert_eq!(t.judged("small.example", true), None);
        }
        // Off.
        let mut t = TrapDetector::new(0, 0.8);
        for _ in 0..100 {
            assert_eq!(t.judged("any.example", true), None);
        }
    }
}
