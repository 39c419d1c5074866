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
    /// URLs not fetched: a proven URL rule maps each to a page written
    /// (`kind: "predicted"` in `duplicates.jsonl`; see
    /// [`nearcrawl_index::dust`]).
    #[serde(default)]
    pub predicted_duplicates: u64,
    /// URLs a rule skipped and then, the rule retired, queued again.
    #[serde(default)]
    pub predictions_requeued: u64,
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
    #[serde(default, rename = "body_sizes_log2", alias = "body_sizes")]
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
    /// Pages built by script, and what their rendering did.
    #[serde(default)]
    pub render: RenderCounts,
    /// This run only.
    #[serde(skip)]
    pub fetched_this_run: u64,
    /// This run only.
    #[serde(skip)]
    pub elapsed_secs: f64,
}

impl Stats {
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
        self.predicted_duplicates += other.predicted_duplicates;
        self.predictions_requeued += other.predictions_requeued;
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
        self.render.merge(other.render);
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

/// What rendering pages built by script did (`render` in `stats.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RenderCounts {
    /// Pages whose served HTML was an app shell.
    pub app_shells: u64,
    /// Pages rendered in the browser.
    pub rendered: u64,
    /// Pages rendered whose DOM was read at the time limit, not settled.
    pub unsettled: u64,
    /// Requests the rendered pages made that the crawler fetched.
    pub requests: u64,
    /// Requests for a script fetched for an earlier page, answered with
    /// the crawl's copy.
    pub scripts_kept: u64,
    /// Requests the crawl refused, by why: `kind` (styles, images, fonts,
    /// media, beacons), `scope` (another host), `robots`, or the fetch
    /// error's kind.
    pub refused: BTreeMap<String, u64>,
    /// Pages that needed rendering but were read as served, by the
    /// error's kind (`render_unavailable`: no browser).
    pub not_rendered: BTreeMap<String, u64>,
}

impl RenderCounts {
    /// Adds `other`'s counts to these (a page's render to its URL's).
    pub fn merge(&mut self, other: RenderCounts) {
        self.app_shells += other.app_shells;
        self.rendered += other.rendered;
        self.unsettled += other.unsettled;
        self.requests += other.requests;
        self.scripts_kept += other.scripts_kept;
        add_counts(&mut self.refused, other.refused);
        add_counts(&mut self.not_rendered, other.not_rendered);
    }

    /// Nothing was rendered nor needed rendering.
    pub fn is_empty(&self) -> bool {
        *self == RenderCounts::default()
    }
}

/// `stats.json`: what the end of a run writes, in one shape for both
/// engines, and what `status` and `report` read back. The counts are
/// [`Stats`]' fields at the top level, beside `this_run` (this run's pages,
/// time and rate, and where its time went), `top_hosts` and, for a cluster
/// worker, `cluster`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsFile {
    /// Over every run of the crawl (a worker's: its own).
    pub stats: Stats,
    /// For people: pages, seconds and pages/s of the run, its stage and
    /// lock times, the gate's memory.
    pub this_run: serde_json::Value,
    /// The hosts with the most pages fetched (the embedded crawl's).
    pub top_hosts: Vec<HostFigures>,
    /// A cluster worker's: its crawl and name, partitions, the gate.
    pub cluster: Option<serde_json::Value>,
    /// The URL rules proven or retired (the most used first, at most
    /// [`MAX_RULES_LISTED`]).
    pub url_rules: Vec<UrlRule>,
}

/// URL rules `stats.json` lists, at most.
pub const MAX_RULES_LISTED: usize = 100;

/// A URL rule the gate learned, as `stats.json`, `status` and the report
/// show it (see [`nearcrawl_index::dust`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlRule {
    /// What it rewrites: `/x86_64/ ↔ /x86/ (fn pages)`.
    pub rule: String,
    /// `proven` (in use) or `retired`.
    pub standing: String,
    /// Duplicate pairs it maps.
    pub support: u64,
    /// Pages the gate kept that it maps to a page written.
    pub counterexamples: u64,
    /// URLs not fetched by it.
    pub skipped: u64,
}

impl UrlRule {
    /// The rules of `rules` a report lists: proven or retired, the most
    /// used first.
    pub fn listed(rules: &nearcrawl_index::dust::DustRules) -> Vec<UrlRule> {
        use nearcrawl_index::dust::Standing;
        let mut listed: Vec<UrlRule> = (rules.rules().iter())
            .filter(|r| r.standing != Standing::Learning)
            .map(|r| UrlRule {
                rule: r.rule.to_string(),
                standing: match r.standing {
                    Standing::Retired => "retired",
                    _ => "proven",
                }
                .into(),
                support: r.support,
                counterexamples: r.counterexamples,
                skipped: r.skipped,
            })
            .collect();
        listed.sort_by_key(|r| std::cmp::Reverse((r.skipped, r.support)));
        listed.truncate(MAX_RULES_LISTED);
        listed
    }
}

impl StatsFile {
    /// The file of `stats`, with this run's pages, time and rate.
    pub fn new(stats: &Stats) -> StatsFile {
        StatsFile {
            stats: stats.clone(),
            this_run: serde_json::json!({
                "fetched": stats.fetched_this_run,
                "elapsed_secs": (stats.elapsed_secs * 1000.0).round() / 1000.0,
                "pages_per_sec": stats.pages_per_sec().round(),
            }),
            top_hosts: Vec::new(),
            cluster: None,
            url_rules: Vec::new(),
        }
    }

    /// The file at `path`, if there is one that reads.
    pub fn read(path: &std::path::Path) -> Option<StatsFile> {
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
    }
}

// By hand rather than `#[serde(flatten)]`: flattened maps lose their
// integer keys (`depths`, `body_sizes_log2`) when read back.
impl Serialize for StatsFile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut file = serde_json::to_value(&self.stats).map_err(S::Error::custom)?;
        file["this_run"] = self.this_run.clone();
        if !self.top_hosts.is_empty() {
            file["top_hosts"] = serde_json::to_value(&self.top_hosts).map_err(S::Error::custom)?;
        }
        if let Some(cluster) = &self.cluster {
            file["cluster"] = cluster.clone();
        }
        if !self.url_rules.is_empty() {
            file["url_rules"] = serde_json::to_value(&self.url_rules).map_err(S::Error::custom)?;
        }
        file.serialize(s)
    }
}

impl<'de> Deserialize<'de> for StatsFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut file = serde_json::Value::deserialize(d)?;
        let mut take = |key: &str| file.get_mut(key).map(serde_json::Value::take);
        let (this_run, top_hosts, cluster) = (take("this_run"), take("top_hosts"), take("cluster"));
        let url_rules = take("url_rules");
        Ok(StatsFile {
            stats: Stats::deserialize(file).map_err(D::Error::custom)?,
            this_run: this_run.unwrap_or_default(),
            top_hosts: match top_hosts {
                Some(hosts) => serde_json::from_value(hosts).map_err(D::Error::custom)?,
                None => Vec::new(),
            },
            cluster,
            url_rules: match url_rules {
                Some(rules) => serde_json::from_value(rules).map_err(D::Error::custom)?,
                None => Vec::new(),
            },
        })
    }
}

/// One host's figures, as `stats.json` and `status` list the most fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFigures {
    /// Its politeness key (the host, with a port not the scheme's default).
    pub host: String,
    pub fetched: u64,
    pub written: u64,
    pub duplicates: u64,
    pub errors: u64,
    /// The mean politeness delay of its requests.
    #[serde(default)]
    pub mean_delay_ms: u64,
}

impl HostFigures {
    /// Its duplicates' share of its pages fetched.
    pub fn duplicate_rate(&self) -> f64 {
        self.duplicates as f64 / self.fetched.max(1) as f64
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_json_reads_back_what_it_wrote() {
        let mut stats = Stats::default();
        stats.count_fetch(3000, 2, 1);
        stats.out_of_scope("host");
        stats.elapsed_secs = 2.0;
        stats.fetched_this_run = 1;
        let mut file = StatsFile::new(&stats);
        file.top_hosts.push(HostFigures {
            host: "a.example:8080".into(),
            fetched: 1,
            ..HostFigures::default()
        });
        file.cluster = Some(serde_json::json!({"worker": "w0"}));
        let text = serde_json::to_string(&file).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["body_sizes_log2"]["11"], 1);
        assert_eq!(json["depths"]["2"], 1);
        assert_eq!(json["this_run"]["pages_per_sec"], 1.0);
        let back: StatsFile = serde_json::from_str(&text).unwrap();
        // The run's own figures are in `this_run`, not counts.
        let counts = Stats {
            fetched_this_run: 0,
            elapsed_secs: 0.0,
            ..stats
        };
        assert_eq!(back.stats, counts);
        assert_eq!(
            (back.top_hosts, back.cluster),
            (file.top_hosts, file.cluster)
        );
    }

    #[test]
    fn the_state_of_an_earlier_version_reads() {
        let earlier = r#"{"fetched":3,"written":2,"exact_duplicates":1,"near_duplicates":0,
            "robots_denied":0,"noindex":0,"out_of_scope":{},"errors":{},"bytes":10,
            "body_sizes":{"3":3}}"#;
        let stats: Stats = serde_json::from_str(earlier).unwrap();
        assert_eq!((stats.fetched, stats.body_sizes.get(&3)), (3, Some(&3)));
    }
}
