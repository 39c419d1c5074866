//! Where the parse's time goes, step by step (issue 44).
//!
//! ```text
//! PARSE_FLOOR_DIR=/usr/share/doc/openjdk-17-jre-headless/api \
//!   cargo test --release -p nearcrawl-extract parse_floor -- --ignored --nocapture
//! ```
//!
//! Over every `*.html` under the directory (at most `PARSE_FLOOR_PAGES`,
//! default 12,000), decoded and stripped as the extractor does, it times:
//!
//! 1. our tokenizer alone, into a sink that drops the tokens;
//! 2. the tokenizer and html5ever's tree builder into scraper's tree, and
//!    the tree dropped (the parse before issue 44's tree builder);
//! 3. today's parse (`parse_stripped`): our tree builder into our tree
//!    ([`crate::dom`]), html5ever's where ours gives up.
//!
//! Prints the best of 3 rounds. `tree_check` (below) builds the same pages
//! both ways and compares the trees.

use std::path::{Path, PathBuf};
use std::time::Instant;

use html5ever::tokenizer::{Token, TokenSinkResult};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Drops every token.
struct NullSink;

impl crate::tokenize::Sink for NullSink {
    fn text(&self, _text: &str) {}

    fn tag(&self, _tag: crate::tag::Tag<'_>) -> TokenSinkResult<()> {
        TokenSinkResult::Continue
    }

    fn token(&self, _token: Token) {}
}

fn pages(dir: &Path, most: usize) -> Vec<String> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "html") {
                files.push(p);
            }
        }
    }
    files.sort();
    // Every n-th file, so a sample spans the whole site.
    let step = files.len().div_ceil(most).max(1);
    files
        .iter()
        .step_by(step)
        .filter_map(|f| std::fs::read(f).ok())
        .map(|bytes| {
            let (html, ..) = crate::decode::decode_html(&bytes, None);
            crate::prestrip::strip(&html).markup.into_owned()
        })
        .filter(|m| m.len() <= crate::stream::STREAM_ABOVE)
        .collect()
}

/// Best of 3 rounds of `step` over `pages`, in ms a page.
fn best(pages: &[String], mut step: impl FnMut(&str) -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut sum = 0;
    for _ in 0..3 {
        let t = Instant::now();
        sum = pages.iter().map(|p| step(p)).sum();
        best = best.min(t.elapsed().as_secs_f64() * 1000.0 / pages.len() as f64);
    }
    (best, sum)
}

#[test]
#[ignore = "prints where the parse's time goes; run in release with PARSE_FLOOR_DIR"]
fn parse_floor() {
    let Some(dir) = std::env::var_os("PARSE_FLOOR_DIR") else {
        eprintln!("PARSE_FLOOR_DIR is not set");
        return;
    };
    let most = std::env::var("PARSE_FLOOR_PAGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(12_000);
    let pages = pages(Path::new(&dir), most);
    let bytes: usize = pages.iter().map(String::len).sum();
    println!(
        "{} pages, {:.1} KB a page (stripped)",
        pages.len(),
        bytes as f64 / 1e3 / pages.len() as f64
    );
    let (tokens, _) = best(&pages, |p| {
        crate::tokenize::tokenize(p, &NullSink);
        0
    });
    let (html5ever, nodes) = best(&pages, |p| {
        crate::tokenize::parse_document(p, scraper::Html::new_document())
            .tree
            .nodes()
            .count()
    });
    let (ours, our_nodes) = best(&pages, |p| {
        crate::parse_stripped(p, p.matches('<').count())
            .nodes()
            .len()
    });
    println!(
        "ms a page: tokenizer alone {tokens:.4}, html5ever's builder into scraper's tree \
         {html5ever:.4}, our builder into our tree (today) {ours:.4}"
    );
    println!("nodes: scraper's {nodes}, ours {our_nodes}");
}

/// Every page under `TREE_CHECK_DIR` (decoded and stripped as the
/// extractor does) built both ways: the trees must be the same; prints
/// how many pages this builder left to html5ever's.
///
/// ```text
/// TREE_CHECK_DIR=/usr/share/doc/rust-doc/html \
///   cargo test --release -p nearcrawl-extract --lib tree_check -- --ignored --nocapture
/// ```
#[test]
#[ignore = "reads a site from TREE_CHECK_DIR"]
fn tree_check() {
    let Some(dir) = std::env::var_os("TREE_CHECK_DIR") else {
        eprintln!("TREE_CHECK_DIR is not set");
        return;
    };
    let pages = pages(Path::new(&dir), usize::MAX);
    let built = pages
        .iter()
        .filter(|p| crate::tree_builder::tests::same_or_gave_up(p))
        .count();
    println!(
        "{} pages: {built} built here, {} left to html5ever's, every tree the same",
        pages.len(),
        pages.len() - built
    );
}
