//! `nearcrawl extract`, end to end, on the benchmark's real pages.

use nearcrawl_tests::{articles_dir, run};
use serde_json::Value;

fn pages(n: usize) -> Vec<String> {
    let dir = articles_dir().join("html");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    files.sort();
    files.truncate(n);
    files
}

#[test]
fn json_lines_for_many_gzipped_pages() {
    let files = pages(12);
    let mut args = vec![
        "extract",
        "--json",
        "--url",
        "https://news.example.com/a/b.html",
    ];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args, b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), files.len());
    for (row, file) in rows.iter().zip(&files) {
        assert_eq!(row["file"], file.as_str());
        assert!(row["text"].as_str().unwrap().len() > 200, "{file}");
        assert!(row["title"].is_string(), "{file}");
        for key in [
            "lang",
            "language",
            "canonical",
            "robots",
            "links",
            "path",
            "encoding",
        ] {
            assert!(row.get(key).is_some(), "{key} missing");
        }
        for link in row["links"].as_array().unwrap() {
            let url = link["url"].as_str().unwrap();
            assert!(
                url.starts_with("http://") || url.starts_with("https://"),
                "{url}"
            );
        }
    }
}

#[test]
fn plain_text_full_text_and_bad_files() {
    let files = pages(1);
    let main = run(&["extract", &files[0]], b"");
    let full = run(&["extract", "--full", &files[0]], b"");
    assert!(main.status.success() && full.status.success());
    assert!(
        full.stdout.len() > main.stdout.len(),
        "full text holds the boilerplate too"
    );
    let stdin = run(&["extract", "-"], b"<p>From standard input, as a page.</p>");
    assert_eq!(
        String::from_utf8_lossy(&stdin.stdout).trim(),
        "From standard input, as a page."
    );
    let bad = run(&["extract", "/nonexistent.html", &files[0]], b"");
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/nonexistent.html"));
    assert!(
        !bad.stdout.is_empty(),
        "the readable file is still extracted"
    );
}

#[test]
fn markdown_from_standard_input() {
    let html = b"<html><body><article><h2>Install</h2><ul><li>Download the archive.</li>\
        <li>Run <code>make install</code> as root.</li></ul><p>See <a href=\"/docs\">the docs</a>.</p>\
        </article></body></html>";
    let out = run(
        &[
            "extract",
            "--markdown",
            "--markdown-links",
            "--url",
            "https://x.example/a/",
            "-",
        ],
        html,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        "## Install\n\n- Download the archive.\n- Run `make install` as root.\n\n\
         See [the docs](https://x.example/docs)."
    );
    let both = run(&["extract", "--markdown", "--full", "-"], html);
    assert!(
        !both.status.success(),
        "--markdown and --full do not go together"
    );
}

#[test]
fn pdfs_by_their_bytes() {
    let bodies = nearcrawl_tests::article_bodies(300, true);
    let pdf = nearcrawl_tests::pdf::TestPdf {
        title: Some("A report on the harbour"),
        lang: Some("en"),
        paragraphs: vec![bodies[0].clone()],
        links: vec!["https://example.com/more".into()],
    }
    .bytes();
    let out = run(&["extract", "--json", "-"], &pdf);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["title"], "A report on the harbour");
    assert_eq!(
        (&row["language"], &row["encoding"]),
        (&"en".into(), &"PDF".into())
    );
    assert_eq!(row["links"][0]["url"], "https://example.com/more");
    let words: Vec<&str> = bodies[0].split_whitespace().take(10).collect();
    assert!(
        row["text"].as_str().unwrap().contains(&words.join(" ")),
        "{row}"
    );
    let scan = nearcrawl_tests::pdf::TestPdf::default().bytes();
    let out = run(&["extract", "--json", "-"], &scan);
    assert!(!out.status.success());
    let row: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["error"], "pdf_no_text");
}

#[test]
fn an_encrypted_pdf_is_an_error_unless_its_user_password_is_empty() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pdf");
    let locked = dir.join("encrypted.pdf");
    let out = run(&["extract", "--json", locked.to_str().unwrap()], b"");
    let row: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["error"], "pdf_encrypted", "{row}");
    let open = dir.join("owner-password-only.pdf");
    let out = run(&["extract", open.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("encrypted with a user password"), "{text}");
}

#[test]
fn a_pdf_the_parser_panics_on_is_a_corrupt_pdf() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pdf");
    let panics = dir.join("pdf-oxide-panics.pdf");
    let out = run(&["extract", "--json", panics.to_str().unwrap()], b"");
    let row: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row["error"], "pdf_corrupt", "{row}");
    assert!(
        row["detail"]
            .as_str()
            .unwrap()
            .contains("the parser failed")
    );
}
