//! Duplicates predicted from URLs, end to end through `nearcrawl crawl`:
//! on a generated site with planted DUST (see
//! `nearcrawl_tests::dust_site`) the crawl learns URL rules from the
//! duplicates the gate confirms and stops fetching the duplicates those
//! rules predict, with no page lost and no decoy (`page=2`, `lang=de`,
//! another story's `id`) taken for a duplicate; in both engines. A rule
//! that stops holding retires, and what it skipped is fetched after all.
//!
//! The cluster test needs `redis-server` and `redis-cli` (installed by
//! `tests/run`).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use nearcrawl_tests::dust_site::{self, DustSite, page_of};
use nearcrawl_tests::redis_cluster::Cluster;
use nearcrawl_tests::{TimedLog, fresh_dir, json_lines, linked_page, run, serve_named_alike};
use serde_json::Value;

/// Serves the site on 127.0.0.21 and its mobile alias 127.0.0.22, one
/// port; returns the two `ip:port` and the server's log.
fn serve_dust_site() -> (DustSite, TimedLog) {
    for _ in 0..20 {
        let site = std::sync::Arc::new(std::sync::OnceLock::<DustSite>::new());
        let s = site.clone();
        let route = move |host: &str, path: &str| s.get().expect("site set").route(host, path);
        if let Some((port, log)) = serve_named_alike(&["127.0.0.21", "127.0.0.22"], route) {
            let dust = DustSite {
                main: format!("127.0.0.21:{port}"),
                mobile: format!("127.0.0.22:{port}"),
            };
            site.set(dust.clone()).unwrap();
            return (dust, log);
        }
    }
    panic!("no port free on both 127.0.0.21 and 127.0.0.22");
}

/// Crawls the site into `dir/out` (`predict` on or off; as cluster worker
/// `w0` when `cluster` names the nodes and crawl); returns `stats.json`.
fn crawl(dir: &Path, site: &DustSite, predict: bool, cluster: Option<(&[String], &str)>) -> Value {
    let cluster = match cluster {
        Some((nodes, name)) => {
            let nodes: Vec<String> = nodes.iter().map(|n| format!("\"{n}\"")).collect();
            format!(
                "[cluster]\nnodes = [{}]\nname = \"{name}\"\npartitions = 4\nlease_secs = 2\n",
                nodes.join(", ")
            )
        }
        None => String::new(),
    };
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[scope]\nhosts = [\"127.0.0.21\", \"127.0.0.22\"]\n\
             [politeness]\ndelay_ms = 0\nper_host_concurrency = 4\n\
             [fetch]\nallow_private_networks = true\n\
             [dedup]\npredict = {predict}\n\
             [seeds]\nurls = [\"http://{}/\"]\nsitemaps = false\n\
             [output]\ndir = \"{}\"\n{cluster}",
            site.main,
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
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap()).unwrap()
}

/// The path and query of a URL.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// What a crawl did, by the planted truth.
#[derive(Debug)]
struct Figures {
    /// Requests for pages (robots.txt aside).
    requests: usize,
    /// Requests for a page already requested under another URL.
    duplicate_fetches: usize,
    /// Distinct pages in the corpus.
    written: BTreeSet<String>,
    /// Predicted duplicates, and those whose URL shows another page.
    predicted: usize,
    false_predictions: Vec<String>,
}

fn figures(dir: &Path, log: &TimedLog) -> Figures {
    let requests: Vec<String> = (log.lock().unwrap().iter())
        .map(|(_, p)| p.clone())
        .filter(|p| !p.ends_with("/robots.txt"))
        .collect();
    let mut first = HashMap::new();
    for r in &requests {
        let page = page_of(path_of(&format!("http://{r}"))).unwrap_or_default();
        *first.entry(page).or_insert(0usize) += 1;
    }
    let duplicate_fetches = first.values().map(|n| n - 1).sum();
    let written = (json_lines(&dir.join("out/pages-00000.jsonl")).iter())
        .filter(|p| p["duplicate_of"].is_null())
        .filter_map(|p| page_of(path_of(p["url"].as_str()?)))
        .collect();
    let dups = json_lines(&dir.join("out/duplicates.jsonl"));
    let predicted: Vec<&Value> = dups.iter().filter(|d| d["kind"] == "predicted").collect();
    let false_predictions = predicted
        .iter()
        .filter(|d| {
            let url = page_of(path_of(d["url"].as_str().unwrap()));
            url != page_of(path_of(d["duplicate_of"].as_str().unwrap()))
        })
        .map(|d| d.to_string())
        .collect();
    Figures {
        requests: requests.len(),
        duplicate_fetches,
        written,
        predicted: predicted.len(),
        false_predictions,
    }
}

/// The generated site, crawled without and with prediction: the same
/// pages written, at least 80% of the duplicate fetches avoided (the
/// bench's goal is 90%, see `bench/dust_site.py`), no prediction naming
/// another page, and the rules in `stats.json`.
#[test]
fn duplicates_a_rule_predicts_are_not_fetched_and_no_page_is_lost() {
    let (site, log) = serve_dust_site();
    let off = fresh_dir("dust-off");
    crawl(&off, &site, false, None);
    let without = figures(&off, &log);
    log.lock().unwrap().clear();
    let on = fresh_dir("dust-on");
    let stats = crawl(&on, &site, true, None);
    let with = figures(&on, &log);
    assert_eq!(
        without.written.len(),
        dust_site::distinct_pages(),
        "{without:?}"
    );
    assert_eq!(with.written, without.written, "pages lost to a prediction");
    assert!(
        with.false_predictions.is_empty(),
        "{:?}",
        with.false_predictions
    );
    let avoided = 1.0 - with.duplicate_fetches as f64 / without.duplicate_fetches as f64;
    eprintln!(
        "requests {} -> {}, duplicate fetches {} -> {} ({:.1}% avoided), predicted {}",
        without.requests,
        with.requests,
        without.duplicate_fetches,
        with.duplicate_fetches,
        100.0 * avoided,
        with.predicted
    );
    assert!(
        avoided >= 0.8,
        "{avoided:.3} of {} duplicate fetches avoided: {with:?}",
        without.duplicate_fetches
    );
    assert_eq!(stats["predicted_duplicates"], with.predicted as u64);
    let rules = stats["url_rules"].as_array().expect("url_rules listed");
    let shown: Vec<&str> = rules.iter().filter_map(|r| r["rule"].as_str()).collect();
    for expected in ["story", "print", "sid", "index.html", "127.0.0.22"] {
        assert!(
            shown.iter().any(|r| r.contains(expected)),
            "no rule of {expected}: {shown:?}"
        );
    }
    for decoy in ["page=2", "page=3", "lang", "any value)"] {
        let bad = shown.iter().find(|r| {
            r.contains(decoy) && !r.contains("sid") && !r.contains("utm") && !r.contains("sort")
        });
        assert!(bad.is_none(), "a decoy became a rule: {bad:?}");
    }
    assert!(with.requests < without.requests);
    // With prediction off, nothing is predicted.
    assert!(
        json_lines(&off.join("out/duplicates.jsonl"))
            .iter()
            .all(|d| d["kind"] != "predicted")
    );
}

/// A cluster worker learns and uses the same rules (kept with its
/// replica of the gate), with no page lost.
#[test]
fn a_cluster_worker_predicts_duplicates_too() {
    let (site, log) = serve_dust_site();
    let redis = Cluster::start(3);
    let nodes = redis.urls();
    let dir = fresh_dir("dust-cluster");
    let stats = crawl(&dir, &site, true, Some((&nodes, "dust")));
    let with = figures(&dir, &log);
    assert_eq!(with.written.len(), dust_site::distinct_pages(), "{with:?}");
    assert!(
        with.false_predictions.is_empty(),
        "{:?}",
        with.false_predictions
    );
    assert!(with.predicted > 300, "{with:?}");
    assert_eq!(stats["predicted_duplicates"], with.predicted as u64);
    assert!(stats["url_rules"].as_array().is_some_and(|r| !r.is_empty()));
}

/// A rule that holds for the first 40 articles (their print view is the
/// article) and not after (the print views of the others are pages of
/// their own): it is proven, then retired by a checked URL, and every URL
/// it skipped is fetched after all, so no page is lost.
#[test]
fn a_rule_that_stops_holding_retires_and_what_it_skipped_is_fetched() {
    const ARTICLES: u64 = 240;
    let (addr, _log) = nearcrawl_tests::serve_timed("127.0.0.23", |path| {
        let n = |p: &str| p.parse::<u64>().ok().filter(|n| *n < ARTICLES);
        if path == "/" {
            let links: Vec<String> = (0..ARTICLES).map(|i| format!("/a/{i}")).collect();
            let links: Vec<&str> = links.iter().map(String::as_str).collect();
            return (200, "text/html", linked_page("Articles", 1, &links));
        }
        let rest = path.strip_prefix("/a/").unwrap_or("");
        match rest.split_once('/') {
            None => match n(rest) {
                Some(i) => {
                    let print = format!("/a/{i}/print");
                    (
                        200,
                        "text/html",
                        linked_page(&format!("Article {i}"), 1000 + i, &[&print]),
                    )
                }
                None => (404, "text/plain", Vec::new()),
            },
            Some((i, "print")) => match n(i) {
                Some(i) if i < 40 => (
                    200,
                    "text/html",
                    linked_page(&format!("Article {i}"), 1000 + i, &[]),
                ),
                Some(i) => (
                    200,
                    "text/html",
                    linked_page(&format!("Notes {i}"), 5000 + i, &[]),
                ),
                None => (404, "text/plain", Vec::new()),
            },
            Some(_) => (404, "text/plain", Vec::new()),
        }
    });
    let dir = fresh_dir("dust-retire");
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true\n\
             [seeds]\nurls = [\"http://{addr}/\"]\nsitemaps = false\n\
             [output]\ndir = \"{}\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let out = run(
        &["crawl", "--config", dir.join("c.toml").to_str().unwrap()],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap())
            .unwrap();
    let titles: BTreeSet<String> = (json_lines(&dir.join("out/pages-00000.jsonl")).iter())
        .filter_map(|p| p["title"].as_str().map(str::to_string))
        .collect();
    for i in 40..ARTICLES {
        assert!(
            titles.contains(&format!("Notes {i}")),
            "Notes {i} lost: {stats}"
        );
    }
    assert!(stats["predictions_requeued"].as_u64() > Some(0), "{stats}");
    let rules = stats["url_rules"].as_array().unwrap();
    assert!(
        rules
            .iter()
            .any(|r| r["standing"] == "retired" && r["rule"].as_str().unwrap().contains("print")),
        "{rules:?}"
    );
}
