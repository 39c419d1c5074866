//! A worker's store for the one crawl loop ([`nearcrawl_crawl::run`]):
//! URLs leased from the partitions it holds, committed through its outbox
//! and acknowledged in the cluster (see [`crate::commit`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nearcrawl_crawl::page;
use nearcrawl_crawl::run::{Claimed, CrawlStore, Done, Stages, Taken};
use nearcrawl_crawl::sink::Sink;
use nearcrawl_crawl::stats::{Metrics, Stats, StatsFile};
use nearcrawl_crawl::traps::section;
use url::Url;

use crate::error::ClusterError;
use crate::frontier::{Leased, SharedFrontier};
use crate::lease::{Lease, Partitions};
use crate::outbox::Outbox;
use crate::pages::{ClusterClaim, ClusterPages, START_SLACK};
use crate::share::Share;

/// Outcomes are committed in groups this old at most.
const GROUP_AGE: Duration = Duration::from_millis(5);
/// How often the crawl's page count over all workers is read.
const BUDGET_EVERY: Duration = Duration::from_millis(100);
/// A partition with no key ready is asked again after this long. Links
/// other workers add to it wake it at once; the poll is there for a wake
/// that was lost (the partition changed hands in between).
const IDLE_POLL: Duration = Duration::from_secs(5);
/// URLs one lease call takes at most.
const LEASE_BATCH: usize = 32;
/// The frontier is looked at this often when there is nothing to do, and
/// the crawl is over after this many looks find nothing anywhere.
const DONE_POLL: Duration = Duration::from_millis(250);
const DONE_LOOKS: u32 = 3;
/// How often the crawl's queue is read for the progress line.
const QUEUE_EVERY: Duration = Duration::from_secs(2);

/// A running worker's figures for its progress line and `--metrics`.
#[derive(Debug, Default)]
pub(crate) struct Shown {
    /// This worker's counts, as of its last commit.
    pub stats: Mutex<Stats>,
    /// URLs queued or in flight in the whole crawl, as last read (when
    /// someone looked: reading it asks every partition).
    pub queued: AtomicUsize,
    pub looked: AtomicBool,
    /// Politeness keys with a URL in flight here.
    pub keys: AtomicUsize,
}

/// A worker's share of a crawl in a Redis Cluster, for the one loop.
pub struct RedisStore {
    pub(crate) stages: Arc<Stages>,
    pub(crate) pages: Arc<ClusterPages>,
    pub(crate) frontier: SharedFrontier,
    pub(crate) partitions: Partitions,
    pub(crate) sink: Box<dyn Sink>,
    pub(crate) outbox: Outbox,
    pub(crate) stats: Stats,
    pub(crate) crawl: String,
    pub(crate) worker: String,
    /// The position of the copy of another worker's replica this one
    /// started from, if it did.
    pub(crate) from_snapshot: Option<String>,
    /// URLs whose lease lapsed before they were acknowledged (fetched
    /// again elsewhere), and entries dropped at recovery for that reason.
    pub(crate) lapsed: u64,
    /// A copy of this worker's replica on its way to a worker that joined
    /// late.
    pub(crate) sending: Option<tokio::task::JoinHandle<()>>,
    pub(crate) share: Share,
    pub(crate) shown: Arc<Shown>,
    /// URLs in flight per politeness key.
    keys: HashMap<String, usize>,
    /// Sections cut off as duplicate traps, per partition held (as many as
    /// the partition's last lease reply counted).
    trapped: HashMap<u32, std::collections::HashSet<String>>,
    /// Pages counted by all workers, and when that was read.
    counted: (u64, Option<Instant>),
    shown_queue: Option<Instant>,
    looked: Option<Instant>,
    empty_looks: u32,
    lease_time: Duration,
}

/// What a worker opened and recovered, for its store.
pub(crate) struct Opened {
    pub frontier: SharedFrontier,
    pub partitions: Partitions,
    pub sink: Box<dyn Sink>,
    pub outbox: Outbox,
    pub stats: Stats,
    pub crawl: String,
    pub worker: String,
    pub lapsed: u64,
    pub from_snapshot: Option<String>,
}

impl RedisStore {
    pub(crate) fn new(stages: Arc<Stages>, pages: Arc<ClusterPages>, o: Opened) -> RedisStore {
        let lease_time = Duration::from_secs(stages.config.cluster.lease_secs.0 as u64);
        let shown = Arc::new(Shown {
            stats: Mutex::new(o.stats.clone()),
            ..Shown::default()
        });
        RedisStore {
            stages,
            pages,
            frontier: o.frontier,
            partitions: o.partitions,
            sink: o.sink,
            outbox: o.outbox,
            stats: o.stats,
            crawl: o.crawl,
            worker: o.worker,
            lapsed: o.lapsed,
            from_snapshot: o.from_snapshot,
            sending: None,
            share: Share::default(),
            shown,
            keys: HashMap::new(),
            trapped: HashMap::new(),
            counted: (0, None),
            shown_queue: None,
            looked: None,
            empty_looks: 0,
            lease_time,
        }
    }

    /// Whether the crawl's page budget (over all workers) allows more than
    /// `in_flight`; the shared count is read at most every
    /// [`BUDGET_EVERY`] (it may then overshoot by what the workers start
    /// in that time).
    async fn budget_left(&mut self, in_flight: usize) -> Result<u64, ClusterError> {
        if self.counted.1.is_none_or(|t| t.elapsed() >= BUDGET_EVERY) {
            self.counted = (self.frontier.counted().await?, Some(Instant::now()));
        }
        let spent = self.counted.0 + in_flight as u64;
        Ok(self.stages.config.scope.max_pages.saturating_sub(spent))
    }

    /// Takes a leased URL: handed out to fetch, given back when it could
    /// no longer start in time, or done at once (its section is a trap, or
    /// it does not parse).
    async fn take_leased(
        &mut self,
        lease: &Lease,
        leased: Leased,
        taken: &mut Taken<ClusterClaim>,
    ) -> Result<(), ClusterError> {
        if !leased.startable(START_SLACK) {
            return not_stale(self.frontier.give_back(lease, &leased).await);
        }
        *self.share.in_flight.entry(lease.partition).or_default() += 1;
        *self.keys.entry(leased.key.clone()).or_default() += 1;
        let parsed = Url::parse(&leased.url);
        let trapped = (parsed.as_ref()).is_ok_and(|u| self.is_trapped(leased.partition, u));
        let (depth, sitemap) = (leased.depth, leased.sitemap);
        let claim = ClusterClaim {
            leased,
            lease: lease.clone(),
            address: None,
        };
        let Ok(url) = parsed else {
            let text = claim.leased.url.clone();
            let mut done = Done::new(placeholder(claim), self.default_delay());
            let record = page::error(&text, "url", format!("not a URL: {text}"), &mut done.stats);
            done.outcomes.push(record);
            taken.done.push(done);
            return Ok(());
        };
        let claimed = Claimed {
            url,
            depth,
            sitemap,
            claim,
        };
        if trapped {
            // Done without a request, as the embedded crawl skips it.
            let mut done = Done::new(claimed, self.default_delay());
            done.stats.out_of_scope("duplicate_trap");
            taken.done.push(done);
            return Ok(());
        }
        tracing::debug!(
            url = %claimed.url,
            partition = lease.partition,
            epoch = lease.epoch,
            at_ms = claimed.claim.leased.leased_at_ms,
            "leased"
        );
        taken.claims.push(claimed);
        Ok(())
    }

    fn is_trapped(&self, partition: u32, url: &Url) -> bool {
        let Some(sections) = self.trapped.get(&partition) else {
            return false;
        };
        !sections.is_empty() && sections.contains(&section(url))
    }

    pub fn default_delay(&self) -> Duration {
        Duration::from_millis(self.stages.config.politeness.delay_ms)
    }

    /// Whether the whole crawl has nothing queued or in flight, three
    /// looks in a row; asks for work when it has.
    async fn nothing_anywhere(&mut self) -> Result<bool, ClusterError> {
        if self.looked.is_some_and(|t| t.elapsed() < DONE_POLL) {
            return Ok(false);
        }
        self.looked = Some(Instant::now());
        if self.frontier.pending().await? == 0 {
            self.empty_looks += 1;
        } else {
            self.empty_looks = 0;
            self.share.ask_for_work(&self.partitions).await?;
        }
        Ok(self.empty_looks >= DONE_LOOKS)
    }
}

/// A URL that does not parse, done at once: its claim under a URL that
/// names nothing (its error record names the leased text).
fn placeholder(claim: ClusterClaim) -> Claimed<ClusterClaim> {
    Claimed {
        url: Url::parse("about:invalid").expect("a URL"),
        depth: claim.leased.depth,
        sitemap: None,
        claim,
    }
}

/// A call on a partition that passed to another worker did nothing, which
/// is fine for a URL given back: its lease lapses, and the new owner
/// queues it again.
pub(crate) fn not_stale(result: Result<(), ClusterError>) -> Result<(), ClusterError> {
    match result {
        Err(ClusterError::Stale { .. }) => Ok(()),
        r => r,
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("crawl", &self.crawl)
            .field("worker", &self.worker)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// This worker's name among the crawl's workers.
    pub fn worker_name(&self) -> &str {
        &self.worker
    }
}

impl CrawlStore for RedisStore {
    type Claim = ClusterClaim;
    type Pages = ClusterPages;
    type Error = ClusterError;

    const GROUP_AGE: Duration = GROUP_AGE;

    fn pages(&self) -> Arc<ClusterPages> {
        self.pages.clone()
    }

    async fn maintain(&mut self) -> Result<(), ClusterError> {
        let count = self.frontier.config().partitions;
        self.share.keep(&mut self.partitions, count).await?;
        self.share.take_wakes(&self.frontier, &self.worker).await
    }

    /// Leases from the partitions that are due, all at once (one round
    /// trip of time, however many partitions); each URL is handed out as
    /// soon as its reply is in (it must start within the start slack of
    /// its lease).
    async fn take(
        &mut self,
        room: usize,
        in_flight: usize,
    ) -> Result<Taken<ClusterClaim>, ClusterError> {
        let left = self.budget_left(in_flight).await?;
        let room = room.min(usize::try_from(left).unwrap_or(usize::MAX));
        let mut due = self.share.due_now(self.lease_time / 3);
        due.truncate(room);
        let mut taken = Taken::nothing(GROUP_AGE);
        if due.is_empty() {
            taken.next = self.share.next_due().unwrap_or(GROUP_AGE).min(GROUP_AGE);
            return Ok(taken);
        }
        // Never more than `room` in all.
        let max = (room / due.len()).clamp(1, LEASE_BATCH);
        let frontier = self.frontier.clone();
        let mut calls: futures_util::stream::FuturesUnordered<_> = due
            .into_iter()
            .map(|lease| {
                let frontier = &frontier;
                async move {
                    let reply = frontier.lease(&lease, max).await;
                    (lease, reply)
                }
            })
            .collect();
        while let Some((lease, reply)) = futures_util::StreamExt::next(&mut calls).await {
            let got = match reply {
                Ok(got) => got,
                // Passed to another worker while this one was cut off.
                Err(ClusterError::Stale { partition, .. }) => {
                    self.share.held.retain(|l| l.partition != partition);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let has_work = !got.urls.is_empty() || got.next_in.is_some();
            self.share.has_work.insert(lease.partition, has_work);
            let again = if got.urls.len() == max {
                Duration::ZERO
            } else {
                got.next_in.unwrap_or(IDLE_POLL).min(IDLE_POLL)
            };
            self.share
                .due
                .insert(lease.partition, Instant::now() + again);
            let known = self.trapped.entry(lease.partition).or_default();
            if known.len() != got.trapped {
                *known = self.frontier.trapped(lease.partition).await?;
            }
            for leased in got.urls {
                self.take_leased(&lease, leased, &mut taken).await?;
            }
        }
        taken.next = self.share.next_due().unwrap_or(GROUP_AGE).min(GROUP_AGE);
        Ok(taken)
    }

    async fn finished(&mut self, finished: &[Done<ClusterClaim>]) -> Result<(), ClusterError> {
        for done in finished {
            let leased = &done.claimed.claim.leased;
            if let Some(n) = self.share.in_flight.get_mut(&leased.partition) {
                *n = n.saturating_sub(1);
            }
            if let Some(n) = self.keys.get_mut(&leased.key) {
                *n -= 1;
                if *n == 0 {
                    self.keys.remove(&leased.key);
                }
            }
        }
        Ok(())
    }

    async fn commit(&mut self, group: Vec<Done<ClusterClaim>>) -> Result<(), ClusterError> {
        let touched = self.commit_group(group).await?;
        self.share.wake(&touched);
        Ok(())
    }

    async fn checkpoint(&mut self) -> Result<(), ClusterError> {
        self.make_durable().await
    }

    /// Over when the budget is spent, the worker was stopped, or three
    /// looks in a row find nothing queued or in flight on any worker.
    async fn over(&mut self, stopping: bool) -> Result<bool, ClusterError> {
        if stopping || self.budget_left(0).await? == 0 {
            return Ok(true);
        }
        self.nothing_anywhere().await
    }

    /// Publishes what is in flight here, and, when the figures were looked
    /// at, at most every [`QUEUE_EVERY`] how much the whole crawl has
    /// queued.
    async fn show(&mut self, in_flight: usize) -> Result<(), ClusterError> {
        if in_flight > 0 {
            self.empty_looks = 0;
        }
        let shown = &self.shown;
        shown.keys.store(self.keys.len(), Ordering::Relaxed);
        let due = self.shown_queue.is_none_or(|t| t.elapsed() >= QUEUE_EVERY);
        if due && shown.looked.swap(false, Ordering::Relaxed) {
            self.shown_queue = Some(Instant::now());
            let queued = self.frontier.pending().await?;
            shown.queued.store(queued as usize, Ordering::Relaxed);
        }
        Ok(())
    }

    /// This worker's own counts.
    fn stats(&self) -> Stats {
        self.stats.clone()
    }

    /// This worker's figures at the moment (its own counts; the queue is
    /// the whole crawl's).
    fn metrics(&self) -> Box<dyn Fn() -> Metrics + Send + Sync> {
        let (shown, stages) = (self.shown.clone(), self.stages.clone());
        Box::new(move || {
            shown.looked.store(true, Ordering::Relaxed);
            Metrics {
                stats: shown.stats.lock().unwrap().clone(),
                queued: shown.queued.load(Ordering::Relaxed),
                in_flight: stages.in_flight(),
                active_hosts: shown.keys.load(Ordering::Relaxed),
                fetch_latency: stages.latencies.snapshot(),
                cpu: nearcrawl_crawl::cpu::CpuSecs::now(),
            }
        })
    }

    /// Commits, waits for a replica copy on its way to a worker that
    /// joined late, releases the partitions held, and writes `stats.json`.
    async fn finish(&mut self, stats: &Stats) -> Result<(), ClusterError> {
        self.make_durable().await?;
        if let Some(sending) = self.sending.take() {
            let _ = sending.await;
        }
        let share = std::mem::take(&mut self.share);
        let (gave, got) = (share.gave, share.got);
        for lease in share.into_leases() {
            self.partitions.release(lease).await?;
        }
        let mut file = StatsFile::new(stats);
        self.stages.add_times(&mut file.this_run);
        file.cluster = Some(serde_json::json!({
            "crawl": self.crawl,
            "worker": self.worker,
            "lapsed": self.lapsed,
            "partitions_given": gave,
            "partitions_received": got,
            "gate_applied": self.pages.gate.lock().await.applied().to_string(),
            "gate_from_snapshot": self.from_snapshot,
            "redis_calls": crate::retry::calls(),
        }));
        file.url_rules = nearcrawl_crawl::stats::UrlRule::listed(&self.pages.rules.read().unwrap());
        self.sink.finish(&file)?;
        Ok(())
    }
}
