//! `nearcrawl crawl --refresh DIR`: the second crawl of a site. A site is
//! crawled, then some pages get a real text change, some a new date only,
//! some are deleted and new ones are added; the recrawl must tell each
//! apart (changed, unchanged, gone, new), write only the changed and new
//! pages, and, where the server sends validators (nginx), download no
//! unchanged page: a 304, a `revisit` record in the WARC. Killed with
//! `kill -9` midway and run again, it loses and repeats nothing. A server
//! that sends no validators gets the same verdicts, every page downloaded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use nearcrawl_tests::nginx::Nginx;
use nearcrawl_tests::site::{PAGES, Site};
use nearcrawl_tests::warcio::index_differences;
use nearcrawl_tests::{json_lines, nearcrawl_bin, run, serve};

fn config(dir: &Path, port: u16, delay_ms: u64) -> PathBuf {
    let path = dir.join("c.toml");
    std::fs::write(
        &path,
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/index.html\"]\n\
             [politeness]\ndelay_ms = {delay_ms}\n\
             [fetch]\nallow_private_networks = true\n\
             [output]\nformats = [\"jsonl\", \"warc\"]\ncheckpoint_secs = 1\n"
        ),
    )
    .unwrap();
    path
}

fn crawl(conf: &Path, out: &Path, refresh: Option<&Path>) -> serde_json::Value {
    let mut args = vec!["crawl", "--config", conf.to_str().unwrap()];
    args.extend(["--out", out.to_str().unwrap()]);
    if let Some(r) = refresh {
        args.extend(["--refresh", r.to_str().unwrap()]);
    }
    let done = run(&args, b"");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stderr}");
    serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap()
}

/// Each visited path's changes (more than one: visited twice).
fn visits(out: &Path, base: &str) -> BTreeMap<String, Vec<String>> {
    let mut by_path: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in json_lines(&out.join("visits.jsonl")) {
        let path = v["url"]
            .as_str()
            .unwrap()
            .trim_start_matches(base)
            .to_string();
        let change = v["change"].as_str().unwrap().to_string();
        by_path.entry(path).or_default().push(change);
    }
    by_path
}

fn written(out: &Path, base: &str) -> Vec<String> {
    let pages = json_lines(&out.join("pages-00000.jsonl"));
    let urls = pages.iter().map(|p| p["url"].as_str().unwrap());
    urls.map(|u| u.trim_start_matches(base).to_string())
        .collect()
}

/// WARC record types (and profiles) of the output, counted.
fn warc_types(out: &Path) -> BTreeMap<String, usize> {
    let gz = std::fs::read(out.join("crawl-00000.warc.gz")).unwrap();
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut text).unwrap();
    let text = String::from_utf8_lossy(&text);
    let mut types = BTreeMap::new();
    for record in text.split("WARC/1.1\r\n").skip(1) {
        let field = |name: &str| {
            let prefix = format!("{name}: ");
            (record.lines()).find_map(|l| l.strip_prefix(prefix.as_str()).map(str::to_string))
        };
        let mut kind = field("WARC-Type").unwrap();
        if let Some(profile) = field("WARC-Profile") {
            kind = format!("{kind} {}", profile.rsplit('/').next().unwrap());
            assert!(field("WARC-Refers-To-Date").is_some(), "{record}");
        }
        *types.entry(kind).or_default() += 1;
    }
    types
}

/// Checks the recrawl in `second` against `truth`.
fn check_recrawl(second: &Path, base: &str, truth: &BTreeMap<String, &str>) {
    let visited = visits(second, base);
    let twice: Vec<_> = visited.iter().filter(|(_, c)| c.len() > 1).collect();
    assert!(twice.is_empty(), "visited twice: {twice:?}");
    for (path, want) in truth {
        let got = visited.get(path).map(|c| c[0].as_str());
        assert_eq!(got, Some(*want), "{path}");
    }
    let mut got = written(second, base);
    got.sort();
    let want: Vec<String> = (truth.iter())
        .filter(|(_, c)| **c == "changed" || **c == "new")
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(got, want, "written: the changed and new pages, once each");
    // A new version names the version it replaces (by its fetch time).
    for p in json_lines(&second.join("pages-00000.jsonl")) {
        let path = p["url"].as_str().unwrap().trim_start_matches(base);
        let changed = truth[path] == "changed";
        assert_eq!(p["replaces"].is_u64(), changed, "{p}");
    }
    let gone = json_lines(&second.join("errors.jsonl"));
    assert_eq!(gone.len(), 2, "{gone:?}");
}

#[test]
fn a_recrawl_tells_changed_unchanged_gone_and_new_apart_and_asks_nginx_with_validators() {
    let (tmp, mut site) = Site::in_fresh_dir("recrawl");
    let nginx = Nginx::serve(&site.root);
    let base = format!("http://127.0.0.1:{}", nginx.port);
    let conf = config(&tmp, nginx.port, 40);
    let (first, second) = (tmp.join("first"), tmp.join("second"));
    let s1 = crawl(&conf, &first, None);
    assert_eq!(s1["fetched"], PAGES as u64 + 1);
    assert!(visits(&first, &base).values().all(|c| c == &["new"]));
    let truth = site.change();

    // Killed once midway (40 ms between requests: ~1.4 s of work), then
    // run again to the end.
    let mut child = Command::new(nearcrawl_bin())
        .args(["crawl", "--config", conf.to_str().unwrap()])
        .args(["--out", second.to_str().unwrap()])
        .args(["--refresh", first.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the recrawl ended before its kill"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let s2 = crawl(&conf, &second, Some(&first));
    check_recrawl(&second, &base, &truth);
    // Both indexes are what webrecorder's indexer makes of the WARC files,
    // a 304 revisit's digest (the version it confirms) included.
    for out in [&first, &second] {
        let (differ, lines) = index_differences(out);
        assert!(differ.is_empty(), "{differ:#?}");
        assert!(lines > PAGES, "{lines}");
    }

    // Untouched pages answered 304: no body, a revisit record each (the
    // index was written again: a new ETag).
    let untouched = PAGES - 3 - 2 - 2;
    assert_eq!(s2["not_modified"], untouched as u64, "{s2}");
    assert!(s2["bytes_saved"].as_u64().unwrap() > 20 * 1000, "{s2}");
    assert!(
        s2["bytes"].as_u64().unwrap() * 3 < s1["bytes"].as_u64().unwrap(),
        "{s2}"
    );
    let types = warc_types(&second);
    assert_eq!(
        types.get("revisit server-not-modified"),
        Some(&untouched),
        "{types:?}"
    );
    let visits_by_change: BTreeMap<&str, u64> =
        [("changed", 3), ("unchanged", 26), ("gone", 2), ("new", 2)].into();
    for (change, n) in visits_by_change {
        assert_eq!(s2["visits"][change], n, "{change}: {s2}");
    }

    // A recrawl cut short spends its budget where change is: within a
    // depth (the frontier is breadth-first: the index comes first), the
    // pages that changed come back sooner (half the interval), new ones
    // next (the first interval), unchanged ones last (twice it).
    let third = tmp.join("third");
    let mut args = vec!["crawl", "--config", conf.to_str().unwrap()];
    args.extend(["--out", third.to_str().unwrap(), "--max-pages", "5"]);
    args.extend(["--refresh", second.to_str().unwrap()]);
    assert!(run(&args, b"").status.success());
    let visited: BTreeSet<String> = visits(&third, &base).into_keys().collect();
    let first_asked: BTreeSet<String> = [
        "/index.html",
        "/p3.html",
        "/p7.html",
        "/p11.html",
        "/p30.html",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    assert_eq!(visited, first_asked);

    // The next recrawl, of that one, still knows every page: it reads the
    // chain of crawls back (third, second, first), and finds nothing
    // changed.
    let fourth = tmp.join("fourth");
    let s4 = crawl(&conf, &fourth, Some(&third));
    let visited = visits(&fourth, &base);
    assert!(visited.values().all(|c| c == &["unchanged"]), "{visited:?}");
    assert_eq!(visited.len(), PAGES + 1 - 2 + 2);
    assert_eq!(s4["written"], 0);
    drop(nginx);
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn without_validators_every_page_is_downloaded_and_only_changes_are_written() {
    let (tmp, mut site) = Site::in_fresh_dir("recrawl-plain");
    let root = site.root.clone();
    // Files as they are on disk at each request; no ETag, no Last-Modified.
    let (port, log) = serve(
        move |path| match std::fs::read(root.join(path.trim_start_matches('/'))) {
            Ok(body) => (200, "text/html", body),
            Err(_) => (404, "text/html", b"gone".to_vec()),
        },
        Duration::ZERO,
    );
    let base = format!("http://127.0.0.1:{port}");
    let conf = config(&tmp, port, 0);
    let (first, second) = (tmp.join("first"), tmp.join("second"));
    let s1 = crawl(&conf, &first, None);
    let truth = site.change();
    log.lock().unwrap().clear();
    let s2 = crawl(&conf, &second, Some(&first));
    check_recrawl(&second, &base, &truth);
    // Both indexes are what webrecorder's indexer makes of the WARC files,
    // a 304 revisit's digest (the version it confirms) included.
    for out in [&first, &second] {
        let (differ, lines) = index_differences(out);
        assert!(differ.is_empty(), "{differ:#?}");
        assert!(lines > PAGES, "{lines}");
    }
    assert_eq!(s2["not_modified"], 0);
    // Every page there is downloaded: the 28 left, the 2 new and the index.
    assert_eq!(s2["fetched"], PAGES as u64 + 1, "{s2}");
    assert!(s2["bytes"].as_u64().unwrap() * 10 > s1["bytes"].as_u64().unwrap() * 9);
    let asked: BTreeSet<String> = log.lock().unwrap().iter().cloned().collect();
    assert!(
        truth.keys().all(|p| asked.contains(p)),
        "every page asked again"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}
