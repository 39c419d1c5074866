//! The crawl loop: frontier -> fetch -> extract -> duplicate gate -> sink,
//! and the links of new pages back to the frontier.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nearcrawl_extract::{Input, extract};
use nearcrawl_fetch::{FetchConfig, Fetcher};
use nearcrawl_index::{DedupConfig, Deduper, IndexConfig, Verdict};
use url::Url;

use crate::canonical::Canonicalizer;
use crate::config::{Config, DuplicatePolicy};
use crate::frontier::{Entry, Frontier};
use crate::scope::Scope;
use crate::sink::{DuplicateRecord, PageRecord, Sink};

/// Counts kept during a crawl; written to `stats.json` at the end.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub fetched: u64,
    pub written: u64,
    pub exact_duplicates: u64,
    pub near_duplicates: u64,
    pub robots_denied: u64,
    pub noindex: u64,
    pub out_of_scope: BTreeMap<&'static str, u64>,
    pub errors: BTreeMap<&'static str, u64>,
    pub bytes: u64,
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
            "out_of_scope": self.out_of_scope,
            "errors": self.errors,
            "bytes": self.bytes,
            "elapsed_secs": (self.elapsed_secs * 1000.0).round() / 1000.0,
            "pages_per_sec": if self.elapsed_secs > 0.0 { (self.fetched as f64 / self.elapsed_secs).round() } else { 0.0 },
        })
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
}

/// Why a crawl could not start.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error("crawl state: {0}")]
    State(#[from] sled::Error),
    #[error("duplicate index: {0}")]
    Index(#[from] nearcrawl_index::IndexError),
    #[error("fetcher: {0}")]
    Fetch(#[from] nearcrawl_fetch::FetchError),
    #[error("scope: {0}")]
    Scope(#[from] regex::Error),
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
    #[error("not supported yet: {0}")]
    Unsupported(&'static str),
}

struct Shared {
    config: Config,
    fetcher: Fetcher,
    scope: Scope,
    canon: Canonicalizer,
    frontier: Mutex<(Frontier, usize)>,
    dedup: Mutex<Deduper>,
    /// Document number -> URL, for naming what a duplicate duplicates.
    docs: sled::Tree,
    meta: sled::Tree,
    sink: Mutex<Box<dyn Sink>>,
    stats: Mutex<Stats>,
    /// Pages fetched per host in this run, for `max_pages_per_host`.
    per_host: Mutex<std::collections::HashMap<String, u64>>,
    stop: AtomicBool,
}

/// A crawl over one output directory; its state (frontier, seen set,
/// duplicate index) lives there in sled, so running again continues.
pub struct Crawler {
    shared: Arc<Shared>,
    db: sled::Db,
}

impl std::fmt::Debug for Crawler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crawler").finish_non_exhaustive()
    }
}

impl Crawler {
    pub fn new(config: Config, seeds: &[Url], sink: Box<dyn Sink>) -> Result<Crawler, CrawlError> {
        // Accepted by the config schema, not written yet: refuse rather
        // than silently write something else.
        if config.output.formats.contains(&crate::config::Format::Warc) {
            return Err(CrawlError::Unsupported(
                "output.formats = [\"warc\"] (JSONL only for now)",
            ));
        }
        if config.output.compression != crate::config::Compression::None {
            return Err(CrawlError::Unsupported(
                "output.compression = \"zstd\" (uncompressed only for now)",
            ));
        }
        let state: PathBuf = config.output.dir.join("state");
        let db = sled::Config::new()
            .path(&state)
            .cache_capacity(64 << 20)
            .open()?;
        let p = &config.politeness;
        let f = &config.fetch;
        let fetcher = Fetcher::new(FetchConfig {
            agent: p.user_agent.clone(),
            contact_url: p.contact_url.clone(),
            connect_timeout: Duration::from_secs(f.connect_timeout_secs),
            request_timeout: Duration::from_secs(f.request_timeout_secs),
            read_timeout: Duration::from_secs(f.read_timeout_secs),
            max_body_bytes: f.max_body_bytes,
            max_redirects: f.max_redirects,
            content_types: f.content_types.clone(),
            allow_private_networks: f.allow_private_networks,
            per_host_delay: Duration::from_millis(p.delay_ms),
            per_host_concurrency: p.per_host_concurrency.0,
            global_concurrency: p.global_concurrency.0,
            obey_robots: p.obey_robots,
            crawl_delay_cap: Duration::from_secs(p.crawl_delay_cap_secs),
            ..FetchConfig::default()
        })?;
        let d = &config.dedup;
        let dedup = Deduper::open_in(
            &db,
            DedupConfig {
                index: IndexConfig {
                    k: d.k.0,
                    capacity: d.capacity,
                    blocks: None,
                },
                min_similarity: d.min_similarity.0,
                short_features: d.short_features,
                ..DedupConfig::default()
            },
        )?;
        let scope = Scope::new(&config.scope, seeds)?;
        let canon = Canonicalizer {
            strip_params: config.scope.strip_params.clone(),
            sort_query: config.scope.sort_query,
        };
        let mut frontier = Frontier::open_in(&db)?;
        for s in seeds {
            if let Some(c) = canon.canonicalize(s) {
                frontier.push(&c, 0)?;
            }
        }
        let shared = Arc::new(Shared {
            docs: db.open_tree("crawl.docs")?,
            meta: db.open_tree("crawl.meta")?,
            frontier: Mutex::new((frontier, 0)),
            dedup: Mutex::new(dedup),
            sink: Mutex::new(sink),
            stats: Mutex::new(Stats::default()),
            per_host: Mutex::new(std::collections::HashMap::new()),
            stop: AtomicBool::new(false),
            fetcher,
            scope,
            canon,
            config,
        });
        Ok(Crawler { shared, db })
    }

    /// A handle that stops the crawl: no new URLs are taken, in-flight
    /// pages finish.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let shared = self.shared.clone();
        move || shared.stop.store(true, Ordering::SeqCst)
    }

    /// A handle that reads the crawl's progress while it runs.
    pub fn progress(&self) -> impl Fn() -> Progress + Send + Sync + 'static {
        let shared = self.shared.clone();
        move || {
            let (queued, in_flight) = {
                let f = shared.frontier.lock().unwrap();
                (f.0.len(), f.1)
            };
            let s = shared.stats.lock().unwrap();
            Progress {
                fetched: s.fetched,
                written: s.written,
                duplicates: s.exact_duplicates + s.near_duplicates,
                errors: s.errors.values().sum(),
                queued,
                in_flight,
            }
        }
    }

    /// Runs until the frontier is empty, `max_pages` is reached or the
    /// crawl is stopped; flushes everything and returns the statistics.
    pub async fn run(self) -> Result<Stats, CrawlError> {
        let start = Instant::now();
        let workers = self.shared.config.politeness.global_concurrency.0.max(1);
        let mut tasks = Vec::new();
        for _ in 0..workers {
            let shared = self.shared.clone();
            tasks.push(tokio::spawn(async move { worker(shared).await }));
        }
        for t in tasks {
            let _ = t.await;
        }
        self.shared.dedup.lock().unwrap().flush()?;
        self.db.flush()?;
        let mut stats = self.shared.stats.lock().unwrap().clone();
        stats.elapsed_secs = start.elapsed().as_secs_f64();
        self.shared.sink.lock().unwrap().finish(&stats.to_json())?;
        Ok(stats)
    }
}

async fn worker(shared: Arc<Shared>) {
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let entry = {
            let mut f = shared.frontier.lock().unwrap();
            let fetched = shared.stats.lock().unwrap().fetched;
            let budget_left = fetched + (f.1 as u64) < shared.config.scope.max_pages;
            match budget_left.then(|| f.0.pop()).transpose() {
                Ok(Some(Some(e))) => {
                    f.1 += 1;
                    Some(e)
                }
                _ if f.1 == 0 => return,
                _ => None,
            }
        };
        let Some(entry) = entry else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        process(&shared, entry).await;
        shared.frontier.lock().unwrap().1 -= 1;
    }
}

async fn process(shared: &Arc<Shared>, entry: Entry) {
    let url = entry.url.clone();
    {
        let host = url.host_str().unwrap_or("").to_string();
        let mut per_host = shared.per_host.lock().unwrap();
        let n = per_host.entry(host).or_default();
        if *n >= shared.config.scope.max_pages_per_host {
            drop(per_host);
            *shared
                .stats
                .lock()
                .unwrap()
                .out_of_scope
                .entry("host_page_limit")
                .or_default() += 1;
            return;
        }
        *n += 1;
    }
    let hop_shared = shared.clone();
    let depth = entry.depth;
    let hop_ok = move |hop: &Url| {
        hop_shared
            .canon
            .canonicalize(hop)
            .is_some_and(|c| hop_shared.scope.check(&c, depth).is_ok())
    };
    let fetched = match shared.fetcher.fetch(&url, &hop_ok).await {
        Ok(p) => p,
        Err(e) => {
            let mut stats = shared.stats.lock().unwrap();
            if matches!(e, nearcrawl_fetch::FetchError::RobotsDenied) {
                stats.robots_denied += 1;
            } else {
                *stats.errors.entry(e.kind()).or_default() += 1;
            }
            drop(stats);
            let written = shared
                .sink
                .lock()
                .unwrap()
                .error(url.as_str(), e.kind(), &e.to_string());
            output_result(shared, written);
            return;
        }
    };
    {
        let mut stats = shared.stats.lock().unwrap();
        stats.fetched += 1;
        stats.bytes += fetched.body.len() as u64;
    }
    // Redirect targets count as seen.
    if let Some(c) = shared.canon.canonicalize(&fetched.final_url) {
        let _ = shared.frontier.lock().unwrap().0.mark_seen(&c);
    }
    let work = shared.clone();
    let entry2 = entry.clone();
    let _ = tokio::task::spawn_blocking(move || judge(&work, entry2, fetched)).await;
}

/// Counts and reports a failed write (a full disk, say): the crawl goes
/// on, the loss is visible in the stats and on stderr. True if written.
fn output_result(shared: &Shared, result: std::io::Result<()>) -> bool {
    match result {
        Ok(()) => true,
        Err(e) => {
            let mut stats = shared.stats.lock().unwrap();
            let n = stats.errors.entry("output").or_default();
            *n += 1;
            if *n == 1 || n.is_power_of_two() {
                eprintln!(
                    "nearcrawl: writing output failed ({} times so far): {e}",
                    *n
                );
            }
            false
        }
    }
}

/// CPU work off the reactor: extraction, fingerprints, the gate, writing.
fn judge(shared: &Shared, entry: Entry, fetched: nearcrawl_fetch::Fetched) {
    let page = extract(
        &fetched.body,
        &Input {
            url: Some(&fetched.final_url),
            charset: fetched.charset.as_deref(),
            x_robots_tag: fetched.x_robots_tag.as_deref(),
        },
    );
    let doc = match shared.meta.update_and_fetch("next_doc", |v| {
        let n = v.map_or(0, |b| u64::from_be_bytes(b.try_into().unwrap_or([0; 8])));
        Some((n + 1).to_be_bytes().to_vec())
    }) {
        Ok(Some(v)) => u64::from_be_bytes(v.as_ref().try_into().unwrap_or([0; 8])) - 1,
        _ => return,
    };
    let _ = shared.docs.insert(doc.to_be_bytes(), entry.url.as_str());
    let decision = match shared.dedup.lock().unwrap().check_insert(doc, &page.text) {
        Ok(d) => d,
        Err(e) => {
            let written =
                shared
                    .sink
                    .lock()
                    .unwrap()
                    .error(entry.url.as_str(), "index", &e.to_string());
            output_result(shared, written);
            return;
        }
    };
    let name_of = |d: u64| {
        shared
            .docs
            .get(d.to_be_bytes())
            .ok()
            .flatten()
            .map(|v| String::from_utf8_lossy(&v).into_owned())
            .unwrap_or_default()
    };
    let record = |duplicate_of: Option<String>| PageRecord {
        url: entry.url.to_string(),
        final_url: fetched.final_url.to_string(),
        status: fetched.status,
        fetched_at: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        depth: entry.depth,
        title: page.title.clone(),
        lang: page.lang.clone(),
        text: page.text.clone(),
        simhash: decision.simhash.fingerprint.to_string(),
        content_hash: format!("{:032x}", decision.content_hash),
        outlinks: page.links.len(),
        duplicate_of,
    };
    let dup = match decision.verdict {
        Verdict::New => None,
        Verdict::Exact { of } => Some((of, "exact", 0, 1.0)),
        Verdict::Near {
            of,
            distance,
            similarity,
        } => Some((of, "near", distance, similarity)),
    };
    if let Some((of, kind, distance, similarity)) = dup {
        let original = name_of(of);
        {
            let mut stats = shared.stats.lock().unwrap();
            if kind == "exact" {
                stats.exact_duplicates += 1;
            } else {
                stats.near_duplicates += 1;
            }
        }
        let mut sink = shared.sink.lock().unwrap();
        let written = sink.duplicate(&DuplicateRecord {
            url: entry.url.to_string(),
            duplicate_of: original.clone(),
            kind,
            distance,
            similarity,
        });
        output_result(shared, written);
        if shared.config.dedup.policy == DuplicatePolicy::Record {
            let written = sink.page(&record(Some(original)));
            output_result(shared, written);
        }
        // A duplicate's links never reach the frontier.
        return;
    }
    if page.robots.noindex {
        shared.stats.lock().unwrap().noindex += 1;
    } else {
        let written = shared.sink.lock().unwrap().page(&record(None));
        if output_result(shared, written) {
            shared.stats.lock().unwrap().written += 1;
        }
    }
    if page.robots.nofollow {
        return;
    }
    let mut frontier = shared.frontier.lock().unwrap();
    for link in page.links.iter().filter(|l| !l.nofollow) {
        let Some(c) = shared.canon.canonicalize(&link.url) else {
            continue;
        };
        match shared.scope.check(&c, entry.depth + 1) {
            Ok(()) => {
                let _ = frontier.0.push(&c, entry.depth + 1);
            }
            Err(why) => {
                *shared
                    .stats
                    .lock()
                    .unwrap()
                    .out_of_scope
                    .entry(why.name())
                    .or_default() += 1;
            }
        }
    }
}
