//! Hostile inputs: never a panic, never a stack overflow, never an empty
//! text for a page with visible text.

use nearcrawl_extract::{ContentPath, Input, extract};
use proptest::prelude::*;

#[test]
fn deep_nesting_does_not_overflow() {
    for tag in ["div", "span", "b", "table", "li"] {
        let depth = 100_000;
        let mut html = String::with_capacity(depth * 12);
        for _ in 0..depth {
            html.push_str(&format!("<{tag}>"));
        }
        html.push_str("deep text at the bottom of the page");
        let page = extract(html.as_bytes(), &Input::default());
        assert!(
            page.text.contains("deep text"),
            "{tag}: {:?}",
            &page.text[..page.text.len().min(80)]
        );
    }
}

#[test]
fn truncated_and_malformed_markup() {
    let page = extract(
        b"<html><body><div class=content><p>First paragraph, with commas, and enough words to count as text here.</p>\
          <p>Second paragraph <b>bold <i>nested</b> misnested</i> and an unclosed <a href='/x'>link",
        &Input::default(),
    );
    assert!(page.text.contains("First paragraph") && page.text.contains("misnested"));
    for junk in [
        &b"<"[..],
        b"<<<>>>",
        b"</p></div></body>",
        b"<!--",
        b"<script>",
        b"<p",
        b"&#xFFFFFFFF;",
        b"\0\0\0",
    ] {
        let _ = extract(junk, &Input::default());
    }
}

#[test]
fn binary_garbage_is_text_or_nothing() {
    let mut x = 0x1234_5678_9abc_def0u64;
    let bytes: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let page = extract(&bytes, &Input::default());
    assert!(page.links.is_empty());
}

#[test]
fn large_document() {
    check_large(8 << 20);
}

#[test]
#[ignore = "50 MB: slow in debug builds; run with --release -- --ignored"]
fn fifty_megabyte_document() {
    let t = std::time::Instant::now();
    check_large(50 << 20);
    println!("50 MB extracted in {:.2} s", t.elapsed().as_secs_f64());
}

fn check_large(size: usize) {
    let para =
        "<p>Paragraph text, long enough to be content, with commas, words and more words.</p>\n";
    let mut html = String::from("<html><body><nav><a href='/'>Home</a></nav><article>");
    while html.len() < size {
        html.push_str(para);
    }
    html.push_str("</article></body></html>");
    let page = extract(html.as_bytes(), &Input::default());
    // Past a megabyte of markup a page is read without a tree: its full
    // text, boilerplate elements still dropped.
    assert_eq!(page.path, ContentPath::FullText);
    assert!(page.text.len() > size * 3 / 4);
    assert!(!page.text.contains("Home"));
}

#[test]
fn pages_that_are_not_articles_keep_their_text() {
    // A listing: many short link items and little prose.
    let mut html = String::from("<html><body><h1>Products</h1><ul>");
    for i in 0..40 {
        html.push_str(&format!(
            "<li><a href='/p/{i}'>Product number {i}</a> <span>$1{i}.99</span></li>"
        ));
    }
    html.push_str("</ul></body></html>");
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Product number 7"), "{}", page.text);
    // A page of one short line.
    let page = extract(
        b"<html><body><p>Hello.</p></body></html>",
        &Input::default(),
    );
    assert_eq!(page.text, "Hello.");
    assert_eq!(page.path, ContentPath::FullText);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        let _ = extract(&bytes, &Input::default());
    }

    #[test]
    fn tag_soup_never_panics_and_keeps_text(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("<div>".to_string()), Just("</div>".to_string()), Just("<p>".to_string()),
                Just("</p>".to_string()), Just("<table><tr><td>".to_string()), Just("<a href=x>".to_string()),
                Just("</a>".to_string()), Just("<script>".to_string()), Just("<!--".to_string()),
                Just("-->".to_string()), Just("<nav>".to_string()), Just("<br>".to_string()),
                "[a-zA-Z ,.]{0,40}",
            ],
            0..60,
        )
    ) {
        let html = parts.concat();
        let page = extract(html.as_bytes(), &Input::default());
        // Visible text somewhere means text out.
        let full = nearcrawl_extract::full_text(html.as_bytes(), &Input::default());
        prop_assert!(full.is_empty() || !page.text.is_empty());
    }
}

#[test]
fn preformatted_code_keeps_its_spaces_and_lines() {
    let html = "<html><body><article><p>Some text before the code, long enough to count, with commas.</p>\
        <pre><code><span class=\"kw\">let</span> a = [<span>1</span>, 2];\n\n    <span>a</span>.len()\n</code></pre>\
        <p>Some text after the code, long enough to count as well, with more commas.</p></article></body></html>";
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("let a = [1, 2];\n\n    a.len()"),
        "{:?}",
        page.text
    );
}
