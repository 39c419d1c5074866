//! `nearcrawl crawl --dedup-against DIR`: a gate that remembers an earlier
//! crawl. A mirror of a crawled site, on another host, is crawled against
//! the first crawl: every copy is a duplicate of the first crawl's page
//! (named with that crawl), a copy's links are never followed, the
//! mirror's own pages are written, and the first crawl's directory is not
//! changed. The remembered crawls cannot change midway.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use nearcrawl_tests::{json_lines, made_up_words, run, serve_timed};

/// Page `i` of a site: its own text and a link to the next page; the
/// mirror's pages 0-9 are the first site's, 10-12 its own, and copy 9
/// links to 13, which only the mirror has.
fn page(i: usize, next: usize) -> Vec<u8> {
    let text = made_up_words(i as u64 * 7 + 1, 180, 6_000);
    format!(
        "<!DOCTYPE html><html><head><title>Note {i}</title></head><body><main>\
         <h1>Note {i}</h1><p>{text}</p><p><a href=\"/p/{next}\">next</a></p></main></body></html>"
    )
    .into_bytes()
}

fn site(ip: &str, pages: usize) -> (String, nearcrawl_tests::TimedLog) {
    let (addr, log) = serve_timed(ip, move |path| {
        let i: Option<usize> = path.strip_prefix("/p/").and_then(|n| n.parse().ok());
        match i {
            Some(i) if i < pages => (200, "text/html", page(i, i + 1)),
            _ => (404, "text/html", b"no".to_vec()),
        }
    });
    (format!("http://{addr}"), log)
}

fn crawl(dir: &Path, seeds: &[String], out: &str, more: &[&str]) -> std::process::Output {
    let conf = dir.join("c.toml");
    std::fs::write(
        &conf,
        "[politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true\n\
         [scope]\nhosts = [\"*\"]\n",
    )
    .unwrap();
    let seeds_file = dir.join(format!("{out}.seeds"));
    std::fs::write(&seeds_file, seeds.join("\n")).unwrap();
    let out = dir.join(out);
    let mut args = vec!["crawl", "--config", conf.to_str().unwrap()];
    args.extend(["--seeds", seeds_file.to_str().unwrap()]);
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend(more);
    run(&args, b"")
}

#[test]
fn a_mirror_crawled_against_the_first_crawl_keeps_only_its_own_pages() {
    let tmp = std::env::temp_dir().join(format!("nearcrawl-e2e-remembered-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let (first_base, _) = site("127.0.5.1", 10);
    let done = crawl(&tmp, &[format!("{first_base}/p/0")], "first", &[]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let first = tmp.join("first");
    let records = first.join("state").join("gate.records");
    let before = std::fs::read(&records).unwrap();

    // The mirror: the first site's pages 0-9 and pages of its own, 10-13;
    // its seeds reach each part.
    let (mirror_base, log) = site("127.0.5.2", 14);
    let seeds: Vec<String> = [0, 10, 11, 12]
        .iter()
        .map(|i| format!("{mirror_base}/p/{i}"))
        .collect();
    let against = first.to_str().unwrap();
    let done = crawl(&tmp, &seeds, "mirror", &["--dedup-against", against]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let mirror = tmp.join("mirror");

    let dups: BTreeMap<String, serde_json::Value> = json_lines(&mirror.join("duplicates.jsonl"))
        .into_iter()
        .map(|d| (d["url"].as_str().unwrap().to_string(), d))
        .collect();
    // Copy 0 is dropped: its link to 1 is never followed, nor the rest.
    let copy = &dups[&format!("{mirror_base}/p/0")];
    assert_eq!(copy["duplicate_of"], format!("{first_base}/p/0"));
    assert_eq!(copy["kind"], "exact");
    assert_eq!(copy["crawl"], against);
    assert_eq!(dups.len(), 1, "{dups:?}");
    let asked: BTreeSet<String> = log.lock().unwrap().iter().map(|(_, p)| p.clone()).collect();
    for i in 1..10 {
        assert!(!asked.contains(&format!("/p/{i}")), "/p/{i}: behind a copy");
    }
    // The mirror's own pages are written (12 links to 13).
    let written: BTreeSet<String> = json_lines(&mirror.join("pages-00000.jsonl"))
        .iter()
        .map(|p| {
            p["url"]
                .as_str()
                .unwrap()
                .trim_start_matches(&mirror_base)
                .to_string()
        })
        .collect();
    let own: BTreeSet<String> = (10..14).map(|i| format!("/p/{i}")).collect();
    assert_eq!(written, own);
    assert_eq!(
        std::fs::read(&records).unwrap(),
        before,
        "the first crawl is unchanged"
    );

    // Run again with other remembered crawls: refused, the reason said.
    let again = crawl(&tmp, &seeds, "mirror", &[]);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("cannot change midway"), "{err}");
    // A directory that holds no crawl: said so.
    let none = crawl(
        &tmp,
        &seeds,
        "other",
        &["--dedup-against", tmp.to_str().unwrap()],
    );
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("no crawl state"));
    std::fs::remove_dir_all(&tmp).unwrap();
}
