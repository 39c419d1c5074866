//! Resume after `kill -9`: a crawl killed at several points and run again
//! each time ends with every page exactly once (in the corpus or recorded
//! as a duplicate), no torn or repeated line, a WARC with each fetch once,
//! and an index that still knows every written page.

use std::collections::{HashMap, HashSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use nearcrawl_tests::{article_bodies, json_lines, nearcrawl_bin, run, serve};
use serde_json::Value;

/// Pages /p/0 .. /p/N-1 in a binary tree (p/i links p/2i+1 and p/2i+2);
/// near copies /near/i (i % 10 == 3) and exact copies /copy/i (i % 10 == 7)
/// linked beside their originals, so which one of a pair is fetched first
/// depends on the run. Copies link where their originals do, so what is
/// reachable does not.
const N: usize = 1200;

struct Site {
    texts: Vec<String>,
}

impl Site {
    fn new() -> Site {
        // Distinct pages from real words: 250 words drawn by an LCG from the
        // articles' vocabulary.
        let mut vocab: Vec<String> = article_bodies(300, true)
            .join(" ")
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| w.len() > 2 && !w.chars().any(|c| c.is_ascii_digit()))
            .collect();
        vocab.sort();
        vocab.dedup();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let texts = (0..N)
            .map(|_| {
                (0..250)
                    .map(|_| {
                        x = x
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        vocab[(x >> 33) as usize % vocab.len()].as_str()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        Site { texts }
    }

    fn html(&self, text: &str, links: &[String]) -> Vec<u8> {
        let links: String = links
            .iter()
            .map(|l| format!("<li><a href='{l}'>{l}</a></li>"))
            .collect();
        format!(
            "<html><head><title>page</title></head><body><nav><a href='/p/0'>Home</a></nav>\
             <article><p>{text}</p></article><ul>{links}</ul><footer>Example footer</footer></body></html>"
        )
        .into_bytes()
    }

    fn children(i: usize) -> Vec<String> {
        let mut out = Vec::new();
        for c in [2 * i + 1, 2 * i + 2] {
            if c < N {
                out.push(format!("/p/{c}"));
                if c % 10 == 3 {
                    out.push(format!("/near/{c}"));
                }
                if c % 10 == 7 {
                    out.push(format!("/copy/{c}"));
                }
            }
        }
        out
    }

    fn route(&self, path: &str) -> (u16, &'static str, Vec<u8>) {
        let num = |p: &str| p.parse::<usize>().ok().filter(|&i| i < N);
        if path == "/robots.txt" {
            return (404, "text/plain", Vec::new());
        }
        if let Some(i) = path.strip_prefix("/p/").and_then(num) {
            return (
                200,
                "text/html",
                self.html(&self.texts[i], &Self::children(i)),
            );
        }
        if let Some(i) = path.strip_prefix("/near/").and_then(num) {
            let edited: Vec<&str> = self.texts[i]
                .split(' ')
                .enumerate()
                .map(|(j, w)| if j % 125 == 9 { "altered" } else { w })
                .collect();
            return (
                200,
                "text/html",
                self.html(&edited.join(" "), &Self::children(i)),
            );
        }
        if let Some(i) = path.strip_prefix("/copy/").and_then(num) {
            return (
                200,
                "text/html",
                self.html(&self.texts[i], &Self::children(i)),
            );
        }
        (404, "text/html", b"not found".to_vec())
    }
}

/// The crawl's config. Duplicate traps off: /near/ holds nothing but near
/// copies, so whether it is cut as a trap (46 of 50 duplicates) depends on
/// which of each pair the run fetched first, and this test is about resuming.
fn config(dir: &std::path::Path, port: u16) -> std::path::PathBuf {
    let path = dir.join("c.toml");
    std::fs::write(
        &path,
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/p/0\"]\n[scope]\nmax_depth = 30\n\
             [politeness]\ndelay_ms = 0\nglobal_concurrency = 4\nper_host_concurrency = 4\n\
             [fetch]\nallow_private_networks = true\n\
             [dedup]\ntrap_window = 0\n\
             [output]\ndir = \"{}\"\nformats = [\"jsonl\", \"warc\"]\nshard_bytes = 1000000\ncheckpoint_secs = 2\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    path
}

/// `nearcrawl crawl --config CONF` in the background, output discarded.
fn start_crawl(conf: &std::path::Path) -> std::process::Child {
    Command::new(nearcrawl_bin())
        .args(["crawl", "--config", conf.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn read_warc_responses(out: &std::path::Path) -> Vec<String> {
    let mut uris = Vec::new();
    let mut n = 0;
    while let Ok(gz) = std::fs::read(out.join(format!("crawl-{n:05}.warc.gz"))) {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut text)
            .unwrap_or_else(|e| panic!("crawl-{n:05}.warc.gz is not whole gzip members: {e}"));
        let text = String::from_utf8_lossy(&text);
        for record in text.split("WARC/1.1\r\n").skip(1) {
            // A payload archived before is a revisit of it.
            if record.starts_with("WARC-Type: response\r\n")
                || record.starts_with("WARC-Type: revisit\r\n")
            {
                let uri = record
                    .lines()
                    .find_map(|l| l.strip_prefix("WARC-Target-URI: "))
                    .unwrap();
                uris.push(uri.to_string());
            }
        }
        n += 1;
    }
    uris
}

#[test]
fn killed_crawls_resume_without_losing_or_repeating_anything() {
    let site = Site::new();
    let (port, _log) = serve(move |p| site.route(p), Duration::from_millis(15));
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conf = config(&dir, port);
    let out = dir.join("out");

    // Kill at several points: before the first checkpoint, right after one,
    // between them; then let the last run finish.
    let kills_ms = [300, 2_300, 700, 1_300, 900];
    let mut finished = false;
    for (round, ms) in kills_ms.iter().enumerate() {
        let mut child = start_crawl(&conf);
        std::thread::sleep(Duration::from_millis(*ms));
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "round {round}: {status}");
            finished = true;
            break;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Whatever is on disk now may be cut anywhere; the next run copes.
    }
    assert!(
        !finished,
        "the crawl finished before all kills: make the site slower"
    );
    let last = run(&["crawl", "--config", conf.to_str().unwrap()], b"");
    let err = String::from_utf8_lossy(&last.stderr);
    assert!(last.status.success(), "{err}");

    // Every line whole, every URL once.
    let mut pages = Vec::new();
    let mut shard = 0;
    while out.join(format!("pages-{shard:05}.jsonl")).exists() {
        pages.extend(json_lines(&out.join(format!("pages-{shard:05}.jsonl"))));
        shard += 1;
    }
    assert!(
        shard > 1,
        "several shards, so rewinds cross shard boundaries"
    );
    let dups = json_lines(&out.join("duplicates.jsonl"));
    let errors = json_lines(&out.join("errors.jsonl"));
    assert!(errors.is_empty(), "{errors:?}");
    let path_of = |v: &Value, key: &str| {
        v[key]
            .as_str()
            .unwrap()
            .replace(&format!("http://127.0.0.1:{port}"), "")
    };
    let mut written = HashSet::new();
    for p in &pages {
        assert!(written.insert(path_of(p, "url")), "written twice: {p}");
    }
    let mut duplicated = HashMap::new();
    for d in &dups {
        let url = path_of(d, "url");
        assert!(!written.contains(&url), "written and a duplicate: {url}");
        assert!(
            duplicated
                .insert(url.clone(), path_of(d, "duplicate_of"))
                .is_none(),
            "recorded twice: {url}"
        );
    }

    // Each page of the site exactly once, one of each pair in the corpus
    // (or both, for a near pair whose fingerprints are more than k = 8 bits
    // apart: a miss of the fingerprint, which has nothing to do with resume).
    let simhash_of = |path: &str| {
        pages
            .iter()
            .find(|p| path_of(p, "url") == path)
            .map(|p| u64::from_str_radix(p["simhash"].as_str().unwrap(), 16).unwrap())
    };
    let (mut pairs, mut missed) = (0, 0);
    for i in 0..N {
        let original = format!("/p/{i}");
        let copy = match i % 10 {
            3 => format!("/near/{i}"),
            7 => format!("/copy/{i}"),
            _ => {
                assert!(written.contains(&original), "{original} lost");
                continue;
            }
        };
        pairs += 1;
        if written.contains(&original) && written.contains(&copy) {
            let d = (simhash_of(&original).unwrap() ^ simhash_of(&copy).unwrap()).count_ones();
            assert!(d > 8, "{original} and {copy} both written, {d} bits apart");
            missed += 1;
            continue;
        }
        let (kept, dropped) = if written.contains(&original) {
            (original, copy)
        } else {
            (copy, original)
        };
        assert!(
            written.contains(&kept),
            "{kept} lost; {dropped} duplicate of {:?}; {kept} duplicate of {:?}",
            duplicated.get(&dropped),
            duplicated.get(&kept)
        );
        assert_eq!(
            duplicated.get(&dropped),
            Some(&kept),
            "{dropped} should be a duplicate of {kept}"
        );
    }
    assert!(missed <= 2, "{missed} near pairs missed");
    assert_eq!(written.len(), N + missed);
    assert_eq!(duplicated.len(), pairs - missed);

    // The WARC holds each fetch exactly once.
    let mut fetched = read_warc_responses(&out);
    fetched.sort();
    let before = fetched.len();
    fetched.dedup();
    assert_eq!(before, fetched.len(), "a response archived twice");
    // A copy a URL rule predicted (`/copy/i` ↔ `/p/i`, learned from the
    // copies fetched before) was not fetched.
    let predicted = dups.iter().filter(|d| d["kind"] == "predicted").count();
    assert_eq!(fetched.len(), N + pairs - predicted);

    // The CDXJ index beside each WARC file was rewound with it: one line
    // per response or revisit, sorted, each pointing at its record's gzip
    // member.
    let mut indexed = Vec::new();
    let mut n = 0;
    while let Ok(gz) = std::fs::read(out.join(format!("crawl-{n:05}.warc.gz"))) {
        let cdxj = std::fs::read_to_string(out.join(format!("crawl-{n:05}.cdxj"))).unwrap();
        let lines: Vec<&str> = cdxj.lines().collect();
        assert!(
            lines.windows(2).all(|w| w[0] <= w[1]),
            "crawl-{n:05}.cdxj is sorted"
        );
        for line in lines {
            let json: Value = serde_json::from_str(line.splitn(3, ' ').nth(2).unwrap()).unwrap();
            let at = |k: &str| json[k].as_str().unwrap().parse::<usize>().unwrap();
            let member = &gz[at("offset")..at("offset") + at("length")];
            let mut record = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(member), &mut record)
                .unwrap();
            let record = String::from_utf8_lossy(&record);
            let uri = json["url"].as_str().unwrap();
            let mut archived = ["response", "revisit"].iter();
            assert!(
                archived.any(|t| record.contains(&format!("WARC-Type: {t}\r\n"))),
                "{line}"
            );
            assert!(
                record.contains(&format!("WARC-Target-URI: {uri}\r\n")),
                "{line}"
            );
            indexed.push(uri.to_string());
        }
        n += 1;
    }
    indexed.sort();
    assert_eq!(indexed, fetched, "the CDXJ lines are the WARC's responses");

    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["written"], (N + missed) as u64, "{stats}");
    assert_eq!(stats["fetched"], (N + pairs - predicted) as u64, "{stats}");
    assert_eq!(stats["predicted_duplicates"], predicted as u64, "{stats}");
    assert_eq!(
        stats["exact_duplicates"].as_u64().unwrap() + stats["near_duplicates"].as_u64().unwrap(),
        (pairs - missed - predicted) as u64
    );

    // The index agrees with the corpus: copies of written pages, seeded
    // now, are duplicates of them, including the last pages written.
    let late = pages.last().map(|p| path_of(p, "url")).unwrap();
    let late_copy = late.replace("/p/", "/copy/").replace("/near/", "/copy/");
    std::fs::write(
        dir.join("more.txt"),
        format!("http://127.0.0.1:{port}/copy/0\nhttp://127.0.0.1:{port}{late_copy}\n"),
    )
    .unwrap();
    let again = run(
        &[
            "crawl",
            "--config",
            conf.to_str().unwrap(),
            "--seeds",
            dir.join("more.txt").to_str().unwrap(),
        ],
        b"",
    );
    assert!(again.status.success());
    let dups = json_lines(&out.join("duplicates.jsonl"));
    for copy in ["/copy/0", late_copy.as_str()] {
        if duplicated.contains_key(copy) || written.contains(copy) {
            continue; // crawled already
        }
        assert!(
            dups.iter().any(|d| path_of(d, "url") == copy),
            "{copy} not judged a duplicate after the resumes"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C (SIGINT) stops at once even when requests wait for a slow host's
/// turn: they are abandoned, stay in the frontier, and the next run fetches
/// them; nothing is written twice.
#[test]
fn ctrl_c_stops_promptly_and_leaves_open_requests_for_the_next_run() {
    let site = Site::new();
    let (port, _log) = serve(move |p| site.route(p), Duration::ZERO);
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-sigint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("c.toml");
    // One request per 1.5 s and 8 in flight: a stop that waited for the
    // open requests would take about 12 s.
    std::fs::write(
        &conf,
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/p/0\"]\n[politeness]\ndelay_ms = 1500\n\
             global_concurrency = 8\nper_host_concurrency = 8\n[fetch]\nallow_private_networks = true\n\
             [output]\ndir = \"{}\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let mut child = start_crawl(&conf);
    std::thread::sleep(Duration::from_millis(3_500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let asked = std::time::Instant::now();
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if asked.elapsed() > Duration::from_secs(6) {
            let _ = child.kill();
            panic!("still running 6 s after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit}");
    let out = dir.join("out");
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    let first = stats["fetched"].as_u64().unwrap();
    assert!((1..=4).contains(&first), "{stats}");

    // The next run goes on from the abandoned requests.
    let budget = (first + 3).to_string();
    let again = run(
        &[
            "crawl",
            "--config",
            conf.to_str().unwrap(),
            "--max-pages",
            &budget,
        ],
        b"",
    );
    assert!(again.status.success());
    // Each fetched page once: in the corpus or recorded as a duplicate.
    let mut records = json_lines(&out.join("pages-00000.jsonl"));
    records.extend(json_lines(&out.join("duplicates.jsonl")));
    let mut urls: Vec<&str> = records.iter().map(|p| p["url"].as_str().unwrap()).collect();
    assert_eq!(urls.len() as u64, first + 3, "{urls:?}");
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len() as u64, first + 3, "a page recorded twice");
    let _ = std::fs::remove_dir_all(&dir);
}
