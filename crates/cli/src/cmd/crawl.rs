use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use nearcrawl_crawl::config::{Config, Positive};
use nearcrawl_crawl::embedded::Crawler;
use nearcrawl_crawl::seeds::parse_seeds;
use nearcrawl_crawl::sink::Sink;
use nearcrawl_crawl::stats::{Metrics, Progress, Stats};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Seed URLs. With no --config the crawl takes the defaults of
    /// config/example.toml (polite: robots.txt, one request at a time per
    /// host, 1 s apart) and stays on the seeds' hosts.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// A crawl config (TOML), e.g. config/example.toml; URLs given here are
    /// seeds in addition to its own.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A seed list instead of the config's.
    #[arg(long, value_name = "FILE")]
    seeds: Option<PathBuf>,
    /// The output directory instead of the config's (default without a
    /// config: crawl-HOST, after the first seed's host).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Stop after fetching this many pages.
    #[arg(long, value_name = "N")]
    max_pages: Option<u64>,
    /// Stop after this long (a clean stop, as Ctrl-C: the same command
    /// continues), e.g. `90s`, `45m`, `2h`. A recrawl asks the pages
    /// longest overdue first, so its time goes where change is.
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    max_time: Option<std::time::Duration>,
    /// Requests in flight at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: Option<u32>,
    /// Crawl the pages of the earlier crawl in DIR again (conditional
    /// requests; unchanged, changed, new and gone pages told apart), into
    /// --out (default: DIR-refresh). Seeds given too are crawled as new.
    /// Repeatable: a cluster crawl's outputs are one directory per worker.
    #[arg(long, value_name = "DIR")]
    refresh: Vec<PathBuf>,
    /// Judge pages against the corpus of the earlier crawl in DIR too
    /// (repeatable): a page near one of its pages is a duplicate of it.
    #[arg(long, value_name = "DIR")]
    dedup_against: Vec<PathBuf>,
    /// Print the resolved config and seeds, and exit.
    #[arg(long)]
    dry_run: bool,
    /// Run as one worker of a crawl shared through a Redis Cluster: any
    /// nodes of it, comma-separated (redis://127.0.0.1:7000,...). Workers
    /// of the same `[cluster] name` crawl together, each writing its own
    /// --out. Overrides the config's `[cluster] nodes`.
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    cluster: Vec<String>,
    /// This worker's name among the crawl's workers (default HOSTNAME-PID).
    #[arg(long, value_name = "NAME")]
    worker: Option<String>,
    /// Serve the crawl's figures in Prometheus text format at
    /// http://ADDR/metrics while it runs, e.g. 127.0.0.1:9898.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
}

pub fn run(args: Args, verbose: bool) -> anyhow::Result<ExitCode> {
    let Some(config) = config_of(&args)? else {
        // A usage error, like clap's own.
        eprintln!(
            "nearcrawl: nothing to crawl: give seed URLs (nearcrawl crawl https://example.org/), \
             --seeds FILE, or --config FILE"
        );
        return Ok(ExitCode::from(2));
    };
    let seeds = read_seeds(&config)?;
    if args.dry_run {
        println!("{config:#?}");
        println!("seeds ({}):", seeds.len());
        for s in &seeds {
            println!("  {s}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let sink = nearcrawl_output::open(&config.output)
        .with_context(|| format!("cannot write to {}", config.output.dir.display()))?;
    let out = config.output.dir.clone();
    let runtime = runtime()?;
    let metrics = match args.metrics {
        Some(addr) => Some(
            runtime
                .block_on(tokio::net::TcpListener::bind(addr))
                .with_context(|| format!("cannot serve metrics on {addr}"))?,
        ),
        None => None,
    };
    let run = if config.cluster.nodes.is_empty() {
        Run::Embedded
    } else {
        Run::Worker
    };
    let how = (verbose, args.max_time);
    let stats = runtime.block_on(crawl(run, config, seeds, sink, metrics, how))?;
    summarize(&stats, &out, run);
    Ok(ExitCode::SUCCESS)
}

/// The config file's settings (defaults without one) with the command
/// line's on top; None when nothing names anything to crawl.
fn config_of(args: &Args) -> anyhow::Result<Option<Config>> {
    let mut config = match &args.config {
        Some(path) => Config::load(path)?,
        None if args.urls.is_empty() && args.seeds.is_none() && args.refresh.is_empty() => {
            return Ok(None);
        }
        None => Config::default(),
    };
    if let Some(s) = &args.seeds {
        config.seeds.file = Some(s.clone());
    }
    config.seeds.urls.extend(args.urls.iter().cloned());
    config.recrawl.from.extend(args.refresh.iter().cloned());
    config
        .dedup
        .remember
        .extend(args.dedup_against.iter().cloned());
    match (&args.out, args.refresh.first()) {
        (Some(o), _) => config.output.dir = o.clone(),
        (None, Some(dir)) if args.config.is_none() => {
            let name = dir.file_name().unwrap_or(dir.as_os_str()).to_string_lossy();
            config.output.dir = dir.with_file_name(format!("{name}-refresh"));
        }
        (None, _) if args.config.is_none() => config.output.dir = default_out(&args.urls),
        (None, _) => {}
    }
    if let Some(m) = args.max_pages {
        config.scope.max_pages = m;
    }
    if let Some(c) = args.concurrency {
        config.politeness.global_concurrency = Positive(c as usize);
    }
    if !args.cluster.is_empty() {
        config.cluster.nodes = args.cluster.clone();
    }
    if let Some(w) = &args.worker {
        config.cluster.worker = w.clone();
    }
    // PDFs are read by this binary's `extract`, in child processes.
    config.content.pdf_program = std::env::current_exe().ok();
    Ok(Some(config))
}

/// The seeds of the seed file and of `seeds.urls`; bad lines are reported
/// and skipped.
fn read_seeds(config: &Config) -> anyhow::Result<Vec<url::Url>> {
    let mut seeds = Vec::new();
    if let Some(file) = &config.seeds.file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read seed file {}", file.display()))?;
        let (good, bad) = parse_seeds(&text);
        for b in &bad {
            eprintln!("nearcrawl: {}: {b}; skipped", file.display());
        }
        seeds.extend(good);
    }
    let (inline, bad) = parse_seeds(&config.seeds.urls.join("\n"));
    for b in &bad {
        eprintln!("nearcrawl: seeds.urls: {b}; skipped");
    }
    seeds.extend(inline);
    Ok(seeds)
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    // Extraction and the duplicate gate run on blocking threads; more of
    // them than cores only adds malloc arenas (memory) and lock contention.
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(4 * cores)
        .build()
        .context("cannot start the async runtime")
}

/// The crawl, on this machine (its state in sled under the output
/// directory) or as one worker of a shared one (`--cluster`: the frontier
/// and the gate in a Redis Cluster, its own outputs): the same figures
/// either way, progress on stderr, a sample of them in `series.jsonl`
/// every few seconds, `--metrics`, Ctrl-C to stop cleanly.
async fn crawl(
    run: Run,
    config: Config,
    seeds: Vec<url::Url>,
    sink: Box<dyn Sink>,
    listener: Option<tokio::net::TcpListener>,
    (verbose, max_time): (bool, Option<std::time::Duration>),
) -> anyhow::Result<Stats> {
    let series_path = config.output.dir.join("series.jsonl");
    let (metrics, stop, finished, crawl): (Read, Stop, _, BoxFuture<Stats>) = match run {
        Run::Embedded => {
            let crawler = Crawler::open(config, &seeds, sink)?;
            let finished = "open requests are left for the next run, fetched pages are finished";
            let (metrics, stop) = (crawler.metrics(), crawler.stopper());
            let crawl = async move { Ok(crawler.run().await?) };
            (Arc::new(metrics), Arc::new(stop), finished, Box::pin(crawl))
        }
        Run::Worker => {
            let name = config.cluster.name.clone();
            let worker = nearcrawl_cluster::join(config, &seeds, sink)
                .await
                .with_context(|| format!("cannot join the cluster crawl {name:?}"))?;
            eprintln!(
                "nearcrawl: worker {} of the cluster crawl {name:?}",
                worker.store().worker_name()
            );
            let finished = "pages in flight are finished and committed";
            let (metrics, stop) = (worker.metrics(), worker.stopper());
            let crawl = async move { Ok(worker.run().await?) };
            (Arc::new(metrics), Arc::new(stop), finished, Box::pin(crawl))
        }
    };
    if let Some(listener) = listener {
        tokio::spawn(crate::metrics::serve(listener, metrics.clone()));
    }
    let progress = metrics.clone();
    let reporter = tokio::spawn(report_progress(move || progress().progress(), verbose));
    let run_start = crate::series::unix_now();
    let sampled = metrics.clone();
    let sampler = tokio::spawn(crate::series::record(
        series_path.clone(),
        move || sampled(),
        run_start,
    ));
    if let Some(limit) = max_time {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(limit).await;
            eprintln!("nearcrawl: --max-time reached, stopping: {finished}");
            stop();
        });
    }
    stop_on_ctrl_c(stop, finished);
    let stats = crawl.await;
    reporter.abort();
    let _ = reporter.await;
    sampler.abort();
    let _ = sampler.await;
    let last = crate::series::Sample::of(&metrics(), run_start);
    if let Err(e) = crate::series::append(&series_path, &last) {
        eprintln!("nearcrawl: cannot write {}: {e}", series_path.display());
    }
    stats
}

type Read = Arc<dyn Fn() -> Metrics + Send + Sync>;
type Stop = Arc<dyn Fn() + Send + Sync>;
type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = anyhow::Result<T>>>>;

/// Ctrl-C stops the run cleanly (`finished` says what is done before it
/// ends); a second Ctrl-C aborts.
fn stop_on_ctrl_c(stop: Stop, finished: &'static str) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("nearcrawl: stopping: {finished} (Ctrl-C again to abort)");
            stop();
            let _ = tokio::signal::ctrl_c().await;
            std::process::exit(130);
        }
    });
}

/// A crawl of its own, or one worker of a shared one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Embedded,
    Worker,
}

/// The closing line: totals, and why nothing was fetched when nothing was.
fn summarize(stats: &Stats, out: &std::path::Path, run: Run) {
    if stats.fetched == 0 {
        for line in why_nothing_was_fetched(stats, run) {
            eprintln!("nearcrawl: {line}");
        }
    }
    eprintln!(
        "nearcrawl crawl: {} fetched, {} written, {} exact and {} near duplicates, {} robots-denied, \
         {} errors in all; this run {} fetched in {:.1} s ({:.0} pages/s); output in {}",
        stats.fetched,
        stats.written,
        stats.exact_duplicates,
        stats.near_duplicates,
        stats.robots_denied,
        stats.errors.values().sum::<u64>(),
        stats.fetched_this_run,
        stats.elapsed_secs,
        stats.pages_per_sec(),
        out.display()
    );
    if let Some(line) = recrawl_line(stats) {
        eprintln!("nearcrawl crawl: {line}");
    }
    if let Some(line) = languages_line(stats) {
        eprintln!("nearcrawl crawl: {line}");
    }
    if let Some(line) = render_line(stats) {
        eprintln!("nearcrawl crawl: {line}");
    }
    if stats.predicted_duplicates > 0 {
        eprintln!(
            "nearcrawl crawl: {} predicted duplicates not fetched (URL rules: `nearcrawl status` lists them), {} queued again",
            stats.predicted_duplicates, stats.predictions_requeued
        );
    }
}

/// Pages read by language, most first (`und`: undecided), and those the
/// corpus left out for theirs.
pub fn languages_line(stats: &Stats) -> Option<String> {
    if stats.languages.is_empty() {
        return None;
    }
    let mut by_count: Vec<_> = stats.languages.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let shown: Vec<String> = (by_count.iter().take(LANGUAGES_SHOWN))
        .map(|(l, n)| format!("{l} {n}"))
        .collect();
    let more = by_count.len().saturating_sub(LANGUAGES_SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let left_out = match stats.other_language {
        0 => String::new(),
        n => format!("; {n} left out of the corpus for their language"),
    };
    Some(format!("languages: {}{more}{left_out}", shown.join(", ")))
}

/// Pages built by script: how many, how many rendered, what their
/// requests did, and those read as served, by why.
pub fn render_line(stats: &Stats) -> Option<String> {
    let r = &stats.render;
    if r.is_empty() {
        return None;
    }
    let list = |counts: &std::collections::BTreeMap<String, u64>| {
        let items: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        items.join(", ")
    };
    let mut line = format!(
        "pages built by script: {} app shells, {} rendered ({} read at the time limit); their requests: {} fetched, {} scripts reused",
        r.app_shells, r.rendered, r.unsettled, r.requests, r.scripts_kept
    );
    if !r.refused.is_empty() {
        line.push_str(&format!(", refused: {}", list(&r.refused)));
    }
    if !r.not_rendered.is_empty() {
        line.push_str(&format!("; read as served: {}", list(&r.not_rendered)));
    }
    Some(line)
}

/// Languages a languages line names; the others are counted.
const LANGUAGES_SHOWN: usize = 8;

/// A recrawl's figures: what the pages asked again turned out to be.
pub fn recrawl_line(stats: &Stats) -> Option<String> {
    let n = |k: &str| stats.visits.get(k).copied().unwrap_or(0);
    let asked_again = n("changed") + n("unchanged") + n("gone") + n("failed");
    (asked_again > 0).then(|| {
        format!(
            "recrawl: {} unchanged ({} answered 304, {:.1} MB not downloaded), {} changed, \
             {} new, {} gone, {} failed (carried forward)",
            n("unchanged"),
            stats.not_modified,
            stats.bytes_saved as f64 / 1e6,
            n("changed"),
            n("new"),
            n("gone"),
            n("failed"),
        )
    })
}

/// `90`, `90s`, `45m`, `2h`: a duration for --max-time.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: a number and s, m or h"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("{text:?}: the unit is s, m or h")),
    };
    Ok(std::time::Duration::from_secs(secs))
}

/// The output directory of a crawl given by URLs alone: `crawl-HOST`.
fn default_out(urls: &[String]) -> PathBuf {
    let host = urls
        .iter()
        .find_map(|u| url::Url::parse(u).ok()?.host_str().map(str::to_owned))
        .unwrap_or_else(|| "out".into());
    PathBuf::from(format!("crawl-{host}"))
}

/// What a crawl that fetched nothing ran into, and what to do about it.
fn why_nothing_was_fetched(stats: &Stats, run: Run) -> Vec<String> {
    let mut why = vec!["nothing was fetched.".to_string()];
    if run == Run::Worker {
        why[0] = "this worker fetched nothing.".into();
    }
    let errors = |kind: &str| stats.errors.get(kind).copied().unwrap_or(0);
    let hints = [
        (
            "dns",
            "host names did not resolve: no network, or a mistyped host?",
        ),
        (
            "connect",
            "connections failed: is the server up, the port right?",
        ),
        (
            "timeout",
            "requests timed out: a slow or unreachable server",
        ),
        (
            "blocked_address",
            "addresses are private or loopback, refused by default: \
             set allow_private_networks = true under [fetch] in a --config file to crawl them",
        ),
        ("http_status", "responses were errors (4xx/5xx)"),
        ("content_type", "responses were not HTML or text"),
    ];
    for (kind, hint) in hints {
        let n = errors(kind);
        if n > 0 {
            why.push(format!("{n} {kind} errors: {hint}"));
        }
    }
    if stats.robots_denied > 0 {
        why.push(format!(
            "{} URLs denied by robots.txt; a host whose robots.txt cannot be fetched \
             (the errors above) is not crawled at all (RFC 9309: unreachable means disallow)",
            stats.robots_denied
        ));
    }
    let out_of_scope: u64 = stats.out_of_scope.values().sum();
    if out_of_scope > 0 {
        why.push(format!(
            "{out_of_scope} links out of scope (scope.hosts, scope.domains, include/exclude, budgets)"
        ));
    }
    if why.len() == 1 && run == Run::Worker {
        why.push(
            "the shared frontier was empty, or the other workers of the crawl had the work \
             (their outputs hold it); seeds seen before by any worker are not queued again"
                .into(),
        );
    } else if why.len() == 1 {
        why.push(
            "no seed was queued: were they all seen by an earlier run of this output directory?"
                .into(),
        );
    }
    why.push("errors.jsonl in the output directory has every failed request".into());
    why
}

/// A live progress line on a terminal; a plain line every ten seconds
/// otherwise (logs, CI).
async fn report_progress(progress: impl Fn() -> Progress, verbose: bool) {
    use std::io::IsTerminal;
    let start = std::time::Instant::now();
    let line = |p: Progress| {
        let secs = start.elapsed().as_secs_f64().max(1e-3);
        format!(
            "{:.0} pages/s | fetched {} | written {} | duplicates {} | errors {} | queued {} | in flight {} | hosts {}",
            p.fetched as f64 / secs,
            p.fetched,
            p.written,
            p.duplicates,
            p.errors,
            p.queued,
            p.in_flight,
            p.active_hosts
        )
    };
    // With -v, log lines would tear a live line: plain lines then.
    if std::io::stderr().is_terminal() && !verbose {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        // Cleared when the crawl ends and this task is aborted.
        struct Clear(indicatif::ProgressBar);
        impl Drop for Clear {
            fn drop(&mut self) {
                self.0.finish_and_clear();
            }
        }
        let bar = Clear(bar);
        loop {
            bar.0.set_message(line(progress()));
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    } else {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
            eprintln!("nearcrawl: {}", line(progress()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_languages_line_names_the_most_read_first() {
        let mut stats = Stats::default();
        assert_eq!(languages_line(&stats), None);
        for (l, n) in [("de", 3), ("en", 9), ("und", 1)] {
            stats.languages.insert(l.into(), n);
        }
        stats.other_language = 4;
        assert_eq!(
            languages_line(&stats).unwrap(),
            "languages: en 9, de 3, und 1; 4 left out of the corpus for their language"
        );
    }
}
