//! The embedded store: the crawl's state in sled and files under its
//! output directory, driven by the one loop ([`crate::run`]); the crawl
//! over it is [`Crawler`].
//!
//! - [`store`]: the narrow key-value trait and its sled implementation;
//! - [`frontier`]: per-host queues and the seen set, in files beside it;
//! - [`state`]: everything else a crawl keeps (hosts, robots.txt, counts,
//!   documents), and the crash-exactness argument;
//! - `outbox`: outcomes committed but not yet in the outputs;
//! - `timed_lock`: the one lock, which tasks wait for without their threads.
//!
//! Everything a group of finished URLs changes is committed in one batch
//! under one lock with the duplicate index, so the two always agree;
//! fetching and extraction, the slow parts, run outside it. The group's
//! outcomes go to the sink after the lock is released: only the loop
//! writes them, in commit order, and the outbox holds them until the next
//! checkpoint, so a crash in between loses none.

mod core;
mod error;
pub mod frontier;
mod outbox;
mod pages;
mod sitemaps;
pub mod state;
pub mod store;
mod timed_lock;
mod url_rules;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_fetch::Fetcher;
use nearcrawl_index::Deduper;
use url::Url;

use self::core::{Core, CoreGuard, CoreLock};
use self::outbox::PackedOutcomes;
use self::sitemaps::{Queued, SitemapQueue};
use crate::config::Config;
use crate::embedded::frontier::{Additions, Popped, Pushed, Turns};
use crate::embedded::state::{RobotsCache, State};
use crate::embedded::store::{SledStore, Store, StoreError, Writes};
use crate::page::Pipeline;
use crate::remembered::Remembered;
use crate::run::{Claimed, Crawl, CrawlStore, Done, PageVerdict, Stages, Taken};
use crate::sink::{Outcome, Sink, send_all};
use crate::stats::{Metrics, Stats, StatsFile};
use crate::traps::TrapDetector;

pub use error::CrawlError;
pub use pages::{EmbeddedClaim, EmbeddedPages};

/// The embedded crawl: the one loop over the [`EmbeddedStore`] in the
/// output directory, so running again continues, after a clean stop or a
/// crash alike.
pub type Crawler = Crawl<EmbeddedStore>;

impl Crawler {
    /// Opens (or resumes) the crawl in `config.output.dir`, writing to
    /// `sink` (`nearcrawl_output::open` gives the configured ones).
    pub fn open(config: Config, seeds: &[Url], sink: Box<dyn Sink>) -> Result<Crawler, CrawlError> {
        let (store, stages) = EmbeddedStore::open(config, seeds, sink)?;
        Ok(Crawl::new(store, stages))
    }
}

/// Seeds queued per state batch.
const SEED_BATCH: usize = 1000;

/// Hosts listed in `stats.json`, most pages fetched first.
const TOP_HOSTS: usize = 20;

/// How long the loop may wait when the frontier has nothing to hand out.
const IDLE: Duration = Duration::from_millis(20);

/// The crawl's state in sled, for the loop.
pub struct EmbeddedStore {
    core: Arc<CoreLock>,
    /// The outputs: written by the loop alone (commits, checkpoints).
    sink: Box<dyn Sink>,
    pages: Arc<EmbeddedPages>,
    stages: Arc<Stages>,
    sitemaps: SitemapQueue,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore").finish_non_exhaustive()
    }
}

impl EmbeddedStore {
    /// Opens (or resumes) the crawl in `config.output.dir`, writing to
    /// `sink`; recovers the outputs after an unclean stop and queues the
    /// seeds (those seen before are skipped).
    fn open(
        config: Config,
        seeds: &[Url],
        mut sink: Box<dyn Sink>,
    ) -> Result<(EmbeddedStore, Arc<Stages>), CrawlError> {
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
            traps: TrapDetector::new(config.dedup.trap_window, config.dedup.trap_share.0),
            pending_docs: Default::default(),
            remembered: Remembered::open(&config.dedup.remembered(&config.recrawl))?,
            dust: Default::default(),
            requeuing: Default::default(),
        };
        *core.dust.write().unwrap() = url_rules::open(&core.state)?;
        core.recover(sink.as_mut())?;
        requeue_skipped(&mut core, true)?;
        core.remember()?;
        core.state.frontier.set_limits(
            u32::try_from(config.politeness.per_host_concurrency.0).unwrap_or(u32::MAX),
            config.scope.max_hosts,
        );
        let capture_headers = sink.wants_captures().then(|| fetcher.request_headers());
        let earlier = crate::recrawl::open_earlier(&config)?;
        let seeds = crate::recrawl::seeds_to_queue(seeds, earlier.as_ref());
        let fingerprinter = core.dedup.fingerprinter();
        let pages = Pipeline::new(&config, &seeds, fingerprinter, capture_headers, earlier)?;
        queue_seeds(&mut core.state, &pages, &seeds)?;
        let seen = core.state.frontier.seen_set();
        let read_targets = core.state.read_targets()?;
        let core = Arc::new(CoreLock::new(core));
        let rules = core.lock().dust.clone();
        let embedded_pages = Arc::new(EmbeddedPages::new(
            core.clone(),
            rules,
            seen,
            read_targets,
            &config,
        ));
        let stages = Arc::new(Stages::new(config, fetcher, pages));
        let store = EmbeddedStore {
            core,
            sink,
            pages: embedded_pages,
            stages: stages.clone(),
            sitemaps: SitemapQueue::default(),
        };
        Ok((store, stages))
    }

    /// One batch for the group: its URLs done, documents, links, counts
    /// and the outbox entry of its outcomes, under the store's lock (its
    /// pages' outcomes packed for the outbox before); then, with the lock
    /// released, the outcomes go to the sink.
    async fn commit_group(
        &mut self,
        mut group: Vec<Done<EmbeddedClaim>>,
    ) -> Result<(), CrawlError> {
        use crate::cpu::{Stage, time};
        group.retain(|d| !d.again);
        let mut pages = time(Stage::Write, || {
            PackedOutcomes::pack(group.iter().flat_map(|d| &d.outcomes))
        })?;
        // The outcomes come back from the batch in the order packed (the
        // group's, then its traps'): each page's record with its JSON.
        let page_json = pages.take_page_json();
        let core_lock = self.core.clone();
        let guard = core_lock.lock_async().await;
        let outcomes = time(Stage::Write, || self.commit_batch(guard, group, pages))?;
        time(Stage::Write, || {
            // On failure the outcomes are still in the state's outbox: the
            // next checkpoint would record a position past a hole, so the
            // crawl stops and the next run rewinds and writes them again.
            send_all(self.sink.as_mut(), &outcomes, page_json)
                .map_err(|e| std::io::Error::new(e.kind(), format!("writing output failed: {e}")))
        })?;
        Ok(())
    }

    /// The group's batch, under the store's lock; its outcomes: the
    /// pages', then the duplicate traps the group's verdicts made.
    fn commit_batch(
        &mut self,
        mut guard: CoreGuard<'_>,
        group: Vec<Done<EmbeddedClaim>>,
        pages: PackedOutcomes,
    ) -> Result<Vec<Outcome>, CrawlError> {
        let core = &mut *guard;
        let mut c = GroupCommit::default();
        url_rules::requeue_retired(core, &mut c.writes, &mut c.adds, false)?;
        for done in group {
            self.commit_one(core, &mut c, done);
        }
        if let Some(e) = c.failed.take() {
            return Err(e.into());
        }
        for host in &c.hosts {
            core.state.put_host(&mut c.writes, host);
        }
        core.state.put_stats(&mut c.writes);
        let traps = PackedOutcomes::pack(&c.traps)?;
        core.state.commit(c.writes, c.adds, &[pages, traps])?;
        c.outcomes.append(&mut c.traps);
        Ok(c.outcomes)
    }

    /// Adds one finished URL to the group's commit.
    fn commit_one(&mut self, core: &mut Core, c: &mut GroupCommit, done: Done<EmbeddedClaim>) {
        let Done {
            claimed,
            outcomes,
            stats,
            links,
            listed,
            final_url,
            read_target,
            verdict,
            predicted,
            host_error,
            delay,
            ..
        } = done;
        core.state.stats.merge(stats);
        match claimed.claim {
            EmbeddedClaim::Page { entry, doc } => {
                entry.finish(&mut c.adds);
                let host = nearcrawl_fetch::politeness_key(&claimed.url);
                if host_error {
                    core.state.host_stats(&host).errors += 1;
                }
                let new_doc = doc.is_some();
                if let Some((doc, judgement)) = doc {
                    core.pending_docs.remove(&doc);
                    core.state.put_doc(doc, claimed.url.as_str(), &judgement);
                }
                let page = url_rules::Committed {
                    url: &claimed.url,
                    depth: claimed.depth,
                    new_doc,
                    outcomes: &outcomes,
                    predicted: predicted.as_ref(),
                };
                url_rules::commit(core, &mut c.writes, page);
                // Redirect targets count as seen.
                let canon = self.stages.pages.canon();
                if let Some(f) = final_url.and_then(|f| canon.canonicalize(&f)) {
                    core.state.frontier.mark_seen(&mut c.adds, &f);
                }
                if let Some(target) = read_target {
                    core.state.put_read_target(&mut c.writes, &target);
                }
                if let Some(verdict) = verdict {
                    note_host_verdict(core, c, &claimed.url, verdict, delay);
                }
                c.hosts.insert(host);
            }
            EmbeddedClaim::Sitemap { origin } => {
                if self.sitemaps.read(&origin) {
                    core.state.put_sitemaps_read(&mut c.writes, &origin);
                }
            }
        }
        c.outcomes.extend(outcomes);
        c.push(core, &links, claimed.depth + 1, false);
        c.push(core, &listed, 1, true);
    }
}

impl CrawlStore for EmbeddedStore {
    type Claim = EmbeddedClaim;
    type Pages = EmbeddedPages;
    type Error = CrawlError;

    /// Each commit is a sled batch, which takes sled's global write lock
    /// (a batch per page cost ~0.35 ms and halved the crawl's speed).
    const GROUP_AGE: Duration = Duration::from_millis(20);

    fn pages(&self) -> Arc<EmbeddedPages> {
        self.pages.clone()
    }

    async fn maintain(&mut self) -> Result<(), CrawlError> {
        Ok(())
    }

    /// Sitemap files first (few), then the frontier's next hosts in turn.
    async fn take(
        &mut self,
        room: usize,
        in_flight: usize,
    ) -> Result<Taken<EmbeddedClaim>, CrawlError> {
        let mut core = self.core.lock_async().await;
        let spent = core.state.stats.fetched + in_flight as u64;
        let left = self.stages.config.scope.max_pages.saturating_sub(spent);
        let room = room.min(usize::try_from(left).unwrap_or(usize::MAX));
        let turns = FetcherTurns(&self.stages.fetcher);
        let mut taken = Taken::nothing(IDLE);
        while taken.claims.len() < room {
            if let Some(q) = self.sitemaps.pop() {
                taken.claims.push(Claimed {
                    url: q.url,
                    depth: 1,
                    sitemap: Some(q.level),
                    claim: EmbeddedClaim::Sitemap { origin: q.origin },
                });
                continue;
            }
            match core.state.frontier.pop(&turns)? {
                Popped::Entry(entry) => taken.claims.push(Claimed {
                    url: entry.url.clone(),
                    depth: entry.depth,
                    sitemap: None,
                    claim: EmbeddedClaim::Page { entry, doc: None },
                }),
                Popped::WaitUntil(at) => {
                    taken.next = at.saturating_duration_since(Instant::now());
                    break;
                }
                Popped::Empty => break,
            }
        }
        Ok(taken)
    }

    async fn finished(&mut self, finished: &[Done<EmbeddedClaim>]) -> Result<(), CrawlError> {
        if finished.is_empty() {
            return Ok(());
        }
        let turns = FetcherTurns(&self.stages.fetcher);
        let mut core = self.core.lock_async().await;
        for done in finished {
            match &done.claimed.claim {
                EmbeddedClaim::Page { entry, .. } if done.again => {
                    core.state.frontier.put_back(entry.clone(), &turns)?;
                }
                EmbeddedClaim::Page { entry, .. } => core.state.frontier.done(entry, &turns),
                EmbeddedClaim::Sitemap { origin } if done.again => {
                    self.sitemaps.put_back(Queued {
                        url: done.claimed.url.clone(),
                        level: done.claimed.sitemap.unwrap_or(0),
                        origin: origin.clone(),
                    });
                }
                EmbeddedClaim::Sitemap { .. } => {}
            }
            if !done.sitemaps.is_empty() {
                // Files named by a page's robots.txt, or by a sitemap index.
                let origin = match &done.claimed.claim {
                    EmbeddedClaim::Sitemap { origin } => origin.clone(),
                    EmbeddedClaim::Page { .. } => done.claimed.url.origin().ascii_serialization(),
                };
                self.sitemaps.add(&origin, &done.sitemaps);
            }
        }
        Ok(())
    }

    /// See [`EmbeddedStore::commit_group`].
    async fn commit(&mut self, group: Vec<Done<EmbeddedClaim>>) -> Result<(), CrawlError> {
        self.commit_group(group).await
    }

    async fn checkpoint(&mut self) -> Result<(), CrawlError> {
        let mut core = self.core.lock_async().await;
        core.checkpoint(self.sink.as_mut())
    }

    async fn over(&mut self, stopping: bool) -> Result<bool, CrawlError> {
        let mut core = self.core.lock_async().await;
        // Not over while a retired rule's URLs wait to be queued again.
        if !stopping && !core.requeuing.is_empty() {
            requeue_skipped(&mut core, false)?;
            return Ok(false);
        }
        let spent = core.state.stats.fetched >= self.stages.config.scope.max_pages;
        let empty = core.state.frontier.is_empty() && self.sitemaps.is_empty();
        Ok(stopping || spent || empty)
    }

    async fn show(&mut self, _in_flight: usize) -> Result<(), CrawlError> {
        Ok(())
    }

    /// The crawl's figures at the moment, for metrics.
    fn metrics(&self) -> Box<dyn Fn() -> Metrics + Send + Sync> {
        let (core, stages) = (self.core.clone(), self.stages.clone());
        Box::new(move || {
            let core = core.lock();
            Metrics {
                stats: core.state.stats.clone(),
                queued: core.state.frontier.len(),
                in_flight: stages.in_flight(),
                active_hosts: core.state.frontier.active_hosts(),
                fetch_latency: stages.latencies.snapshot(),
                cpu: crate::cpu::CpuSecs::now(),
            }
        })
    }

    /// Counts so far (over every run of this crawl).
    fn stats(&self) -> Stats {
        self.core.lock().state.stats.clone()
    }

    /// Checkpoints and writes `stats.json` (`stats`: this run's figures
    /// filled in).
    async fn finish(&mut self, stats: &Stats) -> Result<(), CrawlError> {
        let mut core = self.core.lock_async().await;
        core.checkpoint(self.sink.as_mut())?;
        let mut file = StatsFile::new(stats);
        file.this_run["core_lock"] = self.core.times();
        self.stages.add_times(&mut file.this_run);
        // The gate's index is the one part of memory that grows with the
        // crawl (the frontier's is per queued URL and host).
        file.this_run["gate_memory_bytes"] = core.dedup.memory_bytes().into();
        file.top_hosts = core.state.top_hosts(TOP_HOSTS)?;
        file.url_rules = crate::stats::UrlRule::listed(&core.dust.read().unwrap());
        drop(core);
        self.sink.finish(&file)?;
        Ok(())
    }
}

/// Queues again, in a commit of its own, URLs skipped by retired rules (at
/// `start`, by every one: a crash may have kept a retired rule's URLs
/// from its next group). Committed as a group is, through the outbox: the
/// URLs queued again are in the frontier's files past the last
/// checkpoint, which a crash cuts back to it.
fn requeue_skipped(core: &mut Core, start: bool) -> Result<(), StoreError> {
    let (mut writes, mut adds) = (Writes::default(), Additions::default());
    url_rules::requeue_retired(core, &mut writes, &mut adds, start)?;
    core.state.put_stats(&mut writes);
    core.state.commit(writes, adds, &[])
}

/// What a group of finished URLs writes, gathered before the one batch.
#[derive(Default)]
struct GroupCommit {
    writes: Writes,
    adds: Additions,
    /// The pages' outcomes, in the group's order.
    outcomes: Vec<Outcome>,
    /// The records of the duplicate traps the group's verdicts made.
    traps: Vec<Outcome>,
    hosts: HashSet<String>,
    /// The first error queuing links met: the group is not committed.
    failed: Option<StoreError>,
}

impl GroupCommit {
    /// Queues `urls` at `depth`; `listed`: a sitemap's, counted when new.
    fn push(&mut self, core: &mut Core, urls: &[Url], depth: u32, listed: bool) {
        for url in urls {
            let state = &mut core.state;
            match state
                .frontier
                .push(&mut self.writes, &mut self.adds, url, depth)
            {
                Ok(Pushed::Queued) if listed => state.stats.sitemap_urls += 1,
                Ok(Pushed::Queued | Pushed::Seen) => {}
                Ok(Pushed::HostLimit) => state.stats.out_of_scope("host_limit"),
                Err(e) => {
                    self.failed.get_or_insert(e);
                    return;
                }
            }
        }
    }
}

/// Counts a judged page in its host's figures, and cuts the page's section
/// off when the page makes it a duplicate trap (recorded in the group).
fn note_host_verdict(
    core: &mut Core,
    c: &mut GroupCommit,
    url: &Url,
    verdict: PageVerdict,
    delay: Duration,
) {
    let host = nearcrawl_fetch::politeness_key(url);
    let counts = core.state.host_stats(&host);
    counts.fetched += 1;
    counts.delay_ms_total += delay.as_millis() as u64;
    counts.duplicates += u64::from(verdict.duplicate);
    counts.written += u64::from(verdict.written);
    let section = crate::traps::section(url);
    let Some(trap) = core.traps.judged(&section, verdict.copies_neighbour) else {
        return;
    };
    let (record, listed) = crate::traps::trap_record(url, &trap);
    c.traps.push(record);
    core.state.trap_section(&mut c.writes, listed);
}

/// Queues the seeds (those seen before are skipped), in batches: one
/// sled batch per seed costs ~5 KB of memory in sled (a 100,000-line seed
/// list took 1 GB).
fn queue_seeds(
    state: &mut State,
    pages: &Pipeline,
    seeds: &[(Url, u32)],
) -> Result<(), StoreError> {
    for chunk in seeds.chunks(SEED_BATCH) {
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        for (seed, depth) in chunk {
            let Some(c) = pages.seed(seed, *depth) else {
                continue;
            };
            let _ = state.frontier.push(&mut writes, &mut adds, &c, *depth)?;
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
        || name == crate::recrawl::VISITS_FILE
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
