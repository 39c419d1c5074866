//! [`Crawl`]: the one loop over one store, with what a caller needs
//! around it (a stopper, metrics, the figures at the end); the embedded
//! crawl (`embedded::Crawler`) and a cluster worker
//! (`nearcrawl_cluster::Worker`) are both this type.

use std::sync::Arc;
use std::time::Instant;

use super::{CrawlStore, Stages};
use crate::stats::{Metrics, Stats};

/// A crawl over `S`, opened by the store (`EmbeddedStore::open`,
/// `nearcrawl_cluster::join`).
pub struct Crawl<S: CrawlStore> {
    store: S,
    stages: Arc<Stages>,
}

impl<S: CrawlStore> std::fmt::Debug for Crawl<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crawl").finish_non_exhaustive()
    }
}

impl<S: CrawlStore> Crawl<S> {
    /// The loop over `store`, with the stages it was opened with.
    pub fn new(store: S, stages: Arc<Stages>) -> Crawl<S> {
        Crawl { store, stages }
    }

    /// The store the loop runs over.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// A handle that stops the crawl: no new URLs are taken, requests not
    /// answered yet go back to the frontier (fetched by the next run or
    /// another worker), pages already fetched are finished and committed.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let stages = self.stages.clone();
        move || stages.stop()
    }

    /// A handle that reads the crawl's figures while it runs (progress,
    /// `--metrics`).
    pub fn metrics(&self) -> Box<dyn Fn() -> Metrics + Send + Sync> {
        self.store.metrics()
    }

    /// Runs until the store says the crawl is over (the frontier empty,
    /// the page budget spent, or stopped); then the store finishes
    /// (checkpoint, `stats.json`). Returns the figures with this run's
    /// time and pages filled in.
    pub async fn run(mut self) -> Result<Stats, S::Error> {
        let start = Instant::now();
        let fetched_before = self.store.stats().fetched;
        if let Err(e) = super::run(&mut self.store, &self.stages).await {
            tracing::error!("{e}; stopping (run again to resume)");
            return Err(e);
        }
        let mut stats = self.store.stats();
        stats.elapsed_secs = start.elapsed().as_secs_f64();
        stats.fetched_this_run = stats.fetched - fetched_before;
        self.store.finish(&stats).await?;
        Ok(stats)
    }
}
