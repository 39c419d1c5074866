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
use std::time::{Duration, SystemTime};

use nearcrawl_tests::nginx::Nginx;
use nearcrawl_tests::{json_lines, made_up_words, nearcrawl_bin, run, serve};

const PAGES: usize = 30;

/// The site: page i has a title, a "Last updated" line and text of its own,
/// and links to its neighbours; the index links to every page.
struct Site {
    root: PathBuf,
    texts: BTreeMap<usize, String>,
    dates: BTreeMap<usize, String>,
}

impl Site {
    fn new(root: &Path) -> Site {
        std::fs::create_dir_all(root).unwrap();
        let mut site = Site {
            root: root.to_path_buf(),
            texts: (0..PAGES)
                .map(|i| (i, made_up_words(i as u64, 200, 5_000)))
                .collect(),
            dates: (0..PAGES)
                .map(|i| (i, format!("{} March 2026", i % 28 + 1)))
                .collect(),
        };
        for i in 0..PAGES {
            site.write(i);
        }
        site.write_index();
        site
    }

    fn write(&mut self, i: usize) {
        let links: String = [i.wrapping_sub(1), i + 1]
            .iter()
            .filter(|j| **j < PAGES)
            .map(|j| format!("<a href=\"p{j}.html\">page {j}</a> "))
            .collect();
        let html = format!(
            "<!DOCTYPE html><html><head><title>Topic {i}</title></head><body>\
             <nav><a href=\"index.html\">home</a> {links}</nav><main><h1>Topic {i}</h1>\
             <p>Last updated {}.</p><p>{}</p></main></body></html>",
            self.dates[&i], self.texts[&i]
        );
        let path = self.root.join(format!("p{i}.html"));
        std::fs::write(&path, html).unwrap();
        // A new Last-Modified (and so ETag) even within the same second.
        let later = SystemTime::now() + Duration::from_secs(60);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(later).unwrap();
    }

    fn write_index(&self) {
        let items: String = (self.texts.keys())
            .map(|i| format!("<li><a href=\"p{i}.html\">Topic {i}</a></li>"))
            .collect();
        let html = format!(
            "<!DOCTYPE html><html><head><title>Index</title></head><body><main><h1>Index</h1>\
             <p>Every topic of the site, listed.</p><ul>{items}</ul></main></body></html>"
        );
        std::fs::write(self.root.join("index.html"), html).unwrap();
    }

    /// Changes the site; the truth by path.
    fn change(&mut self) -> BTreeMap<String, &'static str> {
        let mut truth: BTreeMap<String, &'static str> = (0..PAGES)
            .map(|i| (format!("/p{i}.html"), "unchanged"))
            .collect();
        for i in [3, 7, 11] {
            self.texts
                .insert(i, made_up_words(1000 + i as u64, 200, 5_000));
            self.write(i);
            truth.insert(format!("/p{i}.html"), "changed");
        }
        for i in [5, 9] {
            self.dates.insert(i, format!("{} April 2027", i + 2));
            self.write(i);
        }
        for i in [13, 17] {
            std::fs::remove_file(self.root.join(format!("p{i}.html"))).unwrap();
            self.texts.remove(&i);
            truth.insert(format!("/p{i}.html"), "gone");
        }
        for i in [PAGES, PAGES + 1] {
            self.texts
                .insert(i, made_up_words(2000 + i as u64, 200, 5_000));
            self.dates.insert(i, "1 May 2027".into());
            self.write(i);
            truth.insert(format!("/p{i}.html"), "new");
        }
        // The index's list of links is a menu, not its text: the index is
        // unchanged, and the new pages are found through its links.
        self.write_index();
        truth.insert("/index.html".into(), "unchanged");
        truth
    }
}

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
    let tmp = std::env::temp_dir().join(format!("nearcrawl-e2e-recrawl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut site = Site::new(&tmp.join("site"));
    // nginx's workers may run as another user.
    let open = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    open(&tmp);
    open(&tmp.join("site"));
    let nginx = Nginx::serve(&tmp.join("site"));
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
    let tmp = std::env::temp_dir().join(format!(
        "nearcrawl-e2e-recrawl-plain-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut site = Site::new(&tmp.join("site"));
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
