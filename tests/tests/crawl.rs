//! `nearcrawl crawl` end to end, against a site generated here and served
//! on 127.0.0.1: shared boilerplate, planted exact and near duplicates, a
//! page reachable only through a near duplicate, robots.txt, a calendar
//! trap and out-of-scope links.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nearcrawl_tests::{RequestLog, article_bodies, crawl_ok, json_lines, run, serve};
use serde_json::Value;

const HEADER: &str = "<header><nav><a href='/'>Home</a> <a href='/about'>About</a> <a href='http://elsewhere.invalid/'>Partner</a></nav></header>";
const FOOTER: &str = "<footer>Copyright Example Site. All rights reserved. <a href='/private/secret'>Staff</a></footer>";

fn articles() -> Vec<String> {
    let mut out = article_bodies(300, true);
    out.truncate(6);
    out
}

fn page(body: &str, links: &str) -> String {
    let paras: String = body
        .split('\n')
        .filter(|p| !p.trim().is_empty())
        .map(|p| format!("<p>{p}</p>"))
        .collect();
    format!(
        "<html><head><title>t</title></head><body>{HEADER}<article>{paras}</article>{links}{FOOTER}</body></html>"
    )
}

/// Every 40th word changed: a 2.5% edit.
fn edited(text: &str) -> String {
    text.split(' ')
        .enumerate()
        .map(|(i, w)| if i % 40 == 7 { "changed" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn route(path: &str, arts: &[String], port: u16) -> (u16, &'static str, Vec<u8>) {
    let base = format!("http://127.0.0.1:{port}");
    match path {
        "/robots.txt" => {
            return (
                200,
                "text/plain",
                format!("User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemaps/index.xml\n")
                    .into_bytes(),
            );
        }
        // A sitemap index: a gzipped sitemap and a missing one.
        "/sitemaps/index.xml" => {
            return (
                200,
                "application/xml",
                format!(
                    "<?xml version='1.0'?><sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>\
                     <sitemap><loc>{base}/sitemaps/pages.xml.gz</loc></sitemap>\
                     <sitemap><loc>{base}/sitemaps/missing.xml</loc></sitemap></sitemapindex>"
                )
                .into_bytes(),
            );
        }
        "/sitemaps/pages.xml.gz" => {
            let xml = format!(
                "<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>\
                 <url><loc>{base}/from-sitemap</loc></url><url><loc>{base}/a/0</loc></url>\
                 <url><loc>http://elsewhere.invalid/listed</loc></url></urlset>"
            );
            return (200, "application/gzip", gzip(xml.as_bytes()));
        }
        _ => {}
    }
    let (status, body) = page_route(path, arts);
    (status, "text/html; charset=utf-8", body.into_bytes())
}

fn page_route(path: &str, arts: &[String]) -> (u16, String) {
    let html = |s: String| (200, s);
    match path {
        "/from-sitemap" => html(page(
            "Listed in the sitemap only: no page links here, yet the crawler finds it.",
            "",
        )),
        "/" => {
            let mut links = String::new();
            for i in 0..arts.len() {
                links.push_str(&format!("<a href='/a/{i}'>Article {i}</a> "));
            }
            links.push_str("<a href='/a/0?utm_source=home&utm_medium=link'>Again</a> ");
            links.push_str("<a href='/alt/1'>Alternate</a> <a href='/near/2'>Near</a> ");
            links.push_str(
                "<a href='/calendar/1'>Calendar</a> <a href='/private/secret'>Private</a>",
            );
            html(format!(
                "<html><body>{HEADER}<h1>Home</h1><p>Welcome to the example site, with articles.</p><ul>{links}</ul>{FOOTER}</body></html>"
            ))
        }
        p if p.starts_with("/a/") => {
            let i: usize = p[3..].split('?').next().unwrap().parse().unwrap_or(99);
            match arts.get(i) {
                Some(a) => html(page(a, "")),
                None => (404, "no".into()),
            }
        }
        "/alt/1" => html(page(&arts[1], "")),
        "/near/2" => html(page(
            &edited(&arts[2]),
            "<p><a href='/only-via-near'>Hidden</a></p>",
        )),
        "/only-via-near" => html(page("This page must never be crawled.", "")),
        p if p.starts_with("/calendar/") => {
            let n: u32 = p[10..].parse().unwrap_or(0);
            html(format!(
                "<html><body>{HEADER}<h1>Events</h1><p>Events in month {n}: none planned yet, check back later.</p>\
                 <a href='/calendar/{}'>Next month</a>{FOOTER}</body></html>",
                n + 1
            ))
        }
        "/about" => html(page(
            "About this example site: it exists for testing the crawler and nothing else.",
            "",
        )),
        _ => (404, "not found".into()),
    }
}

fn serve_site(arts: Vec<String>) -> (u16, RequestLog) {
    serve_site_after(arts, Duration::ZERO)
}

/// The site, each response after `delay`.
fn serve_site_after(arts: Vec<String>, delay: Duration) -> (u16, RequestLog) {
    let port = Arc::new(OnceLock::new());
    let known = port.clone();
    let (p, log) = serve(move |path| route(path, &arts, *known.get().unwrap()), delay);
    port.set(p).unwrap();
    (p, log)
}

#[test]
fn crawls_the_site_and_keeps_duplicates_out() {
    let arts = articles();
    let (port, log) = serve_site(arts.clone());
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-crawl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = format!("http://127.0.0.1:{port}");
    std::fs::write(dir.join("seeds.txt"), format!("{base}/\nnot a seed\n")).unwrap();
    std::fs::write(
        dir.join("crawl.toml"),
        format!(
            "[seeds]\nfile = \"seeds.txt\"\n[scope]\nmax_depth = 5\n[politeness]\ndelay_ms = 0\n\
             global_concurrency = 1\n[fetch]\nallow_private_networks = true\n[output]\ndir = \"{}\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let out = run(
        &[
            "crawl",
            "--config",
            dir.join("crawl.toml").to_str().unwrap(),
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("seed line 2"), "bad seed reported: {err}");

    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    let written: HashSet<String> = pages
        .iter()
        .map(|p| p["url"].as_str().unwrap().replace(&base, ""))
        .collect();
    for i in 0..arts.len() {
        assert!(
            written.contains(&format!("/a/{i}")),
            "article {i} missing: {written:?}"
        );
    }
    assert!(written.contains("/"));
    assert!(written.contains("/from-sitemap"), "sitemap not read");
    for p in ["/alt/1", "/near/2", "/only-via-near", "/private/secret"] {
        assert!(!written.contains(p), "{p} was written");
    }
    // The calendar trap: month pages differ in one number. Digits are
    // content, but one word changed in a short text with the same title is
    // a near copy (checked word by word), so the second month's "next
    // month" link is never followed.
    let months = written
        .iter()
        .filter(|u| u.starts_with("/calendar/"))
        .count();
    assert_eq!(months, 1, "{written:?}");
    let text = pages
        .iter()
        .find(|p| p["url"].as_str().unwrap().ends_with("/a/0"))
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        !text.contains("Copyright Example Site"),
        "boilerplate kept: {text}"
    );

    let dups = json_lines(&dir.join("out/duplicates.jsonl"));
    let find = |u: &str| {
        dups.iter()
            .find(|d| d["url"].as_str().unwrap().ends_with(u))
            .cloned()
    };
    let exact = find("/alt/1").expect("exact duplicate recorded");
    assert_eq!(
        (
            exact["kind"].as_str(),
            exact["duplicate_of"].as_str().map(|s| s.replace(&base, ""))
        ),
        (Some("exact"), Some("/a/1".into()))
    );
    let near = find("/near/2").expect("near duplicate recorded");
    assert_eq!(near["kind"], "near");
    assert!(near["duplicate_of"].as_str().unwrap().ends_with("/a/2"));

    let month = find("/calendar/2").expect("trap page recorded");
    assert_eq!(
        (month["kind"].as_str(), month["check"].as_str()),
        (Some("near"), Some("short-text"))
    );
    assert_eq!(exact["check"], "exact-text");
    assert_eq!(near["check"], "sketch");
    let requested = log.lock().unwrap().clone();
    assert!(
        !requested.iter().any(|p| p == "/calendar/3"),
        "the trap was followed"
    );
    assert!(
        !requested.iter().any(|p| p == "/only-via-near"),
        "a near duplicate's link was followed"
    );
    assert!(
        !requested.iter().any(|p| p.starts_with("/private/")),
        "robots.txt ignored"
    );
    assert_eq!(
        requested.iter().filter(|p| p.starts_with("/a/0")).count(),
        1,
        "utm variant refetched"
    );

    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap())
            .unwrap();
    eprintln!("{stats}");
    assert_eq!(
        requested.iter().filter(|p| *p == "/robots.txt").count(),
        1,
        "robots.txt fetched once"
    );
    assert_eq!(stats["exact_duplicates"], 1);
    assert_eq!(stats["near_duplicates"], 2);
    assert_eq!(stats["robots_denied"], 1);
    assert!(stats["out_of_scope"]["host"].as_u64().unwrap() >= 1);
    assert_eq!(stats["written"].as_u64().unwrap() as usize, pages.len());
    // How serial the run was: the commit lock's time, held, blocked on and
    // queued for.
    let lock = &stats["this_run"]["core_lock"];
    assert!(lock["held_secs"].as_f64().unwrap() > 0.0, "{stats}");
    assert!(lock["waited_secs"].as_f64().unwrap() >= 0.0, "{stats}");
    assert!(lock["queued_secs"].as_f64().unwrap() >= 0.0, "{stats}");
    assert!(
        stats["this_run"]["gate_memory_bytes"].as_u64().unwrap() > 0,
        "{stats}"
    );
    let judged = &stats["this_run"]["worker_secs"]["judge"];
    assert!(judged.as_f64().unwrap() > 0.0, "{stats}");
    // Where the CPU went, by stage: each stage a page passes through took
    // some, and the stages add up to no more than the whole.
    let cpu = &stats["this_run"]["cpu_secs"];
    let secs = |stage: &str| cpu[stage].as_f64().unwrap_or(-1.0);
    for stage in ["parse", "extract", "links", "fingerprint", "gate", "write"] {
        assert!(secs(stage) > 0.0, "no CPU time for {stage}: {cpu}");
    }
    let stages = [
        "fetch",
        "parse",
        "extract",
        "links",
        "language",
        "fingerprint",
        "gate",
        "write",
    ];
    let summed: f64 = stages.iter().map(|s| secs(s)).sum();
    assert!(secs("language") >= 0.0 && secs("fetch") >= 0.0, "{cpu}");
    assert!(
        (summed - secs("total")).abs() < 0.01 + secs("total") * 0.01,
        "{cpu}"
    );
    // /from-sitemap, and /a/0 if the sitemap was read before the home page.
    let from_sitemap = stats["sitemap_urls"].as_u64().unwrap();
    assert!((1..=2).contains(&from_sitemap), "{stats}");
    let errors = json_lines(&dir.join("out/errors.jsonl"));
    assert!(
        errors.iter().any(|e| e["url"]
            .as_str()
            .unwrap()
            .ends_with("/sitemaps/missing.xml")),
        "{errors:?}"
    );

    // A second run (new seed, same crawl) keeps the robots.txt it has.
    std::fs::write(dir.join("more.txt"), format!("{base}/about?again=1\n")).unwrap();
    let again = run(
        &[
            "crawl",
            "--config",
            dir.join("crawl.toml").to_str().unwrap(),
            "--seeds",
            dir.join("more.txt").to_str().unwrap(),
        ],
        b"",
    );
    assert!(again.status.success());
    let requested = log.lock().unwrap().clone();
    assert!(requested.iter().any(|p| p == "/about?again=1"));
    assert_eq!(
        requested.iter().filter(|p| *p == "/robots.txt").count(),
        1,
        "robots.txt fetched again on resume"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn per_host_limit_persists_and_output_dirs_are_checked() {
    let (port, _log) = serve_site(articles());
    let dir =
        std::env::temp_dir().join(format!("nearcrawl-e2e-crawl-limit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = |extra: &str| {
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/\"]\n[scope]\nmax_pages_per_host = 4\n[politeness]\n\
             delay_ms = 0\nglobal_concurrency = 1\n[fetch]\nallow_private_networks = true\n[output]\ndir = \"{}\"\n{extra}",
            dir.join("out").display()
        )
    };
    std::fs::write(dir.join("c.toml"), config("")).unwrap();
    let stats = crawl_ok(&dir);
    assert_eq!(stats["fetched"], 4, "{stats}");
    assert!(stats["out_of_scope"]["host_page_limit"].as_u64().unwrap() > 0);

    // The limit holds across runs: a second run fetches nothing more.
    let out = run(
        &["crawl", "--config", dir.join("c.toml").to_str().unwrap()],
        b"",
    );
    assert!(out.status.success());
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap())
            .unwrap();
    assert_eq!(stats["fetched"], 4, "{stats}");
    assert_eq!(stats["this_run"]["fetched"], 0, "{stats}");

    // Other outputs in the same directory: refused, nothing touched.
    std::fs::write(
        dir.join("w.toml"),
        config("formats = [\"jsonl\", \"warc\"]\n"),
    )
    .unwrap();
    let out = run(
        &["crawl", "--config", dir.join("w.toml").to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("outputs cannot change midway"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Results without crawl state (another crawl's, state deleted): refused.
    std::fs::remove_dir_all(dir.join("out/state")).unwrap();
    let out = run(
        &["crawl", "--config", dir.join("c.toml").to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds results of another crawl"));
    assert_eq!(json_lines(&dir.join("out/pages-00000.jsonl")).len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `nearcrawl crawl URL -o DIR`: no config needed; a config adds to it; a
/// crawl that fetches nothing says why; `nearcrawl status` reads the result.
#[test]
fn url_first_crawls_and_an_empty_crawl_says_why() {
    let (port, log) = serve_site(articles());
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-url-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seed = format!("http://127.0.0.1:{port}/");
    let out_dir = |name: &str| dir.join(name).to_str().unwrap().to_string();

    // The defaults refuse loopback addresses: nothing fetched, and why.
    let out = run(&["crawl", &seed, "-o", &out_dir("plain")], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("nothing was fetched") && err.contains("allow_private_networks"),
        "{err}"
    );
    assert!(
        log.lock().unwrap().is_empty(),
        "a refused address was requested"
    );

    // A config that only allows them: the seed's host is crawled with the
    // other defaults (robots.txt read first).
    std::fs::write(
        dir.join("local.toml"),
        "[fetch]\nallow_private_networks = true\n[politeness]\ndelay_ms = 0\n",
    )
    .unwrap();
    let config = dir.join("local.toml");
    let args = [
        "crawl",
        &seed,
        "--config",
        config.to_str().unwrap(),
        "-o",
        &out_dir("local"),
        "--max-pages",
        "5",
    ];
    let out = run(&args, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("nothing was fetched"), "{err}");
    let pages = json_lines(&dir.join("local/pages-00000.jsonl"));
    assert!(!pages.is_empty() && pages.len() <= 5, "{}", pages.len());
    assert!(
        pages
            .iter()
            .all(|p| p["url"].as_str().unwrap().starts_with(&seed))
    );
    assert_eq!(
        log.lock().unwrap().first().map(String::as_str),
        Some("/robots.txt")
    );

    // `status`: what the directory holds, from the state itself.
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("local/stats.json")).unwrap())
            .unwrap();
    let out = run(&["status", &out_dir("local"), "--json"], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["running"], false);
    assert_eq!(status["fetched"], stats["fetched"]);
    assert_eq!(status["written"], stats["written"]);
    assert!(status["queued"]["urls"].as_u64().unwrap() > 0, "{status}");
    assert_eq!(status["queued"]["hosts"], 1);
    assert!(status["last_checkpoint_unix"].as_u64().unwrap() > 1_700_000_000);
    assert_eq!(status["top_hosts"][0]["fetched"], stats["fetched"]);
    let out = run(&["status", &out_dir("local")], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not running") && text.contains("127.0.0.1"),
        "{text}"
    );
    // Sizes and depths are counted for every fetched page.
    let sum = |v: &Value| {
        v.as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(
        sum(&status["body_sizes_log2"]),
        stats["fetched"].as_u64().unwrap()
    );
    assert_eq!(sum(&status["depths"]), stats["fetched"].as_u64().unwrap());
    assert_eq!(status["depths"]["0"], 1, "the seed");

    // `report`: one self-contained page, with the figures over time that
    // the run sampled (at least at its start and its end).
    let series = json_lines(&dir.join("local/series.jsonl"));
    assert!(series.len() >= 2, "{series:?}");
    assert_eq!(series.last().unwrap()["fetched"], stats["fetched"]);
    let report = dir.join("report.html");
    let out = run(
        &["report", &out_dir("local"), "-o", report.to_str().unwrap()],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert_eq!(
        html.matches("<svg").count(),
        4,
        "two charts over time, two bar charts"
    );
    // A host is its politeness key: the address and the test server's port.
    assert!(html.contains("<td>127.0.0.1:"), "the hosts table");
    assert!(!html.contains("No time series"));

    let out = run(&["status", dir.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no crawl"));

    // Nothing to crawl: a usage error naming the ways to give seeds.
    let out = run(&["crawl"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to crawl"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--metrics ADDR`: Prometheus text format at /metrics while the crawl runs,
/// scraped here as Prometheus would.
#[test]
fn metrics_are_served_while_crawling() {
    use std::io::{Read, Write};
    let (port, _log) = serve_site_after(articles(), Duration::from_millis(150));
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-metrics-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("c.toml"),
        "[fetch]\nallow_private_networks = true\n[politeness]\ndelay_ms = 0\n",
    )
    .unwrap();
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    let child = std::process::Command::new(nearcrawl_tests::nearcrawl_bin())
        .args(["crawl", &format!("http://127.0.0.1:{port}/"), "--config"])
        .arg(dir.join("c.toml"))
        .arg("-o")
        .arg(dir.join("out"))
        .args(["--max-pages", "10", "--metrics", &metrics])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let get = |path: &str| -> Option<String> {
        let mut s = std::net::TcpStream::connect(&metrics).ok()?;
        write!(s, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        Some(text)
    };
    // Scrape until a page has been fetched: the figures are live.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let scraped = loop {
        let text = get("/metrics").unwrap_or_default();
        let fetched = text
            .lines()
            .find_map(|l| l.strip_prefix("nearcrawl_fetched_total "))
            .and_then(|v| v.trim().parse::<u64>().ok());
        if fetched.is_some_and(|n| n >= 1) {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no live figures: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(scraped.starts_with("HTTP/1.1 200"), "{scraped}");
    for series in [
        "nearcrawl_written_total ",
        "nearcrawl_duplicates_total{kind=\"near\"} ",
        "nearcrawl_duplicates_total{kind=\"exact\"} ",
        "# TYPE nearcrawl_errors counter",
        "nearcrawl_queued ",
        "nearcrawl_in_flight ",
        "nearcrawl_hosts_active 1",
        "nearcrawl_fetch_seconds_bucket{le=\"+Inf\"} ",
        "nearcrawl_fetch_seconds_count ",
        "# TYPE nearcrawl_cpu_seconds counter",
        "nearcrawl_cpu_seconds_total{stage=\"fetch\"} ",
        "nearcrawl_cpu_seconds_total{stage=\"parse\"} ",
        "nearcrawl_cpu_seconds_total{stage=\"gate\"} ",
        "nearcrawl_cpu_seconds_total{stage=\"write\"} ",
    ] {
        assert!(scraped.contains(series), "{series} missing:\n{scraped}");
    }
    assert!(get("/").unwrap().starts_with("HTTP/1.1 404"));
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// WARC 1.1 beside zstd-compressed page shards.
#[test]
fn warc_and_zstd_outputs() {
    let (port, _log) = serve_site(articles());
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-crawl-warc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/\"]\n[scope]\nmax_depth = 5\n[politeness]\n\
             delay_ms = 0\n[fetch]\nallow_private_networks = true\n[output]\ndir = \"{}\"\n\
             formats = [\"jsonl\", \"warc\"]\ncompression = \"zstd\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let stats = crawl_ok(&dir);
    assert!(!dir.join("out/pages-00000.jsonl").exists());
    let zst = std::fs::read(dir.join("out/pages-00000.jsonl.zst")).unwrap();
    let text = String::from_utf8(zstd::decode_all(&zst[..]).unwrap()).unwrap();
    let pages: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(pages.len() as u64, stats["written"].as_u64().unwrap());
    assert!(pages.len() >= 7, "{stats}");

    let gz = std::fs::read(dir.join("out/crawl-00000.warc.gz")).unwrap();
    let mut warc = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut warc).unwrap();
    let warc = String::from_utf8_lossy(&warc);
    let count = |s: &str| warc.matches(s).count() as u64;
    assert_eq!(count("WARC-Type: warcinfo\r\n"), 1);
    // Every fetched response (duplicates included), each with its request;
    // a payload archived before is a revisit of it.
    let revisits = count("WARC-Type: revisit\r\n");
    assert_eq!(
        count("WARC-Type: response\r\n") + revisits,
        stats["fetched"].as_u64().unwrap()
    );
    assert_eq!(count("/revisit/identical-payload-digest\r\n"), revisits);
    assert_eq!(count("WARC-Refers-To-Target-URI: "), revisits);
    assert_eq!(
        count("WARC-Type: request\r\n"),
        stats["fetched"].as_u64().unwrap()
    );
    assert!(warc.contains(&format!("WARC-Target-URI: http://127.0.0.1:{port}/a/0\r\n")));
    assert!(warc.contains("\r\n\r\nHTTP/1.1 200 OK\r\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
