//! Markdown output against the plain text, on real pages.
//!
//! The Markdown is the plain text written otherwise: parsed back with
//! pulldown-cmark (a CommonMark parser with GitHub's tables) and its
//! markup stripped, it must hold the same words in the same order, and
//! score the same F1 against the benchmarks' truth. Its structure is
//! counted against the page's own: headings, list items, table cells and
//! code blocks whose text the plain output holds (the elements of the
//! kept block) must come back from the Markdown as such.
//!
//! `words_and_structure_survive_on_the_fixture_pages` runs in the normal
//! suite on the 50 article pages the repository ships;
//! `report_markdown` (ignored: it needs `../shared/bench`) prints the
//! figures for the extraction benchmark and `wcxb-dev`:
//!
//! ```text
//! cargo test --release -p nearcrawl-extract --test markdown -- --ignored --nocapture
//! ```
//!
//! `MD_SET=wcxb-dev` reports one set; `MD_MISSING=K` lists the pages
//! missing more than five blocks of kind K (0 headings, 1 list items, 2
//! table cells, 3 code blocks); `MD_DEBUG=ID` prints a page's Markdown and
//! plain text when a block is missing.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use nearcrawl_extract::{Input, MarkdownOptions, extract};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use scoring::tokens;

mod scoring;

fn pages(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("html"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let mut html = Vec::new();
            let gz = std::fs::read(&path).unwrap();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_end(&mut html)
                .unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            (name.trim_end_matches(".html.gz").to_string(), html)
        })
        .collect()
}

/// Headings, list items, table cells (with text) and code blocks.
#[derive(Debug, Default, Clone, Copy)]
struct Blocks([usize; 4]);

const KINDS: [&str; 4] = ["headings", "list items", "table cells", "code blocks"];

/// The Markdown's text, its markup stripped, and its blocks.
fn parse_back(markdown: &str) -> (String, Blocks) {
    let (mut text, mut blocks) = (String::new(), Blocks::default());
    let mut cell_text = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Text(t) | Event::Code(t) => {
                text.push_str(&t);
                if let Some(c) = &mut cell_text {
                    *c |= !t.trim().is_empty();
                }
            }
            Event::SoftBreak | Event::HardBreak => text.push('\n'),
            Event::Start(tag) => {
                match tag {
                    Tag::Heading { .. } => blocks.0[0] += 1,
                    Tag::Item => blocks.0[1] += 1,
                    Tag::TableCell => cell_text = Some(false),
                    Tag::CodeBlock(_) => blocks.0[3] += 1,
                    _ => {}
                }
                if !is_inline(&tag.to_end()) {
                    text.push('\n');
                }
            }
            Event::End(end) => {
                if end == TagEnd::TableCell && cell_text.take() == Some(true) {
                    blocks.0[2] += 1;
                }
                if !is_inline(&end) {
                    text.push('\n');
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => text.push_str(&h),
            _ => {}
        }
    }
    (text, blocks)
}

/// Inline markup: no break between its words and their neighbours'.
fn is_inline(tag: &TagEnd) -> bool {
    matches!(
        tag,
        TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link | TagEnd::Image
    )
}

/// The page's own headings, list items, table cells and code blocks that
/// the plain output holds as blocks: the elements of the kept block. A
/// heading or list item is a line of the plain text (a list item holding
/// a list is more than one, and not counted), a cell a cell of a line (`a
/// | b`), a code block's first line a line. Each line (or cell) is taken
/// by one element at most, headings first: a table of contents repeats
/// the headings as list items, out of the kept block.
fn kept_blocks(html: &[u8], plain: &str) -> Blocks {
    let normal = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut lines: HashMap<String, usize> = HashMap::new();
    let mut cells: HashMap<String, usize> = HashMap::new();
    for line in plain.lines() {
        *lines.entry(normal(line)).or_default() += 1;
        if line.contains(" | ") {
            for cell in line.split(" | ") {
                *cells.entry(normal(cell)).or_default() += 1;
            }
        }
    }
    let doc = scraper::Html::parse_document(&String::from_utf8_lossy(html));
    let mut blocks = Blocks::default();
    for (i, selector) in [
        (0, "h1,h2,h3,h4,h5,h6"),
        (2, "td,th"),
        (3, "pre"),
        (1, "li"),
    ] {
        let selector = scraper::Selector::parse(selector).unwrap();
        for el in doc.select(&selector) {
            let text: String = el.text().collect();
            let text = match i {
                3 => normal(text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")),
                _ => normal(&text),
            };
            let left = match (i, cells.get_mut(&text)) {
                (2, Some(n)) if *n > 0 => n,
                _ => match lines.get_mut(&text) {
                    Some(n) if *n > 0 => n,
                    _ => continue,
                },
            };
            if text.chars().count() >= 3 {
                *left -= 1;
                blocks.0[i] += 1;
            }
        }
    }
    blocks
}

#[derive(Default)]
struct Figures {
    pages: usize,
    same_words: usize,
    /// Per kind: found in the Markdown (at most as many as the page's),
    /// and the page's.
    found: [usize; 4],
    kept: [usize; 4],
    /// Pages whose Markdown's words differ, with the first difference.
    differing: Vec<String>,
}

fn check(set: &[(String, Vec<u8>)], links: bool) -> Figures {
    let mut f = Figures::default();
    let input = Input {
        markdown: Some(MarkdownOptions { links }),
        ..Input::default()
    };
    for (id, html) in set {
        let page = extract(html, &input);
        let markdown = page.markdown.expect("Markdown asked for");
        let (stripped, blocks) = parse_back(&markdown);
        f.pages += 1;
        let (want, got) = (tokens(&page.text), tokens(&stripped));
        if want == got {
            f.same_words += 1;
        } else {
            let at = want.iter().zip(&got).take_while(|(a, b)| a == b).count();
            let around = |t: &[&str]| t[at.saturating_sub(3)..(at + 4).min(t.len())].join(" ");
            f.differing.push(format!(
                "{id}: plain {:?} / markdown {:?}",
                around(&want),
                around(&got)
            ));
        }
        let kept = kept_blocks(html, &page.text);
        if let Ok(kind) = std::env::var("MD_MISSING") {
            let k: usize = kind.parse().unwrap();
            if kept.0[k] > blocks.0[k] + 5 {
                println!(
                    "missing {}: {id} kept {} markdown {}",
                    KINDS[k], kept.0[k], blocks.0[k]
                );
            }
        }
        if std::env::var("MD_DEBUG")
            .is_ok_and(|k| kept.0.iter().zip(blocks.0).any(|(a, b)| b < *a) && id.contains(&k))
        {
            println!(
                "== {id}: kept {:?} markdown {:?}\n{markdown}\n-- plain\n{}",
                kept.0, blocks.0, page.text
            );
        }
        for k in 0..4 {
            f.found[k] += blocks.0[k].min(kept.0[k]);
            f.kept[k] += kept.0[k];
        }
    }
    f
}

fn print(what: &str, f: &Figures) {
    println!(
        "{what}: {} pages, the same words in {} ({:.1}%)",
        f.pages,
        f.same_words,
        100.0 * f.same_words as f64 / f.pages.max(1) as f64
    );
    for (k, kind) in KINDS.iter().enumerate() {
        println!(
            "  {:<12} {:>6} of {:>6} found ({:.1}%)",
            kind,
            f.found[k],
            f.kept[k],
            100.0 * f.found[k] as f64 / f.kept[k].max(1) as f64
        );
    }
    for d in f.differing.iter().take(5) {
        println!("  differs: {d}");
    }
}

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/articles")
}

#[test]
fn words_and_structure_survive_on_the_fixture_pages() {
    let set = pages(&fixture_dir());
    for links in [false, true] {
        let f = check(&set, links);
        print(&format!("fixtures, links {links}"), &f);
        assert_eq!(f.same_words, f.pages, "{:?}", f.differing);
        for (k, kind) in KINDS.iter().enumerate() {
            assert!(
                f.found[k] * 100 >= f.kept[k] * 95,
                "{}: {} of {}",
                kind,
                f.found[k],
                f.kept[k]
            );
        }
    }
}

/// F1 against the truth, as the extraction benchmark scores.
fn f1_against(truth: &serde_json::Value, texts: &HashMap<String, String>) -> f64 {
    let (mut ps, mut rs) = (Vec::new(), Vec::new());
    for (id, text) in texts {
        let body = truth[id.as_str()]["articleBody"].as_str().unwrap_or("");
        let (p, r) = scoring::page_precision_recall(body, text);
        ps.extend(p);
        rs.extend(r);
    }
    scoring::macro_f1(&ps, &rs).0
}

#[test]
#[ignore = "prints figures; needs ../shared/bench"]
fn report_markdown() {
    let only = std::env::var("MD_SET").ok();
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench");
    for set in ["extraction", "wcxb-dev"] {
        if only.as_deref().is_some_and(|o| o != set) {
            continue;
        }
        let dir = shared.join(set);
        let pages = pages(&dir);
        let truth: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("ground-truth.json")).unwrap())
                .unwrap();
        for links in [false, true] {
            print(&format!("{set}, links {links}"), &check(&pages, links));
        }
        let input = Input {
            markdown: Some(MarkdownOptions { links: true }),
            ..Input::default()
        };
        let (mut plain, mut stripped) = (HashMap::new(), HashMap::new());
        for (id, html) in &pages {
            let page = extract(html, &input);
            stripped.insert(id.clone(), parse_back(&page.markdown.unwrap()).0);
            plain.insert(id.clone(), page.text);
        }
        println!(
            "{set}: F1 plain {:.4}, Markdown stripped {:.4} (scored as the extraction benchmark)",
            f1_against(&truth, &plain),
            f1_against(&truth, &stripped)
        );
    }
}
