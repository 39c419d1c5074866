//! The embedded crawl: [`crate::run`]'s loop over the [`EmbeddedStore`]
//! in the output directory, so running again continues, after a clean stop
//! or a crash alike.

use std::sync::Arc;
use std::time::Instant;

use url::Url;

use crate::config::Config;
use crate::embedded::EmbeddedStore;
use crate::run::Stages;
use crate::sink::Sink;
use crate::stats::{Metrics, Stats};

pub use crate::error::CrawlError;

/// A crawl over one output directory; its state (frontier, seen set,
/// duplicate index, pending outputs) lives there (a sled store).
pub struct Crawler {
    store: EmbeddedStore,
    stages: Arc<Stages>,
}

impl std::fmt::Debug for Crawler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crawler").finish_non_exhaustive()
    }
}

impl Crawler {
    /// Opens (or resumes) the crawl in `config.output.dir`, writing to `sink`
    /// (`nearcrawl_output::open` gives the configured ones).
    pub fn new(config: Config, seeds: &[Url], sink: Box<dyn Sink>) -> Result<Crawler, CrawlError> {
        let (store, stages) = EmbeddedStore::open(config, seeds, sink)?;
        Ok(Crawler { store, stages })
    }

    /// A handle that stops the crawl: no new URLs are taken, requests not
    /// answered yet are abandoned (they stay in the frontier and are
    /// fetched by the next run), pages already fetched are finished.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let stages = self.stages.clone();
        move || stages.stop()
    }

    /// A handle that reads the crawl's figures for metrics while it runs.
    pub fn metrics(&self) -> impl Fn() -> Metrics + Send + Sync + 'static {
        self.store.metrics()
    }

    /// Runs until the frontier is empty, `max_pages` is reached or the
    /// crawl is stopped; checkpoints and returns the statistics (over every
    /// run of this crawl, with this run's time and rate).
    pub async fn run(mut self) -> Result<Stats, CrawlError> {
        let start = Instant::now();
        let fetched_before = self.store.stats().fetched;
        if let Err(e) = crate::run::run(&mut self.store, &self.stages).await {
            tracing::error!("{e}; stopping (run again to resume)");
            return Err(e);
        }
        let mut stats = self.store.stats();
        stats.elapsed_secs = start.elapsed().as_secs_f64();
        stats.fetched_this_run = stats.fetched - fetched_before;
        self.store.finish(&stats)?;
        Ok(stats)
    }
}
