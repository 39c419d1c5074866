//! Where the crawl's CPU time goes, stage by stage: each stage a page goes
//! through on a thread of its own (parse, extract, links, language,
//! fingerprint, gate, write) is timed on that thread's CPU clock, and
//! fetching is the rest of the process's CPU time (HTTP, TLS, the
//! runtime, the frontier). Written to `stats.json` (`this_run.cpu_secs`)
//! and `/metrics`, so a slower crawl says which stage grew.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
///
/// The thread's CPU clock is read twice, when timing starts and when the
/// `Laps` is dropped; each lap in between reads the monotonic clock, and
/// the CPU time of the whole is shared among the stages as their wall
/// times are. A thread's CPU clock is a system call (~0.5 us here, no
/// vDSO path), and reading it at every lap of every page was 1-5% of a
/// crawl's CPU. The stages' sum stays exact; a stage the thread was taken
/// off the CPU in is counted a little more, and the others of its page
/// that much less.
#[derive(Debug)]
pub struct Laps {
    cpu_since: Duration,
    wall_since: Instant,
    wall_ns: [u64; STAGES],
}

impl Laps {
    /// Starts timing on this thread.
    pub fn start() -> Laps {
        Laps {
            cpu_since: ThreadTime::now().as_duration(),
            wall_since: Instant::now(),
            wall_ns: [0; STAGES],
        }
    }

    /// Counts the time since the last lap to `stage`.
    pub fn lap(&mut self, stage: Stage) {
        let now = Instant::now();
        self.wall_ns[stage.slot()] += now.duration_since(self.wall_since).as_nanos() as u64;
        self.wall_since = now;
    }

    /// As [`Laps::lap`], for a stage of the extractor.
    pub fn lap_extract(&mut self, stage: nearcrawl_extract::Stage) {
        self.lap(Stage::Page(stage));
    }
}

impl Drop for Laps {
    fn drop(&mut self) {
        let cpu = ThreadTime::now()
            .as_duration()
            .saturating_sub(self.cpu_since);
        for (slot, ns) in share(cpu.as_nanos() as u64, &self.wall_ns)
            .into_iter()
            .enumerate()
        {
            if ns > 0 {
                STAGE_NS[slot].fetch_add(ns, Ordering::Relaxed);
            }
        }
    }
}

/// `cpu` nanoseconds shared among the stages in proportion to `wall`
/// (none when no lap was made).
fn share(cpu: u64, wall: &[u64; STAGES]) -> [u64; STAGES] {
    let total: u64 = wall.iter().sum();
    if total == 0 {
        return [0; STAGES];
    }
    wall.map(|w| (u128::from(cpu) * u128::from(w) / u128::from(total)) as u64)
}

/// Runs `work` (which must not yield), its thread CPU time counted to
/// `stage`.
pub fn time<T>(stage: Stage, work: impl FnOnce() -> T) -> T {
    let since = ThreadTime::now().as_duration();
    let out = work();
    let ns = ThreadTime::now()
        .as_duration()
        .saturating_sub(since)
        .as_nanos() as u64;
    STAGE_NS[stage.slot()].fetch_add(ns, Ordering::Relaxed);
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

    fn spin(rounds: u64) -> u64 {
        let mut x = 0u64;
        for i in 0..rounds {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        x
    }

    #[test]
    fn laps_share_the_cpu_time_as_their_wall_times_are() {
        let mut wall = [0; STAGES];
        wall[Stage::Gate.slot()] = 3_000;
        wall[Stage::Write.slot()] = 1_000;
        let shared = share(800, &wall);
        assert_eq!(shared[Stage::Gate.slot()], 600);
        assert_eq!(shared[Stage::Write.slot()], 200);
        assert_eq!(shared.iter().sum::<u64>(), 800);
        // Rounded down, never more than the whole; nothing without laps.
        wall[Stage::Fingerprint.slot()] = 1;
        assert!(share(1_000_003, &wall).iter().sum::<u64>() <= 1_000_003);
        assert_eq!(share(1_000, &[0; STAGES]), [0; STAGES]);
        // Large figures do not overflow: an hour of CPU over an hour.
        let hour = 3_600_000_000_000;
        let mut one = [0; STAGES];
        one[0] = hour;
        assert_eq!(share(hour, &one)[0], hour);
    }

    #[test]
    fn laps_count_each_stage_its_work() {
        let slot = |stage: Stage| STAGE_NS[stage.slot()].load(Ordering::Relaxed);
        let links = Stage::Page(nearcrawl_extract::Stage::Links);
        let language = Stage::Page(nearcrawl_extract::Stage::Language);
        let before = (slot(links), slot(language));
        {
            let mut laps = Laps::start();
            std::hint::black_box(spin(30_000_000));
            laps.lap(links);
            std::hint::black_box(spin(3_000_000));
            laps.lap(language);
        }
        // Other tests may add to these stages meanwhile, never take away.
        let (links_ns, language_ns) = (slot(links) - before.0, slot(language) - before.1);
        assert!(links_ns > 2_000_000, "the long spin took {links_ns} ns");
        assert!(language_ns > 0, "the short spin took {language_ns} ns");
    }

    #[test]
    fn a_stage_counts_the_cpu_its_work_took() {
        let before = CpuSecs::now();
        std::hint::black_box(time(Stage::Fingerprint, || spin(20_000_000)));
        let after = CpuSecs::now();
        let took = after.fingerprint - before.fingerprint;
        assert!(took > 0.001, "the spin took {took} s of CPU");
        assert!(after.total - before.total >= took - 0.002);
        assert!(after.fetch >= 0.0);
    }
}
