//! The shared gate on a 3-node Redis Cluster on loopback: pages judged per
//! second by 1, 2 and 3 workers at once, the time one judging takes, and
//! the log's Redis memory per entry.
//!
//! ```text
//! cargo run --release -p nearcrawl-cluster --example shared_gate_bench -- [PAGES]
//! ```
//!
//! Needs `redis-server` and `redis-cli`. Each worker is a task on one tokio
//! runtime of this process (2 threads), with its own replica; the pages
//! are synthetic texts of 300 words, a third of them copies.

use nearcrawl_tests::redis_cluster as common;

use std::time::Instant;

use nearcrawl_cluster::SharedGate;
use nearcrawl_index::{DedupConfig, Doc, Fingerprinter, Prepared};

fn pages(n: usize) -> Vec<Prepared> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut f = Fingerprinter::new(&DedupConfig::default()).unwrap();
    let mut texts: Vec<String> = Vec::new();
    while texts.len() < n {
        let words: Vec<String> = (0..300).map(|_| format!("w{}", next() % 20_000)).collect();
        texts.push(words.join(" "));
        if next() % 3 == 0 {
            texts.push(words.join(" "));
        }
    }
    texts.truncate(n);
    texts.iter().map(|t| f.prepare(Doc::from(t))).collect()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(6_000, |a| a.parse().expect("PAGES is a number"));
    let docs = pages(n);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for workers in 1..=3usize {
        let cluster = common::Cluster::start(3);
        let nodes = cluster.urls();
        let tmp = std::env::temp_dir().join(format!("nearcrawl-sgb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let start = Instant::now();
        let latencies: Vec<f64> = rt.block_on(async {
            let mut tasks = Vec::new();
            for w in 0..workers {
                let mine: Vec<(u64, Prepared)> = (w..docs.len())
                    .step_by(workers)
                    .map(|i| (i as u64, docs[i].clone()))
                    .collect();
                let nodes = nodes.clone();
                let dir = tmp.join(format!("w{w}"));
                tasks.push(tokio::spawn(async move {
                    let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
                    let mut gate = SharedGate::open(&urls, "bench", &dir, DedupConfig::default())
                        .await
                        .unwrap();
                    let mut lat = Vec::new();
                    for (request, p) in &mine {
                        let t = Instant::now();
                        gate.judge(*request, &format!("http://h/{request}"), p)
                            .await
                            .unwrap();
                        lat.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    gate.flush().unwrap();
                    lat
                }));
            }
            let mut all = Vec::new();
            for t in tasks {
                all.extend(t.await.unwrap());
            }
            all
        });
        let wall = start.elapsed().as_secs_f64();
        let mut lat = latencies;
        lat.sort_by(f64::total_cmp);
        let memory = cluster.used_memory_of("{bench:gate}:log");
        println!(
            "{workers} worker(s): {n} pages in {wall:.2} s = {:.0} pages/s; one judging median {:.2} ms, p99 {:.2} ms; \
             log {:.0} B a page in Redis",
            n as f64 / wall,
            lat[lat.len() / 2],
            lat[lat.len() * 99 / 100],
            memory as f64 / n as f64,
        );
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
