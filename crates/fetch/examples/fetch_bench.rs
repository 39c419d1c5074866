//! Requests per second against a local server with politeness off, at
//! concurrency 1, 16 and 64, and peak RSS while 64 large downloads run.
//!
//! ```text
//! cargo run --release -p nearcrawl-fetch --example fetch_bench
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_fetch::{FetchConfig, Fetcher};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

const PAGE_BYTES: usize = 20 * 1024;
const LARGE_BYTES: usize = 8 << 20;

async fn server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let page = Arc::new(format!(
        "<html><body><p>{}</p></body></html>",
        "word ".repeat(PAGE_BYTES / 5)
    ));
    let large = Arc::new(vec![b'x'; LARGE_BYTES]);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            // Head and body go in two writes: without this, Nagle's
            // algorithm and delayed ACKs add ~40 ms to every response.
            let _ = sock.set_nodelay(true);
            let (page, large) = (page.clone(), large.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut req = Vec::new();
                loop {
                    let Ok(n) = sock.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    req.extend_from_slice(&buf[..n]);
                    while let Some(end) = req.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&req[..end]).to_string();
                        req.drain(..end + 4);
                        let body: &[u8] = if head.contains("/robots.txt") {
                            b""
                        } else if head.contains("/large") {
                            &large
                        } else {
                            page.as_bytes()
                        };
                        let status = if head.contains("/robots.txt") {
                            "404 Not Found"
                        } else {
                            "200 OK"
                        };
                        let h = format!(
                            "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        if sock.write_all(h.as_bytes()).await.is_err()
                            || sock.write_all(body).await.is_err()
                        {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let addr = server().await;
    for concurrency in [1usize, 16, 64] {
        let fetcher = Arc::new(
            Fetcher::new(FetchConfig {
                allow_private_networks: true,
                per_host_delay: Duration::ZERO,
                per_host_concurrency: concurrency,
                global_concurrency: concurrency,
                ..FetchConfig::default()
            })
            .unwrap(),
        );
        let n = 4000;
        let t = Instant::now();
        let mut tasks = Vec::new();
        for w in 0..concurrency {
            let fetcher = fetcher.clone();
            tasks.push(tokio::spawn(async move {
                let mut ok = 0;
                for i in (w..n).step_by(concurrency) {
                    let url = Url::parse(&format!("http://{addr}/page/{i}")).unwrap();
                    ok += usize::from(fetcher.fetch(&url, &|_| true).await.is_ok());
                }
                ok
            }));
        }
        let mut ok = 0;
        for t in tasks {
            ok += t.await.unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "concurrency {concurrency:>2}: {ok}/{n} pages of {PAGE_BYTES} B in {secs:.2} s = {:.0} requests/s",
            n as f64 / secs
        );
    }
    let fetcher = Arc::new(
        Fetcher::new(FetchConfig {
            allow_private_networks: true,
            per_host_delay: Duration::ZERO,
            per_host_concurrency: 64,
            max_body_bytes: 16 << 20,
            ..FetchConfig::default()
        })
        .unwrap(),
    );
    let before = peak_rss_mib();
    let t = Instant::now();
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let fetcher = fetcher.clone();
            tokio::spawn(async move {
                let url = Url::parse(&format!("http://{addr}/large/{i}")).unwrap();
                fetcher
                    .fetch(&url, &|_| true)
                    .await
                    .map(|p| p.body.len())
                    .unwrap_or(0)
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    println!(
        "64 concurrent downloads of {} MiB: {} MiB in {:.2} s; peak RSS {} MiB (before: {} MiB)",
        LARGE_BYTES >> 20,
        total >> 20,
        t.elapsed().as_secs_f64(),
        peak_rss_mib(),
        before
    );
}
