//! `nearcrawl status DIR`: what a crawl's output directory holds.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use nearcrawl_crawl::embedded::state::State;
use nearcrawl_crawl::embedded::store::SledStore;
use serde_json::{Value, json};

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

/// What the crawl in `dir` holds, as `status --json` prints it (`top`
/// hosts and duplicate clusters).
pub fn gather(dir: &Path, top: usize) -> anyhow::Result<Value> {
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
            let stats = std::fs::read_to_string(dir.join("stats.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            json!({ "running": true, "last_run_stats": stats })
        }
    };
    status["duplicate_clusters"] = clusters(&dir.join("duplicates.jsonl"), top)?;
    Ok(status)
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

fn from_state(state: &State, top: usize) -> anyhow::Result<Value> {
    let s = &state.stats;
    let duplicates = s.exact_duplicates + s.near_duplicates;
    let mut hosts = state.top_hosts(top)?;
    for h in hosts.as_array_mut().into_iter().flatten() {
        let fetched = h["fetched"].as_u64().unwrap_or(0);
        let dups = h["duplicates"].as_u64().unwrap_or(0);
        h["duplicate_rate"] = json!(round3(dups as f64 / fetched.max(1) as f64));
    }
    let checkpoint = state.checkpoint()?;
    Ok(json!({
        "running": false,
        "fetched": s.fetched,
        "written": s.written,
        "duplicates": { "exact": s.exact_duplicates, "near": s.near_duplicates, "rate": round3(duplicates as f64 / s.fetched.max(1) as f64) },
        "robots_denied": s.robots_denied,
        "redirects": s.redirects,
        "read_through_redirect": s.read_through_redirect,
        "errors": s.errors,
        "retries": s.retries,
        "out_of_scope": s.out_of_scope,
        "bytes": s.bytes,
        "queued": { "urls": state.frontier.len(), "hosts": state.frontier.active_hosts() },
        "known_hosts": state.frontier.known_hosts(),
        "in_flight": 0,
        "last_checkpoint_unix": checkpoint.as_ref().and_then(|c| c.at_unix),
        "duplicate_traps": s.duplicate_traps,
        "body_sizes_log2": s.body_sizes,
        "depths": s.depths,
        "recrawl": { "visits": s.visits, "not_modified": s.not_modified, "bytes_saved": s.bytes_saved },
        "languages": s.languages,
        "other_language": s.other_language,
        "top_hosts": hosts,
    }))
}

/// The earlier pages most duplicated, with some of their copies.
fn clusters(path: &Path, top: usize) -> anyhow::Result<Value> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(json!([]));
    };
    let mut copies: HashMap<String, (u64, Vec<String>)> = HashMap::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        let Ok(row) = serde_json::from_str::<Value>(&line) else {
            continue; // a line cut by a crash: the next run rewrites it
        };
        let (Some(of), Some(url)) = (row["duplicate_of"].as_str(), row["url"].as_str()) else {
            continue;
        };
        let entry = copies.entry(of.to_string()).or_default();
        entry.0 += 1;
        if entry.1.len() < 3 {
            entry.1.push(url.to_string());
        }
    }
    let mut list: Vec<_> = copies.into_iter().collect();
    list.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    Ok(list
        .into_iter()
        .take(top)
        .map(|(url, (n, some))| json!({ "url": url, "copies": n, "some_copies": some }))
        .collect())
}

/// The recrawl line of a status's `recrawl` figures, if pages of an
/// earlier crawl were asked again.
fn recrawl_of(r: &Value) -> Option<String> {
    let stats = nearcrawl_crawl::stats::Stats {
        visits: serde_json::from_value(r["visits"].clone()).ok()?,
        not_modified: r["not_modified"].as_u64()?,
        bytes_saved: r["bytes_saved"].as_u64()?,
        ..Default::default()
    };
    super::crawl::recrawl_line(&stats)
}

/// The languages line of a status's figures, if pages were read.
fn languages_of(s: &Value) -> Option<String> {
    let stats = nearcrawl_crawl::stats::Stats {
        languages: serde_json::from_value(s["languages"].clone()).ok()?,
        other_language: s["other_language"].as_u64().unwrap_or(0),
        ..Default::default()
    };
    super::crawl::languages_line(&stats)
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

fn as_text(dir: &Path, s: &Value) -> String {
    let mut out = String::new();
    let o = &mut out;
    line!(o, "crawl in {}", dir.display());
    if s["running"] == true {
        line!(
            o,
            "  a run holds this directory now; figures as its last run ended:"
        );
        let last = &s["last_run_stats"];
        line!(
            o,
            "  fetched {}, written {}, duplicates {} exact + {} near",
            last["fetched"],
            last["written"],
            last["exact_duplicates"],
            last["near_duplicates"]
        );
    } else {
        let d = &s["duplicates"];
        line!(
            o,
            "  fetched {}, written {}, duplicates {} exact + {} near ({:.1}%), robots-denied {}, redirects {}, {} bytes",
            s["fetched"],
            s["written"],
            d["exact"],
            d["near"],
            d["rate"].as_f64().unwrap_or(0.0) * 100.0,
            s["robots_denied"],
            s["redirects"].as_u64().unwrap_or(0),
            s["bytes"]
        );
        if let Some(recrawl) = recrawl_of(&s["recrawl"]) {
            line!(o, "  {recrawl}");
        }
        if let Some(languages) = languages_of(s) {
            line!(o, "  {languages}");
        }
        line!(
            o,
            "  queued {} URLs on {} hosts ({} hosts seen); not running",
            s["queued"]["urls"],
            s["queued"]["hosts"],
            s["known_hosts"]
        );
        match s["last_checkpoint_unix"].as_u64() {
            Some(t) => line!(o, "  last checkpoint: {} (unix time)", t),
            None => line!(o, "  last checkpoint: none recorded"),
        }
        if let Some(errors) = s["errors"].as_object().filter(|e| !e.is_empty()) {
            let list: Vec<String> = errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
            line!(o, "  errors: {}", list.join(", "));
        }
        if let Some(retries) = s["retries"].as_object().filter(|r| !r.is_empty()) {
            let list: Vec<String> = retries.iter().map(|(k, v)| format!("{k} {v}")).collect();
            line!(o, "  attempts tried again: {}", list.join(", "));
        }
        line!(
            o,
            "  hosts (most fetched): fetched written duplicates errors dup-rate"
        );
        for h in s["top_hosts"].as_array().into_iter().flatten() {
            line!(
                o,
                "    {:<40} {:>8} {:>8} {:>8} {:>8} {:>7.1}%",
                h["host"].as_str().unwrap_or("?"),
                h["fetched"],
                h["written"],
                h["duplicates"],
                h["errors"],
                h["duplicate_rate"].as_f64().unwrap_or(0.0) * 100.0
            );
        }
        for t in s["duplicate_traps"].as_array().into_iter().flatten() {
            line!(
                o,
                "  duplicate trap: {} cut off",
                t["section"].as_str().unwrap_or("?")
            );
        }
    }
    line!(o, "  largest duplicate clusters (copies of one page):");
    for c in s["duplicate_clusters"].as_array().into_iter().flatten() {
        line!(
            o,
            "    {:>6}  {}",
            c["copies"],
            c["url"].as_str().unwrap_or("?")
        );
    }
    out
}
