//! The language filter (`content.languages`): which pages the corpus keeps
//! by their language, including a page whose language could not be
//! decided.
//!
//! An undecided page is not evidence of another language: on an API
//! reference or a table of identifiers the detector is rarely sure, and a
//! site that declares nothing (javadoc, doxygen) would lose a sixth of its
//! English pages. By default (`undecided_language = "host"`) such a page
//! takes its host's language: it is kept when most of the host's pages
//! decided so far in this run are in languages the corpus keeps (a host
//! with none decided yet gives no evidence: the page is not kept).
//! `"keep"` keeps every undecided page, `"drop"` none.
//!
//! A language read from a text more code than words
//! ([`Page::language_from_code`](nearcrawl_extract::Page::language_from_code):
//! C++ signatures read as French) is weak evidence: a kept one keeps the
//! page, another leaves it undecided, and neither is tallied.
//!
//! The tallies are this process's (a cluster worker's: a host lives in
//! one worker's partitions), for the first [`MAX_HOSTS`] hosts met.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::config::{Languages, Undecided};

/// Hosts whose decided pages are tallied, at most (a broad crawl meets
/// millions, ~50 bytes each): an undecided page of a host past them is
/// judged as on a host with nothing decided yet.
pub const MAX_HOSTS: usize = 100_000;

/// Decided pages of one host: in a kept language, in another.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    kept: u32,
    other: u32,
}

/// The rule above, with its tallies.
#[derive(Debug)]
pub struct LanguageFilter {
    languages: Languages,
    undecided: Undecided,
    hosts: Mutex<HashMap<String, Tally>>,
}

impl LanguageFilter {
    pub fn new(languages: Languages, undecided: Undecided) -> LanguageFilter {
        LanguageFilter {
            languages,
            undecided,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the corpus keeps a page of `host` in `language` (none:
    /// undecided; `from_code`: read from a text more code than words); a
    /// decided page is tallied for its host.
    pub fn keeps(&self, host: &str, language: Option<&str>, from_code: bool) -> bool {
        if self.languages.0.is_empty() {
            return true;
        }
        let language = match language {
            Some(l) if from_code && self.languages.0.contains(&l) => return true,
            Some(_) if from_code => None,
            language => language,
        };
        let mut hosts = self.hosts.lock().unwrap();
        match (language, self.undecided) {
            (Some(l), _) => {
                let kept = self.languages.0.contains(&l);
                let room = hosts.len() < MAX_HOSTS;
                let tally = match hosts.get_mut(host) {
                    Some(t) => Some(t),
                    None if room => Some(hosts.entry(host.to_string()).or_default()),
                    None => None,
                };
                if let Some(t) = tally {
                    *(if kept { &mut t.kept } else { &mut t.other }) += 1;
                }
                kept
            }
            (None, Undecided::Keep) => true,
            (None, Undecided::Drop) => false,
            (None, Undecided::Host) => hosts.get(host).is_some_and(|t| t.kept > t.other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(undecided: Undecided) -> LanguageFilter {
        LanguageFilter::new(Languages(vec!["en"]), undecided)
    }

    #[test]
    fn an_undecided_page_takes_its_hosts_language() {
        let f = filter(Undecided::Host);
        // Nothing decided yet: no evidence for it.
        assert!(!f.keeps("a.test", None, false));
        assert!(f.keeps("a.test", Some("en"), false));
        assert!(!f.keeps("b.test", Some("de"), false));
        assert!(f.keeps("a.test", None, false));
        assert!(!f.keeps("b.test", None, false));
        // Most decided pages must be in a kept language: a tie is not.
        assert!(f.keeps("a.test", Some("en"), false));
        assert!(!f.keeps("a.test", Some("fr"), false));
        assert!(f.keeps("a.test", None, false));
        assert!(!f.keeps("a.test", Some("fr"), false));
        assert!(!f.keeps("a.test", None, false));
        assert!(!f.keeps("c.test", None, false));
    }

    #[test]
    fn a_language_read_from_code_is_weak_evidence() {
        let f = filter(Undecided::Host);
        // Not tallied: the host has nothing decided yet.
        assert!(f.keeps("a.test", Some("en"), true));
        assert!(!f.keeps("a.test", Some("fr"), true));
        // On an English host, French read from code is the host's English.
        assert!(f.keeps("a.test", Some("en"), false));
        assert!(f.keeps("a.test", Some("fr"), true));
        assert!(f.keeps("a.test", Some("fr"), true));
        assert!(f.keeps("a.test", None, false));
        // From prose it is French.
        assert!(!f.keeps("a.test", Some("fr"), false));
        // A kept language from code keeps the page even when undecided
        // pages are dropped; another is then dropped.
        let drop = filter(Undecided::Drop);
        assert!(drop.keeps("a.test", Some("en"), true));
        assert!(!drop.keeps("a.test", Some("fr"), true));
    }

    #[test]
    fn undecided_pages_can_be_kept_or_dropped_and_no_filter_keeps_all() {
        assert!(filter(Undecided::Keep).keeps("a.test", None, false));
        let drop = filter(Undecided::Drop);
        drop.keeps("a.test", Some("en"), false);
        assert!(!drop.keeps("a.test", None, false));
        let all = LanguageFilter::new(Languages::default(), Undecided::Drop);
        assert!(all.keeps("a.test", None, false) && all.keeps("a.test", Some("de"), false));
    }

    #[test]
    fn hosts_past_the_bound_are_not_tallied() {
        let f = filter(Undecided::Host);
        for i in 0..MAX_HOSTS {
            f.keeps(&format!("h{i}.test"), Some("en"), false);
        }
        assert!(f.keeps("late.test", Some("en"), false));
        assert!(
            !f.keeps("late.test", None, false),
            "no tally: nothing decided"
        );
        assert_eq!(f.hosts.lock().unwrap().len(), MAX_HOSTS);
    }
}
