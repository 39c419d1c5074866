//! A page read through a redirect is its target's page: a link to the
//! target queued before the redirect was read is not fetched again, in the
//! embedded crawl (across a stop and a resume) and by a cluster worker.
//! Seen where the server sees it: the requests it logged.
//!
//! The cluster test needs `redis-server` and `redis-cli` (installed by
//! `tests/run`).

use std::path::Path;

use nearcrawl_tests::redis_cluster::Cluster;
use nearcrawl_tests::{RequestLog, fresh_dir, json_lines, linked_page as page, run, serve};

/// `/` links to `/old` (a redirect to `/new`), then to `/new` itself and
/// to `/a`, which links to `/new` again; `/b` hangs off `/new`.
fn serve_site() -> (u16, RequestLog) {
    serve(
        |path| match path {
            "/" => (200, "text/html", page("Home", 1, &["/old", "/new", "/a"])),
            "/old" => (301, "text/html", b"/new".to_vec()),
            "/new" => (200, "text/html", page("New", 2, &["/b"])),
            "/a" => (200, "text/html", page("A", 3, &["/new"])),
            "/b" => (200, "text/html", page("B", 4, &[])),
            _ => (404, "text/plain", Vec::new()),
        },
        std::time::Duration::ZERO,
    )
}

fn write_config(dir: &Path, port: u16, more: &str) {
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/\"]\nsitemaps = false\n\
             [politeness]\ndelay_ms = 5\nper_host_concurrency = 1\n\
             [fetch]\nallow_private_networks = true\n\
             [output]\ndir = \"{}\"\n{more}",
            dir.join("out").display()
        ),
    )
    .unwrap();
}

fn crawl(dir: &Path, more: &[&str]) -> serde_json::Value {
    let config = dir.join("c.toml");
    let mut args = vec!["crawl", "--config", config.to_str().unwrap()];
    args.extend(more);
    let out = run(&args, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap()).unwrap()
}

/// Every page read once; `/new` asked once, as `/old`'s redirect target.
fn check(dir: &Path, log: &RequestLog, stats: &serde_json::Value) {
    let requests = log.lock().unwrap().clone();
    let asked = |p: &str| requests.iter().filter(|r| *r == p).count();
    for path in ["/", "/old", "/new", "/a", "/b"] {
        assert_eq!(asked(path), 1, "{path}: {requests:?}");
    }
    assert_eq!(stats["read_through_redirect"], 1, "{stats}");
    assert_eq!(stats["fetched"], 4, "{stats}");
    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    let finals: Vec<&str> = (pages.iter())
        .map(|p| p["final_url"].as_str().unwrap())
        .collect();
    assert_eq!(pages.len(), 4, "{finals:?}");
    assert_eq!(
        finals.iter().filter(|f| f.ends_with("/new")).count(),
        1,
        "{finals:?}"
    );
}

#[test]
fn a_redirect_target_read_is_not_fetched_again_across_a_resume() {
    let (port, log) = serve_site();
    let dir = fresh_dir("e2e-redirect-target");
    write_config(&dir, port, "");
    // Stopped by its budget once `/old` (and so `/new`) was read, with
    // `/new` still queued; resumed to the end.
    let first = crawl(&dir, &["--max-pages", "2"]);
    assert_eq!(first["fetched"], 2, "{first}");
    assert_eq!(first["read_through_redirect"], 0, "{first}");
    let stats = crawl(&dir, &[]);
    check(&dir, &log, &stats);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_redirect_target_read_is_not_fetched_again_by_a_cluster_worker() {
    let cluster = Cluster::start(3);
    let (port, log) = serve_site();
    let dir = fresh_dir("e2e-redirect-target-cluster");
    let nodes: Vec<String> = (cluster.urls().iter())
        .map(|n| format!("\"{n}\""))
        .collect();
    let more = format!(
        "[cluster]\nnodes = [{}]\nname = \"redirects\"\npartitions = 4\nlease_secs = 2\n",
        nodes.join(", ")
    );
    write_config(&dir, port, &more);
    let stats = crawl(&dir, &["--worker", "w0"]);
    check(&dir, &log, &stats);
    let _ = std::fs::remove_dir_all(&dir);
}
