//! `nearcrawl crawl` on a site of pages built by script
//! (`nearcrawl_tests::app_site`), served by nginx, which logs every
//! request: app shells are rendered in Chromium (installed by `tests/run`)
//! and yield the text a browser shows, pages that carry their text are
//! not rendered, the browser's requests keep the host's delay and
//! robots.txt and a page's request budget, hostile scripts do not stop the crawl; without a browser
//! the crawl goes on and says so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use nearcrawl_tests::app_site::{self, Planted, word_f1};
use nearcrawl_tests::nginx::{Nginx, open_to_all};
use nearcrawl_tests::warcio::index_differences;
use nearcrawl_tests::{crawl_ok, fresh_dir, json_lines};

const DELAY_MS: u64 = 40;

fn site(tag: &str) -> (std::path::PathBuf, Vec<Planted>, Nginx) {
    let dir = fresh_dir(tag);
    let root = dir.join("site");
    let planted = app_site::write(&root, 3);
    for d in [&dir, &root] {
        open_to_all(d);
    }
    let nginx = Nginx::serve_app(&root);
    (dir, planted, nginx)
}

fn config(dir: &Path, port: u16, render: &str) {
    let conf = format!(
        "[seeds]\nurls = [\"http://127.0.0.1:{port}/index.html\"]\n\
         [politeness]\ndelay_ms = {DELAY_MS}\nper_host_concurrency = 2\n\
         [fetch]\nallow_private_networks = true\n\
         [output]\ndir = \"{}\"\nformats = [\"jsonl\", \"warc\"]\n\
         [render]\npage_timeout_secs = 5\n{render}",
        dir.join("out").display()
    );
    std::fs::write(dir.join("c.toml"), conf).unwrap();
}

/// Each written page's text, by path.
fn texts(dir: &Path, port: u16) -> BTreeMap<String, String> {
    let base = format!("http://127.0.0.1:{port}");
    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    (pages.iter())
        .map(|p| {
            let url = p["url"]
                .as_str()
                .unwrap()
                .trim_start_matches(&base)
                .to_string();
            (url, p["text"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

#[test]
fn app_shells_are_rendered_politely_and_pages_with_their_text_are_not() {
    let (dir, planted, nginx) = site("render");
    config(&dir, nginx.port, "requests_per_page = 10\n");
    let stats = crawl_ok(&dir);
    let render = &stats["render"];
    let texts = texts(&dir, nginx.port);
    // Every page built by script gives the text a browser shows, and the
    // links its script wrote were followed to the end of each chain.
    for p in planted.iter().filter(|p| p.kind != "hostile") {
        let text = texts
            .get(&p.path)
            .unwrap_or_else(|| panic!("{} not written: {texts:?}", p.path));
        let f1 = word_f1(text, &format!("{} {}", p.title, p.text));
        assert!(f1 >= 0.9, "{} ({}): F1 {f1:.2}: {text:?}", p.path, p.kind);
    }
    // Rendered: the 12 shells and 4 hostile pages; the one that never
    // ends is a timeout. The static pages (half with a script) were not.
    assert_eq!(render["app_shells"], 17, "{render}");
    assert_eq!(render["rendered"], 16, "{render}");
    assert_eq!(render["not_rendered"]["render_timeout"], 1, "{render}");
    assert!(
        render["unsettled"].as_u64().unwrap() >= 1,
        "the poll: {render}"
    );
    assert_eq!(texts["/hostile/dialogs.html"].trim(), "after the dialogs");
    // The flood's 30 requests: 10 sent, the rest refused, and the page
    // read once its script had been told no.
    assert_eq!(texts["/hostile/flood.html"].trim(), "after the flood");
    assert_eq!(render["refused"]["budget"], 20, "{render}");
    // What the server saw: no style, image, popup or forbidden URL; every
    // request at least the delay after the one before, the browser's
    // included.
    let requests = nginx.requests();
    let asked: BTreeSet<&str> = requests.iter().map(|(_, u)| u.as_str()).collect();
    for never in [
        "/assets/app.css",
        "/assets/logo.png",
        "/private/secret.json",
        "/hostile/popup-target.html",
    ] {
        assert!(!asked.contains(never), "{never} was requested");
    }
    assert!(asked.contains("/api/json/2.json") && asked.contains("/api/routes/2.json"));
    let gaps = requests.windows(2).map(|w| w[1].0 - w[0].0);
    let least = gaps.fold(f64::MAX, f64::min);
    // nginx logs an end time and a duration, each to the millisecond: a
    // start is known to within 1 ms, a gap to within 2.
    assert!(
        least >= (DELAY_MS as f64 - 2.0) / 1000.0,
        "two requests {least:.4} s apart"
    );
    assert!(
        render["refused"]["robots"].as_u64().unwrap() >= 3,
        "{render}"
    );
    // Each kind's script was asked once, then kept: the data of each page,
    // and the flood's first 10.
    assert_eq!(render["requests"], 4 + 6 + 10, "{render}");
    assert_eq!(render["scripts_kept"], 8, "{render}");
    assert_eq!(
        requests
            .iter()
            .filter(|(_, u)| u == "/assets/json.js")
            .count(),
        1
    );
    // The archive keeps each response as served, and each rendered DOM
    // as a conversion record of it; the index is what webrecorder's
    // indexer makes of the WARC.
    let out = dir.join("out");
    let warc = std::fs::read(out.join("crawl-00000.warc.gz")).unwrap();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&warc[..]), &mut text)
        .unwrap();
    let text = String::from_utf8_lossy(&text);
    assert_eq!(text.matches("WARC-Type: conversion\r\n").count(), 16);
    let fetched = stats["fetched"].as_u64().unwrap() as usize;
    // (The router's routes serve one shell: revisits of the first.)
    let captured =
        ["response", "revisit"].map(|t| text.matches(&format!("WARC-Type: {t}\r\n")).count());
    assert_eq!(captured.iter().sum::<usize>(), fetched);
    let (differences, compared) = index_differences(&out);
    assert!(differences.is_empty() && compared > 0, "{differences:?}");
}

#[test]
fn without_a_browser_app_shells_are_read_as_served_and_counted() {
    let (dir, planted, nginx) = site("render-none");
    config(&dir, nginx.port, "browser = \"/nonexistent/chromium\"\n");
    let out = nearcrawl_tests::run(
        &["crawl", "--config", dir.join("c.toml").to_str().unwrap()],
        b"",
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Said once, and counted in the summary, the status and the report.
    assert_eq!(stderr.matches("no browser:").count(), 1, "{stderr}");
    assert!(
        stderr.contains("read as served: render_unavailable 9"),
        "{stderr}"
    );
    let out_dir = dir.join("out");
    let status = nearcrawl_tests::run(&["status", out_dir.to_str().unwrap()], b"");
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(status.contains("9 app shells, 0 rendered"), "{status}");
    let report = nearcrawl_tests::run(&["report", out_dir.to_str().unwrap()], b"");
    assert!(report.status.success());
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Pages built by script</h2>"));
    assert!(html.contains("read as served: render_unavailable</td><td>9"));
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap())
            .unwrap();
    let render = &stats["render"];
    // The first page of each chain and the hostile pages: nothing rendered,
    // so no chain goes further.
    assert_eq!(render["app_shells"], 9, "{render}");
    assert_eq!(render["not_rendered"]["render_unavailable"], 9, "{render}");
    assert_eq!(render["rendered"], 0);
    let asked: BTreeSet<String> = nginx.requests().into_iter().map(|(_, u)| u).collect();
    assert!(!asked.contains("/json/1.html") && !asked.contains("/api/json/0.json"));
    // The pages that carry their text are crawled as ever.
    let texts = texts(&dir, nginx.port);
    for p in planted.iter().filter(|p| p.kind == "static") {
        assert!(word_f1(&texts[&p.path], &format!("{} {}", p.title, p.text)) >= 0.9);
    }
}
