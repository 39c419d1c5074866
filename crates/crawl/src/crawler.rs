//! The crawl loop: frontier -> fetch -> extract -> duplicate gate -> sink,
//! and the links of new pages back to the frontier.
//!
//! Everything one URL changes is committed in one batch (see
//! [`crate::state`]) under one lock with the duplicate index and the sink,
//! so the three always agree; fetching and extraction, the slow parts, run
//! outside it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nearcrawl_fetch::Fetcher;
use nearcrawl_index::{Deduper, Judgement};
use url::Url;

use crate::canonical::Canonicalizer;
use crate::config::Config;
use crate::frontier::{Additions, Entry, Popped, Pushed, SeenSet, Turns};
use crate::page::Pipeline;
use crate::phases::Phase;
use crate::sink::{Outcome, Sink};
use crate::slots::ExtractionSlots;
use crate::state::{RobotsCache, State};
use crate::stats::{Metrics, Stats};
use crate::store::{SledStore, Store, StoreError, Writes};
use crate::traps::TrapDetector;

/// Why a crawl could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    #[error("crawl state: {0}")]
    State(#[from] StoreError),
    #[error("duplicate index: {0}")]
    Index(#[from] nearcrawl_index::IndexError),
    #[error("fetcher: {0}")]
    Fetch(#[from] nearcrawl_fetch::FetchError),
    #[error("scope: {0}")]
    Scope(#[from] regex::Error),
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
    #[error("{0} holds results of another crawl but no crawl state; use another output directory")]
    ForeignOutput(PathBuf),
    #[error(
        "this crawl writes {stored}; the config asks for {requested}: outputs cannot change \
         midway (use another output directory)"
    )]
    OutputsChanged { stored: String, requested: String },
}

/// What the commit lock guards: the state, the index and the outputs move
/// together.
struct Core {
    state: State,
    dedup: Deduper,
    sink: Box<dyn Sink>,
    group: Group,
    traps: TrapDetector,
}

/// URLs committed together: one sled batch for many URLs, because each
/// batch takes sled's global write lock (a batch per page cost ~0.35 ms
/// under the commit lock and halved the crawl's speed). Still atomic per
/// URL, since every URL is wholly in one group.
#[derive(Default)]
struct Group {
    writes: Writes,
    adds: Additions,
    outcomes: Vec<Outcome>,
    hosts: std::collections::HashSet<String>,
    urls: usize,
    since: Option<Instant>,
}

impl Group {
    /// Holds URLs judged [`GROUP_AGE`] ago or more.
    fn is_stale(&self) -> bool {
        self.urls > 0 && self.since.is_some_and(|t| t.elapsed() >= GROUP_AGE)
    }
}

/// Seeds queued per state batch.
const SEED_BATCH: usize = 1000;

/// Hosts listed in `stats.json`, most pages fetched first.
const TOP_HOSTS: usize = 20;

/// A group is applied at this many URLs or this age, whichever first.
const GROUP_URLS: usize = 64;
const GROUP_AGE: Duration = Duration::from_millis(20);

struct Shared {
    config: Config,
    fetcher: Fetcher,
    /// What a fetched page becomes: run outside the commit lock.
    pages: Pipeline,
    core: CoreLock,
    seen: SeenSet,
    in_flight: AtomicUsize,
    /// Origins whose sitemaps this run has started reading.
    sitemap_origins: Mutex<std::collections::HashSet<String>>,
    stop: AtomicBool,
    /// Wakes fetches waiting on politeness when the crawl stops.
    stopping: tokio::sync::Notify,
    /// A commit failed (the disk, most likely): stop and leave the rest to
    /// the next run.
    broken: Mutex<Option<String>>,
    extraction: ExtractionSlots,
    latencies: crate::latency::Latencies,
    phases: crate::phases::Phases,
}

/// The lock every commit takes (state, frontier, gate, outputs), timed:
/// the time it was held and the time threads waited for it, over the run,
/// say how much of the crawl is serial (`stats.json`, `this_run.core_lock`).
struct CoreLock {
    core: Mutex<Core>,
    waited_ns: AtomicU64,
    held_ns: AtomicU64,
}

impl CoreLock {
    fn new(core: Core) -> CoreLock {
        CoreLock {
            core: Mutex::new(core),
            waited_ns: AtomicU64::new(0),
            held_ns: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> CoreGuard<'_> {
        let asked = Instant::now();
        let guard = self.core.lock().expect("a crawl thread panicked");
        let since = Instant::now();
        let waited = since.duration_since(asked).as_nanos() as u64;
        self.waited_ns.fetch_add(waited, Ordering::Relaxed);
        CoreGuard {
            guard,
            since,
            held_ns: &self.held_ns,
        }
    }

    /// Seconds held and seconds waited for, so far.
    fn times(&self) -> serde_json::Value {
        let secs = |ns: &AtomicU64| (ns.load(Ordering::Relaxed) as f64 / 1e3).round() / 1e6;
        serde_json::json!({
            "held_secs": secs(&self.held_ns),
            "waited_secs": secs(&self.waited_ns),
        })
    }
}

struct CoreGuard<'a> {
    guard: MutexGuard<'a, Core>,
    since: Instant,
    held_ns: &'a AtomicU64,
}

impl std::ops::Deref for CoreGuard<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.guard
    }
}

impl std::ops::DerefMut for CoreGuard<'_> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.guard
    }
}

impl Drop for CoreGuard<'_> {
    fn drop(&mut self) {
        let held = self.since.elapsed().as_nanos() as u64;
        self.held_ns.fetch_add(held, Ordering::Relaxed);
    }
}

/// A crawl over one output directory; its state (frontier, seen set,
/// duplicate index, pending outputs) lives there (a sled store), so running again
/// continues, after a clean stop or a crash alike.
pub struct Crawler {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Crawler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crawler").finish_non_exhaustive()
    }
}

/// Queues the seeds (those seen before are skipped), in batches: one
/// sled batch per seed costs ~5 KB of memory in sled (a 100,000-line seed
/// list took 1 GB).
fn queue_seeds(state: &mut State, canon: &Canonicalizer, seeds: &[Url]) -> Result<(), StoreError> {
    for chunk in seeds.chunks(SEED_BATCH) {
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        for c in chunk.iter().filter_map(|s| canon.canonicalize(s)) {
            let _ = state.frontier.push(&mut writes, &mut adds, &c, 0)?;
        }
        state.commit(writes, adds, &[])?;
    }
    Ok(())
}

/// A new crawl refuses an output directory holding another crawl's
/// results (they would be mixed, and its resume is lost with its state).
fn refuse_foreign_output(out: &std::path::Path) -> Result<(), CrawlError> {
    for e in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if is_result_file(&name) && e.metadata().is_ok_and(|m| m.len() > 0) {
            return Err(CrawlError::ForeignOutput(out.to_path_buf()));
        }
    }
    Ok(())
}

/// Files a crawl writes in its output directory.
fn is_result_file(name: &str) -> bool {
    name.starts_with("pages-")
        || name.starts_with("crawl-")
        || name == "duplicates.jsonl"
        || name == "errors.jsonl"
}

impl Crawler {
    /// Opens (or resumes) the crawl in `config.output.dir`, writing to `sink`
    /// (`nearcrawl_output::open` gives the configured ones).
    pub fn new(config: Config, seeds: &[Url], sink: Box<dyn Sink>) -> Result<Crawler, CrawlError> {
        let state_dir: PathBuf = config.output.dir.join("state");
        if !state_dir.exists() {
            refuse_foreign_output(&config.output.dir)?;
        }
        // 32 MiB of page cache: the store holds per-host records, robots.txt
        // files and the gate's small trees (the frontier and the gate's
        // records are files beside it), so this bounds it in broad crawls.
        let db = nearcrawl_index::open_sled(
            &sled::Config::new()
                .path(&state_dir)
                .cache_capacity(32 << 20),
        )
        .map_err(StoreError::from)?;
        let store: Arc<dyn Store> = Arc::new(SledStore::open_in(&db, "crawl")?);
        let fetcher = Fetcher::new(config.fetch_config())?
            .with_robots_store(Arc::new(RobotsCache(store.clone())));
        let dedup = Deduper::open_in(&db, &state_dir, config.dedup_config())?;
        let state = State::open_in(store, &state_dir)?;
        let outputs = format!(
            "formats {:?}, compression {:?}",
            config.output.formats, config.output.compression
        );
        if let Some(stored) = state.set_outputs(&outputs)? {
            return Err(CrawlError::OutputsChanged {
                stored,
                requested: outputs,
            });
        }
        let mut core = Core {
            state,
            dedup,
            sink,
            group: Group::default(),
            traps: TrapDetector::new(config.dedup.trap_window, config.dedup.trap_share.0),
        };
        recover(&mut core)?;
        core.state.frontier.set_limits(
            u32::try_from(config.politeness.per_host_concurrency.0).unwrap_or(u32::MAX),
            config.scope.max_hosts,
        );
        let capture_headers = core
            .sink
            .wants_captures()
            .then(|| fetcher.request_headers());
        let pages = Pipeline::new(&config, seeds, core.dedup.fingerprinter(), capture_headers)?;
        queue_seeds(&mut core.state, pages.canon(), seeds)?;
        let shared = Arc::new(Shared {
            pages,
            seen: core.state.frontier.seen_set(),
            core: CoreLock::new(core),
            in_flight: AtomicUsize::new(0),
            latencies: Default::default(),
            phases: Default::default(),
            sitemap_origins: Mutex::new(std::collections::HashSet::new()),
            stop: AtomicBool::new(false),
            stopping: tokio::sync::Notify::new(),
            broken: Mutex::new(None),
            extraction: ExtractionSlots::new(),
            fetcher,
            config,
        });
        Ok(Crawler { shared })
    }

    /// A handle that stops the crawl: no new URLs are taken, requests not
    /// answered yet are abandoned (they stay in the frontier and are
    /// fetched by the next run), pages already fetched are finished.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let shared = self.shared.clone();
        move || request_stop(&shared)
    }

    /// A handle that reads the crawl's figures for metrics while it runs.
    pub fn metrics(&self) -> impl Fn() -> Metrics + Send + Sync + 'static {
        let shared = self.shared.clone();
        move || {
            let core = shared.core.lock();
            Metrics {
                stats: core.state.stats.clone(),
                queued: core.state.frontier.len(),
                in_flight: shared.in_flight.load(Ordering::Relaxed),
                active_hosts: core.state.frontier.active_hosts(),
                fetch_latency: shared.latencies.snapshot(),
            }
        }
    }

    /// Runs until the frontier is empty, `max_pages` is reached or the
    /// crawl is stopped; checkpoints and returns the statistics (over every
    /// run of this crawl, with this run's time and rate).
    pub async fn run(self) -> Result<Stats, CrawlError> {
        let start = Instant::now();
        let fetched_before = self.shared.core.lock().state.stats.fetched;
        let workers = self.shared.config.politeness.global_concurrency.0.max(1);
        let mut tasks = Vec::new();
        for _ in 0..workers {
            let shared = self.shared.clone();
            tasks.push(tokio::spawn(async move { worker(shared).await }));
        }
        let done = Arc::new(tokio::sync::Notify::new());
        let checkpoints = {
            let shared = self.shared.clone();
            let done = done.clone();
            let every = Duration::from_secs(self.shared.config.output.checkpoint_secs.0 as u64);
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        _ = tokio::time::sleep(every) => {}
                        _ = done.notified() => return,
                    }
                    let s = shared.clone();
                    let result = tokio::task::spawn_blocking(move || {
                        let mut core = s.core.lock();
                        checkpoint(&mut core)
                    })
                    .await;
                    if let Ok(Err(e)) = result {
                        fail(&shared, format!("checkpoint failed: {e}"));
                    }
                }
            })
        };
        for t in tasks {
            let _ = t.await;
        }
        done.notify_one();
        let _ = checkpoints.await;
        let mut core = self.shared.core.lock();
        checkpoint(&mut core)?;
        let mut stats = core.state.stats.clone();
        stats.elapsed_secs = start.elapsed().as_secs_f64();
        stats.fetched_this_run = stats.fetched - fetched_before;
        let mut json = stats.to_json();
        json["this_run"]["core_lock"] = self.shared.core.times();
        json["this_run"]["worker_secs"] = self.shared.phases.to_json();
        // The gate's index is the one part of memory that grows with the
        // crawl (the frontier's is per queued URL and host).
        json["this_run"]["gate_memory_bytes"] = core.dedup.memory_bytes().into();
        json["top_hosts"] = core.state.top_hosts(TOP_HOSTS)?;
        core.sink.finish(&json)?;
        if let Some(why) = self.shared.broken.lock().unwrap().take() {
            return Err(CrawlError::Output(std::io::Error::other(why)));
        }
        Ok(stats)
    }
}

/// Brings the outputs and the index in line with the state after an
/// unclean stop, then checkpoints: the outputs are cut back to the last
/// checkpoint and the outcomes committed since are written again; the index
/// gets the documents committed since its last flush.
fn recover(core: &mut Core) -> Result<(), CrawlError> {
    let Core {
        state, dedup, sink, ..
    } = core;
    if let Some(cp) = state.checkpoint()? {
        sink.rewind(&cp.sink)?;
        let (mut replayed, mut restored) = (0usize, 0usize);
        // Documents whose records still carry their judgements (written by
        // earlier versions), then the outbox's.
        for doc in state.docs_from(cp.dedup_through) {
            let (doc, judgement) = doc?;
            dedup.record(doc, &judgement)?;
            restored += 1;
        }
        for block in state.outbox()? {
            for new in block.docs {
                let judgement = Judgement::from_bytes(&new.judgement).ok_or_else(|| {
                    StoreError::Corrupt(format!("the outbox's judgement of document {}", new.doc))
                })?;
                dedup.record(new.doc, &judgement)?;
                if let Some(url) = &new.url {
                    state.restore_doc_url(new.doc, url);
                }
                restored += 1;
            }
            for o in block.outcomes {
                o.send(sink.as_mut())?;
                replayed += 1;
            }
        }
        tracing::info!(
            queued = state.frontier.len(),
            fetched = state.stats.fetched,
            replayed,
            restored,
            "resuming: outputs cut back to the last checkpoint, {replayed} outcomes written again, \
             {restored} documents restored to the index"
        );
    } else {
        sink.rewind(&serde_json::Value::Null)?;
    }
    checkpoint(core)
}

/// Applies the pending group, then makes the outputs durable, then the
/// index, then the state that says both are: a crash in between leaves the
/// previous checkpoint in charge.
fn checkpoint(core: &mut Core) -> Result<(), CrawlError> {
    let t = Instant::now();
    flush_group(core)?;
    let position = core.sink.checkpoint()?;
    core.dedup.flush()?;
    core.state.set_checkpoint(position)?;
    tracing::debug!(ms = t.elapsed().as_millis() as u64, "checkpoint");
    Ok(())
}

fn fail(shared: &Shared, why: String) {
    tracing::error!("{why}; stopping (run again to resume)");
    request_stop(shared);
    shared.broken.lock().unwrap().get_or_insert(why);
}

fn request_stop(shared: &Shared) {
    shared.stop.store(true, Ordering::SeqCst);
    shared.stopping.notify_waiters();
}

/// Resolves once the crawl is stopping.
async fn stopped(shared: &Shared) {
    loop {
        // Registered before the check, so a stop in between still wakes it.
        let notified = shared.stopping.notified();
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        notified.await;
    }
}

/// The fetcher decides when a host may be asked; the frontier asks it.
struct FetcherTurns<'a>(&'a Fetcher);

impl Turns for FetcherTurns<'_> {
    fn ready_at(&self, url: &Url) -> Instant {
        self.0.ready_at(url)
    }
    fn gap(&self, url: &Url) -> Duration {
        self.0.delay_of(url)
    }
    fn needs_turn(&self, url: &Url) -> bool {
        !self.0.forbids(url)
    }
}

/// What a worker does next.
enum Next {
    Fetch(Entry),
    /// Nothing may be asked yet: look again after this long.
    Wait(Duration),
    /// The crawl is over for this worker (done, budget spent or failed).
    Stop,
}

async fn worker(shared: Arc<Shared>) {
    let turns = FetcherTurns(&shared.fetcher);
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        match next(&shared, &turns) {
            Next::Fetch(entry) => {
                let popped = entry.clone();
                let processed = process(&shared, entry).await;
                let mut core = shared.core.lock();
                let frontier = &mut core.state.frontier;
                let back = match processed {
                    Processed::Done => {
                        frontier.done(&popped, &turns);
                        Ok(())
                    }
                    Processed::NotReady(entry) => frontier.put_back(entry, &turns),
                };
                drop(core);
                if let Err(e) = back {
                    fail(&shared, format!("crawl state: {e}"));
                }
                shared.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
            // Short waits: links of pages being judged may add hosts that
            // are ready sooner.
            Next::Wait(d) => {
                let t = Instant::now();
                tokio::time::sleep(d.clamp(Duration::from_millis(1), MAX_IDLE)).await;
                shared.phases.add(Phase::Idle, t);
            }
            Next::Stop => return,
        }
    }
}

/// Pages up to this size are judged on the runtime's thread that fetched
/// them, larger ones on a blocking thread. Handing a page to the blocking
/// pool costs two thread wake-ups (~30 us of system time a page, measured)
/// against ~0.2 ms to judge a small page; a page of this size takes ~1 ms,
/// about what a request's round trip may wait for the reactor, while a
/// multi-megabyte page would hold up every request in flight on that
/// thread for tens of milliseconds.
const INLINE_JUDGE_BYTES: usize = 64 << 10;

/// Longest a worker sleeps before looking at the frontier again.
const MAX_IDLE: Duration = Duration::from_millis(20);

/// Takes the next URL whose host may be asked now, if the budget allows.
fn next(shared: &Shared, turns: &FetcherTurns) -> Next {
    let mut core = shared.core.lock();
    let in_flight = shared.in_flight.load(Ordering::SeqCst);
    let budget_left = core.state.stats.fetched + (in_flight as u64) < shared.config.scope.max_pages;
    if !budget_left {
        return if in_flight == 0 {
            Next::Stop
        } else {
            Next::Wait(MAX_IDLE)
        };
    }
    match core.state.frontier.pop(turns) {
        Ok(Popped::Entry(e)) => {
            shared.in_flight.fetch_add(1, Ordering::SeqCst);
            Next::Fetch(e)
        }
        // Nothing ready yet: the links of pages judged since the last
        // commit may be what is missing, and with few pages in flight no
        // next commit comes to apply them.
        Ok(Popped::WaitUntil(_)) if core.group.is_stale() => match flush_group(&mut core) {
            Ok(()) => Next::Wait(Duration::ZERO),
            Err(e) => {
                drop(core);
                fail(shared, format!("{e}"));
                Next::Stop
            }
        },
        Ok(Popped::WaitUntil(at)) => Next::Wait(at.saturating_duration_since(Instant::now())),
        // Nothing to take: links may wait in the group.
        Ok(Popped::Empty) if core.group.urls > 0 => match flush_group(&mut core) {
            Ok(()) => Next::Wait(Duration::ZERO),
            Err(e) => {
                drop(core);
                fail(shared, format!("{e}"));
                Next::Stop
            }
        },
        Ok(Popped::Empty) if in_flight == 0 => Next::Stop,
        Ok(Popped::Empty) => Next::Wait(Duration::from_millis(5)),
        Err(e) => {
            drop(core);
            fail(shared, format!("crawl state: {e}"));
            Next::Stop
        }
    }
}

/// One URL's writes and outcomes, added to the current [`Group`].
struct Commit {
    writes: Writes,
    outcomes: Vec<Outcome>,
    host: String,
    /// The popped URL the commit is of: done once it is committed.
    finished: Option<Entry>,
}

impl Commit {
    fn new(entry: &Entry) -> Commit {
        let mut c = Commit::bare();
        c.finished = Some(entry.clone());
        c.host = entry.url.host_str().unwrap_or("").to_string();
        c
    }

    /// A commit of no URL's (sitemaps).
    fn bare() -> Commit {
        Commit {
            writes: Writes::default(),
            outcomes: Vec::new(),
            host: String::new(),
            finished: None,
        }
    }
}

/// Adds `commit` to the group and applies the group when it is due. On a
/// state error the group's URLs stay in flight (fetched again by the next
/// run) and the crawl stops.
fn apply(shared: &Shared, core: &mut Core, commit: Commit) -> bool {
    let g = &mut core.group;
    g.writes.append(commit.writes);
    if let Some(entry) = &commit.finished {
        entry.finish(&mut g.adds);
    }
    g.outcomes.extend(commit.outcomes);
    if !commit.host.is_empty() {
        g.hosts.insert(commit.host);
    }
    g.urls += 1;
    g.since.get_or_insert_with(Instant::now);
    if g.urls >= GROUP_URLS || g.is_stale() {
        if let Err(e) = flush_group(core) {
            fail(shared, format!("{e}"));
            return false;
        }
    }
    true
}

/// Commits the group: its writes, the outbox entry of its outcomes and
/// frontier records, and the statistics in one batch; then its URLs join
/// the frontier and its outcomes go to the sink.
fn flush_group(core: &mut Core) -> Result<(), CrawlError> {
    let Core {
        state, sink, group, ..
    } = core;
    if group.urls == 0 {
        return Ok(());
    }
    let mut g = std::mem::take(group);
    for host in &g.hosts {
        state.put_host(&mut g.writes, host);
    }
    state.put_stats(&mut g.writes);
    state.commit(g.writes, g.adds, &g.outcomes)?;
    for o in &g.outcomes {
        // On failure the outcome is still in the state's outbox: the next
        // checkpoint would record a position past a hole, so the crawl
        // stops and the next run rewinds and writes it again.
        o.send(sink.as_mut())
            .map_err(|e| std::io::Error::new(e.kind(), format!("writing output failed: {e}")))?;
    }
    Ok(())
}

/// Whether a popped URL was dealt with or must wait for its host's turn.
enum Processed {
    Done,
    /// Its host's robots.txt was just fetched, so the page's turn is a
    /// delay away: back to the frontier rather than holding a worker.
    NotReady(Entry),
}

async fn process(shared: &Arc<Shared>, entry: Entry) -> Processed {
    let t = Instant::now();
    match robots_first(shared, &entry.url).await {
        Turn::Now => {}
        Turn::Later => return Processed::NotReady(entry),
        Turn::Stopped => return Processed::Done,
    }
    if !take_page(shared, &entry) {
        return Processed::Done;
    }
    if shared.config.seeds.sitemaps {
        start_sitemaps(shared, &entry.url);
    }
    shared.extraction.wait_for_room().await;
    let hop_shared = shared.clone();
    let depth = entry.depth;
    let hop_ok = move |hop: &Url| hop_shared.pages.allows_hop(hop, depth);
    // A request still waiting for its host's turn when the crawl stops is
    // abandoned: the URL stays in flight, and the next run fetches it.
    let result = tokio::select! {
        r = shared.fetcher.fetch(&entry.url, &hop_ok) => r,
        () = stopped(shared) => {
            tracing::debug!(url = %entry.url, "abandoned: stopping");
            return Processed::Done;
        }
    };
    let t = shared.phases.add(Phase::Fetch, t);
    match result {
        Ok(fetched) => {
            shared.latencies.observe(fetched.elapsed);
            let len = fetched.body.len();
            let turn = shared.extraction.enter(len).await;
            let t = shared.phases.add(Phase::ExtractionWait, t);
            if len <= INLINE_JUDGE_BYTES {
                judge(shared, entry, fetched);
                drop(turn);
            } else {
                let work = shared.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    judge(&work, entry, fetched);
                    drop(turn);
                })
                .await;
            }
            shared.phases.add(Phase::Judge, t);
        }
        Err(e) => fetch_failed(shared, &entry, &e),
    }
    Processed::Done
}

/// Whether a URL's request may go now.
enum Turn {
    Now,
    /// Its host's robots.txt was just fetched, and the host's next turn
    /// is later: the URL goes back to the frontier.
    Later,
    Stopped,
}

/// Fetches the host's robots.txt first if its rules are not known: that
/// request takes the host's turn.
async fn robots_first(shared: &Shared, url: &Url) -> Turn {
    if shared.fetcher.has_rules(url) {
        return Turn::Now;
    }
    let rules = tokio::select! {
        r = shared.fetcher.rules_for(url) => r,
        () = stopped(shared) => return Turn::Stopped,
    };
    // On an error the fetch reports it (its robots.txt answer, cached or
    // not, decides).
    let later = shared.fetcher.ready_at(url) > Instant::now() + crate::frontier::SLACK;
    if rules.is_ok() && later {
        Turn::Later
    } else {
        Turn::Now
    }
}

/// Takes one page of the host's and the domain's budgets; false if one is
/// spent (the URL is then done, counted out of scope) or the state failed.
fn take_page(shared: &Shared, entry: &Entry) -> bool {
    let host = entry.url.host_str().unwrap_or("");
    let mut core = shared.core.lock();
    let scope = &shared.config.scope;
    let taken = core.state.take_page(
        host,
        &crate::traps::section(&entry.url),
        scope.max_pages_per_host,
        scope.max_pages_per_domain,
    );
    match taken {
        Ok(Ok(())) => true,
        Ok(Err(budget)) => {
            let out_of_scope = &mut core.state.stats.out_of_scope;
            *out_of_scope.entry(budget.into()).or_default() += 1;
            apply(shared, &mut core, Commit::new(entry));
            false
        }
        Err(e) => {
            drop(core);
            fail(shared, format!("crawl state: {e}"));
            false
        }
    }
}

/// Reads the sitemaps of `url`'s origin in the background, the first time
/// the crawl meets the origin (and unless an earlier run read them).
fn start_sitemaps(shared: &Arc<Shared>, url: &Url) {
    let origin = url.origin().ascii_serialization();
    let first = shared
        .sitemap_origins
        .lock()
        .unwrap()
        .insert(origin.clone());
    if !first || shared.core.lock().state.sitemaps_read(&origin) {
        return;
    }
    // Counted in flight so the workers wait for its URLs.
    shared.in_flight.fetch_add(1, Ordering::SeqCst);
    let s = shared.clone();
    let page = url.clone();
    tokio::spawn(async move {
        read_sitemaps(&s, &page, &origin).await;
        s.in_flight.fetch_sub(1, Ordering::SeqCst);
    });
}

/// A fetch that failed: counted (in its host's errors too, robots
/// denials apart) and recorded.
fn fetch_failed(shared: &Shared, entry: &Entry, e: &nearcrawl_fetch::FetchError) {
    tracing::debug!(url = %entry.url, kind = e.kind(), "{e}");
    let mut core = shared.core.lock();
    let mut commit = Commit::new(entry);
    if !matches!(e, nearcrawl_fetch::FetchError::RobotsDenied) {
        core.state.host_stats(&commit.host).errors += 1;
    }
    let record = crate::page::failed(&entry.url, e, &mut core.state.stats);
    commit.outcomes.push(record);
    apply(shared, &mut core, commit);
}

/// Sitemap files read per origin, at most.
const MAX_SITEMAP_FILES: usize = 1000;

/// Reads the sitemaps `origin`'s robots.txt lists (following indexes) and
/// queues their in-scope URLs one link from the seeds; then records the
/// origin as done, so a resumed crawl does not read them again.
async fn read_sitemaps(shared: &Arc<Shared>, page: &Url, origin: &str) {
    use crate::sitemap::Sitemap;
    let Ok(robots) = shared.fetcher.robots_for(page).await else {
        return; // the page's own fetch reports the host's trouble
    };
    let mut todo: std::collections::VecDeque<(String, u32)> =
        robots.sitemaps().iter().map(|s| (s.clone(), 0)).collect();
    let mut done = std::collections::HashSet::new();
    while let Some((loc, level)) = todo.pop_front() {
        if shared.stop.load(Ordering::SeqCst) {
            return; // not recorded as read: the next run reads them again
        }
        if done.len() >= MAX_SITEMAP_FILES || !done.insert(loc.clone()) {
            continue;
        }
        let mut commit = Commit::bare();
        let parsed = match Url::parse(&loc) {
            Err(e) => Err(("sitemap", format!("bad sitemap URL: {e}"))),
            Ok(url) => crate::sitemap::fetch(&shared.fetcher, &url).await.0,
        };
        let mut core = shared.core.lock();
        match parsed {
            Err((kind, detail)) => {
                let record = crate::page::error(&loc, kind, detail, &mut core.state.stats);
                commit.outcomes.push(record);
            }
            Ok(Sitemap::Index(locs)) => {
                if level < crate::sitemap::MAX_LEVELS {
                    todo.extend(locs.into_iter().map(|l| (l, level + 1)));
                }
                continue;
            }
            Ok(Sitemap::Urls(urls)) => {
                let Core { state, group, .. } = &mut *core;
                for c in shared.pages.sitemap_pages(urls, &mut state.stats) {
                    match state
                        .frontier
                        .push(&mut commit.writes, &mut group.adds, &c, 1)
                    {
                        Ok(Pushed::Queued) => state.stats.sitemap_urls += 1,
                        Ok(Pushed::Seen) => {}
                        Ok(Pushed::HostLimit) => state.stats.out_of_scope("host_limit"),
                        Err(e) => {
                            drop(core);
                            fail(shared, format!("crawl state: {e}"));
                            return;
                        }
                    }
                }
            }
        }
        if !apply(shared, &mut core, commit) {
            return;
        }
    }
    tracing::info!(origin, files = done.len(), "sitemaps read");
    let mut core = shared.core.lock();
    let mut commit = Commit::bare();
    core.state.put_sitemaps_read(&mut commit.writes, origin);
    apply(shared, &mut core, commit);
}

/// Judges a fetched page: extraction and fingerprinting first (no lock),
/// then, under the commit lock, the verdict and what it changes: a
/// duplicate is recorded and its links dropped; a new page goes to the
/// corpus and its links to the frontier.
fn judge(shared: &Shared, entry: Entry, fetched: nearcrawl_fetch::Fetched) {
    let (read, prepared) = shared
        .pages
        .read(entry.depth, fetched, |c| shared.seen.contains(c));
    let mut commit = Commit::new(&entry);
    let mut guard = shared.core.lock();
    let core = &mut *guard;
    let state = &core.state;
    let judgement = match core.dedup.judge_prepared(prepared, |d| state.doc_exists(d)) {
        Ok(j) => j,
        Err(e) => {
            let url = entry.url.as_str();
            let error = crate::page::error(url, "index", e.to_string(), &mut core.state.stats);
            commit.outcomes.push(error);
            apply(shared, core, commit);
            return;
        }
    };
    let decision = &judgement.decision;
    tracing::debug!(url = %entry.url, status = read.fetched.status, verdict = ?decision.verdict, "page");
    // Redirect targets count as seen.
    if let Some(c) = shared.pages.canon().canonicalize(&read.fetched.final_url) {
        core.state.frontier.mark_seen(&mut core.group.adds, &c);
    }
    let original = decision
        .verdict
        .duplicate_of()
        .and_then(|(of, ..)| core.state.doc_url(of).ok().flatten());
    let stats = &mut core.state.stats;
    let judged = shared
        .pages
        .judged(&entry.url, entry.depth, read, decision, original, stats);
    let verdict = HostVerdict {
        duplicate: !judged.new,
        copies_neighbour: judged.copies_neighbour,
        written: judged.written,
        delay: shared.fetcher.delay_of(&entry.url),
    };
    note_host_verdict(
        &mut core.state,
        &mut core.traps,
        &mut commit,
        &entry.url,
        verdict,
    );
    let new = judged.new;
    // The page's own outcomes first, then a trap it made.
    let trap_record = std::mem::replace(&mut commit.outcomes, judged.outcomes);
    commit.outcomes.extend(trap_record);
    let recorded = if new {
        record_new(core, &mut commit, &entry, &judgement, &judged.links)
    } else {
        Ok(())
    };
    match recorded {
        Ok(()) => {
            apply(shared, core, commit);
        }
        Err(why) => {
            drop(guard);
            fail(shared, why);
        }
    }
}

/// A new page: a document in the state and the gate, its links to the
/// frontier. Err: why the state or the index failed.
fn record_new(
    core: &mut Core,
    commit: &mut Commit,
    entry: &Entry,
    judgement: &nearcrawl_index::Judgement,
    links: &[Url],
) -> Result<(), String> {
    let state = &mut core.state;
    let doc = state.new_doc().map_err(|e| format!("crawl state: {e}"))?;
    state.put_doc(doc, entry.url.as_str(), judgement);
    for c in links {
        let pushed = state
            .frontier
            .push(&mut commit.writes, &mut core.group.adds, c, entry.depth + 1)
            .map_err(|e| format!("crawl state: {e}"))?;
        if pushed == Pushed::HostLimit {
            state.stats.out_of_scope("host_limit");
        }
    }
    // Recorded now, so the next page (maybe in the same group) is judged
    // against it; a crash before the group is applied leaves an entry
    // naming a document that never existed, which `doc_exists` rules out.
    (core.dedup.record(doc, judgement)).map_err(|e| format!("duplicate index: {e}"))
}

/// What one judged page tells about its host.
struct HostVerdict {
    duplicate: bool,
    /// A duplicate of a page in its own directory: a trap's signal.
    copies_neighbour: bool,
    written: bool,
    /// The host's delay when the page was fetched.
    delay: Duration,
}

/// Counts a judged page in its host's figures, and cuts the page's section
/// off when the page makes it a duplicate trap (recorded in `commit`).
fn note_host_verdict(
    state: &mut State,
    traps: &mut TrapDetector,
    commit: &mut Commit,
    url: &Url,
    verdict: HostVerdict,
) {
    let host = url.host_str().unwrap_or("");
    let counts = state.host_stats(host);
    counts.fetched += 1;
    counts.delay_ms_total += verdict.delay.as_millis() as u64;
    counts.duplicates += u64::from(verdict.duplicate);
    counts.written += u64::from(verdict.written);
    let section = crate::traps::section(url);
    let Some(trap) = traps.judged(&section, verdict.copies_neighbour) else {
        return;
    };
    let (record, listed) = crate::traps::trap_record(url, &trap);
    commit.outcomes.push(record);
    state.trap_section(&mut commit.writes, listed);
}
