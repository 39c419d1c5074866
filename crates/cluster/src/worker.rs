//! One worker of a crawl shared through a Redis Cluster: the embedded
//! crawl's stages (fetch, extract, fingerprint, gate, outputs) around the
//! shared frontier, the shared gate and the partition leases.
//!
//! The loop, in one task: keep this worker's share of partitions
//! ([`Partitions::balance`]); lease URLs from them up to the global
//! concurrency; fetch and judge each in its own task; then commit what
//! came back in groups:
//!
//! 1. the new pages' links go to the shared frontier (any partition);
//! 2. each URL's outcomes go to the local outbox, synced;
//! 3. each URL is acknowledged in the cluster (fenced by the partition's
//!    epoch); one whose lease lapsed is refused, and its outcomes dropped,
//!    since another fetch of it will count;
//! 4. the acknowledged outcomes go to the outputs.
//!
//! Links are added before the acknowledgement, so none is lost when a
//! worker dies between the two; the outbox comes before it, so an
//! acknowledged outcome is never lost ([`crate::outbox`]). Checkpoints make
//! the outputs, the outbox and the gate's replica durable.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nearcrawl_crawl::config::{Config, PolitenessKey};
use nearcrawl_crawl::latency::Latencies;
use nearcrawl_crawl::page::{self, Pipeline};
use nearcrawl_crawl::sink::{Outcome, Sink};
use nearcrawl_crawl::slots::ExtractionSlots;
use nearcrawl_crawl::stats::{Metrics, Stats};
use nearcrawl_crawl::traps::{Trap, section, trap_record};
use nearcrawl_fetch::{Fetched, Fetcher, politeness_key};
use nearcrawl_index::Fingerprinter;
use tokio::task::JoinSet;
use url::Url;

use crate::error::ClusterError;
use crate::frontier::{FrontierConfig, Leased, Link, SharedFrontier};
use crate::lease::{Lease, Partitions};
use crate::outbox::{Entry, Outbox};
use crate::shared_gate::SharedGate;

/// Outcomes are committed in groups of this many URLs, or this old.
const GROUP_URLS: usize = 64;
const GROUP_AGE: Duration = Duration::from_millis(5);
/// How often the crawl's page count over all workers is read.
const BUDGET_EVERY: Duration = Duration::from_millis(100);
/// A partition with no key ready is asked again after this long. Links
/// other workers add to it wake it at once (they tell this worker, which
/// looks every [`WAKE_EVERY`]); the poll is there for a wake that was lost
/// (the partition changed hands in between).
const IDLE_POLL: Duration = Duration::from_secs(5);
const WAKE_EVERY: Duration = Duration::from_millis(100);
/// How often a worker looks at how many workers there are, to take or
/// hand back partitions: a joining worker gets its share within about two
/// of these.
const BALANCE_EVERY: Duration = Duration::from_millis(500);
/// A worker with nothing to do asks for work at most this often; a
/// partition it was given is not taken back by the giver for this long.
const ASK_EVERY: Duration = Duration::from_secs(1);
const GIVEN_FOR: Duration = Duration::from_secs(5);
/// URLs one lease call takes at most.
const LEASE_BATCH: usize = 32;
/// A request must start within this of its lease (added to every delay).
const START_SLACK: Duration = Duration::from_millis(10);
/// A URL not acknowledged this long after its lease goes back to its queue.
const FLIGHT: Duration = Duration::from_secs(60);
/// The frontier is looked at this often when there is nothing to do, and
/// the crawl is over after this many looks find nothing anywhere.
const DONE_POLL: Duration = Duration::from_millis(250);
const DONE_LOOKS: u32 = 3;
/// How often the crawl's queue is read for the progress line.
const QUEUE_EVERY: Duration = Duration::from_secs(2);

/// What the stages share: read-only but for the gate and the pool.
struct Stages {
    config: Config,
    fetcher: Fetcher,
    /// What a fetched page becomes, as in the embedded crawl.
    pages: Pipeline,
    /// Pages extracted at once and bodies waiting, as in the embedded crawl.
    extraction: ExtractionSlots,
    gate: tokio::sync::Mutex<SharedGate>,
    /// With `politeness.key = "ip"`: where servers' turns are taken.
    addresses: Option<SharedFrontier>,
    /// What the worker shows while it runs.
    shown: Arc<Shown>,
}

/// A running worker's figures for its progress line and `--metrics`,
/// updated by its loop.
#[derive(Default)]
struct Shown {
    /// This worker's counts, as of its last commit.
    stats: Mutex<Stats>,
    /// URLs queued or in flight in the whole crawl, as last read (when
    /// someone looked: reading it asks every partition).
    queued: AtomicUsize,
    looked: AtomicBool,
    in_flight: AtomicUsize,
    /// Politeness keys with a URL in flight here.
    keys: AtomicUsize,
    latencies: Latencies,
}

/// One worker of a shared crawl.
pub struct Worker {
    stages: Arc<Stages>,
    frontier: SharedFrontier,
    partitions: Partitions,
    sink: Box<dyn Sink>,
    outbox: Outbox,
    stats: Stats,
    crawl: String,
    worker: String,
    /// URLs whose lease lapsed before they were acknowledged (fetched
    /// again elsewhere), and entries dropped at recovery for that reason.
    lapsed: u64,
    /// The position of the copy of another worker's replica this one
    /// started from, if it did.
    from_snapshot: Option<String>,
    /// A copy of this worker's replica on its way to a worker that joined
    /// late.
    sending: Option<tokio::task::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("crawl", &self.crawl)
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

/// A fetched URL's outcomes, waiting to be committed.
struct Fetch {
    leased: Leased,
    lease: Lease,
    outcomes: Vec<Outcome>,
    /// Links of a new page: politeness key, URL, depth.
    links: Vec<(String, String, u32)>,
    /// Sitemaps to read (named by a robots.txt, or by a sitemap index):
    /// politeness key, URL, level.
    sitemaps: Vec<(String, String, u32)>,
    /// Pages a sitemap lists, one link from the seeds: politeness key,
    /// URL, depth.
    listed: Vec<(String, String, u32)>,
    stats: Stats,
    /// The key's delay as the fetcher knows it (its Crawl-delay).
    delay: Duration,
    /// When the request started, at the latest (none if none was sent).
    started: Option<Instant>,
    /// The server whose turn the request took (`politeness.key = "ip"`).
    address: Option<std::net::IpAddr>,
    /// The trap rule's signal (a duplicate of a page in its own
    /// directory), if the page was judged.
    copies_neighbour: Option<bool>,
    /// Not fetched after all, back to its queue: the key's turn went to
    /// its robots.txt, this worker's own pacing of the key (a Crawl-delay,
    /// a backoff) was not ready, or the gate could not be reached.
    again: bool,
}

impl Worker {
    /// Joins the crawl `config.cluster.name` on `config.cluster.nodes`,
    /// writing to `sink` under `config.output.dir`; a worker that ran there
    /// before recovers its outputs first. Seeds are added (those seen
    /// before by any worker are skipped).
    pub async fn new(
        config: Config,
        seeds: &[Url],
        mut sink: Box<dyn Sink>,
    ) -> Result<Worker, ClusterError> {
        let nodes: Vec<&str> = config.cluster.nodes.iter().map(String::as_str).collect();
        let crawl = config.cluster.name.clone();
        let worker = match config.cluster.worker.as_str() {
            "" => default_worker_name(),
            w => w.to_string(),
        };
        let dir = config.output.dir.join("cluster");
        let dedup = config.dedup_config();
        let (gate, from_snapshot) =
            join_gate(&nodes, &crawl, &dir.join("gate"), dedup, &worker).await?;
        let frontier = SharedFrontier::open(&nodes, &crawl, frontier_config(&config)).await?;
        let lease = Duration::from_secs(config.cluster.lease_secs.0 as u64);
        let partitions = Partitions::open(&nodes, &crawl, &worker, lease).await?;
        let (outbox, saved, entries) = Outbox::open(&dir)?;
        let mut stats = saved.stats;
        let mut lapsed = 0;
        sink.rewind(&saved.sink)?;
        for e in entries {
            if frontier.acked(e.partition, e.id).await? {
                send(&mut *sink, &e.outcomes)?;
                stats.merge(e.stats);
            } else {
                lapsed += 1;
            }
        }
        let fetcher = Fetcher::new(config.fetch_config())?;
        let capture_headers = sink.wants_captures().then(|| fetcher.request_headers());
        let fingerprinter = Fingerprinter::new(&dedup)?;
        let pages = Pipeline::new(&config, seeds, fingerprinter, capture_headers)
            .map_err(|e| ClusterError::Config(format!("scope: {e}")))?;
        let stages = Stages {
            fetcher,
            pages,
            extraction: ExtractionSlots::new(),
            gate: tokio::sync::Mutex::new(gate),
            addresses: (config.politeness.key == PolitenessKey::Ip).then(|| frontier.clone()),
            shown: Arc::new(Shown {
                stats: Mutex::new(stats.clone()),
                ..Shown::default()
            }),
            config,
        };
        warn_unshared(&stages.config);
        let mut w = Worker {
            stages: Arc::new(stages),
            frontier,
            partitions,
            sink,
            outbox,
            stats: std::mem::take(&mut stats),
            crawl,
            worker,
            lapsed,
            from_snapshot,
            sending: None,
            stop: Arc::new(AtomicBool::new(false)),
        };
        w.checkpoint().await?;
        w.add_seeds(seeds).await?;
        Ok(w)
    }

    /// A handle that stops the worker: no new URLs are leased, the ones in
    /// flight are finished and committed, the partitions released.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let stop = self.stop.clone();
        move || stop.store(true, Ordering::SeqCst)
    }

    /// This worker's figures at the moment (its own counts; the queue is
    /// the whole crawl's), for `--metrics`.
    pub fn metrics(&self) -> impl Fn() -> Metrics + Send + Sync + 'static {
        let stages = self.stages.clone();
        move || {
            let shown = &stages.shown;
            shown.looked.store(true, Ordering::Relaxed);
            Metrics {
                stats: shown.stats.lock().unwrap().clone(),
                queued: shown.queued.load(Ordering::Relaxed),
                in_flight: shown.in_flight.load(Ordering::Relaxed),
                active_hosts: shown.keys.load(Ordering::Relaxed),
                fetch_latency: shown.latencies.snapshot(),
            }
        }
    }

    /// This worker's name among the crawl's workers.
    pub fn name(&self) -> &str {
        &self.worker
    }

    /// Answers a worker that asked for a copy of a replica: one at a time,
    /// streamed in the background (this worker's replica may change
    /// meanwhile: the copy was taken first).
    async fn send_snapshot(&mut self, gate: &mut SharedGate) -> Result<(), ClusterError> {
        if self.sending.as_ref().is_some_and(|s| !s.is_finished()) {
            return Ok(());
        }
        let Some(joiner) = gate.snapshot_wanted().await? else {
            return Ok(());
        };
        let file = self.stages.config.output.dir.join("cluster/gate.sending");
        let at = gate.dump_for(&joiner, &file).await?;
        tracing::info!(joiner, %at, "sending a copy of the gate replica");
        let send = gate.send_snapshot(joiner.clone(), file.clone());
        self.sending = Some(tokio::spawn(async move {
            match send.await {
                Ok(()) => tracing::info!(joiner, "gate replica sent"),
                Err(e) => tracing::warn!(joiner, "sending the gate replica failed: {e}"),
            }
            let _ = std::fs::remove_file(&file);
        }));
        Ok(())
    }

    async fn add_seeds(&mut self, seeds: &[Url]) -> Result<(), ClusterError> {
        let s = &self.stages;
        let seeds: Vec<(String, String)> = seeds
            .iter()
            .filter_map(|u| s.pages.in_scope(u, 0))
            .map(|c| (politeness_key(&c), c.to_string()))
            .collect();
        let links: Vec<Link<'_>> = seeds
            .iter()
            .map(|(key, url)| Link { key, url, depth: 0 })
            .collect();
        for chunk in links.chunks(1000) {
            let added = self.frontier.add(chunk).await?;
            self.wake_owners(&added).await?;
        }
        Ok(())
    }

    /// Crawls until the shared frontier is empty (for every worker), the
    /// crawl's page budget is spent or the worker is stopped; then
    /// commits, checkpoints and releases its partitions.
    pub async fn run(mut self) -> Result<Stats, ClusterError> {
        let start = Instant::now();
        let fetched_before = self.stats.fetched;
        let mut crawl = Crawl::new(&self);
        loop {
            crawl.keep_share(&mut self).await?;
            crawl.take_wakes(&self).await?;
            if !self.stop.load(Ordering::SeqCst) && crawl.budget_left(&self).await? {
                crawl.lease_and_start(&self).await?;
            }
            crawl.collect().await;
            crawl.show(&self).await?;
            if crawl.group_due() {
                let group = std::mem::take(&mut crawl.group);
                let touched = self.commit(group).await?;
                crawl.wake(&touched);
            }
            if crawl.checkpoint_due(&self) {
                self.checkpoint().await?;
                crawl.checkpointed = Instant::now();
            }
            if crawl.over(&self).await? {
                break;
            }
        }
        self.finish(crawl, start, fetched_before).await
    }

    async fn finish(
        mut self,
        crawl: Crawl,
        start: Instant,
        fetched_before: u64,
    ) -> Result<Stats, ClusterError> {
        self.checkpoint().await?;
        if let Some(sending) = self.sending.take() {
            // A worker that joined late waits for it.
            let _ = sending.await;
        }
        let (gave, got) = (crawl.gave, crawl.got);
        for lease in crawl
            .held
            .into_iter()
            .chain(crawl.draining.into_iter().map(|(l, _)| l))
        {
            self.partitions.release(lease).await?;
        }
        let mut stats = self.stats.clone();
        stats.elapsed_secs = start.elapsed().as_secs_f64();
        stats.fetched_this_run = stats.fetched - fetched_before;
        let mut json = stats.to_json();
        json["cluster"] = serde_json::json!({
            "crawl": self.crawl,
            "worker": self.worker,
            "lapsed": self.lapsed,
            "partitions_given": gave,
            "partitions_received": got,
            "gate_applied": self.stages.gate.lock().await.applied().to_string(),
            "gate_from_snapshot": self.from_snapshot,
            "redis_calls": crate::retry::calls(),
        });
        self.sink.finish(&json)?;
        Ok(stats)
    }

    /// Steps 1 to 4 of the module's doc for a group of fetched URLs;
    /// returns the partitions that got links.
    async fn commit(&mut self, mut group: Vec<Fetch>) -> Result<HashSet<u32>, ClusterError> {
        self.note_delays(&group).await?;
        self.add_sitemaps(&mut group).await?;
        self.note_address_starts(&group).await;
        let (again, group): (Vec<Fetch>, Vec<Fetch>) = group.into_iter().partition(|f| f.again);
        for f in &again {
            not_stale(self.frontier.give_back(&f.lease, &f.leased).await)?;
        }
        let mut touched = self.add_links(&group).await?;
        // An acknowledged URL frees its key: its partition may have a URL
        // ready at once.
        touched.extend(group.iter().chain(&again).map(|f| f.leased.partition));
        let entries: Vec<Entry> = group
            .iter()
            .map(|f| Entry {
                partition: f.leased.partition,
                id: f.leased.id,
                stats: f.stats.clone(),
                outcomes: f.outcomes.clone(),
            })
            .collect();
        self.outbox.append(&entries)?;
        self.acknowledge(group).await?;
        Ok(touched)
    }

    /// Steps 3 and 4 for URLs whose outcomes are in the outbox: each is
    /// acknowledged, and the outcomes of those acknowledged reach the
    /// outputs and the counts (with the record of a duplicate trap an
    /// acknowledgement made).
    async fn acknowledge(&mut self, group: Vec<Fetch>) -> Result<(), ClusterError> {
        let acks = group.iter().map(|f| {
            let started = f.started.map(|t| t.elapsed());
            self.frontier
                .ack(&f.lease, &f.leased, started, f.copies_neighbour)
        });
        let acked = futures_util::future::join_all(acks).await;
        let (mut counted, mut traps) = (0, Vec::new());
        for (f, acked) in group.into_iter().zip(acked) {
            match acked {
                Ok(a) if a.done => {
                    if let Some(duplicates) = a.trap {
                        traps.push(self.trap_entry(&f, duplicates));
                    }
                    send(&mut *self.sink, &f.outcomes)?;
                    counted += f.stats.fetched;
                    self.stats.merge(f.stats);
                }
                // Refused (lapsed, or the partition passed on): counted by
                // the fetch that is acknowledged.
                _ => self.lapsed += 1,
            }
        }
        if !traps.is_empty() {
            // The record of a trap follows the acknowledgement that made
            // it (the trap itself is in the cluster already).
            self.outbox.append(&traps)?;
            for e in traps {
                send(&mut *self.sink, &e.outcomes)?;
                self.stats.merge(e.stats);
            }
        }
        if counted > 0 {
            self.frontier.count(counted).await?;
        }
        *self.stages.shown.stats.lock().unwrap() = self.stats.clone();
        Ok(())
    }

    /// Queues the sitemaps the group found, and the pages the sitemaps it
    /// read list (counted `sitemap_urls` when new).
    async fn add_sitemaps(&mut self, group: &mut [Fetch]) -> Result<(), ClusterError> {
        let sitemaps: Vec<(String, String, u32)> = group
            .iter()
            .flat_map(|f| f.sitemaps.iter().cloned())
            .collect();
        if !sitemaps.is_empty() {
            let added = self.frontier.add_sitemaps(&as_links(&sitemaps)).await?;
            self.wake_owners(&added).await?;
        }
        for f in group.iter_mut().filter(|f| !f.listed.is_empty()) {
            let added = self.frontier.add(&as_links(&f.listed)).await?;
            f.stats.sitemap_urls += added.queued as u64;
            self.count_refused(&added);
            self.wake_owners(&added).await?;
        }
        Ok(())
    }

    /// Tells the other workers whose partitions got URLs, one call per
    /// worker, all at once.
    async fn wake_owners(&self, added: &crate::frontier::Added) -> Result<(), ClusterError> {
        let mut by_owner: HashMap<&str, Vec<u32>> = HashMap::new();
        for (p, owner) in &added.woken {
            if owner != &self.worker {
                by_owner.entry(owner).or_default().push(*p);
            }
        }
        let calls = by_owner
            .iter()
            .map(|(owner, partitions)| self.frontier.wake(owner, partitions));
        futures_util::future::try_join_all(calls).await?;
        Ok(())
    }

    /// Links refused for a budget, named as the embedded crawl names them.
    fn count_refused(&mut self, added: &crate::frontier::Added) {
        for (why, n) in [
            ("host_page_limit", added.over_key_budget),
            ("domain_page_limit", added.over_domain_budget),
            ("host_limit", added.over_max_keys),
        ] {
            if n > 0 {
                *self.stats.out_of_scope.entry(why.into()).or_default() += n as u64;
            }
        }
    }

    /// The record of a section cut off as a duplicate trap by `f`'s page:
    /// an outbox entry under `f`'s lease, so it is replayed with it.
    fn trap_entry(&self, f: &Fetch, duplicates: u32) -> Entry {
        let window = self.stages.config.dedup.trap_window;
        let trap = Trap { duplicates, window };
        let mut stats = Stats::default();
        let mut outcomes = Vec::new();
        if let Ok(url) = Url::parse(&f.leased.url) {
            let (record, listed) = trap_record(&url, &trap);
            outcomes.push(record);
            stats.duplicate_traps.push(listed);
        }
        Entry {
            partition: f.leased.partition,
            id: f.leased.id,
            stats,
            outcomes,
        }
    }

    async fn add_links(&mut self, group: &[Fetch]) -> Result<HashSet<u32>, ClusterError> {
        let links: Vec<Link<'_>> = group
            .iter()
            .flat_map(|f| &f.links)
            .map(|(key, url, depth)| Link {
                key,
                url,
                depth: *depth,
            })
            .collect();
        let touched = links
            .iter()
            .map(|l| self.frontier.partition_of(l.key))
            .collect();
        let added = self.frontier.add(&links).await?;
        self.count_refused(&added);
        self.wake_owners(&added).await?;
        Ok(touched)
    }

    /// Requests that took a server's turn: its next turn is a full delay
    /// after their real start. A failure is only logged: the turn taken
    /// already ends a delay after it was taken.
    async fn note_address_starts(&self, group: &[Fetch]) {
        let notes = group.iter().filter_map(|f| {
            let (address, started) = (f.address?, f.started?);
            Some(
                self.frontier
                    .address_paced(address, started.elapsed(), f.delay),
            )
        });
        for result in futures_util::future::join_all(notes).await {
            if let Err(e) = result {
                tracing::warn!("noting a request's start at its server failed: {e}");
            }
        }
    }

    /// Keys whose delay differs from the default (a Crawl-delay): the
    /// shared schedule follows it from their next lease on.
    async fn note_delays(&mut self, group: &[Fetch]) -> Result<(), ClusterError> {
        let default = Duration::from_millis(self.stages.config.politeness.delay_ms);
        let mut done = HashSet::new();
        for f in group {
            if f.delay != default && done.insert(&f.leased.key) {
                self.frontier.set_delay(&f.leased.key, f.delay).await?;
            }
        }
        Ok(())
    }

    async fn checkpoint(&mut self) -> Result<(), ClusterError> {
        let position = self.sink.checkpoint()?;
        let stages = self.stages.clone();
        let mut gate = stages.gate.lock().await;
        gate.flush()?;
        self.send_snapshot(&mut gate).await?;
        gate.trim().await?;
        drop(gate);
        self.outbox.checkpoint(position, &self.stats)?;
        Ok(())
    }
}

/// The loop's own state: partitions held, tasks in flight, the group
/// waiting to be committed, and when each partition is next asked.
struct Crawl {
    held: Vec<Lease>,
    /// Beyond this worker's share, or given to a worker that asked for
    /// work: no new leases; released (or given) once nothing is in flight.
    draining: Vec<(Lease, Option<String>)>,
    /// Whether a partition's last lease call found work (URLs, or a key
    /// waiting for its turn).
    has_work: HashMap<u32, bool>,
    /// Partitions given away lately: not taken back by `balance`.
    given: HashMap<u32, Instant>,
    /// Partitions received lately: not handed back as surplus.
    received: HashMap<u32, Instant>,
    /// When this worker last asked for work.
    asked: Option<Instant>,
    /// Partitions given to and received from other workers that asked.
    gave: u64,
    got: u64,
    due: HashMap<u32, Instant>,
    in_flight: HashMap<u32, usize>,
    /// URLs in flight per politeness key.
    keys: HashMap<String, usize>,
    /// When the crawl's queue was last read for the progress line.
    shown_queue: Option<Instant>,
    /// When this worker last looked at what other workers woke.
    wakes: Option<Instant>,
    /// Sections cut off as duplicate traps, per partition held (as many as
    /// the partition's last lease reply counted).
    trapped: HashMap<u32, HashSet<String>>,
    tasks: JoinSet<Fetch>,
    group: Vec<Fetch>,
    group_since: Instant,
    balanced: Option<Instant>,
    checkpointed: Instant,
    looked: Option<Instant>,
    empty_looks: u32,
    concurrency: usize,
    lease_time: Duration,
    /// Pages counted by all workers, and when that was read.
    counted: (u64, Option<Instant>),
}

impl Crawl {
    fn new(w: &Worker) -> Crawl {
        Crawl {
            held: Vec::new(),
            draining: Vec::new(),
            has_work: HashMap::new(),
            given: HashMap::new(),
            received: HashMap::new(),
            asked: None,
            gave: 0,
            got: 0,
            due: HashMap::new(),
            in_flight: HashMap::new(),
            keys: HashMap::new(),
            shown_queue: None,
            wakes: None,
            trapped: HashMap::new(),
            tasks: JoinSet::new(),
            group: Vec::new(),
            group_since: Instant::now(),
            balanced: None,
            checkpointed: Instant::now(),
            looked: None,
            empty_looks: 0,
            concurrency: w.stages.config.politeness.global_concurrency.0.max(1),
            lease_time: Duration::from_secs(w.stages.config.cluster.lease_secs.0 as u64),
            counted: (0, None),
        }
    }

    /// Rebalances every [`BALANCE_EVERY`] (the leases are renewed every
    /// third of their term); releases drained partitions once nothing of
    /// theirs is in flight.
    async fn keep_share(&mut self, w: &mut Worker) -> Result<(), ClusterError> {
        if self.balanced.is_some_and(|t| t.elapsed() < BALANCE_EVERY) {
            return Ok(());
        }
        self.balanced = Some(Instant::now());
        let partitions = w.frontier.config().partitions;
        let before: HashSet<u32> = self.held.iter().map(|l| l.partition).collect();
        for gift in w.partitions.gifts().await? {
            self.received.insert(gift.partition, Instant::now());
            self.got += 1;
            self.held.push(gift);
        }
        // Surplus is handed back from the end: never a partition just
        // received (it came with work); otherwise in the order taken.
        self.received.retain(|_, t| t.elapsed() < GIVEN_FOR);
        let received = &self.received;
        self.held
            .sort_by_key(|l| !received.contains_key(&l.partition));
        self.given.retain(|_, t| t.elapsed() < GIVEN_FOR);
        let skip: HashSet<u32> = self.given.keys().copied().collect();
        let surplus = w
            .partitions
            .balance_skipping(&mut self.held, partitions, &skip)
            .await?;
        self.draining.extend(surplus.into_iter().map(|l| (l, None)));
        for l in &self.held {
            if !before.contains(&l.partition) {
                self.due.insert(l.partition, Instant::now());
            }
        }
        self.give_work(w).await?;
        self.release_drained(w).await
    }

    /// Partitions of this worker's that others added URLs to are asked at
    /// once (looked at every [`WAKE_EVERY`]).
    async fn take_wakes(&mut self, w: &Worker) -> Result<(), ClusterError> {
        if self.wakes.is_some_and(|t| t.elapsed() < WAKE_EVERY) {
            return Ok(());
        }
        self.wakes = Some(Instant::now());
        let woken: HashSet<u32> = w.frontier.woken(&w.worker).await?.into_iter().collect();
        self.wake(&woken);
        Ok(())
    }

    /// Answers another worker's ask for work: with work in two partitions
    /// or more, one of them goes to it once drained.
    async fn give_work(&mut self, w: &mut Worker) -> Result<(), ClusterError> {
        let with_work = |c: &Crawl, l: &Lease| c.has_work.get(&l.partition) == Some(&true);
        if self.held.iter().filter(|l| with_work(self, l)).count() < 2 {
            return Ok(());
        }
        let Some(to) = w.partitions.claim_hungry().await? else {
            return Ok(());
        };
        if let Some(i) = self.held.iter().position(|l| with_work(self, l)) {
            let lease = self.held.remove(i);
            tracing::debug!(
                partition = lease.partition,
                to,
                "giving a partition with work"
            );
            self.draining.push((lease, Some(to)));
        }
        Ok(())
    }

    /// Releases (or gives) drained partitions once nothing of theirs is in
    /// flight.
    async fn release_drained(&mut self, w: &mut Worker) -> Result<(), ClusterError> {
        let mut kept = Vec::new();
        for (lease, to) in std::mem::take(&mut self.draining) {
            if self.in_flight.get(&lease.partition).copied().unwrap_or(0) > 0 {
                kept.push((lease, to));
                continue;
            }
            match to {
                Some(to) => {
                    self.given.insert(lease.partition, Instant::now());
                    self.gave += 1;
                    w.partitions.give(lease, &to).await?;
                }
                None => w.partitions.release(lease).await?,
            }
        }
        self.draining = kept;
        Ok(())
    }

    /// Whether the crawl's page budget (over all workers) allows more; the
    /// shared count is read at most every [`BUDGET_EVERY`] (it may then
    /// overshoot by what the workers start in that time).
    async fn budget_left(&mut self, w: &Worker) -> Result<bool, ClusterError> {
        if self.counted.1.is_none_or(|t| t.elapsed() >= BUDGET_EVERY) {
            self.counted = (w.frontier.counted().await?, Some(Instant::now()));
        }
        Ok(self.counted.0 + (self.tasks.len() as u64) < w.stages.config.scope.max_pages)
    }

    /// Leases from the partitions that are due, all at once (one round trip
    /// of time, however many partitions), and starts each URL's task.
    async fn lease_and_start(&mut self, w: &Worker) -> Result<(), ClusterError> {
        // A leased URL must start at once: none is leased while fetched
        // bodies wait for extraction past their bounds.
        if !w.stages.extraction.has_room() {
            return Ok(());
        }
        let room = self.concurrency.saturating_sub(self.tasks.len());
        let now = Instant::now();
        let margin = self.lease_time / 3;
        let mut due: Vec<Lease> = self
            .held
            .iter()
            .filter(|l| l.usable(margin) && self.due.get(&l.partition).is_none_or(|&d| d <= now))
            .cloned()
            .collect();
        due.sort_by_key(|l| self.due.get(&l.partition).copied());
        due.truncate(room);
        if due.is_empty() {
            return Ok(());
        }
        // Never more than `room` in all.
        let max = (room / due.len()).clamp(1, LEASE_BATCH);
        // Each URL starts as soon as its reply is in (it must start within
        // the start slack of its lease).
        let mut calls: futures_util::stream::FuturesUnordered<_> = due
            .into_iter()
            .map(|lease| async move {
                let reply = w.frontier.lease(&lease, max).await;
                (lease, reply)
            })
            .collect();
        while let Some((lease, reply)) = futures_util::StreamExt::next(&mut calls).await {
            let got = match reply {
                Ok(got) => got,
                // Passed to another worker while this one was cut off.
                Err(ClusterError::Stale { partition, .. }) => {
                    self.held.retain(|l| l.partition != partition);
                    continue;
                }
                Err(e) => return Err(e),
            };
            self.has_work.insert(
                lease.partition,
                !got.urls.is_empty() || got.next_in.is_some(),
            );
            let again = if got.urls.len() == max {
                Duration::ZERO
            } else {
                got.next_in.unwrap_or(IDLE_POLL).min(IDLE_POLL)
            };
            self.due.insert(lease.partition, Instant::now() + again);
            let known = self.trapped.entry(lease.partition).or_default();
            if known.len() != got.trapped {
                *known = w.frontier.trapped(lease.partition).await?;
            }
            for leased in got.urls {
                self.start(w, &lease, leased).await?;
            }
        }
        Ok(())
    }

    async fn start(
        &mut self,
        w: &Worker,
        lease: &Lease,
        leased: Leased,
    ) -> Result<(), ClusterError> {
        if !leased.startable(START_SLACK) {
            return not_stale(w.frontier.give_back(lease, &leased).await);
        }
        if self.is_trapped(&leased) {
            // Done without a request, as the embedded crawl skips it.
            let mut f = Fetch::new(&w.stages, leased, lease.clone());
            f.stats.out_of_scope.insert("duplicate_trap".into(), 1);
            self.take(f);
            return Ok(());
        }
        tracing::debug!(
            url = %leased.url,
            partition = leased.partition,
            epoch = lease.epoch,
            at_ms = leased.leased_at_ms,
            "leased"
        );
        *self.in_flight.entry(lease.partition).or_default() += 1;
        *self.keys.entry(leased.key.clone()).or_default() += 1;
        let stages = w.stages.clone();
        let lease = lease.clone();
        self.tasks
            .spawn(async move { fetch(stages, leased, lease).await });
        Ok(())
    }

    fn is_trapped(&self, leased: &Leased) -> bool {
        let Some(sections) = self.trapped.get(&leased.partition) else {
            return false;
        };
        !sections.is_empty()
            && Url::parse(&leased.url).is_ok_and(|u| sections.contains(&section(&u)))
    }

    /// Takes a finished URL into the group.
    fn take(&mut self, f: Fetch) {
        if self.group.is_empty() {
            self.group_since = Instant::now();
        }
        self.group.push(f);
    }

    /// Waits for a task to finish (or a partition to come due), and takes
    /// every finished one into the group.
    async fn collect(&mut self) {
        let wake = self
            .held
            .iter()
            .filter_map(|l| self.due.get(&l.partition))
            .min()
            .map_or(GROUP_AGE, |d| d.saturating_duration_since(Instant::now()))
            .min(GROUP_AGE);
        let first = if self.tasks.is_empty() {
            tokio::time::sleep(wake.max(Duration::from_millis(1))).await;
            None
        } else {
            tokio::select! {
                done = self.tasks.join_next() => done,
                () = tokio::time::sleep(wake) => None,
            }
        };
        let mut finished: Vec<_> = first.into_iter().collect();
        while let Some(done) = self.tasks.try_join_next() {
            finished.push(done);
        }
        for done in finished {
            match done {
                Ok(f) => {
                    if let Some(n) = self.in_flight.get_mut(&f.leased.partition) {
                        *n -= 1;
                    }
                    if let Some(n) = self.keys.get_mut(&f.leased.key) {
                        *n -= 1;
                        if *n == 0 {
                            self.keys.remove(&f.leased.key);
                        }
                    }
                    self.take(f);
                }
                Err(e) => tracing::error!("a fetch task failed: {e}"),
            }
        }
    }

    /// Publishes what is in flight here, and, when the figures were looked
    /// at, at most every [`QUEUE_EVERY`] how much the whole crawl has
    /// queued.
    async fn show(&mut self, w: &Worker) -> Result<(), ClusterError> {
        let shown = &w.stages.shown;
        shown.in_flight.store(self.tasks.len(), Ordering::Relaxed);
        shown.keys.store(self.keys.len(), Ordering::Relaxed);
        let due = self.shown_queue.is_none_or(|t| t.elapsed() >= QUEUE_EVERY);
        if due && shown.looked.swap(false, Ordering::Relaxed) {
            self.shown_queue = Some(Instant::now());
            let queued = w.frontier.pending().await?;
            shown.queued.store(queued as usize, Ordering::Relaxed);
        }
        Ok(())
    }

    fn group_due(&self) -> bool {
        !self.group.is_empty()
            && (self.group.len() >= GROUP_URLS
                || self.group_since.elapsed() >= GROUP_AGE
                || self.tasks.is_empty())
    }

    /// Partitions of this worker's that got links are asked at once.
    fn wake(&mut self, touched: &HashSet<u32>) {
        let now = Instant::now();
        for p in touched {
            if let Some(d) = self.due.get_mut(p) {
                *d = now;
            }
        }
    }

    fn checkpoint_due(&self, w: &Worker) -> bool {
        let every = Duration::from_secs(w.stages.config.output.checkpoint_secs.0 as u64);
        self.group.is_empty() && self.checkpointed.elapsed() >= every
    }

    /// Nothing in flight here, none of this worker's partitions has work,
    /// and the crawl has: ask another worker for a partition (once a
    /// second at most).
    async fn ask_for_work(&mut self, w: &Worker) -> Result<(), ClusterError> {
        let idle = self
            .held
            .iter()
            .all(|l| self.has_work.get(&l.partition) == Some(&false));
        if idle && self.asked.is_none_or(|t| t.elapsed() >= ASK_EVERY) {
            self.asked = Some(Instant::now());
            w.partitions.ask_for_work().await?;
        }
        Ok(())
    }

    /// Over when nothing is in flight here and, three looks in a row, the
    /// frontier holds nothing queued or in flight on any worker (or the
    /// budget is spent, or the worker was stopped).
    async fn over(&mut self, w: &Worker) -> Result<bool, ClusterError> {
        if !self.tasks.is_empty() || !self.group.is_empty() {
            self.empty_looks = 0;
            return Ok(false);
        }
        if w.stop.load(Ordering::SeqCst) || !self.budget_left(w).await? {
            return Ok(true);
        }
        if self.looked.is_some_and(|t| t.elapsed() < DONE_POLL) {
            return Ok(false);
        }
        self.looked = Some(Instant::now());
        if w.frontier.pending().await? == 0 {
            self.empty_looks += 1;
        } else {
            self.empty_looks = 0;
            self.ask_for_work(w).await?;
        }
        Ok(self.empty_looks >= DONE_LOOKS)
    }
}

/// Fetches a leased URL and judges the page; never fails (a failure is an
/// error outcome, or the URL goes back to its queue).
///
/// The shared schedule counts a key's delay from the lease, so the request
/// must go out at once: when this worker's fetcher would first fetch the
/// host's robots.txt, or make the request wait (its own pacing is stricter
/// than the shared one: a Crawl-delay not yet shared, a backoff), the
/// key's turn is used for robots.txt or not at all, and the URL waits for
/// its next turn.
async fn fetch(stages: Arc<Stages>, leased: Leased, lease: Lease) -> Fetch {
    let mut f = Fetch::new(&stages, leased, lease);
    let Ok(url) = Url::parse(&f.leased.url) else {
        f.error("url", format!("not a URL: {}", f.leased.url), "url");
        return f;
    };
    if !stages.fetcher.has_rules(&url) {
        // robots.txt is a request too: it takes the server's turn.
        if !take_address_turn(&stages, &mut f, &url).await {
            f.again = true;
            return f;
        }
        let asked = Instant::now();
        // On an error the fetch below reports it (the answer decides).
        let rules = stages.fetcher.rules_for(&url).await;
        f.delay = stages.fetcher.delay_of(&url);
        if rules.is_ok() {
            f.started = f.address.map(|_| asked);
            if stages.config.seeds.sitemaps {
                f.sitemaps = robots_sitemaps(&stages, &url).await;
            }
            f.again = true;
            return f;
        }
    }
    if stages.fetcher.ready_at(&url) > Instant::now() + START_SLACK {
        f.delay = stages.fetcher.delay_of(&url);
        f.again = true;
        return f;
    }
    if f.address.is_none() && !take_address_turn(&stages, &mut f, &url).await {
        f.again = true;
        return f;
    }
    if let Some(level) = f.leased.sitemap {
        read_sitemap(&stages, &mut f, &url, level).await;
        return f;
    }
    let depth = f.leased.depth;
    let hop = stages.clone();
    let hop_ok = move |u: &Url| hop.pages.allows_hop(u, depth);
    let result = stages.fetcher.fetch(&url, &hop_ok).await;
    if let Ok(fetched) = &result {
        stages.shown.latencies.observe(fetched.elapsed);
    }
    let done = Instant::now();
    f.delay = stages.fetcher.delay_of(&url);
    f.started = Some(match &result {
        Ok(fetched) => done.checked_sub(fetched.elapsed).unwrap_or(done),
        Err(_) => done,
    });
    match result {
        Ok(fetched) => judge(&stages, &mut f, &url, fetched).await,
        Err(e) => f.outcomes.push(page::failed(&url, &e, &mut f.stats)),
    }
    f
}

/// With `politeness.key = "ip"`, takes the turn of `url`'s server, shared
/// by the hosts on it whatever their partitions; false if it has not come
/// (or the request could no longer start within the start slack of its
/// lease): the URL then waits for its host's next turn.
async fn take_address_turn(stages: &Stages, f: &mut Fetch, url: &Url) -> bool {
    let Some(frontier) = &stages.addresses else {
        return true;
    };
    // A name that does not resolve: the request reports it.
    let Some(address) = stages.fetcher.address_of(url).await else {
        return true;
    };
    f.delay = stages.fetcher.delay_of(url);
    match frontier.reserve_address(address, f.delay).await {
        Ok(None) if f.leased.startable(START_SLACK) => {
            f.address = Some(address);
            true
        }
        Ok(_) => false,
        Err(e) => {
            tracing::warn!(%address, "taking the server's turn failed, the URL goes back: {e}");
            false
        }
    }
}

/// The sitemaps `url`'s robots.txt names (read already: the cached copy),
/// as level 0.
async fn robots_sitemaps(stages: &Stages, url: &Url) -> Vec<(String, String, u32)> {
    let Ok(robots) = stages.fetcher.robots_for(url).await else {
        return Vec::new();
    };
    robots
        .sitemaps()
        .iter()
        .filter_map(|s| Url::parse(s).ok())
        .map(|s| (politeness_key(&s), s.to_string(), 0))
        .collect()
}

/// Reads a leased sitemap: an index gives more sitemaps (down to
/// [`nearcrawl_crawl::sitemap::MAX_LEVELS`]), a list gives pages one link
/// from the seeds (canonical and in scope; the others counted out of
/// scope). A sitemap that cannot be read is an error outcome.
async fn read_sitemap(stages: &Stages, f: &mut Fetch, url: &Url, level: u32) {
    use nearcrawl_crawl::sitemap::{MAX_LEVELS, Sitemap};
    let (parsed, elapsed) = nearcrawl_crawl::sitemap::fetch(&stages.fetcher, url).await;
    let done = Instant::now();
    f.delay = stages.fetcher.delay_of(url);
    f.started = Some(done.checked_sub(elapsed).unwrap_or(done));
    let locs = |locs: Vec<String>| locs.into_iter().filter_map(|l| Url::parse(&l).ok());
    match parsed {
        Err((kind, detail)) => f.error(kind, detail, url.as_str()),
        Ok(Sitemap::Index(children)) if level < MAX_LEVELS => {
            f.sitemaps = locs(children)
                .map(|s| (politeness_key(&s), s.to_string(), level + 1))
                .collect();
        }
        Ok(Sitemap::Index(_)) => {}
        Ok(Sitemap::Urls(pages)) => {
            let pages = stages.pages.sitemap_pages(pages, &mut f.stats);
            f.listed = pages.iter().map(|c| as_link(c, 1)).collect();
        }
    }
}

impl Fetch {
    /// Nothing done yet: no request, no outcome.
    fn new(stages: &Stages, leased: Leased, lease: Lease) -> Fetch {
        Fetch {
            delay: Duration::from_millis(stages.config.politeness.delay_ms),
            leased,
            lease,
            outcomes: Vec::new(),
            links: Vec::new(),
            sitemaps: Vec::new(),
            listed: Vec::new(),
            stats: Stats::default(),
            started: None,
            address: None,
            copies_neighbour: None,
            again: false,
        }
    }

    fn error(&mut self, kind: &str, detail: String, url: &str) {
        let record = page::error(url, kind, detail, &mut self.stats);
        self.outcomes.push(record);
    }
}

/// Extraction and fingerprinting (on a blocking thread), then the shared
/// gate's verdict and the outcomes the page pipeline makes of it.
async fn judge(stages: &Arc<Stages>, f: &mut Fetch, url: &Url, fetched: Fetched) {
    let s = stages.clone();
    let depth = f.leased.depth;
    let turn = stages.extraction.enter(fetched.body.len()).await;
    // Whether a link was seen is the shared frontier's to say.
    let read = tokio::task::spawn_blocking(move || {
        let read = s.pages.read(depth, fetched, |_| false);
        drop(turn);
        read
    })
    .await;
    let Ok((read, prepared)) = read else {
        f.error(
            "extract",
            "extraction panicked".into(),
            &f.leased.url.clone(),
        );
        return;
    };
    let request = crate::hash::fnv1a(f.leased.url.as_bytes());
    let mut gate = stages.gate.lock().await;
    let (decision, original) = match gate.judge(request, &f.leased.url, &prepared).await {
        Ok((place, d)) => {
            tracing::debug!(url = %f.leased.url, %place, verdict = ?d.verdict, "judged");
            let of = d.verdict.duplicate_of().map(|(of, ..)| of);
            let original = of.and_then(|of| gate.url_of(of).ok().flatten());
            (d, original)
        }
        Err(e) => {
            tracing::warn!(url = %f.leased.url, "the shared gate failed, the URL goes back: {e}");
            f.again = true;
            return;
        }
    };
    drop(gate);
    let judged = stages
        .pages
        .judged(url, depth, read, &decision, original, &mut f.stats);
    f.copies_neighbour = Some(judged.copies_neighbour);
    f.outcomes.extend(judged.outcomes);
    f.links = judged.links.iter().map(|c| as_link(c, depth + 1)).collect();
}

/// A URL to queue at `depth`, with its politeness key.
fn as_link(url: &Url, depth: u32) -> (String, String, u32) {
    (politeness_key(url), url.to_string(), depth)
}

fn as_links(links: &[(String, String, u32)]) -> Vec<Link<'_>> {
    links
        .iter()
        .map(|(key, url, depth)| Link {
            key,
            url,
            depth: *depth,
        })
        .collect()
}

/// A call on a partition that passed to another worker did nothing, which
/// is fine for a URL given back: its lease lapses, and the new owner
/// queues it again.
fn not_stale(result: Result<(), ClusterError>) -> Result<(), ClusterError> {
    match result {
        Err(ClusterError::Stale { .. }) => Ok(()),
        r => r,
    }
}

fn send(sink: &mut dyn Sink, outcomes: &[Outcome]) -> std::io::Result<()> {
    outcomes.iter().try_for_each(|o| o.send(sink))
}

/// How long a worker that joins late waits for a copy of a replica: the
/// running workers send one at their next checkpoint.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(120);

/// Opens this worker's replica of the gate and joins the crawl with it;
/// when the log was trimmed past it, first replaces it with a copy of a
/// running worker's. Returns the gate, and the copy's position if one was
/// taken.
async fn join_gate(
    nodes: &[&str],
    crawl: &str,
    dir: &std::path::Path,
    dedup: nearcrawl_index::DedupConfig,
    worker: &str,
) -> Result<(SharedGate, Option<String>), ClusterError> {
    let mut gate = SharedGate::open(nodes, crawl, dir, dedup).await?;
    match gate.join(worker).await {
        Err(ClusterError::Trimmed { applied }) => {
            // Registered under its first name, as `join` would.
            let name = gate
                .registered_name()?
                .unwrap_or_else(|| worker.to_string());
            drop(gate);
            tracing::info!(
                applied,
                "the shared log was trimmed past this replica: asking a running worker for a copy"
            );
            SharedGate::receive_snapshot(nodes, crawl, dir, &name, SNAPSHOT_WAIT).await?;
            let mut gate = SharedGate::open(nodes, crawl, dir, dedup).await?;
            gate.join(worker).await?;
            let at = gate.applied().to_string();
            tracing::info!(at, "started from a copy of a running worker's replica");
            Ok((gate, Some(at)))
        }
        Err(e) => Err(e),
        Ok(()) => Ok((gate, None)),
    }
}

/// Settings the embedded crawl honours that workers do not share yet: said
/// once at start, not ignored silently.
fn warn_unshared(config: &Config) {
    if config.seeds.sitemaps && !config.politeness.obey_robots {
        // A worker reads the sitemaps a robots.txt names when it reads
        // that robots.txt for its rules, in the host's turn.
        tracing::warn!(
            "cluster workers read sitemaps only while obeying robots.txt: \
             seeds.sitemaps has no effect with politeness.obey_robots = false"
        );
    }
}

fn frontier_config(config: &Config) -> FrontierConfig {
    let p = &config.politeness;
    FrontierConfig {
        partitions: config.cluster.partitions.0 as u32,
        flight: FLIGHT,
        delay: Duration::from_millis(p.delay_ms),
        start_slack: START_SLACK,
        per_key_concurrency: p.per_host_concurrency.0 as u32,
        max_per_key: config.scope.max_pages_per_host,
        max_per_domain: config.scope.max_pages_per_domain,
        max_keys: config.scope.max_hosts,
        trap_window: config.dedup.trap_window,
        trap_duplicates: nearcrawl_crawl::traps::trap_threshold(
            config.dedup.trap_window,
            config.dedup.trap_share.0,
        ),
        ..FrontierConfig::default()
    }
}

fn default_worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "worker".into());
    format!("{host}-{}", std::process::id())
}
