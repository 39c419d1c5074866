//! `content.text_format = "markdown"`: the corpus gets the page's text as
//! Markdown (headings, lists, pipe tables, fenced code with its language,
//! links when `markdown_links` is on), while the gate reads the plain
//! text: the fingerprints, and so the verdicts, are those of a plain crawl.

use std::path::{Path, PathBuf};

use nearcrawl_tests::{crawl_ok, fresh_dir, json_lines, serve};

const PAGE: &str = "<!doctype html><html lang=en><head><title>Guide</title></head><body>\
    <nav><a href=/>Home</a></nav><main><h1>Guide</h1>\
    <p>This guide shows how to <a href=/install>install</a> the tool and run it on a \
    <em>small</em> site, step by step, with the commands and the options they take.</p>\
    <h2>Steps</h2><ol><li>Download the release archive for your system.</li>\
    <li>Unpack it somewhere on your path.</li></ol>\
    <table><tr><th>option</th><th>default</th></tr><tr><td>--depth</td><td>20</td></tr></table>\
    <pre><code class=\"language-sh\">tool crawl --depth 3 https://example.com/</code></pre>\
    </main></body></html>";

fn route(path: &str) -> (u16, &'static str, Vec<u8>) {
    match path {
        "/" => (200, "text/html", PAGE.as_bytes().to_vec()),
        _ => (404, "text/html", b"not here".to_vec()),
    }
}

fn crawl(tag: &str, port: u16, content: &str) -> (serde_json::Value, PathBuf) {
    let dir = fresh_dir(&format!("md-{tag}"));
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/\"]\n[politeness]\ndelay_ms = 0\n\
             [fetch]\nallow_private_networks = true\n[output]\ndir = \"{}\"\n[content]\n{content}\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let stats = crawl_ok(&dir);
    (stats, dir)
}

fn the_page(dir: &Path) -> serde_json::Value {
    let mut pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    assert_eq!(pages.len(), 1, "one page");
    pages.remove(0)
}

#[test]
fn the_corpus_gets_markdown_and_the_gate_the_plain_text() {
    let (port, _) = serve(route, std::time::Duration::ZERO);
    let (_, plain_dir) = crawl("plain", port, "");
    let (_, md_dir) = crawl("markdown", port, "text_format = \"markdown\"");
    let (_, links_dir) = crawl(
        "links",
        port,
        "text_format = \"markdown\"\nmarkdown_links = true",
    );
    let (plain, md, links) = (
        the_page(&plain_dir),
        the_page(&md_dir),
        the_page(&links_dir),
    );
    let text = md["text"].as_str().unwrap();
    for block in [
        "## Steps",
        "1. Download the release archive",
        "2. Unpack it",
        "| option | default |\n| --- | --- |\n| --depth | 20 |",
        "```sh\ntool crawl --depth 3 https://example.com/\n```",
    ] {
        assert!(text.contains(block), "{block:?} in\n{text}");
    }
    assert!(!text.contains("](http"), "no links unless asked");
    let with_links = links["text"].as_str().unwrap();
    assert!(
        with_links.contains(&format!("[install](http://127.0.0.1:{port}/install)"))
            && with_links.contains("*small*"),
        "{with_links}"
    );
    let plain_text = plain["text"].as_str().unwrap();
    assert!(!plain_text.contains("##") && plain_text.contains("option | default"));
    for key in ["simhash", "content_hash"] {
        assert_eq!(plain[key], md[key], "{key}: the gate reads the plain text");
        assert_eq!(plain[key], links[key], "{key}");
    }
}
