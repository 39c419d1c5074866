//! What the fetch tasks of one crawl share, whatever the store: the
//! config, the fetcher, the page pipeline, the extraction slots, the
//! figures they add to, and the stop signal.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nearcrawl_fetch::Fetcher;

use super::render::Renderer;
use crate::config::{Config, RenderMode};
use crate::latency::Latencies;
use crate::page::Pipeline;
use crate::pdf::PdfReader;
use crate::phases::Phases;
use crate::slots::ExtractionSlots;

/// What the fetch tasks of one crawl share, whatever the store.
pub struct Stages {
    pub config: Config,
    pub fetcher: Fetcher,
    /// What a fetched page becomes.
    pub pages: Pipeline,
    /// PDFs are read apart, a few at a time.
    pub pdfs: PdfReader,
    /// Pages built by script are rendered; none when no page may be.
    pub renderer: Option<Renderer>,
    /// Pages extracted at once, and bodies waiting for it.
    pub extraction: ExtractionSlots,
    pub latencies: Latencies,
    pub(crate) phases: Phases,
    stop: AtomicBool,
    /// Wakes requests waiting for their host's turn when the crawl stops.
    stopping: tokio::sync::Notify,
    pub(super) in_flight: AtomicUsize,
}

impl std::fmt::Debug for Stages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stages").finish_non_exhaustive()
    }
}

impl Stages {
    pub fn new(config: Config, fetcher: Fetcher, pages: Pipeline) -> Stages {
        let render = &config.render;
        let may_render = std::iter::once(&render.mode)
            .chain(render.hosts.values())
            .any(|m| *m != RenderMode::Never);
        Stages {
            pdfs: PdfReader::new(&config.content),
            renderer: may_render.then(|| Renderer::new(render)),
            config,
            fetcher,
            pages,
            extraction: ExtractionSlots::new(),
            latencies: Latencies::default(),
            phases: Phases::default(),
            stop: AtomicBool::new(false),
            stopping: tokio::sync::Notify::new(),
            in_flight: AtomicUsize::new(0),
        }
    }

    /// Stops the crawl: no URL is taken any more, requests still waiting
    /// for their host's turn are abandoned (their URLs go back), pages
    /// fetched already are finished and committed.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.stopping.notify_waiters();
    }

    pub fn is_stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// URLs being fetched or judged.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Where the run's time went, into `stats.json`'s `this_run`: the
    /// fetch tasks' time by phase (`worker_secs`) and the process's CPU
    /// time by stage (`cpu_secs`, see [`crate::cpu`]).
    pub fn add_times(&self, this_run: &mut serde_json::Value) {
        this_run["worker_secs"] = self.phases.to_json();
        this_run["cpu_secs"] = serde_json::json!(crate::cpu::CpuSecs::now());
    }

    /// Resolves once the crawl is stopping.
    pub(super) async fn stopped(&self) {
        loop {
            // Registered before the check, so a stop in between still wakes it.
            let notified = self.stopping.notified();
            if self.is_stopping() {
                return;
            }
            notified.await;
        }
    }
}
