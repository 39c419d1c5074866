//! `nearcrawl fingerprint` and `nearcrawl distance`, end to end.

use std::io::Read;

use nearcrawl_tests::{article_bodies, articles_dir, run};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// `(hex, features, name)` of each output line.
fn rows(out: &str) -> Vec<(String, u32, String)> {
    out.lines()
        .map(|l| {
            let parts: Vec<&str> = l.splitn(3, "  ").collect();
            assert_eq!(parts.len(), 3, "line {l:?}");
            assert_eq!(parts[0].len(), 16, "line {l:?}");
            (
                parts[0].to_string(),
                parts[1].parse().unwrap(),
                parts[2].to_string(),
            )
        })
        .collect()
}

fn gunzip(path: &std::path::Path) -> Vec<u8> {
    // The bench pages are gzip files; decompress with the system gzip to keep
    // this crate free of dependencies.
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .expect("gzip");
    assert!(out.status.success());
    out.stdout
}

#[test]
fn near_copies_are_close_and_other_pages_far() {
    let dir = tempdir();
    // Two real articles from the shared benchmark set, one with a few words
    // changed.
    let bodies = article_bodies(400, true);
    let original = bodies[0].clone();
    let other = bodies[1].clone();
    let mut words: Vec<&str> = original.split_whitespace().collect();
    for i in (0..words.len()).step_by(50) {
        words[i] = "changed";
    }
    let edited = words.join(" ");
    for (name, text) in [("a.txt", &original), ("b.txt", &edited), ("c.txt", &other)] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let out = run(&["fingerprint", &p("a.txt"), &p("b.txt"), &p("c.txt")], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = rows(&stdout(&out));
    assert_eq!(r.len(), 3);
    assert!(r[0].2.ends_with("a.txt") && r[2].2.ends_with("c.txt"));
    assert!(r[0].1 > 50);

    let dist = |x: &str, y: &str| -> u32 {
        let o = run(&["distance", x, y], b"");
        assert!(o.status.success());
        stdout(&o).trim().parse().unwrap()
    };
    let near = dist(&r[0].0, &r[1].0);
    let far = dist(&r[0].0, &r[2].0);
    assert!(near <= 6, "edited copy {near} bits away");
    assert!(far >= 12, "unrelated text {far} bits away");
    assert_eq!(dist(&r[0].0, &r[0].0), 0);
}

#[test]
fn stdin_and_file_agree_and_bad_files_do_not_stop_the_run() {
    let dir = tempdir();
    let text = "中文网页的正文，应该得到稳定的指纹。Mixed with English words too.";
    std::fs::write(dir.join("zh.txt"), text).unwrap();
    let from_stdin = rows(&stdout(&run(&["fingerprint"], text.as_bytes())));
    assert_eq!(from_stdin[0].2, "-");
    let zh = dir.join("zh.txt").to_string_lossy().into_owned();
    let missing = dir.join("missing.txt").to_string_lossy().into_owned();
    let out = run(&["fingerprint", &missing, &zh, "-"], text.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(1),
        "a missing file fails the run at the end"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("missing.txt") && err.contains("1 of 3"),
        "{err}"
    );
    let r = rows(&stdout(&out));
    assert_eq!(r.len(), 2, "the readable inputs are still fingerprinted");
    assert_eq!(r[0].0, from_stdin[0].0);
    assert_eq!(r[1].0, from_stdin[0].0);
    assert!(from_stdin[0].1 >= 20);
}

#[test]
fn invalid_utf8_and_binary_input_are_fingerprinted_not_rejected() {
    let mut junk: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    junk.extend_from_slice(b"\xff\xfe tail words");
    let out = run(&["fingerprint"], &junk);
    assert!(out.status.success());
    assert_eq!(rows(&stdout(&out)).len(), 1);
}

#[test]
fn html_mode_fingerprints_text_not_markup() {
    let page = "<html><head><style>.a{color:red}</style><script>var x = 1;</script></head>\
                <body><p>Same words here and there.</p></body></html>";
    let html = rows(&stdout(&run(&["fingerprint", "--html"], page.as_bytes())));
    let text = rows(&stdout(&run(
        &["fingerprint"],
        b"Same words here and there.",
    )));
    assert_eq!(html[0].0, text[0].0);
    assert_eq!(html[0].1, 5);
}

#[test]
fn html_mode_on_real_pages() {
    let pages = articles_dir().join("html");
    let mut entries: Vec<_> = std::fs::read_dir(&pages)
        .unwrap_or_else(|e| panic!("{}: {e}", pages.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let dir = tempdir();
    let mut args = vec!["fingerprint".to_string(), "--html".to_string()];
    for (i, p) in entries.iter().take(10).enumerate() {
        let f = dir.join(format!("{i}.html"));
        std::fs::write(&f, gunzip(p)).unwrap();
        args.push(f.to_string_lossy().into_owned());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, b"");
    assert!(out.status.success());
    let r = rows(&stdout(&out));
    assert_eq!(r.len(), 10);
    for (hex, features, name) in &r {
        assert!(*features > 50, "{name}: {features} features");
        assert_ne!(hex, "0000000000000000");
    }
}

#[test]
fn distance_rejects_bad_fingerprints_clearly() {
    let out = run(&["distance", "xyz", "00"], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("first fingerprint") && err.contains("xyz"),
        "{err}"
    );
    let out = run(&["distance", "ff"], b"");
    assert_eq!(out.status.code(), Some(2), "clap usage error");
}

#[test]
fn crawl_with_a_missing_config_fails_clearly() {
    // The shipped example crawls public sites: tests only dry-run it.
    let out = run(&["crawl", "--config", "/nonexistent/x.toml"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.toml"));
}

#[test]
fn crawl_dry_run_checks_config_and_seeds() {
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/example.toml");
    let out = run(
        &["crawl", "--config", config.to_str().unwrap(), "--dry-run"],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("seeds (2):") && text.contains("https://www.rust-lang.org/"),
        "{text}"
    );

    let dir = tempdir();
    std::fs::write(
        dir.join("seeds.txt"),
        "https://ok.example/
not a url
",
    )
    .unwrap();
    std::fs::write(dir.join("c.toml"), "[seeds]\nfile = \"seeds.txt\"\n").unwrap();
    let out = run(
        &[
            "crawl",
            "--config",
            dir.join("c.toml").to_str().unwrap(),
            "--dry-run",
        ],
        b"",
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("seeds (1):"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("seed line 2"),
        "bad seed lines are reported"
    );

    std::fs::write(dir.join("bad.toml"), "[scope]\nmax_depht = 3\n").unwrap();
    let out = run(
        &[
            "crawl",
            "--config",
            dir.join("bad.toml").to_str().unwrap(),
            "--dry-run",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("max_depht") && err.contains("line 2"), "{err}");
}

/// A fresh empty folder under the target dir, unique per test.
fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "nearcrawl-e2e-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let _ = std::io::empty().read(&mut []);
    d
}
