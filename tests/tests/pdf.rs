//! PDFs in a crawl, end to end through `nearcrawl crawl`: a site linking
//! HTML pages and PDFs. A PDF's text, title and language reach the corpus;
//! the links in a PDF are followed; a PDF and an HTML page of the same
//! report are duplicates (same text, same title: the gate reads both
//! alike); a scanned PDF (no text), a damaged one and one over
//! `max_pdf_bytes` are errors of their kinds in `errors.jsonl`, and the
//! crawl goes on. Politeness holds for PDFs as for pages: the server's log
//! shows no two requests closer than the delay.

use std::collections::BTreeMap;
use std::time::Duration;

use nearcrawl_tests::pdf::TestPdf;
use nearcrawl_tests::{article_bodies, crawl_ok, fresh_dir, json_lines, serve_timed};

const DELAY_MS: u64 = 150;

struct Site {
    report: Vec<String>,
    other: Vec<String>,
    linked: String,
}

impl Site {
    fn new() -> Site {
        let bodies = article_bodies(300, true);
        let paragraphs = |b: &str| -> Vec<String> {
            (b.split("\n\n").map(str::trim).filter(|p| !p.is_empty()))
                .map(str::to_string)
                .collect()
        };
        Site {
            report: paragraphs(&bodies[0]),
            other: paragraphs(&bodies[1]),
            linked: bodies[2].clone(),
        }
    }

    fn route(&self, path: &str, port: u16) -> (u16, &'static str, Vec<u8>) {
        let html = |title: &str, body: &str| {
            let body = format!(
                "<!doctype html><html lang=en><head><title>{title}</title></head>\
                 <body><main><h1>{title}</h1>{body}</main></body></html>"
            );
            (200, "text/html", body.into_bytes())
        };
        let pdf = |bytes: Vec<u8>| (200, "application/pdf", bytes);
        let ps = |ps: &[String]| ps.iter().map(|p| format!("<p>{p}</p>")).collect::<String>();
        match path {
            "/" => html(
                "Start",
                "<a href=/report.pdf>report (PDF)</a> <a href=/report.html>report</a> \
                 <a href=/other.pdf>other</a> <a href=/scan.pdf>scan</a> \
                 <a href=/broken.pdf>broken</a> <a href=/big.pdf>big</a>",
            ),
            "/report.html" => html("Annual report of the harbour board", &ps(&self.report)),
            "/report.pdf" => pdf(TestPdf {
                title: Some("Annual report of the harbour board"),
                paragraphs: self.report.clone(),
                ..TestPdf::default()
            }
            .bytes()),
            "/other.pdf" => pdf(TestPdf {
                title: Some("Minutes of the spring meeting"),
                lang: Some("en-GB"),
                paragraphs: self.other.clone(),
                links: vec![format!("http://127.0.0.1:{port}/linked.html")],
            }
            .bytes()),
            "/linked.html" => html("Linked from a PDF", &format!("<p>{}</p>", self.linked)),
            "/scan.pdf" => pdf(TestPdf::default().bytes()),
            "/broken.pdf" => pdf(b"%PDF-1.7\n\x00\x01garbage that is no PDF at all\n".repeat(40)),
            "/big.pdf" => pdf(TestPdf {
                paragraphs: vec![nearcrawl_tests::made_up_words(7, 20_000, 5000)],
                ..TestPdf::default()
            }
            .bytes()),
            _ => (404, "text/html", b"not here".to_vec()),
        }
    }
}

#[test]
fn pdfs_are_read_judged_and_their_links_followed_politely() {
    let site = std::sync::Arc::new(Site::new());
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let (s, p) = (site.clone(), port.clone());
    let (addr, log) = serve_timed("127.0.0.1", move |path| s.route(path, *p.get().unwrap()));
    port.set(addr.port()).unwrap();
    let dir = fresh_dir("pdf");
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[seeds]\nurls = [\"http://{addr}/\"]\n[politeness]\ndelay_ms = {DELAY_MS}\n\
             [fetch]\nallow_private_networks = true\nmax_pdf_bytes = 60000\n\
             [output]\ndir = \"{}\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let stats = crawl_ok(&dir);
    let out = dir.join("out");
    let by_path = |file: &str| -> BTreeMap<String, serde_json::Value> {
        let rows = json_lines(&out.join(file));
        let path = |r: &serde_json::Value| {
            r["url"]
                .as_str()
                .unwrap()
                .replace(&format!("http://{addr}"), "")
        };
        rows.into_iter().map(|r| (path(&r), r)).collect()
    };
    let (pages, dups, errors) = (
        by_path("pages-00000.jsonl"),
        by_path("duplicates.jsonl"),
        by_path("errors.jsonl"),
    );
    // The minutes: a PDF's title, language, text; its link followed.
    let minutes = &pages["/other.pdf"];
    assert_eq!(minutes["title"], "Minutes of the spring meeting");
    assert_eq!(minutes["language"], "en");
    let first_words: String = site.other[0]
        .split_whitespace()
        .take(8)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        minutes["text"].as_str().unwrap().contains(&first_words),
        "{minutes}"
    );
    assert!(
        pages.contains_key("/linked.html"),
        "the PDF's link is followed"
    );
    // The report, as HTML and as PDF: one is the other's duplicate.
    let (kept, copy) = match pages.contains_key("/report.pdf") {
        true => ("/report.pdf", "/report.html"),
        false => ("/report.html", "/report.pdf"),
    };
    assert!(
        pages.contains_key(kept) && !pages.contains_key(copy),
        "{pages:?}"
    );
    assert!(
        dups[copy]["duplicate_of"].as_str().unwrap().ends_with(kept),
        "{dups:?}"
    );
    // What could not be read is an error of its kind; the crawl went on.
    assert_eq!(errors["/scan.pdf"]["kind"], "pdf_no_text", "{errors:?}");
    assert_eq!(errors["/broken.pdf"]["kind"], "pdf_corrupt", "{errors:?}");
    assert_eq!(errors["/big.pdf"]["kind"], "too_large", "{errors:?}");
    assert_eq!(stats["errors"]["pdf_no_text"], 1);
    // Politeness, where the server sees it.
    let times: Vec<_> = log.lock().unwrap().iter().map(|(t, _)| *t).collect();
    assert!(times.len() >= 9, "{} requests", times.len());
    let closest = times.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    assert!(
        closest >= Duration::from_millis(DELAY_MS - 5),
        "two requests {closest:?} apart"
    );
}

/// Damaged PDFs (cut short, bytes flipped) come out as a page or an
/// error: never a crash, a hang or a panic out of the reader.
#[test]
fn damaged_pdfs_are_pages_or_errors() {
    let bodies = article_bodies(300, true);
    let pdf = TestPdf {
        title: Some("A report"),
        paragraphs: bodies[..3].to_vec(),
        links: vec!["https://example.com/x".into()],
        ..TestPdf::default()
    }
    .bytes();
    let input = nearcrawl_extract::Input::default();
    assert!(nearcrawl_extract::extract_pdf(&pdf[..], &input).is_ok());
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut pages, mut errors) = (0, 0);
    for i in 0..300 {
        let mut damaged = pdf.clone();
        if i % 3 == 0 {
            damaged.truncate((next() as usize) % pdf.len());
        } else {
            for _ in 0..(1 + i % 7) {
                let at = (next() as usize) % damaged.len();
                damaged[at] ^= 1 << (next() % 8);
            }
        }
        match nearcrawl_extract::extract_pdf(damaged, &input) {
            Ok(_) => pages += 1,
            Err(_) => errors += 1,
        }
    }
    assert_eq!(pages + errors, 300);
    assert!(pages > 0 && errors > 0, "{pages} pages, {errors} errors");
}
