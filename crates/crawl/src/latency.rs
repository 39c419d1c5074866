//! Fetch latencies, counted into fixed buckets as they happen, for
//! metrics (a histogram a scrape can read without stopping the crawl).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, in seconds (Prometheus's defaults).
pub const BOUNDS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Observed latencies (shared by the tasks that fetch).
#[derive(Debug, Default)]
pub struct Latencies {
    /// Per bucket, then the overflow: not cumulative.
    counts: [AtomicU64; BOUNDS.len() + 1],
    sum_micros: AtomicU64,
}

/// What a scrape reads.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyHistogram {
    /// (upper bound in seconds, observations at or below it), cumulative,
    /// ending with infinity.
    pub buckets: Vec<(f64, u64)>,
    pub sum_secs: f64,
    pub count: u64,
}

impl Latencies {
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = BOUNDS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BOUNDS.len());
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        self.sum_micros
            .fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> LatencyHistogram {
        let mut total = 0;
        let mut buckets = Vec::with_capacity(BOUNDS.len() + 1);
        for (i, c) in self.counts.iter().enumerate() {
            total += c.load(Ordering::Relaxed);
            buckets.push((BOUNDS.get(i).copied().unwrap_or(f64::INFINITY), total));
        }
        LatencyHistogram {
            buckets,
            sum_secs: self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6,
            count: total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_end_at_infinity() {
        let l = Latencies::default();
        for ms in [1, 7, 7, 300, 20_000] {
            l.observe(Duration::from_millis(ms));
        }
        let h = l.snapshot();
        assert_eq!(h.count, 5);
        assert_eq!(h.buckets[0], (0.005, 1));
        assert_eq!(h.buckets[1], (0.01, 3));
        assert_eq!(h.buckets[6], (0.5, 4));
        assert_eq!(*h.buckets.last().unwrap(), (f64::INFINITY, 5));
        assert!((h.sum_secs - 20.315).abs() < 1e-9);
    }
}
