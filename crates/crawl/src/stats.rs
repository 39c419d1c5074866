//! The crawl's figures, the same for both engines: [`Stats`] (counts over
//! every run, `stats.json`; a worker's merge into a crawl's), and what a
//! running crawl shows ([`Progress`], [`Metrics`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Sections cut off as duplicate traps that `stats.json` lists, at most.
pub const MAX_TRAPS_LISTED: usize = 100;

/// The key of pages of no language known, in [`Stats::languages`] (ISO
/// 639-2's code for "undetermined").
pub const UNDECIDED_LANGUAGE: &str = "und";

/// Counts kept during a crawl, over every run of it; written to
/// `stats.json` at the end of each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub fetched: u64,
    pub written: u64,
    pub exact_duplicates: u64,
    pub near_duplicates: u64,
    pub robots_denied: u64,
    pub noindex: u64,
    /// New URLs queued from sitemaps.
    #[serde(default)]
    pub sitemap_urls: u64,
    /// Redirect hops followed to fetched pages: HTTP redirects and prompt
    /// meta refreshes (whose pages are never pages of their own).
    #[serde(default)]
    pub redirects: u64,
    /// URLs not fetched: their page was read already, as the target of
    /// another URL's redirect.
    #[serde(default)]
    pub read_through_redirect: u64,
    pub out_of_scope: BTreeMap<String, u64>,
    pub errors: BTreeMap<String, u64>,
    /// Failed attempts tried again, by the kind of their error (a URL
    /// that then failed for good is in `errors` too).
    #[serde(default)]
    pub retries: BTreeMap<String, u64>,
    pub bytes: u64,
    /// Sections cut off as duplicate traps (the first 100, with why).
    #[serde(default)]
    pub duplicate_traps: Vec<TrappedHost>,
    /// Fetched pages by body size: key `b` counts bodies of 2^b to
    /// 2^(b+1)-1 bytes (`0` also counts empty ones).
    #[serde(default)]
    pub body_sizes: BTreeMap<u32, u64>,
    /// Fetched pages by link depth from the seeds.
    #[serde(default)]
    pub depths: BTreeMap<u32, u64>,
    /// Pages' visits by what they found against the earlier crawl (`new`,
    /// `changed`, `unchanged`, `gone`, `failed`; see [`crate::recrawl`]).
    #[serde(default)]
    pub visits: BTreeMap<String, u64>,
    /// 304s to conditional requests.
    #[serde(default)]
    pub not_modified: u64,
    /// Body bytes the 304s did not download (the earlier versions' sizes).
    #[serde(default)]
    pub bytes_saved: u64,
    /// Pages read, by language (ISO 639-1, see
    /// [`nearcrawl_extract::page_language`]; `und`: undecided).
    #[serde(default)]
    pub languages: BTreeMap<String, u64>,
    /// Pages left out of the corpus for their language
    /// (`content.languages`).
    #[serde(default)]
    pub other_language: u64,
    /// This run only.
    #[serde(skip)]
    pub fetched_this_run: u64,
    /// This run only.
    #[serde(skip)]
    pub elapsed_secs: f64,
}

impl Stats {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "fetched": self.fetched,
            "written": self.written,
            "exact_duplicates": self.exact_duplicates,
            "near_duplicates": self.near_duplicates,
            "robots_denied": self.robots_denied,
            "noindex": self.noindex,
            "sitemap_urls": self.sitemap_urls,
            "redirects": self.redirects,
            "read_through_redirect": self.read_through_redirect,
            "out_of_scope": self.out_of_scope,
            "errors": self.errors,
            "retries": self.retries,
            "bytes": self.bytes,
            "duplicate_traps": self.duplicate_traps,
            "body_sizes_log2": self.body_sizes,
            "depths": self.depths,
            "visits": self.visits,
            "not_modified": self.not_modified,
            "bytes_saved": self.bytes_saved,
            "languages": self.languages,
            "other_language": self.other_language,
            "this_run": {
                "fetched": self.fetched_this_run,
                "elapsed_secs": (self.elapsed_secs * 1000.0).round() / 1000.0,
                "pages_per_sec": self.pages_per_sec().round(),
            },
        })
    }

    /// Counts a fetched page of `bytes` at `depth`, reached through
    /// `redirects` hops.
    pub fn count_fetch(&mut self, bytes: u64, depth: u32, redirects: usize) {
        self.fetched += 1;
        self.redirects += redirects as u64;
        self.bytes += bytes;
        *self.body_sizes.entry(bytes.max(1).ilog2()).or_default() += 1;
        *self.depths.entry(depth).or_default() += 1;
    }

    /// Adds `other`'s counts to these (a URL's to a worker's, a worker's
    /// to a crawl's). The run's own figures (`fetched_this_run`,
    /// `elapsed_secs`) are not counts and stay.
    pub fn merge(&mut self, other: Stats) {
        self.fetched += other.fetched;
        self.written += other.written;
        self.exact_duplicates += other.exact_duplicates;
        self.near_duplicates += other.near_duplicates;
        self.robots_denied += other.robots_denied;
        self.noindex += other.noindex;
        self.sitemap_urls += other.sitemap_urls;
        self.redirects += other.redirects;
        self.read_through_redirect += other.read_through_redirect;
        self.bytes += other.bytes;
        self.not_modified += other.not_modified;
        self.bytes_saved += other.bytes_saved;
        self.other_language += other.other_language;
        let room = MAX_TRAPS_LISTED.saturating_sub(self.duplicate_traps.len());
        self.duplicate_traps
            .extend(other.duplicate_traps.into_iter().take(room));
        add_counts(&mut self.out_of_scope, other.out_of_scope);
        add_counts(&mut self.errors, other.errors);
        add_counts(&mut self.retries, other.retries);
        add_counts(&mut self.body_sizes, other.body_sizes);
        add_counts(&mut self.depths, other.depths);
        add_counts(&mut self.visits, other.visits);
        add_counts(&mut self.languages, other.languages);
    }

    /// Counts a page read in `language` (`languages` in `stats.json`).
    pub fn count_language(&mut self, language: Option<&str>) {
        let language = language.unwrap_or(UNDECIDED_LANGUAGE);
        *self.languages.entry(language.into()).or_default() += 1;
    }

    /// Counts a page's visit by what it found (`visits` in `stats.json`).
    pub fn count_visit(&mut self, change: &str) {
        *self.visits.entry(change.into()).or_default() += 1;
    }

    /// Counts a reason a URL was not queued (`out_of_scope` in `stats.json`).
    pub fn out_of_scope(&mut self, why: &str) {
        *self.out_of_scope.entry(why.into()).or_default() += 1;
    }

    /// Pages fetched per second in this run.
    pub fn pages_per_sec(&self) -> f64 {
        if self.elapsed_secs > 0.0 {
            self.fetched_this_run as f64 / self.elapsed_secs
        } else {
            0.0
        }
    }
}

/// A section of a host cut off as a duplicate trap, in `stats.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrappedHost {
    pub host: String,
    /// The section cut off (see [`crate::traps::section`]).
    #[serde(default)]
    pub section: String,
    /// Duplicates among its last `window` judged pages.
    pub duplicates: u32,
    pub window: u32,
}

fn add_counts<K: Ord>(into: &mut BTreeMap<K, u64>, from: BTreeMap<K, u64>) {
    for (k, v) in from {
        *into.entry(k).or_default() += v;
    }
}

/// A snapshot of a running crawl, for progress displays.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    pub fetched: u64,
    pub written: u64,
    pub duplicates: u64,
    pub errors: u64,
    pub queued: usize,
    pub in_flight: usize,
    /// Hosts with URLs queued or in flight.
    pub active_hosts: usize,
}

/// The crawl's figures at one moment, for metrics.
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Totals over every run of this crawl (a worker's: its own).
    pub stats: Stats,
    pub queued: usize,
    pub in_flight: usize,
    pub active_hosts: usize,
    /// Page fetches of this run (robots.txt and sitemaps not counted).
    pub fetch_latency: crate::latency::LatencyHistogram,
    /// The process's CPU time by stage.
    pub cpu: crate::cpu::CpuSecs,
}

impl Metrics {
    /// The progress line's figures.
    pub fn progress(&self) -> Progress {
        let s = &self.stats;
        Progress {
            fetched: s.fetched,
            written: s.written,
            duplicates: s.exact_duplicates + s.near_duplicates,
            errors: s.errors.values().sum(),
            queued: self.queued,
            in_flight: self.in_flight,
            active_hosts: self.active_hosts,
        }
    }
}
