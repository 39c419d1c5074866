//! Crawls a generated local site and reports pages/s, CPU seconds, peak
//! RSS, and how the planted near-duplicates fared.
//!
//! ```text
//! cargo run --release -p nearcrawl-crawl --example crawl_bench -- [PAGES]
//! cargo run --release -p nearcrawl-crawl --example crawl_bench -- PAGES --serve
//! ```
//!
//! With `--serve` it only serves the site (and prints its address), so the
//! `nearcrawl` binary can crawl it from another process and be measured
//! alone, e.g. with `/usr/bin/time -v nearcrawl crawl --config
//! config/local.toml --seeds seeds.txt --out /tmp/out`.
//!
//! The site (default 20,000 pages, 200-800 words each from the vocabulary
//! of the shared article bodies, one shared header and footer) is served
//! from 127.0.0.1 by an in-process server. Every fifth page is a near
//! duplicate of the page before it (2% of words changed, another date and
//! ad). Politeness is off (config/local.toml's settings).

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use nearcrawl_crawl::config::{Config, Positive};
use nearcrawl_crawl::embedded::Crawler;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

use common::{Rng, cpu_seconds, proc_status, vocabulary};

fn build_site(n: usize) -> Vec<String> {
    let vocab = vocabulary();
    let mut rng = Rng(7);
    let mut bodies: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let body = if i % 5 == 4 {
            // Near duplicate of the previous page.
            bodies[i - 1]
                .split(' ')
                .map(|w| {
                    if rng.below(50) == 0 {
                        vocab[rng.below(vocab.len())].as_str()
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            let words = 200 + rng.below(600);
            (0..words)
                .map(|_| vocab[rng.below(vocab.len())].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        bodies.push(body);
    }
    bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let mut links = String::new();
            // Near and far neighbours: every page is a few links from home.
            let targets = [i + 1, i + 2, i + 3, i + 7, i * 7 + 13, i * 31 + 17, i * 131 + 7];
            for t in targets {
                links.push_str(&format!("<a href='/p/{}'>page {}</a> ", t % n, t % n));
            }
            let paras: String = body
                .split(' ')
                .collect::<Vec<_>>()
                .chunks(60)
                .map(|c| format!("<p>{}.</p>", c.join(" ")))
                .collect();
            // A near duplicate is the same page served at another path (a
            // session id, a print view, a mirror): it keeps the title of
            // the page it copies, as such copies do.
            let title = if i % 5 == 4 { i - 1 } else { i };
            format!(
                "<html><head><title>Page {title}</title></head><body><header><nav><a href='/'>Home</a> \
                 <a href='/p/0'>First</a> <a href='/p/1'>Second</a></nav></header><div class='ad'>Ad {}</div>\
                 <article><p class='date'>Published day {}</p>{paras}</article><div class='related'>{links}</div>\
                 <footer>Copyright Bench Site. All rights reserved.</footer></body></html>",
                rng_for(i),
                i % 28
            )
        })
        .collect()
}

fn rng_for(i: usize) -> u64 {
    Rng(i as u64).next() % 1000
}

async fn serve(pages: Arc<Vec<String>>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let _ = sock.set_nodelay(true);
            let pages = pages.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
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
                        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                        let (status, ctype, body) = if path == "/robots.txt" {
                            (
                                "200 OK",
                                "text/plain",
                                "User-agent: *\nAllow: /\n".to_string(),
                            )
                        } else if path == "/" {
                            let links: String = (0..100)
                                .map(|i| format!("<a href='/p/{i}'>p{i}</a> "))
                                .collect();
                            (
                                "200 OK",
                                "text/html",
                                format!("<html><body><h1>Bench home</h1>{links}</body></html>"),
                            )
                        } else if let Some(i) = path
                            .strip_prefix("/p/")
                            .and_then(|s| s.parse::<usize>().ok())
                            .filter(|i| *i < pages.len())
                        {
                            ("200 OK", "text/html", pages[i].clone())
                        } else {
                            ("404 Not Found", "text/plain", "no".to_string())
                        };
                        let h = format!(
                            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        if sock.write_all(h.as_bytes()).await.is_err()
                            || sock.write_all(body.as_bytes()).await.is_err()
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

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("PAGES"))
        .unwrap_or(20_000);
    let t = Instant::now();
    let pages = Arc::new(build_site(n));
    let site_mb = pages.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    println!(
        "site: {n} pages, {site_mb:.1} MB, built in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let addr = serve(pages.clone()).await;
    if std::env::args().nth(2).as_deref() == Some("--serve") {
        // Serve only, so a crawler in another process (the real binary)
        // can be measured alone.
        println!("serving on http://{addr}/");
        std::future::pending::<()>().await;
    }
    let out = std::env::temp_dir().join(format!("nearcrawl-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut config = Config::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/local.toml"),
    )
    .unwrap();
    config.output.dir = out.clone();
    config.dedup.capacity = n as u64;
    config.scope.max_depth = 1000;
    config.politeness.global_concurrency = Positive(64);
    let seeds = vec![Url::parse(&format!("http://{addr}/")).unwrap()];
    let sink = nearcrawl_output::open(&config.output).unwrap();
    let rss_before = proc_status("self", "VmRSS:");
    let cpu0 = cpu_seconds("self");
    let t = Instant::now();
    let stats = Crawler::open(config, &seeds, sink)
        .unwrap()
        .run()
        .await
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds("self") - cpu0;
    println!(
        "crawl: {} fetched, {} written, {} exact + {} near duplicates, {} errors in {secs:.1} s = {:.0} pages/s; \
         CPU {cpu:.1} s (server and generator included: same process); RSS before {} MiB, peak {} MiB",
        stats.fetched,
        stats.written,
        stats.exact_duplicates,
        stats.near_duplicates,
        stats.errors.values().sum::<u64>(),
        stats.fetched as f64 / secs,
        rss_before / 1024,
        proc_status("self", "VmHWM:") / 1024
    );
    // Planted pairs: page i (i % 5 == 4) copies page i - 1.
    let dups: Vec<serde_json::Value> = std::fs::read_to_string(out.join("duplicates.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let page_no = |u: &str| u.rsplit('/').next().and_then(|s| s.parse::<usize>().ok());
    let mut caught = HashSet::new();
    let mut false_drops = 0;
    for d in &dups {
        let (Some(a), Some(b)) = (
            page_no(d["url"].as_str().unwrap()),
            page_no(d["duplicate_of"].as_str().unwrap()),
        ) else {
            false_drops += 1;
            continue;
        };
        let (lo, hi) = (a.min(b), a.max(b));
        if hi % 5 == 4 && lo + 1 == hi {
            caught.insert(hi);
        } else {
            false_drops += 1;
        }
    }
    let planted = (0..n).filter(|i| i % 5 == 4).count();
    println!(
        "planted near-duplicate pairs: {planted}; caught {} ({:.1}%); falsely dropped pages: {false_drops}",
        caught.len(),
        100.0 * caught.len() as f64 / planted as f64
    );
    let state: u64 = std::fs::read_dir(out.join("state"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    println!(
        "state on disk: {:.1} MB, {:.0} B per fetched page",
        state as f64 / 1e6,
        state as f64 / stats.fetched.max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&out);
}
