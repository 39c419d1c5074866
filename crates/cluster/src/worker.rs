//! One worker of a crawl shared through a Redis Cluster: the one crawl
//! loop ([`nearcrawl_crawl::run`]) over the worker's [`RedisStore`]: the
//! shared frontier and the partitions it holds, the shared gate, and the
//! local outbox and outputs (see [`crate::commit`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use nearcrawl_crawl::config::Config;
use nearcrawl_crawl::run::Stages;
use nearcrawl_crawl::sink::Sink;
use nearcrawl_crawl::stats::{Metrics, Stats};
use url::Url;

use crate::error::ClusterError;
use crate::store::RedisStore;

/// One worker of a shared crawl.
pub struct Worker {
    store: RedisStore,
    stages: Arc<Stages>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("crawl", &self.store.crawl)
            .field("worker", &self.store.worker)
            .finish_non_exhaustive()
    }
}

impl Worker {
    /// Joins the crawl `config.cluster.name` on `config.cluster.nodes`,
    /// writing to `sink` under `config.output.dir`; a worker that ran there
    /// before recovers its outputs first. Seeds are added (those seen
    /// before by any worker are skipped).
    pub async fn new(
        config: Config,
        seeds: &[Url],
        sink: Box<dyn Sink>,
    ) -> Result<Worker, ClusterError> {
        let (store, stages) = RedisStore::open(config, seeds, sink).await?;
        Ok(Worker { store, stages })
    }

    /// A handle that stops the worker: no new URLs are leased, requests
    /// not answered yet go back to their queues, the pages fetched are
    /// finished and committed, the partitions released.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let stages = self.stages.clone();
        move || stages.stop()
    }

    /// This worker's figures at the moment (its own counts; the queue is
    /// the whole crawl's), for `--metrics`.
    pub fn metrics(&self) -> impl Fn() -> Metrics + Send + Sync + 'static {
        let (shown, stages) = (self.store.shown.clone(), self.stages.clone());
        move || {
            shown.looked.store(true, Ordering::Relaxed);
            Metrics {
                stats: shown.stats.lock().unwrap().clone(),
                queued: shown.queued.load(Ordering::Relaxed),
                in_flight: stages.in_flight(),
                active_hosts: shown.keys.load(Ordering::Relaxed),
                fetch_latency: stages.latencies.snapshot(),
                cpu: nearcrawl_crawl::cpu::CpuSecs::now(),
            }
        }
    }

    /// This worker's name among the crawl's workers.
    pub fn name(&self) -> &str {
        &self.store.worker
    }

    /// Crawls until the shared frontier is empty (for every worker), the
    /// crawl's page budget is spent or the worker is stopped; then
    /// commits, checkpoints and releases its partitions.
    pub async fn run(mut self) -> Result<Stats, ClusterError> {
        let start = Instant::now();
        let fetched_before = self.store.stats.fetched;
        nearcrawl_crawl::run::run(&mut self.store, &self.stages).await?;
        self.finish(start, fetched_before).await
    }

    async fn finish(mut self, start: Instant, fetched_before: u64) -> Result<Stats, ClusterError> {
        let store = &mut self.store;
        store.make_durable().await?;
        if let Some(sending) = store.sending.take() {
            // A worker that joined late waits for it.
            let _ = sending.await;
        }
        let share = std::mem::take(&mut store.share);
        let (gave, got) = (share.gave, share.got);
        for lease in share.into_leases() {
            store.partitions.release(lease).await?;
        }
        let mut stats = store.stats.clone();
        stats.elapsed_secs = start.elapsed().as_secs_f64();
        stats.fetched_this_run = stats.fetched - fetched_before;
        let mut json = stats.to_json();
        self.stages.add_times(&mut json["this_run"]);
        json["cluster"] = serde_json::json!({
            "crawl": store.crawl,
            "worker": store.worker,
            "lapsed": store.lapsed,
            "partitions_given": gave,
            "partitions_received": got,
            "gate_applied": store.pages.gate.lock().await.applied().to_string(),
            "gate_from_snapshot": store.from_snapshot,
            "redis_calls": crate::retry::calls(),
        });
        store.sink.finish(&json)?;
        Ok(stats)
    }
}
