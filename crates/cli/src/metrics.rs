//! `nearcrawl crawl --metrics ADDR`: the crawl's figures in Prometheus text
//! format at `http://ADDR/metrics`, read from the crawl at each scrape.

use std::sync::Arc;

use nearcrawl_crawl::stats::Metrics;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type Read = Arc<dyn Fn() -> Metrics + Send + Sync>;

/// Serves `/metrics` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, read: Read) {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(CrawlCollector(read)));
    let registry = Arc::new(registry);
    while let Ok((mut stream, _)) = listener.accept().await {
        let registry = registry.clone();
        tokio::spawn(async move {
            // The request head, up to 8 KiB; only its first line matters.
            let mut head = vec![0u8; 8192];
            let mut got = 0;
            while got < head.len() && !head[..got].windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut head[got..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got += n,
                }
            }
            let line = String::from_utf8_lossy(&head[..got]);
            let path = line.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = if path == "/metrics" || path.starts_with("/metrics?") {
                let mut text = String::new();
                match prometheus_client::encoding::text::encode(&mut text, &registry) {
                    Ok(()) => ("200 OK", text),
                    Err(_) => ("500 Internal Server Error", String::new()),
                }
            } else {
                ("404 Not Found", "metrics are at /metrics\n".to_string())
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        });
    }
}

/// Reads the crawl's figures at each scrape.
struct CrawlCollector(Read);

impl std::fmt::Debug for CrawlCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CrawlCollector")
    }
}

impl Collector for CrawlCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let m = (self.0)();
        let s = &m.stats;
        let counters: [(&str, &str, u64); 6] = [
            ("nearcrawl_fetched", "Pages fetched", s.fetched),
            (
                "nearcrawl_written",
                "Pages written to the corpus",
                s.written,
            ),
            ("nearcrawl_bytes", "Body bytes fetched", s.bytes),
            (
                "nearcrawl_robots_denied",
                "URLs denied by robots.txt",
                s.robots_denied,
            ),
            ("nearcrawl_noindex", "Pages not written: noindex", s.noindex),
            (
                "nearcrawl_redirects",
                "Redirect hops followed (HTTP and meta refresh)",
                s.redirects,
            ),
        ];
        for (name, help, v) in counters {
            let c = ConstCounter::new(v);
            c.encode(encoder.encode_descriptor(name, help, None, c.metric_type())?)?;
        }
        let mut family = encoder.encode_descriptor(
            "nearcrawl_duplicates",
            "Pages judged duplicates, by kind",
            None,
            MetricType::Counter,
        )?;
        for (kind, v) in [("exact", s.exact_duplicates), ("near", s.near_duplicates)] {
            ConstCounter::new(v).encode(family.encode_family(&[("kind", kind)])?)?;
        }
        let mut family = encoder.encode_descriptor(
            "nearcrawl_errors",
            "Failed fetches, by kind",
            None,
            MetricType::Counter,
        )?;
        for (kind, &v) in &s.errors {
            ConstCounter::new(v).encode(family.encode_family(&[("kind", kind.as_str())])?)?;
        }
        let gauges: [(&str, &str, u64); 3] = [
            (
                "nearcrawl_queued",
                "URLs waiting in the frontier",
                m.queued as u64,
            ),
            (
                "nearcrawl_in_flight",
                "Requests in flight",
                m.in_flight as u64,
            ),
            (
                "nearcrawl_hosts_active",
                "Hosts with URLs queued or in flight",
                m.active_hosts as u64,
            ),
        ];
        for (name, help, v) in gauges {
            let g = ConstGauge::new(v as i64);
            g.encode(encoder.encode_descriptor(name, help, None, g.metric_type())?)?;
        }
        let mut family = encoder.encode_descriptor(
            "nearcrawl_cpu_seconds",
            "The crawl process's CPU time, by stage (fetch: what no other stage took: HTTP, TLS, the runtime, the frontier)",
            None,
            MetricType::Counter,
        )?;
        for (stage, secs) in m.cpu.by_stage() {
            ConstCounter::new(secs).encode(family.encode_family(&[("stage", stage)])?)?;
        }
        let h = &m.fetch_latency;
        // prometheus-client writes the bucket bounded by f64::MAX as +Inf.
        let buckets: Vec<(f64, u64)> = h
            .buckets
            .iter()
            .map(|&(le, n)| (if le.is_infinite() { f64::MAX } else { le }, n))
            .collect();
        encoder
            .encode_descriptor(
                "nearcrawl_fetch_seconds",
                "Time of page fetches (requests and redirect hops; politeness waits not counted), this run",
                None,
                MetricType::Histogram,
            )?
            .encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                h.sum_secs, h.count, &buckets, None,
            )?;
        Ok(())
    }
}
