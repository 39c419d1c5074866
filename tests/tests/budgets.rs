//! The budgets mean one thing in both engines: `max_pages_per_host` and
//! `max_pages_per_domain` count pages fetched (not URLs queued; a page
//! robots.txt forbids takes none), `max_hosts` counts hosts admitted, and a
//! host is its politeness key (another port is another host, of the same
//! domain). The same site crawled with each budget by the embedded crawl
//! and by a cluster worker gives the same counts.
//!
//! Needs `redis-server` and `redis-cli` (installed by `tests/run`).

use std::net::SocketAddr;
use std::path::Path;

use nearcrawl_tests::redis_cluster::Cluster;
use nearcrawl_tests::{fresh_dir, linked_page, run, serve_timed};
use serde_json::{Value, json};

fn page(seed: u64, links: &[String]) -> Vec<u8> {
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    linked_page(&format!("Page {seed}"), seed, &links)
}

/// Host A (127.0.0.1): `/` links to three pages robots.txt forbids, ten
/// pages in a ring, host B's start page (127.0.0.5) and host C's, on
/// A's address with another port (two pages).
fn serve_site() -> (SocketAddr, SocketAddr) {
    let (b, _) = serve_timed("127.0.0.5", |path| match path {
        "/" => (200, "text/html", page(100, &[])),
        _ => (404, "text/plain", Vec::new()),
    });
    let (c, _) = serve_timed("127.0.0.1", |path| match path {
        "/" => (200, "text/html", page(200, &["/c1".to_string()])),
        "/c1" => (200, "text/html", page(201, &[])),
        _ => (404, "text/plain", Vec::new()),
    });
    let (a, _) = serve_timed("127.0.0.1", move |path| {
        let ring = |i: usize| format!("/p/{}", i % 10);
        match path {
            "/robots.txt" => (
                200,
                "text/plain",
                b"User-agent: *\nDisallow: /blocked\n".to_vec(),
            ),
            "/" => {
                let mut links: Vec<String> = (0..3).map(|i| format!("/blocked/{i}")).collect();
                links.extend((0..10).map(ring));
                links.push(format!("http://{b}/"));
                links.push(format!("http://{c}/"));
                (200, "text/html", page(0, &links))
            }
            _ => match path
                .strip_prefix("/p/")
                .and_then(|i| i.parse::<usize>().ok())
            {
                Some(i) if i < 10 => (200, "text/html", page(1 + i as u64, &[ring(i + 1)])),
                _ => (404, "text/plain", Vec::new()),
            },
        }
    });
    (a, b)
}

/// The counts a budget decides, from `stats.json`.
fn counts(dir: &Path, seed: SocketAddr, budget: &str, cluster: Option<(&[String], &str)>) -> Value {
    let cluster = nearcrawl_tests::redis_cluster::config_section(cluster);
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[scope]\nhosts = [\"127.0.0.1\", \"127.0.0.5\"]\n{budget}\n\
             [politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true\n\
             [seeds]\nurls = [\"http://{seed}/\"]\nsitemaps = false\n\
             [output]\ndir = \"{}\"\n{cluster}",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let config = dir.join("c.toml");
    let mut args = vec!["crawl", "--config", config.to_str().unwrap()];
    if !cluster.is_empty() {
        args.extend(["--worker", "w0"]);
    }
    let out = run(&args, b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap())
            .unwrap();
    json!({
        "fetched": stats["fetched"],
        "robots_denied": stats["robots_denied"],
        "out_of_scope": stats["out_of_scope"],
    })
}

#[test]
fn each_budget_counts_the_same_in_both_engines() {
    let (a, _b) = serve_site();
    let redis = Cluster::start(3);
    let nodes = redis.urls();
    // 11 pages on A (the start page and the ring), 1 on B, 2 on C (A's
    // domain); A's three forbidden pages take no budget.
    let budgets = [
        ("max_pages_per_host = 5", json!({"host_page_limit": 6}), 8),
        (
            "max_pages_per_domain = 4",
            json!({"domain_page_limit": 9}),
            5,
        ),
        ("max_hosts = 1", json!({"host_limit": 2}), 11),
    ];
    for (i, (budget, out_of_scope, fetched)) in budgets.into_iter().enumerate() {
        let embedded = counts(&fresh_dir(&format!("budget-{i}")), a, budget, None);
        let name = format!("budget{i}");
        let dir = fresh_dir(&format!("budget-{i}-cluster"));
        let clustered = counts(&dir, a, budget, Some((&nodes, &name)));
        let want = json!({"fetched": fetched, "robots_denied": 3, "out_of_scope": out_of_scope});
        assert_eq!(embedded, want, "embedded, {budget}");
        assert_eq!(clustered, want, "cluster worker, {budget}");
    }
}

#[test]
fn a_seed_out_of_scope_is_fetched_by_neither_engine() {
    let (a, _b) = serve_site();
    let redis = Cluster::start(3);
    let nodes = redis.urls();
    // The seed (`/`) is excluded; nothing else is a seed.
    let exclude = "exclude = [\"/$\"]";
    let embedded = counts(&fresh_dir("seed-scope"), a, exclude, None);
    let dir = fresh_dir("seed-scope-cluster");
    let clustered = counts(&dir, a, exclude, Some((&nodes, "seedscope")));
    let want = json!({"fetched": 0, "robots_denied": 0, "out_of_scope": {}});
    assert_eq!(embedded, want, "embedded");
    assert_eq!(clustered, want, "cluster worker");
}
