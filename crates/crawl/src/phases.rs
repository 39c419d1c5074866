//! Where the workers' time goes, summed over workers: waiting for a host
//! whose turn has come, fetching (politeness waits inside the fetcher
//! included), waiting for an extraction turn, and judging (extraction, the
//! gate and the commit). Written to `stats.json` (`this_run.worker_secs`),
//! so a crawl slower than its politeness allows says which part holds it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[derive(Debug, Default)]
pub(crate) struct Phases {
    idle: AtomicU64,
    fetch: AtomicU64,
    extraction_wait: AtomicU64,
    judge: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Phase {
    /// No host may be asked yet (or the budget waits on requests in
    /// flight).
    Idle,
    Fetch,
    ExtractionWait,
    Judge,
}

impl Phases {
    /// Adds the time since `since` to `phase`; now, for the next phase.
    pub(crate) fn add(&self, phase: Phase, since: Instant) -> Instant {
        let now = Instant::now();
        let ns = (now - since).as_nanos() as u64;
        let counter = match phase {
            Phase::Idle => &self.idle,
            Phase::Fetch => &self.fetch,
            Phase::ExtractionWait => &self.extraction_wait,
            Phase::Judge => &self.judge,
        };
        counter.fetch_add(ns, Ordering::Relaxed);
        now
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        let secs = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e9;
        serde_json::json!({
            "idle": secs(&self.idle),
            "fetch": secs(&self.fetch),
            "extraction_wait": secs(&self.extraction_wait),
            "judge": secs(&self.judge),
        })
    }
}
