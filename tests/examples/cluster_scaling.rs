//! Scaling of `nearcrawl crawl --cluster`: pages/s of 1, 2 and 3 workers on
//! a broad loopback site whose every answer takes 100 ms (a far server),
//! and the Redis memory the crawl leaves per seen URL and per document.
//!
//!     cargo build --release -p nearcrawl-cli
//!     NEARCRAWL_BIN=target/release/nearcrawl \
//!         cargo run --release -p nearcrawl-tests --example cluster_scaling -- [HOSTS] [PAGES]
//!
//! Each run starts its own 3-node Redis Cluster and site (HOSTS hosts on
//! 127.6.x.y addresses, PAGES pages each, every host a seed); workers run
//! with 16 requests in flight each, one per host at a time, no delay, so a
//! worker is bound by the latency (16 / 0.1 s = 160 pages/s) and the site
//! by its hosts (HOSTS × 10 pages/s).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nearcrawl_tests::redis_cluster::Cluster;
use nearcrawl_tests::{made_up_words, nearcrawl_bin, serve_slow};

const LATENCY: Duration = Duration::from_millis(100);

fn text(h: usize, i: usize) -> String {
    made_up_words((h * 10_000 + i + 3) as u64, 200, 50_000)
}

fn page(h: usize, i: usize, pages: usize) -> Vec<u8> {
    let title: String = text(h, i).split(' ').take(4).collect::<Vec<_>>().join(" ");
    format!(
        "<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{}</p>\
         <a href=\"/p/{}\">next</a> <a href=\"/p/{}\">other</a></main></body></html>",
        text(h, i),
        (i + 1) % pages,
        (i * 7 + 3) % pages
    )
    .into_bytes()
}

/// One crawl of the whole site by `workers` workers: pages/s (fetched
/// over the time to the last worker's exit) and pages fetched; prints the
/// Redis memory it leaves.
fn run(workers: usize, hosts: usize, pages: usize) -> (f64, u64) {
    let cluster = Cluster::start(3);
    let mut logs = Vec::new();
    let base: Vec<String> = (0..hosts)
        .map(|h| {
            let ip = format!("127.6.{}.{}", h / 250, h % 250 + 1);
            let route =
                move |path: &str| match path.strip_prefix("/p/").and_then(|i| i.parse().ok()) {
                    Some(i) if i < pages => (200, "text/html", page(h, i, pages)),
                    _ if path == "/robots.txt" => (404, "text/plain", Vec::new()),
                    _ => (404, "text/plain", b"no".to_vec()),
                };
            let (addr, log) = serve_slow(&ip, route, LATENCY);
            logs.push(log);
            format!("http://{addr}")
        })
        .collect();
    let tmp = std::env::temp_dir().join(format!(
        "nearcrawl-scaling-{}-{workers}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let seeds: String = base.iter().map(|b| format!("{b}/p/0\n")).collect();
    std::fs::write(tmp.join("seeds.txt"), seeds).unwrap();
    let nodes: Vec<String> = cluster.urls().iter().map(|n| format!("\"{n}\"")).collect();
    std::fs::write(
        tmp.join("c.toml"),
        format!(
            "[seeds]\nfile = \"seeds.txt\"\nsitemaps = false\n[scope]\nhosts = [\"*\"]\n\
             [politeness]\ndelay_ms = 0\nglobal_concurrency = 16\n\
             [fetch]\nallow_private_networks = true\n\
             [cluster]\nnodes = [{}]\nname = \"scaling\"\n",
            nodes.join(", ")
        ),
    )
    .unwrap();
    let start = Instant::now();
    let mut children: Vec<Child> = (0..workers)
        .map(|w| {
            Command::new(nearcrawl_bin())
                .args(["crawl", "--config", tmp.join("c.toml").to_str().unwrap()])
                .args(["--out", tmp.join(format!("out{w}")).to_str().unwrap()])
                .args(["--worker", &format!("w{w}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in &mut children {
        assert!(c.wait().unwrap().success(), "a worker failed");
    }
    let secs = start.elapsed().as_secs_f64();
    let times: Vec<Instant> = logs
        .iter()
        .flat_map(|l| {
            l.lock()
                .unwrap()
                .iter()
                .map(|(t, _)| *t)
                .collect::<Vec<_>>()
        })
        .collect();
    let first = times
        .iter()
        .min()
        .unwrap()
        .duration_since(start)
        .as_secs_f64();
    let last = times
        .iter()
        .max()
        .unwrap()
        .duration_since(start)
        .as_secs_f64();
    println!(
        "  {workers} worker(s): first request at {first:.2} s, last at {last:.2} s, all exited at {secs:.2} s"
    );
    let memory = cluster.memory_by_kind(|k| {
        if k.contains(":gate}") {
            "gate"
        } else if k.contains("}:s:") {
            "seen"
        } else {
            "frontier"
        }
    });
    let (mut fetched, mut written, mut calls) = (0, 0, 0);
    let mut each = Vec::new();
    for w in 0..workers {
        let stats: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.join(format!("out{w}/stats.json"))).unwrap(),
        )
        .unwrap();
        fetched += stats["fetched"].as_u64().unwrap();
        each.push((
            stats["fetched"].as_u64().unwrap(),
            stats["cluster"]["partitions_received"]
                .as_u64()
                .unwrap_or(0),
        ));
        written += stats["written"].as_u64().unwrap();
        calls += stats["cluster"]["redis_calls"].as_u64().unwrap_or(0);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let total: u64 = memory.values().sum();
    println!("  pages and partitions received from busier workers, per worker: {each:?}");
    println!(
        "  Redis calls: {calls} in all, {:.1} per page (leases, acknowledgements, links, the \
         gate's log, heartbeats and polls)",
        calls as f64 / fetched.max(1) as f64
    );
    println!(
        "  Redis after the crawl: seen set {} B, gate log {} B, frontier and leases {} B: \
         {:.0} B per URL seen, gate {:.0} B per document",
        memory.get("seen").unwrap_or(&0),
        memory.get("gate").unwrap_or(&0),
        memory.get("frontier").unwrap_or(&0),
        total as f64 / fetched.max(1) as f64,
        *memory.get("gate").unwrap_or(&0) as f64 / written.max(1) as f64,
    );
    (fetched as f64 / secs, fetched)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let hosts = args.first().copied().unwrap_or(200);
    let pages = args.get(1).copied().unwrap_or(15);
    println!(
        "{hosts} hosts x {pages} pages, every answer after {LATENCY:?}, 16 in flight per worker"
    );
    let mut one = 0.0;
    for workers in 1..=3 {
        let (rate, fetched) = run(workers, hosts, pages);
        if workers == 1 {
            one = rate;
        }
        println!(
            "{workers} worker(s): {fetched} pages, {rate:.0} pages/s ({:.2}x one worker)",
            rate / one
        );
    }
}
