//! Where the crawl's CPU time goes, stage by stage: each stage a page goes
//! through on a thread of its own (parse, extract, links, language,
//! fingerprint, gate, write) is timed on that thread's CPU clock, and
//! fetching is the rest of the process's CPU time (HTTP, TLS, the
//! runtime, the frontier). Written to `stats.json` (`this_run.cpu_secs`)
//! and `/metrics`, so a slower crawl says which stage grew.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cpu_time::{ProcessTime, ThreadTime};

/// A stage of a page's work, as this module counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The extractor's parts: parse, extract, links
    /// (scoping them for the frontier too), language.
    Page(nearcrawl_extract::Stage),
    /// The gate's fingerprints and the recrawl's text hash.
    Fingerprint,
    /// The gate's verdict.
    Gate,
    /// The outcomes: records, the archive's capture and digest, the
    /// state and the outputs.
    Write,
}

/// How many stages there are.
const STAGES: usize = 7;

impl Stage {
    fn slot(self) -> usize {
        use nearcrawl_extract::Stage as Page;
        match self {
            Stage::Page(Page::Parse) => 0,
            Stage::Page(Page::Extract) => 1,
            Stage::Page(Page::Links) => 2,
            Stage::Page(Page::Language) => 3,
            Stage::Fingerprint => 4,
            Stage::Gate => 5,
            Stage::Write => 6,
        }
    }
}

/// CPU nanoseconds per stage, summed over the process's threads. One
/// per process, as its CPU clock is: both engines' stages add to it
/// wherever they run (the cluster's shared gate, the embedded commit).
static STAGE_NS: [AtomicU64; STAGES] = [const { AtomicU64::new(0) }; STAGES];

/// Times stages one after another on the calling thread, which must not
/// change in between (no `.await` across laps).
#[derive(Debug)]
pub struct Laps {
    since: Duration,
}

impl Laps {
    /// Starts timing on this thread.
    pub fn start() -> Laps {
        Laps {
            since: ThreadTime::now().as_duration(),
        }
    }

    /// Adds the thread's CPU time since the last lap to `stage`.
    pub fn lap(&mut self, stage: Stage) {
        let now = ThreadTime::now().as_duration();
        let ns = now.saturating_sub(self.since).as_nanos() as u64;
        STAGE_NS[stage.slot()].fetch_add(ns, Ordering::Relaxed);
        self.since = now;
    }

    /// As [`Laps::lap`], for a stage of the extractor.
    pub fn lap_extract(&mut self, stage: nearcrawl_extract::Stage) {
        self.lap(Stage::Page(stage));
    }
}

/// Runs `work` (which must not yield), its thread CPU time counted to
/// `stage`.
pub fn time<T>(stage: Stage, work: impl FnOnce() -> T) -> T {
    let mut laps = Laps::start();
    let out = work();
    laps.lap(stage);
    out
}

/// CPU seconds of this process by stage, and in all (PDF readers, child
/// processes, are not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuSecs {
    /// The process's CPU time.
    pub total: f64,
    /// What no stage below took: HTTP and TLS, the runtime, the frontier
    /// (and on a cluster worker, its Redis calls).
    pub fetch: f64,
    pub parse: f64,
    pub extract: f64,
    pub links: f64,
    pub language: f64,
    pub fingerprint: f64,
    pub gate: f64,
    pub write: f64,
}

impl CpuSecs {
    /// The figures so far.
    pub fn now() -> CpuSecs {
        use nearcrawl_extract::Stage as Page;
        let ns = STAGE_NS.each_ref().map(|n| n.load(Ordering::Relaxed));
        let s = |stage: Stage| ns[stage.slot()] as f64 / 1e9;
        let total = ProcessTime::now().as_duration().as_secs_f64();
        let staged = ns.iter().sum::<u64>() as f64 / 1e9;
        // To the microsecond: a small crawl's stages take a few.
        let round = |x: f64| (x * 1e6).round() / 1e6;
        CpuSecs {
            total: round(total),
            fetch: round((total - staged).max(0.0)),
            parse: round(s(Stage::Page(Page::Parse))),
            extract: round(s(Stage::Page(Page::Extract))),
            links: round(s(Stage::Page(Page::Links))),
            language: round(s(Stage::Page(Page::Language))),
            fingerprint: round(s(Stage::Fingerprint)),
            gate: round(s(Stage::Gate)),
            write: round(s(Stage::Write)),
        }
    }

    /// Each stage's name and seconds, fetch first.
    pub fn by_stage(&self) -> [(&'static str, f64); 8] {
        [
            ("fetch", self.fetch),
            ("parse", self.parse),
            ("extract", self.extract),
            ("links", self.links),
            ("language", self.language),
            ("fingerprint", self.fingerprint),
            ("gate", self.gate),
            ("write", self.write),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_counts_the_cpu_its_work_took() {
        let before = CpuSecs::now();
        let spin = time(Stage::Fingerprint, || {
            let mut x = 0u64;
            for i in 0..20_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            x
        });
        std::hint::black_box(spin);
        let after = CpuSecs::now();
        let took = after.fingerprint - before.fingerprint;
        assert!(took > 0.001, "the spin took {took} s of CPU");
        assert!(after.total - before.total >= took - 0.002);
        assert!(after.fetch >= 0.0);
    }
}
