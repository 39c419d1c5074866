//! `nearcrawl status DIR`: what a crawl's output directory holds.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use nearcrawl_crawl::embedded::state::State;
use nearcrawl_crawl::embedded::store::SledStore;
use nearcrawl_crawl::stats::{HostFigures, Stats, StatsFile, UrlRule};
use nearcrawl_index::dust::DustRules;
use serde::{Deserialize, Serialize};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A crawl's output directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Hosts and duplicate clusters listed.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let status = gather(&args.dir, args.top)?;
    let text = if args.json {
        serde_json::to_string_pretty(&status)? + "\n"
    } else {
        as_text(&args.dir, &status)
    };
    match std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// What a crawl's output directory holds, as `status --json` prints it
/// and `report` draws it: the crawl's counts ([`Stats`]' fields at the top
/// level, as in `stats.json`), from its state, or from `stats.json` when a
/// run holds the state.
#[derive(Debug, Default, Serialize)]
pub struct Status {
    /// A run holds the state: the figures are those its last run wrote.
    pub running: bool,
    #[serde(flatten)]
    pub stats: Stats,
    /// Duplicates' share of the pages fetched.
    pub duplicate_rate: f64,
    /// URLs queued and hosts with a queue (not known while a run holds
    /// the state).
    pub queued: Option<Queued>,
    pub known_hosts: Option<u64>,
    pub last_checkpoint_unix: Option<u64>,
    pub top_hosts: Vec<HostRow>,
    pub duplicate_clusters: Vec<Cluster>,
    /// The URL rules proven or retired, the most used first.
    pub url_rules: Vec<UrlRule>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Queued {
    pub urls: usize,
    pub hosts: usize,
}

/// A host's figures with its duplicate rate.
#[derive(Debug, Serialize)]
pub struct HostRow {
    #[serde(flatten)]
    pub figures: HostFigures,
    pub duplicate_rate: f64,
}

/// A page kept in the corpus, with its copies dropped as duplicates.
#[derive(Debug, Serialize)]
pub struct Cluster {
    pub url: String,
    pub copies: u64,
    pub some_copies: Vec<String>,
}

/// What the crawl in `dir` holds (`top` hosts and duplicate clusters).
pub fn gather(dir: &Path, top: usize) -> anyhow::Result<Status> {
    let state_dir = dir.join("state");
    if !state_dir.is_dir() {
        anyhow::bail!(
            "{} holds no crawl (no state/ folder): give the output directory of a crawl",
            dir.display()
        );
    }
    let mut status = match open_state(&state_dir) {
        Ok(state) => from_state(&state, top)?,
        Err(Held) => {
            // A run holds the state: what its last run's end left.
            let file = StatsFile::read(&dir.join("stats.json")).unwrap_or_default();
            Status {
                running: true,
                top_hosts: rows(file.top_hosts.into_iter().take(top)),
                url_rules: file.url_rules,
                ..Status::of(file.stats)
            }
        }
    };
    status.duplicate_clusters = clusters(&dir.join("duplicates.jsonl"), top)?;
    Ok(status)
}

impl Status {
    /// The status of these counts (nothing else known).
    pub fn of(stats: Stats) -> Status {
        let duplicates = stats.exact_duplicates + stats.near_duplicates;
        Status {
            duplicate_rate: round3(duplicates as f64 / stats.fetched.max(1) as f64),
            stats,
            ..Status::default()
        }
    }
}

fn rows(hosts: impl Iterator<Item = HostFigures>) -> Vec<HostRow> {
    hosts
        .map(|figures| HostRow {
            duplicate_rate: round3(figures.duplicate_rate()),
            figures,
        })
        .collect()
}

struct Held;

/// The crawl state, unless a running crawl holds it (sled's file lock).
fn open_state(dir: &Path) -> Result<State, Held> {
    let db = sled::Config::new()
        .path(dir)
        .cache_capacity(16 << 20)
        .open()
        .map_err(|_| Held)?;
    let store = SledStore::open_in(&db, "crawl").map_err(|_| Held)?;
    // Opening cuts an outbox tail a crash left, as the next run would.
    State::open_in(Arc::new(store), dir).map_err(|_| Held)
}

fn from_state(state: &State, top: usize) -> anyhow::Result<Status> {
    Ok(Status {
        running: false,
        queued: Some(Queued {
            urls: state.frontier.len(),
            hosts: state.frontier.active_hosts(),
        }),
        known_hosts: Some(state.frontier.known_hosts()),
        last_checkpoint_unix: state.checkpoint()?.and_then(|c| c.at_unix),
        top_hosts: rows(state.top_hosts(top)?.into_iter()),
        url_rules: match state.url_rules()? {
            Some(bytes) => DustRules::from_bytes(&bytes)
                .map(|rules| UrlRule::listed(&rules))
                .ok_or_else(|| anyhow::anyhow!("the crawl's URL rules do not read"))?,
            None => Vec::new(),
        },
        ..Status::of(state.stats.clone())
    })
}

/// The earlier pages most duplicated, with some of their copies.
fn clusters(path: &Path, top: usize) -> anyhow::Result<Vec<Cluster>> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(Vec::new());
    };
    let mut copies: HashMap<String, (u64, Vec<String>)> = HashMap::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        let Ok(row) = serde_json::from_str::<DuplicateRow>(&line) else {
            continue; // a line cut by a crash: the next run rewrites it
        };
        let entry = copies.entry(row.duplicate_of).or_default();
        entry.0 += 1;
        if entry.1.len() < 3 {
            entry.1.push(row.url);
        }
    }
    let mut list: Vec<_> = copies.into_iter().collect();
    list.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    Ok(list
        .into_iter()
        .take(top)
        .map(|(url, (copies, some_copies))| Cluster {
            url,
            copies,
            some_copies,
        })
        .collect())
}

/// What `clusters` reads of a line of `duplicates.jsonl`.
#[derive(Deserialize)]
struct DuplicateRow {
    url: String,
    duplicate_of: String,
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `writeln!` into a String, which cannot fail.
macro_rules! line {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Fetches the URL rules saved, if they saved any or were learned.
pub fn predicted_line(s: &Status) -> Option<String> {
    let c = &s.stats;
    if c.predicted_duplicates == 0 && s.url_rules.is_empty() {
        return None;
    }
    let proven = s
        .url_rules
        .iter()
        .filter(|r| r.standing == "proven")
        .count();
    let retired = s.url_rules.len() - proven;
    Some(format!(
        "predicted duplicates not fetched: {} (URL rules: {proven} proven, {retired} retired; {} URLs queued again)",
        c.predicted_duplicates, c.predictions_requeued
    ))
}

fn as_text(dir: &Path, s: &Status) -> String {
    let mut out = String::new();
    let o = &mut out;
    let c = &s.stats;
    line!(o, "crawl in {}", dir.display());
    if s.running {
        line!(
            o,
            "  a run holds this directory now; figures as its last run ended:"
        );
    }
    line!(
        o,
        "  fetched {}, written {}, duplicates {} exact + {} near ({:.1}%), robots-denied {}, redirects {}, {} bytes",
        c.fetched,
        c.written,
        c.exact_duplicates,
        c.near_duplicates,
        s.duplicate_rate * 100.0,
        c.robots_denied,
        c.redirects,
        c.bytes
    );
    if let Some(recrawl) = super::crawl::recrawl_line(c) {
        line!(o, "  {recrawl}");
    }
    if let Some(languages) = super::crawl::languages_line(c) {
        line!(o, "  {languages}");
    }
    if let Some(render) = super::crawl::render_line(c) {
        line!(o, "  {render}");
    }
    if let (Some(q), Some(known)) = (s.queued, s.known_hosts) {
        line!(
            o,
            "  queued {} URLs on {} hosts ({known} hosts seen); not running",
            q.urls,
            q.hosts
        );
    }
    if !s.running {
        match s.last_checkpoint_unix {
            Some(t) => line!(o, "  last checkpoint: {} (unix time)", t),
            None => line!(o, "  last checkpoint: none recorded"),
        }
    }
    for (name, counts) in [("errors", &c.errors), ("attempts tried again", &c.retries)] {
        if !counts.is_empty() {
            let list: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
            line!(o, "  {name}: {}", list.join(", "));
        }
    }
    line!(
        o,
        "  hosts (most fetched): fetched written duplicates errors dup-rate"
    );
    for h in &s.top_hosts {
        let f = &h.figures;
        line!(
            o,
            "    {:<40} {:>8} {:>8} {:>8} {:>8} {:>7.1}%",
            f.host,
            f.fetched,
            f.written,
            f.duplicates,
            f.errors,
            h.duplicate_rate * 100.0
        );
    }
    for t in &c.duplicate_traps {
        line!(o, "  duplicate trap: {} cut off", t.section);
    }
    if let Some(saved) = predicted_line(s) {
        line!(o, "  {saved}");
        line!(
            o,
            "  URL rules (proven or retired): skipped support counterexamples rule"
        );
        for r in &s.url_rules {
            let retired = if r.standing == "retired" {
                " (retired)"
            } else {
                ""
            };
            line!(
                o,
                "    {:>8} {:>8} {:>4}  {}{retired}",
                r.skipped,
                r.support,
                r.counterexamples,
                r.rule
            );
        }
    }
    line!(o, "  largest duplicate clusters (copies of one page):");
    for cluster in &s.duplicate_clusters {
        line!(o, "    {:>6}  {}", cluster.copies, cluster.url);
    }
    out
}
