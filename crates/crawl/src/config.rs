//! The crawl config (TOML). Every key is optional and documented in
//! `config/example.toml`; an unknown key or a bad value is an error naming
//! the key and its line.

use std::path::{Path, PathBuf};

use std::time::Duration;

use nearcrawl_fetch::FetchConfig;
use nearcrawl_index::{DedupConfig, IndexConfig};
use serde::Deserialize;

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The message names the key and the line (from the TOML parser).
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub seeds: Seeds,
    pub scope: Scope,
    pub politeness: Politeness,
    pub fetch: Fetch,
    pub dedup: Dedup,
    pub output: Output,
    pub cluster: Cluster,
    pub recrawl: Recrawl,
    pub content: Content,
    pub render: Render,
}

/// Pages built by script, rendered in headless Chromium (see
/// [`crate::render`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Render {
    /// Which pages are rendered.
    pub mode: RenderMode,
    /// Hosts with a mode of their own: `hosts = { "app.example.com" =
    /// "always" }`.
    pub hosts: std::collections::BTreeMap<String, RenderMode>,
    /// The Chromium binary.
    pub browser: PathBuf,
    /// Pages rendered at once.
    pub tabs: Positive,
    /// The most a page may take in the browser, from its navigation to
    /// its DOM read.
    pub page_timeout_secs: Positive,
    /// The browser is started afresh after this many pages.
    pub pages_per_browser: Positive,
    /// Requests one rendered page may send to servers; the rest are
    /// refused (scripts kept from earlier pages are not sent, so do not
    /// count). A render costs its hosts at most this beyond the page.
    pub requests_per_page: Positive,
    /// Requests a rendered page makes to hosts out of the crawl's scope
    /// (a CDN's scripts, another host's API) are fetched too, with the
    /// same rules. Off: refused.
    pub third_party: bool,
}

impl Default for Render {
    fn default() -> Self {
        Render {
            mode: RenderMode::Auto,
            hosts: Default::default(),
            browser: PathBuf::from("chromium"),
            tabs: Positive(2),
            page_timeout_secs: Positive(15),
            pages_per_browser: Positive(500),
            requests_per_page: Positive(100),
            third_party: false,
        }
    }
}

impl Render {
    /// The mode of pages on `host`.
    pub fn mode_of(&self, host: &str) -> RenderMode {
        self.hosts.get(host).copied().unwrap_or(self.mode)
    }
}

/// Which pages are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RenderMode {
    /// Pages whose served HTML is an app shell
    /// ([`nearcrawl_extract::Page::app_shell`]).
    Auto,
    /// Every HTML page.
    Always,
    /// None: pages are read as served.
    Never,
}

/// What a page's text becomes in the corpus, and which pages the corpus
/// keeps by their language.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Content {
    /// The languages the corpus keeps (see
    /// [`nearcrawl_extract::page_language`]); empty: every language.
    pub languages: Languages,
    /// What the filter does with a page whose language could not be
    /// decided (see [`crate::languages`]).
    pub undecided_language: Undecided,
    /// The links of a page in another language are followed.
    pub follow_other_languages: bool,
    /// How the corpus writes a page's text. The gate reads the plain text
    /// whatever this says.
    pub text_format: TextFormat,
    /// Markdown: links as `[text](url)`, and emphasis.
    pub markdown_links: bool,
    /// PDFs read at once (each in a child process, see [`crate::pdf`]).
    pub pdf_readers: Positive,
    /// A PDF's reader is stopped after this many seconds (CPU and wall).
    pub max_pdf_seconds: Positive,
    /// A PDF's reader may take this much address space, in MiB.
    pub max_pdf_memory_mb: Positive,
    /// The memory the PDF readers may hold together, in MiB, as the crawl
    /// reckons it before it starts one (see [`crate::pdf`]).
    pub pdf_readers_memory_mb: Positive,
    /// The program whose `extract --json` reads a PDF in a child process:
    /// the `nearcrawl` binary sets itself. None: read in this process.
    #[serde(skip)]
    pub pdf_program: Option<PathBuf>,
}

impl Default for Content {
    fn default() -> Self {
        Content {
            languages: Languages::default(),
            undecided_language: Undecided::Host,
            follow_other_languages: true,
            text_format: TextFormat::Plain,
            markdown_links: false,
            pdf_readers: Positive(2),
            max_pdf_seconds: Positive(30),
            max_pdf_memory_mb: Positive(1024),
            pdf_readers_memory_mb: Positive(100),
            pdf_program: None,
        }
    }
}

/// What the language filter does with a page of no language decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Undecided {
    /// Kept when most of its host's decided pages are in languages kept.
    Host,
    Keep,
    Drop,
}

/// How the corpus writes a page's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TextFormat {
    /// One line per block (paragraph, heading, list item, table row).
    #[default]
    Plain,
    /// Markdown: headings, lists, pipe tables, fenced code.
    Markdown,
}

impl Content {
    /// What the extractor is asked to write besides plain text.
    pub fn markdown(&self) -> Option<nearcrawl_extract::MarkdownOptions> {
        (self.text_format == TextFormat::Markdown).then_some(nearcrawl_extract::MarkdownOptions {
            links: self.markdown_links,
        })
    }
}

/// ISO 639-1 codes, checked and normalized (`"de-AT"` is `"de"`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Vec<String>")]
pub struct Languages(pub Vec<&'static str>);

impl TryFrom<Vec<String>> for Languages {
    type Error = String;
    fn try_from(v: Vec<String>) -> Result<Self, String> {
        nearcrawl_extract::parse_languages(v.iter().map(String::as_str)).map(Languages)
    }
}

/// A crawl that asks an earlier crawl's pages again (see
/// [`crate::recrawl`]), and the revisit intervals every crawl records.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Recrawl {
    /// The earlier crawl's output directories (`crawl --refresh DIR`):
    /// one, or each worker's of a cluster crawl.
    pub from: Vec<PathBuf>,
    /// A page's first revisit interval.
    pub interval_hours: u64,
    /// Bounds of a page's interval as its history moves it.
    pub min_interval_hours: u64,
    pub max_interval_hours: u64,
}

impl Default for Recrawl {
    fn default() -> Self {
        Recrawl {
            from: Vec::new(),
            interval_hours: 7 * 24,
            min_interval_hours: 24,
            max_interval_hours: 180 * 24,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Seeds {
    /// A seed list, relative to the config file.
    pub file: Option<PathBuf>,
    pub urls: Vec<String>,
    /// Queue the URLs of the sitemaps each host's robots.txt lists.
    pub sitemaps: bool,
}

impl Default for Seeds {
    fn default() -> Self {
        Seeds {
            file: None,
            urls: Vec::new(),
            sitemaps: true,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scope {
    /// Hosts to crawl exactly; `"*"`: any host; empty with no domains: the
    /// seeds' hosts.
    pub hosts: Vec<String>,
    /// Registrable domains: the domain and all its subdomains.
    pub domains: Vec<String>,
    /// Regexes a URL must match one of (if any are given).
    pub include: Vec<String>,
    /// Regexes no URL may match.
    pub exclude: Vec<String>,
    pub max_depth: u32,
    pub max_pages: u64,
    pub max_pages_per_host: u64,
    /// Per registrable domain (`example.co.uk` for `a.b.example.co.uk`),
    /// so a domain with endless subdomains cannot take the crawl.
    pub max_pages_per_domain: u64,
    /// Hosts admitted to the frontier, over every run; links to further
    /// hosts are out of scope (`host_limit`).
    pub max_hosts: u64,
    pub max_url_length: usize,
    /// A path with a segment repeated more often is a trap.
    pub max_repeated_segments: usize,
    /// More query parameters stripped in canonical URLs.
    pub strip_params: Vec<String>,
    pub sort_query: bool,
}

impl Default for Scope {
    fn default() -> Self {
        Scope {
            hosts: Vec::new(),
            domains: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            max_depth: 20,
            max_pages: 1_000_000,
            max_pages_per_host: 100_000,
            max_pages_per_domain: 1_000_000,
            max_hosts: 1_000_000,
            max_url_length: 2048,
            max_repeated_segments: 3,
            strip_params: Vec::new(),
            sort_query: false,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Politeness {
    pub delay_ms: u64,
    pub global_concurrency: Positive,
    pub per_host_concurrency: Positive,
    pub crawl_delay_cap_secs: u64,
    pub user_agent: String,
    pub contact_url: Option<String>,
    pub obey_robots: bool,
    /// What the delay and per-host concurrency count by.
    pub key: PolitenessKey,
}

/// `"host"`: each host; `"ip"`: each server address, shared by every
/// name that resolves to it (shared hosting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PolitenessKey {
    #[default]
    Host,
    Ip,
}

impl Default for Politeness {
    fn default() -> Self {
        Politeness {
            delay_ms: 1000,
            global_concurrency: Positive(64),
            per_host_concurrency: Positive(1),
            crawl_delay_cap_secs: 30,
            user_agent: "nearcrawl".into(),
            contact_url: None,
            obey_robots: true,
            key: PolitenessKey::Host,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Fetch {
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub read_timeout_secs: u64,
    pub max_body_bytes: u64,
    /// PDF bodies are cut here (and a cut PDF recorded as too large).
    pub max_pdf_bytes: u64,
    /// Bytes of response bodies held at once (read, not yet judged).
    pub body_memory_bytes: u64,
    pub max_redirects: usize,
    pub content_types: Vec<String>,
    pub allow_private_networks: bool,
    /// DNS servers as `ip:port`; empty: the system's.
    pub dns_servers: Vec<std::net::SocketAddr>,
    pub dns_timeout_secs: u64,
    /// DNS lookups in flight at once.
    pub dns_concurrency: Positive,
}

impl Default for Fetch {
    /// The fetcher's own defaults, in the config's units: written once.
    fn default() -> Self {
        let d = nearcrawl_fetch::FetchConfig::default();
        Fetch {
            connect_timeout_secs: d.connect_timeout.as_secs(),
            request_timeout_secs: d.request_timeout.as_secs(),
            read_timeout_secs: d.read_timeout.as_secs(),
            max_body_bytes: d.max_body_bytes,
            max_pdf_bytes: d.max_pdf_bytes,
            body_memory_bytes: d.body_memory_bytes,
            max_redirects: d.max_redirects,
            content_types: d.content_types,
            allow_private_networks: d.allow_private_networks,
            dns_servers: d.dns_servers,
            dns_timeout_secs: d.dns_timeout.as_secs(),
            dns_concurrency: Positive(d.dns_concurrency),
        }
    }
}

/// What happens to a near duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DuplicatePolicy {
    /// Not written; links not followed.
    #[default]
    Drop,
    /// Written with `duplicate_of`; links still not followed.
    Record,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dedup {
    pub k: Distance,
    pub capacity: u64,
    pub min_similarity: Fraction,
    pub short_features: u32,
    pub short_similarity: Fraction,
    pub policy: DuplicatePolicy,
    /// A host is a duplicate trap (no more of its pages are fetched) when
    /// `trap_share` of its last `trap_window` judged pages were duplicates;
    /// a window of 0 turns this off. At most 64.
    pub trap_window: u32,
    pub trap_share: Fraction,
    /// Learn URL rules from the duplicates the gate confirms and skip a URL
    /// a proven rule maps to a page written (see
    /// [`nearcrawl_index::dust`]).
    pub predict: bool,
    /// Earlier crawls' output directories whose pages this crawl's pages
    /// are judged against too (see [`crate::remembered`]).
    pub remember: Vec<PathBuf>,
}

impl Dedup {
    /// The earlier crawls the gate remembers: `remember`, and the crawl a
    /// recrawl refreshes (a changed page is judged against that whole
    /// corpus, its own earlier version aside) where its directories hold a
    /// gate this crawl can read (an embedded crawl's; a cluster worker's
    /// output holds only its replica, and is skipped, said once).
    pub fn remembered(&self, recrawl: &Recrawl) -> Vec<PathBuf> {
        let mut dirs = self.remember.clone();
        for from in &recrawl.from {
            if dirs.contains(from) {
                continue;
            }
            if crate::remembered::Remembered::readable(from) {
                dirs.push(from.clone());
            } else {
                tracing::warn!(crawl = %from.display(), "its gate is not one this crawl can read: pages are judged against this crawl's only");
            }
        }
        dirs
    }
}

impl Default for Dedup {
    fn default() -> Self {
        // The gate's own defaults, so the crawl and `nearcrawl dedup` agree.
        let gate = nearcrawl_index::DedupConfig::default();
        Dedup {
            k: Distance(gate.index.k),
            capacity: gate.index.capacity,
            min_similarity: Fraction(gate.min_similarity),
            short_features: gate.short_features,
            short_similarity: Fraction(gate.short_similarity),
            policy: DuplicatePolicy::Drop,
            trap_window: 50,
            trap_share: Fraction(0.9),
            predict: true,
            remember: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Jsonl,
    Warc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    #[default]
    None,
    Zstd,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Output {
    pub dir: PathBuf,
    pub formats: Vec<Format>,
    pub shard_bytes: u64,
    pub compression: Compression,
    /// zstd level when `compression = "zstd"`.
    pub zstd_level: i32,
    /// Seconds between checkpoints (outputs made durable, resume point).
    pub checkpoint_secs: Positive,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            dir: "crawl-out".into(),
            formats: vec![Format::Jsonl],
            shard_bytes: 256 << 20,
            compression: Compression::None,
            zstd_level: 3,
            checkpoint_secs: Positive(5),
        }
    }
}

/// One worker of a crawl shared through a Redis Cluster
/// (`nearcrawl-cluster`); no nodes: the embedded crawl.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Cluster {
    /// `redis://HOST:PORT` of any nodes of the cluster.
    pub nodes: Vec<String>,
    /// Workers with the same name crawl together.
    pub name: String,
    /// This worker's name among them; empty: `HOSTNAME-PID`.
    pub worker: String,
    /// Partitions of the politeness keys; the same for every worker and
    /// for the crawl's whole life.
    pub partitions: Positive,
    /// A worker's hold on its partitions lasts this long unless renewed;
    /// a dead worker's partitions pass on after it.
    pub lease_secs: Positive,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            nodes: Vec::new(),
            name: "nearcrawl".into(),
            worker: String::new(),
            partitions: Positive(1024),
            lease_secs: Positive(15),
        }
    }
}

/// An integer of at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Positive(pub usize);

impl TryFrom<i64> for Positive {
    type Error = String;
    fn try_from(v: i64) -> Result<Self, String> {
        if v >= 1 {
            Ok(Positive(v as usize))
        } else {
            Err(format!("must be at least 1, got {v}"))
        }
    }
}

/// A Hamming distance: 0 to 63.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Distance(pub u32);

impl TryFrom<i64> for Distance {
    type Error = String;
    fn try_from(v: i64) -> Result<Self, String> {
        if (0..64).contains(&v) {
            Ok(Distance(v as u32))
        } else {
            Err(format!("must be 0 to 63, got {v}"))
        }
    }
}

/// A number from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct Fraction(pub f32);

impl TryFrom<f64> for Fraction {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&v) {
            Ok(Fraction(v as f32))
        } else {
            Err(format!("must be 0 to 1, got {v}"))
        }
    }
}

impl Config {
    /// The fetcher's settings, from the config's `[politeness]` and `[fetch]`.
    pub fn fetch_config(&self) -> FetchConfig {
        let p = &self.politeness;
        let f = &self.fetch;
        FetchConfig {
            agent: p.user_agent.clone(),
            contact_url: p.contact_url.clone(),
            connect_timeout: Duration::from_secs(f.connect_timeout_secs),
            request_timeout: Duration::from_secs(f.request_timeout_secs),
            read_timeout: Duration::from_secs(f.read_timeout_secs),
            max_body_bytes: f.max_body_bytes,
            max_pdf_bytes: f.max_pdf_bytes,
            body_memory_bytes: f.body_memory_bytes,
            max_redirects: f.max_redirects,
            content_types: f.content_types.clone(),
            allow_private_networks: f.allow_private_networks,
            dns_servers: f.dns_servers.clone(),
            dns_timeout: Duration::from_secs(f.dns_timeout_secs.max(1)),
            dns_concurrency: f.dns_concurrency.0,
            politeness_key: match p.key {
                PolitenessKey::Host => nearcrawl_fetch::PolitenessKey::Host,
                PolitenessKey::Ip => nearcrawl_fetch::PolitenessKey::Ip,
            },
            per_host_delay: Duration::from_millis(p.delay_ms),
            per_host_concurrency: p.per_host_concurrency.0,
            global_concurrency: p.global_concurrency.0,
            obey_robots: p.obey_robots,
            crawl_delay_cap: Duration::from_secs(p.crawl_delay_cap_secs),
            ..FetchConfig::default()
        }
    }

    /// The duplicate gate's settings, from the config's `[dedup]`.
    pub fn dedup_config(&self) -> DedupConfig {
        let d = &self.dedup;
        DedupConfig {
            index: IndexConfig {
                k: d.k.0,
                capacity: d.capacity,
                blocks: None,
            },
            min_similarity: d.min_similarity.0,
            short_features: d.short_features,
            short_similarity: d.short_similarity.0,
            ..DedupConfig::default()
        }
    }

    /// Parses config text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        config.check(path)?;
        Ok(config)
    }

    /// Reads and parses a config file. A relative seed file is taken
    /// relative to the config's folder.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let mut config = Config::parse(&text, path)?;
        if let Some(f) = &config.seeds.file {
            if f.is_relative() {
                config.seeds.file = Some(path.parent().unwrap_or(Path::new(".")).join(f));
            }
        }
        Ok(config)
    }

    /// Checks that need more than one value's type.
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let bad = |message: String| {
            Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message,
            })
        };
        for (key, list) in [
            ("scope.include", &self.scope.include),
            ("scope.exclude", &self.scope.exclude),
        ] {
            for re in list {
                if let Err(e) = regex::Regex::new(re) {
                    return bad(format!("{key}: bad regex {re:?}: {e}"));
                }
            }
        }
        if self.output.formats.is_empty() {
            return bad("output.formats: at least one format (\"jsonl\", \"warc\")".into());
        }
        if self.fetch.request_timeout_secs == 0 || self.fetch.connect_timeout_secs == 0 {
            return bad("fetch: timeouts must be at least 1 second".into());
        }
        let r = &self.recrawl;
        if r.min_interval_hours > r.interval_hours || r.interval_hours > r.max_interval_hours {
            return bad(
                "recrawl: min_interval_hours <= interval_hours <= max_interval_hours".into(),
            );
        }
        if self.dedup.trap_window > 64 {
            return bad("dedup.trap_window: at most 64 pages (0 turns trap detection off)".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Config, String> {
        Config::parse(s, Path::new("test.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_overrides() {
        let c = parse("").unwrap();
        assert_eq!(c.dedup.k, Distance(8));
        assert!(c.politeness.obey_robots);
        let c = parse(
            "[dedup]\nk = 3\npolicy = \"record\"\n[output]\nformats = [\"jsonl\", \"warc\"]\n",
        )
        .unwrap();
        assert_eq!((c.dedup.k.0, c.dedup.policy), (3, DuplicatePolicy::Record));
        assert_eq!(c.output.formats, vec![Format::Jsonl, Format::Warc]);
        let c = parse("[content]\nlanguages = [\"de-AT\", \"en\", \"deu\"]\n").unwrap();
        assert_eq!(c.content.languages, Languages(vec!["de", "en"]));
        assert!(c.content.follow_other_languages);
        assert_eq!(c.content.undecided_language, Undecided::Host);
        let c = parse("[content]\nundecided_language = \"drop\"\n").unwrap();
        assert_eq!(c.content.undecided_language, Undecided::Drop);
        assert!(parse("[content]\nundecided_language = \"maybe\"\n").is_err());
        assert_eq!(c.content.markdown(), None);
        let c = parse("[content]\ntext_format = \"markdown\"\nmarkdown_links = true\n").unwrap();
        assert_eq!(
            c.content.markdown(),
            Some(nearcrawl_extract::MarkdownOptions { links: true })
        );
        let e = parse("[content]\ntext_format = \"html\"\n").unwrap_err();
        assert!(e.contains("html") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn errors_name_the_key_and_line() {
        let e = parse("[scope]\nmax_depth = 3\nmax_deph = 4\n").unwrap_err();
        assert!(e.contains("max_deph") && e.contains("line 3"), "{e}");
        let e = parse("[dedup]\n\nk = 99\n").unwrap_err();
        assert!(e.contains("0 to 63") && e.contains("line 3"), "{e}");
        let e = parse("[dedup]\npolicy = \"keep\"\n").unwrap_err();
        assert!(e.contains("keep") && e.contains("line 2"), "{e}");
        let e = parse("[politeness]\nglobal_concurrency = 0\n").unwrap_err();
        assert!(
            e.contains("at least 1") && e.contains("global_concurrency"),
            "{e}"
        );
        let e = parse("[dedup]\nmin_similarity = 1.5\n").unwrap_err();
        assert!(e.contains("0 to 1"), "{e}");
        let e = parse("[scope]\ninclude = [\"(\"]\n").unwrap_err();
        assert!(e.contains("scope.include"), "{e}");
        let e = parse("[content]\nlanguages = [\"en\", \"klingon\"]\n").unwrap_err();
        assert!(e.contains("klingon") && e.contains("line 2"), "{e}");
        let e = parse("[nonsense]\n").unwrap_err();
        assert!(e.contains("nonsense"), "{e}");
        let e = parse("this is not toml").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }
}
