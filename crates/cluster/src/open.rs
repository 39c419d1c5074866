//! Opening a worker's store: joining the shared gate (from a copy of a
//! running worker's replica when the log was trimmed past this one), the
//! shared frontier and the partitions, recovering the outbox into the
//! outputs, and adding the seeds.

use std::sync::Arc;
use std::time::Duration;

use nearcrawl_crawl::config::{Config, PolitenessKey};
use nearcrawl_crawl::page::Pipeline;
use nearcrawl_crawl::remembered::Remembered;
use nearcrawl_crawl::run::Stages;
use nearcrawl_crawl::sink::Sink;
use nearcrawl_fetch::{Fetcher, politeness_key};
use nearcrawl_index::Fingerprinter;
use url::Url;

use crate::commit::send;
use crate::error::ClusterError;
use crate::frontier::{FrontierConfig, Link, SharedFrontier};
use crate::lease::Partitions;
use crate::outbox::Outbox;
use crate::pages::{ClusterPages, START_SLACK};
use crate::shared_gate::SharedGate;
use crate::store::{Opened, RedisStore};

/// A URL not acknowledged this long after its lease goes back to its queue.
const FLIGHT: Duration = Duration::from_secs(60);

impl RedisStore {
    /// Joins the crawl `config.cluster.name` on `config.cluster.nodes`,
    /// writing to `sink` under `config.output.dir`; a worker that ran there
    /// before recovers its outputs first. Seeds are added (those seen
    /// before by any worker are skipped). With the stages its fetch tasks
    /// share.
    pub(crate) async fn open(
        config: Config,
        seeds: &[Url],
        mut sink: Box<dyn Sink>,
    ) -> Result<(RedisStore, Arc<Stages>), ClusterError> {
        let nodes: Vec<&str> = config.cluster.nodes.iter().map(String::as_str).collect();
        let crawl = config.cluster.name.clone();
        let worker = match config.cluster.worker.as_str() {
            "" => default_worker_name(),
            w => w.to_string(),
        };
        let dir = config.output.dir.join("cluster");
        let dedup = config.dedup_config();
        let remembered = config.dedup.remembered(&config.recrawl);
        let gate_at = GateAt {
            nodes: &nodes,
            crawl: &crawl,
            dir: &dir.join("gate"),
            remembered: &remembered,
        };
        let (gate, from_snapshot) = join_gate(&gate_at, dedup, &worker).await?;
        let frontier = SharedFrontier::open(&nodes, &crawl, frontier_config(&config)).await?;
        let lease = Duration::from_secs(config.cluster.lease_secs.0 as u64);
        let partitions = Partitions::open(&nodes, &crawl, &worker, lease).await?;
        let (outbox, saved, entries) = Outbox::open(&dir)?;
        let mut stats = saved.stats;
        let mut lapsed = 0;
        sink.rewind(&saved.sink)?;
        for e in entries {
            if frontier.acked(e.partition, e.id).await? {
                send(&mut *sink, &e.outcomes, Vec::new())?;
                stats.merge(e.stats);
            } else {
                lapsed += 1;
            }
        }
        let fetcher = Fetcher::new(config.fetch_config())?;
        let capture_headers = sink.wants_captures().then(|| fetcher.request_headers());
        let fingerprinter = Fingerprinter::new(&dedup)?;
        // Every worker reads the earlier crawl: a shared directory.
        let earlier = nearcrawl_crawl::recrawl::open_earlier(&config)
            .map_err(|e| ClusterError::Config(format!("recrawl: {e}")))?;
        let seeds = nearcrawl_crawl::recrawl::seeds_to_queue(seeds, earlier.as_ref());
        let pages = Pipeline::new(&config, &seeds, fingerprinter, capture_headers, earlier)
            .map_err(|e| ClusterError::Config(format!("scope: {e}")))?;
        warn_unshared(&config);

        let cluster_pages = Arc::new(ClusterPages {
            rules: gate.url_rules(),
            gate: tokio::sync::Mutex::new(gate),
            frontier: frontier.clone(),
            addresses: (config.politeness.key == PolitenessKey::Ip).then(|| frontier.clone()),
        });
        let stages = Arc::new(Stages::new(config, fetcher, pages));
        let opened = Opened {
            frontier,
            partitions,
            sink,
            outbox,
            stats,
            crawl,
            worker,
            lapsed,
            from_snapshot,
        };
        let mut store = RedisStore::new(stages.clone(), cluster_pages, opened);
        store.make_durable().await?;
        store.requeue_retired(true).await?;
        store.add_seeds(&seeds).await?;
        Ok((store, stages))
    }

    /// Adds the seeds (an earlier crawl's pages among them) at their depths.
    async fn add_seeds(&mut self, seeds: &[(Url, u32)]) -> Result<(), ClusterError> {
        let s = self.stages.clone();
        let seeds: Vec<(String, String, u32)> = seeds
            .iter()
            .filter_map(|(u, depth)| Some((s.pages.seed(u, *depth)?, *depth)))
            .map(|(c, depth)| (politeness_key(&c), c.to_string(), depth))
            .collect();
        let links: Vec<Link<'_>> = seeds
            .iter()
            .map(|(key, url, depth)| Link {
                key,
                url,
                depth: *depth,
            })
            .collect();
        for chunk in links.chunks(1000) {
            let added = self.frontier.add(chunk).await?;
            self.wake_owners(&added).await?;
        }
        Ok(())
    }
}

/// How long a worker that joins late waits for a copy of a replica: the
/// running workers send one at their next checkpoint.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(120);

/// Where a worker's replica of the gate is, and what it remembers.
struct GateAt<'a> {
    nodes: &'a [&'a str],
    crawl: &'a str,
    dir: &'a std::path::Path,
    /// Earlier crawls' output directories (see `remember_crawls`).
    remembered: &'a [std::path::PathBuf],
}

impl GateAt<'_> {
    /// Opens the replica, holding the remembered crawls.
    async fn open(&self, dedup: nearcrawl_index::DedupConfig) -> Result<SharedGate, ClusterError> {
        let mut gate = SharedGate::open(self.nodes, self.crawl, self.dir, dedup).await?;
        let remembered = Remembered::open(self.remembered)
            .map_err(|e| ClusterError::Config(format!("remembered crawls: {e}")))?;
        gate.remember_crawls(remembered)?;
        Ok(gate)
    }
}

/// Opens this worker's replica of the gate and joins the crawl with it;
/// when the log was trimmed past it, first replaces it with a copy of a
/// running worker's. Returns the gate, and the copy's position if one was
/// taken.
async fn join_gate(
    at: &GateAt<'_>,
    dedup: nearcrawl_index::DedupConfig,
    worker: &str,
) -> Result<(SharedGate, Option<String>), ClusterError> {
    let mut gate = at.open(dedup).await?;
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
            SharedGate::receive_snapshot(at.nodes, at.crawl, at.dir, &name, SNAPSHOT_WAIT).await?;
            let mut gate = at.open(dedup).await?;
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
        max_per_host: config.scope.max_pages_per_host,
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
