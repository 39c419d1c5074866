//! `series.jsonl`: the crawl's totals over time, one line per sample, for
//! `nearcrawl report` to chart.
//!
//! Sampled from [`Crawl::metrics`](nearcrawl_crawl::run::Crawl::metrics)
//! about 500 times a run: every second at first, every minute at most, so a
//! week-long crawl writes ~10,000 lines, not 600,000. Totals are over every
//! run, as in `stats.json`; a run resumed after a crash starts from the last
//! checkpoint's totals, so the report treats each run (`run` = its start) as
//! a curve of its own. Lines are appended; one cut by a crash is skipped by
//! readers.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nearcrawl_crawl::stats::Metrics;
use serde::{Deserialize, Serialize};

/// Samples a run aims for.
const SAMPLES_PER_RUN: u32 = 500;
const FINEST: Duration = Duration::from_secs(1);
const COARSEST: Duration = Duration::from_secs(60);

/// One line of `series.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// When (seconds since the Unix epoch).
    pub t: f64,
    /// When this run started (seconds since the Unix epoch).
    pub run: f64,
    pub fetched: u64,
    pub written: u64,
    pub exact: u64,
    pub near: u64,
    pub errors: u64,
    pub bytes: u64,
    pub queued: usize,
    pub in_flight: usize,
    pub hosts_active: usize,
    /// The process's resident memory (Linux; absent in lines of earlier
    /// versions), to see that it stays flat as the crawl grows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
}

impl Sample {
    pub fn of(m: &Metrics, run: f64) -> Sample {
        let s = &m.stats;
        Sample {
            t: unix_now(),
            run,
            fetched: s.fetched,
            written: s.written,
            exact: s.exact_duplicates,
            near: s.near_duplicates,
            errors: s.errors.values().sum(),
            bytes: s.bytes,
            queued: m.queued,
            in_flight: m.in_flight,
            hosts_active: m.active_hosts,
            rss_bytes: rss_bytes(),
        }
    }
}

/// VmRSS of `/proc/self/status`.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| (d.as_millis() as f64) / 1000.0)
}

/// Appends a sample to `path` now and then until aborted; the caller writes
/// the last one when the run ends ([`append`]).
pub async fn record(path: std::path::PathBuf, metrics: impl Fn() -> Metrics, run: f64) {
    let start = Instant::now();
    if let Err(e) = end_cut_line(&path) {
        tracing::warn!("cannot write {}: {e}; no samples this run", path.display());
        return;
    }
    loop {
        if let Err(e) = append(&path, &Sample::of(&metrics(), run)) {
            // The crawl matters more than its chart: say so once, go on.
            tracing::warn!(
                "cannot write {}: {e}; no more samples this run",
                path.display()
            );
            return;
        }
        let every = (start.elapsed() / SAMPLES_PER_RUN).clamp(FINEST, COARSEST);
        tokio::time::sleep(every).await;
    }
}

pub fn append(path: &Path, sample: &Sample) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(sample).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // One write per line: a crash cuts at most the last one.
    file.write_all(&line)
}

/// Ends a line a crash cut, so the next sample starts a line of its own.
fn end_cut_line(path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if file.seek(SeekFrom::End(0))? == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}

/// Every whole line of `path` (none if it does not exist).
pub fn read(path: &Path) -> std::io::Result<Vec<Sample>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_cut_by_a_crash_is_skipped() {
        let dir = std::env::temp_dir().join(format!("series-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("series.jsonl");
        let _ = std::fs::remove_file(&path);
        let mut a = Sample {
            t: 1.0,
            run: 1.0,
            fetched: 3,
            written: 2,
            exact: 1,
            near: 0,
            errors: 0,
            bytes: 100,
            queued: 5,
            in_flight: 1,
            rss_bytes: Some(1 << 20),
            hosts_active: 1,
        };
        append(&path, &a).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"t\":2.0,\"run\":1.0,\"fetch")
            .unwrap();
        assert_eq!(read(&path).unwrap(), vec![a.clone()]);
        // The next run's first sample is not glued to the cut line.
        end_cut_line(&path).unwrap();
        a.t = 3.0;
        append(&path, &a).unwrap();
        end_cut_line(&path).unwrap();
        assert_eq!(read(&path).unwrap().len(), 2);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
