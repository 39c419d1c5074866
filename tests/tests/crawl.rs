//! `nearcrawl crawl` end to end, against a site generated here and served
//! on 127.0.0.1: shared boilerplate, planted exact and near duplicates, a
//! page reachable only through a near duplicate, robots.txt, a calendar
//! trap and out-of-scope links.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use nearcrawl_tests::{article_bodies, run};
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

fn route(path: &str, arts: &[String]) -> (u16, String) {
    let html = |s: String| (200, s);
    match path {
        "/robots.txt" => (200, "User-agent: *\nDisallow: /private/\n".into()),
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

fn serve(arts: Vec<String>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let log2 = log.clone();
    let arts = Arc::new(arts);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (arts, log) = (arts.clone(), log2.clone());
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let mut len = 0usize;
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 {
                            return;
                        }
                        if h == "\r\n" {
                            break;
                        }
                        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; len];
                    let _ = reader.read_exact(&mut body);
                    log.lock().unwrap().push(path.clone());
                    let (status, body) = route(&path, &arts);
                    let ctype = if path == "/robots.txt" {
                        "text/plain"
                    } else {
                        "text/html; charset=utf-8"
                    };
                    let resp = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(resp.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, log)
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn crawls_the_site_and_keeps_duplicates_out() {
    let arts = articles();
    let (port, log) = serve(arts.clone());
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

    let pages = lines(&dir.join("out/pages-00000.jsonl"));
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
    for p in ["/alt/1", "/near/2", "/only-via-near", "/private/secret"] {
        assert!(!written.contains(p), "{p} was written");
    }
    // The calendar trap: month pages differ only in their numbers, which
    // normalize away, so the second month is an exact duplicate and its
    // "next month" link is never followed.
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

    let dups = lines(&dir.join("out/duplicates.jsonl"));
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

    assert_eq!(
        find("/calendar/2").expect("trap page recorded")["kind"],
        "exact"
    );
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
    assert_eq!(stats["exact_duplicates"], 2);
    assert_eq!(stats["near_duplicates"], 1);
    assert_eq!(stats["robots_denied"], 1);
    assert!(stats["out_of_scope"]["host"].as_u64().unwrap() >= 1);
    assert_eq!(stats["written"].as_u64().unwrap() as usize, pages.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn per_host_page_limit_and_unsupported_outputs() {
    let (port, _log) = serve(articles());
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
    assert_eq!(stats["fetched"], 4, "{stats}");
    assert!(stats["out_of_scope"]["host_page_limit"].as_u64().unwrap() > 0);

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
    assert!(String::from_utf8_lossy(&out.stderr).contains("not supported yet"));
    let _ = std::fs::remove_dir_all(&dir);
}
