//! Extraction without an element tree, for very large pages.
//!
//! A parsed tree costs about thirteen times the page's bytes (a 6 MB
//! javadoc index page took 78 MB), so a crawl extracting several large
//! pages at once ran out of any memory bound. Past [`STREAM_ABOVE`] bytes
//! of markup the page is read in one pass over html5ever's tokens instead: memory is
//! the text and links kept, not the markup. What is lost is the choice of
//! a main block (it needs the tree): the text is the full visible text,
//! with the same junk rules as the tree's full text (hidden, never-text and
//! boilerplate elements dropped). Pages that big are indexes and listings,
//! where that is the text anyway.

use std::cell::RefCell;

use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{TagKind, Token, TokenSinkResult};
use url::Url;

use crate::classify::{is_block, is_junk_by_markup};
use crate::links::{Link, LinkKind};
use crate::meta::{Meta, Robots, clean, resolve};
use crate::plain::TextBuilder;
use crate::tag::Tag;

/// Pages whose markup (script and style bodies left out) is longer than
/// this are extracted without a tree. Of the benchmark pages, none of the
/// 181 news articles and 14 of the 1,497 pages of `wcxb-dev` are.
pub(crate) const STREAM_ABOVE: usize = 1 << 20;

/// Open elements kept at most (deeper ones are not tracked, as the tree
/// parser caps nesting too).
const MAX_OPEN: usize = 512;

/// What one pass over the tokens found.
pub(crate) struct Streamed {
    /// As the tree's metadata (X-Robots-Tag not yet added).
    pub meta: Meta,
    pub text: String,
    pub links: Vec<Link>,
}

/// Reads `html` in one pass; links and the canonical URL are resolved
/// against `<base href>` (else `page`).
pub(crate) fn extract(html: &str, page: Option<&Url>) -> Streamed {
    let sink = Sink::default();
    crate::tokenize::tokenize(html, &sink);
    sink.0.into_inner().finish(page)
}

#[derive(Default)]
struct Sink(RefCell<State>);

/// An `<a>` being read.
struct OpenLink {
    href: String,
    rel: String,
    text: String,
}

#[derive(Default)]
struct State {
    /// Open elements (names), innermost last.
    open: Vec<String>,
    /// Depth of `open` at which a junk element opened: text is dropped
    /// until it closes.
    junk_at: Option<usize>,
    pre: u32,
    text: TextBuilder,
    /// The element whose text is being captured (`title`, `h1`, a
    /// `class="title"` element) and its depth.
    capture: Option<(Capture, usize, String)>,
    title: Option<String>,
    h1: Option<String>,
    class_title: Option<String>,
    og_title: Option<String>,
    og_site_name: Option<String>,
    description: Option<String>,
    og_description: Option<String>,
    lang: Option<String>,
    content_language: Option<String>,
    base: Option<String>,
    canonical: Option<String>,
    published: Option<String>,
    robots: Robots,
    og_type_article: bool,
    link: Option<OpenLink>,
    /// (href, rel, text, kind), resolved at the end against the base.
    links: Vec<(String, String, String, LinkKind)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Capture {
    Title,
    H1,
    ClassTitle,
}

fn attr<'a>(tag: &Tag<'a>, name: &str) -> Option<&'a str> {
    tag.attrs.get(name)
}

fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
            | "param"
    )
}

/// Elements a sibling of the same name closes (`<li>` after `<li>`).
fn closes_itself(tag: &str) -> bool {
    matches!(
        tag,
        "p" | "li" | "dt" | "dd" | "tr" | "td" | "th" | "option"
    )
}

const PUBLISHED_NAMES: [&str; 5] = [
    "pubdate",
    "publishdate",
    "date",
    "dc.date",
    "dc.date.issued",
];

impl State {
    fn start(&mut self, tag: &Tag<'_>) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        self.head_facts(name, tag);
        let raw = match name {
            "script" => Some(TokenSinkResult::RawData(RawKind::ScriptData)),
            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                Some(TokenSinkResult::RawData(RawKind::Rawtext))
            }
            "title" | "textarea" => Some(TokenSinkResult::RawData(RawKind::Rcdata)),
            "plaintext" => Some(TokenSinkResult::Plaintext),
            _ => None,
        };
        if is_void(name) || tag.self_closing {
            if name == "area" {
                self.area(tag);
            }
            if self.junk_at.is_none() && matches!(name, "br" | "hr") {
                self.text.newline();
            }
            return raw.unwrap_or(TokenSinkResult::Continue);
        }
        if closes_itself(name) && self.open.last().is_some_and(|top| top == name) {
            self.end(name);
        }
        if self.open.len() >= MAX_OPEN {
            return raw.unwrap_or(TokenSinkResult::Continue);
        }
        self.open.push(name.to_string());
        let depth = self.open.len();
        if self.junk_at.is_none() && name != "title" && is_junk_by_markup(name, |n| attr(tag, n)) {
            self.junk_at = Some(depth);
        }
        self.start_capture(name, tag, depth);
        // Links count wherever they are (menus too), as in the tree.
        if name == "a" {
            self.link = attr(tag, "href").map(|href| OpenLink {
                href: href.to_string(),
                rel: attr(tag, "rel").unwrap_or("").to_string(),
                text: String::new(),
            });
        }
        if self.junk_at.is_none() {
            match name {
                "pre" => {
                    self.text.newline();
                    self.pre += 1;
                }
                "td" | "th" => self.text.cell(),
                _ if is_block(name) => self.text.newline(),
                _ => {}
            }
        }
        raw.unwrap_or(TokenSinkResult::Continue)
    }

    /// `<html lang>`, `<base>`, `<meta>`, `<link>`: the page's metadata.
    fn head_facts(&mut self, name: &str, tag: &Tag<'_>) {
        let set = |slot: &mut Option<String>, v: Option<&str>| {
            if slot.is_none() {
                *slot = v.and_then(clean);
            }
        };
        match name {
            "html" => set(&mut self.lang, attr(tag, "lang")),
            "base" => set(&mut self.base, attr(tag, "href")),
            "link" => {
                let rel = attr(tag, "rel").unwrap_or("").to_ascii_lowercase();
                let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
                if rels.contains(&"canonical") {
                    set(&mut self.canonical, attr(tag, "href"));
                }
                if rels.iter().any(|r| *r == "next" || *r == "prev") {
                    if let Some(href) = attr(tag, "href") {
                        let link = (
                            href.into(),
                            rel.clone(),
                            String::new(),
                            LinkKind::Pagination,
                        );
                        self.links.push(link);
                    }
                }
            }
            "meta" => {
                let content = attr(tag, "content");
                let name = attr(tag, "name").unwrap_or("").to_ascii_lowercase();
                let property = attr(tag, "property").unwrap_or("");
                let equiv = attr(tag, "http-equiv").unwrap_or("").to_ascii_lowercase();
                match (name.as_str(), property) {
                    ("description", _) => set(&mut self.description, content),
                    ("robots", _) => self.robots.add(content.unwrap_or("")),
                    (n, _) if PUBLISHED_NAMES.contains(&n) => set(&mut self.published, content),
                    (_, "og:title") => set(&mut self.og_title, content),
                    (_, "og:site_name") => set(&mut self.og_site_name, content),
                    (_, "og:description") => set(&mut self.og_description, content),
                    (_, "og:type") => {
                        self.og_type_article |=
                            content.is_some_and(|c| c.trim().eq_ignore_ascii_case("article"));
                    }
                    (_, "article:published_time") => set(&mut self.published, content),
                    _ => {}
                }
                if attr(tag, "itemprop") == Some("datePublished") {
                    set(&mut self.published, content);
                }
                if equiv == "content-language" {
                    set(&mut self.content_language, content);
                }
            }
            _ => {}
        }
    }

    fn start_capture(&mut self, name: &str, tag: &Tag<'_>, depth: usize) {
        if self.capture.is_some() {
            return;
        }
        let what = match name {
            "title" if self.title.is_none() => Capture::Title,
            "h1" if self.h1.is_none() => Capture::H1,
            _ if self.class_title.is_none()
                && self.open.iter().any(|o| o == "body")
                && attr(tag, "class")
                    .is_some_and(|c| c.split_ascii_whitespace().any(|c| c == "title")) =>
            {
                Capture::ClassTitle
            }
            _ => return,
        };
        self.capture = Some((what, depth, String::new()));
    }

    fn area(&mut self, tag: &Tag<'_>) {
        if let Some(href) = attr(tag, "href") {
            let rel = attr(tag, "rel").unwrap_or("").to_string();
            let alt = attr(tag, "alt").unwrap_or("").to_string();
            self.links
                .push((href.to_string(), rel, alt, LinkKind::Area));
        }
    }

    fn end(&mut self, name: &str) {
        let Some(at) = self.open.iter().rposition(|o| o == name) else {
            return;
        };
        while self.open.len() > at {
            let closed = self.open.pop().expect("at least `at` open");
            let depth = self.open.len() + 1;
            self.close(&closed, depth);
        }
    }

    /// `name`, open at `depth`, closes.
    fn close(&mut self, name: &str, depth: usize) {
        if let Some((what, _, text)) = self.capture.take_if(|c| c.1 == depth) {
            let slot = match what {
                Capture::Title => &mut self.title,
                Capture::H1 => &mut self.h1,
                Capture::ClassTitle => &mut self.class_title,
            };
            *slot = clean(&text);
        }
        if name == "a" {
            if let Some(l) = self.link.take() {
                self.links.push((l.href, l.rel, l.text, LinkKind::Anchor));
            }
        }
        if self.junk_at == Some(depth) {
            self.junk_at = None;
            return;
        }
        if self.junk_at.is_some() {
            return;
        }
        if name == "pre" {
            self.pre = self.pre.saturating_sub(1);
        }
        if name == "tr" {
            self.text.end_row();
        }
        if is_block(name) && !matches!(name, "td" | "th") {
            self.text.newline();
        }
    }

    fn characters(&mut self, t: &str) {
        if let Some((_, _, text)) = &mut self.capture {
            if text.len() < 4096 {
                text.push_str(t);
            }
        }
        if let Some(l) = &mut self.link {
            if l.text.len() < 1024 {
                l.text.push_str(t);
            }
        }
        if self.junk_at.is_some() || self.open.last().is_some_and(|o| o == "title") {
            return;
        }
        if self.pre > 0 {
            self.text.raw(t);
        } else {
            self.text.add_text(t);
        }
    }

    fn finish(mut self, page: Option<&Url>) -> Streamed {
        while let Some(open) = self.open.pop() {
            let depth = self.open.len() + 1;
            self.close(&open, depth);
        }
        let base = match (&self.base, page) {
            (Some(b), Some(p)) => p.join(b.trim()).ok(),
            (Some(b), None) => Url::parse(b.trim()).ok(),
            (None, p) => p.cloned(),
        }
        .or_else(|| page.cloned());
        let base = base.as_ref();
        let links = self
            .links
            .into_iter()
            .filter_map(|(href, rel, text, kind)| {
                let rel = rel.to_ascii_lowercase();
                Some(Link {
                    url: resolve(base, &href)?,
                    text: text.split_whitespace().collect::<Vec<_>>().join(" "),
                    nofollow: rel
                        .split_ascii_whitespace()
                        .any(|r| matches!(r, "nofollow" | "ugc" | "sponsored")),
                    kind,
                })
            })
            .collect();
        let meta = Meta {
            title: self.og_title.or(self.title).or_else(|| self.h1.clone()),
            heading: self.h1.or(self.class_title),
            site_name: self.og_site_name,
            summary: crate::meta::longest(&self.description, &self.og_description),
            description: self.description.or(self.og_description),
            lang: self
                .lang
                .or(self.content_language)
                .map(|l| l.to_ascii_lowercase()),
            canonical: self.canonical.and_then(|c| resolve(base, &c)),
            published: self.published,
            robots: self.robots,
            declares_article: self.og_type_article,
            // Selection, which asks it, does not run on a streamed page.
            declares: crate::meta::Declares::default(),
        };
        Streamed {
            meta,
            text: self.text.finish(),
            links,
        }
    }
}

impl crate::tokenize::Sink for Sink {
    fn text(&self, text: &str) {
        self.0.borrow_mut().characters(text);
    }

    fn tag(&self, tag: Tag<'_>) -> TokenSinkResult<()> {
        let mut state = self.0.borrow_mut();
        match tag.kind {
            TagKind::StartTag => state.start(&tag),
            TagKind::EndTag => {
                state.end(&tag.name);
                TokenSinkResult::Continue
            }
        }
    }

    /// Comments, DOCTYPEs and the end say nothing it reads.
    fn token(&self, _token: Token) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_finds_text_links_and_metadata_and_drops_junk() {
        let html = r#"<!doctype html><html lang="EN"><head><title>Index &amp; more</title>
            <base href="/docs/"><meta name="robots" content="nofollow">
            <link rel="canonical" href="index.html"><style>p { x: 1 }</style>
            <script>var s = "<p>not text</p>";</script></head><body>
            <nav><a href="nav.html">Nav</a> menu</nav>
            <h1>All <b>classes</b></h1>
            <ul><li><a href="A.html" rel="nofollow">A</a> first<li><a href="B.html">B</a> second</ul>
            <div hidden>secret</div><table><tr><td>x<td>y</table>
            <p>one<p>two<br>three <a href="mailto:a@b">mail</a></body></html>"#;
        let page = Url::parse("http://h.example/root/page.html").unwrap();
        let s = extract(html, Some(&page));
        assert_eq!(s.meta.title.as_deref(), Some("Index & more"));
        assert_eq!(s.meta.heading.as_deref(), Some("All classes"));
        assert_eq!(s.meta.lang.as_deref(), Some("en"));
        assert!(s.meta.robots.nofollow && !s.meta.robots.noindex);
        assert_eq!(
            s.meta.canonical.unwrap().as_str(),
            "http://h.example/docs/index.html"
        );
        assert_eq!(
            s.text,
            "All classes\nA first\nB second\nx | y\none\ntwo\nthree mail"
        );
        let links: Vec<(&str, bool)> = s
            .links
            .iter()
            .map(|l| (l.url.as_str(), l.nofollow))
            .collect();
        assert_eq!(
            links,
            [
                ("http://h.example/docs/nav.html", false),
                ("http://h.example/docs/A.html", true),
                ("http://h.example/docs/B.html", false),
            ]
        );
    }
}

/// The streamed pass against the tree's full text and links on the real
/// pages of the extraction benchmark (forced to stream, small as they
/// are): the same words and the same links, nearly always.
#[cfg(test)]
mod agreement {
    use std::collections::HashSet;
    use std::io::Read;

    use super::*;
    use crate::{Input, decode_html, full_text};

    fn words(s: &str) -> HashSet<&str> {
        s.split_whitespace().collect()
    }

    #[test]
    fn streamed_text_and_links_match_the_tree_on_real_pages() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            std::env::var("STREAM_AGREEMENT_DIR")
                .unwrap_or("../../tests/fixtures/articles/html".into()),
        );
        let Ok(entries) = std::fs::read_dir(&dir) else {
            panic!("{} is missing", dir.display());
        };
        let url = Url::parse("https://example.com/a/page.html").unwrap();
        let (mut pages, mut same_text, mut same_links) = (0, 0, 0);
        let mut worst = (1.0f64, String::new());
        for e in entries.flatten() {
            let mut bytes = Vec::new();
            let file = std::fs::File::open(e.path()).unwrap();
            flate2::read::GzDecoder::new(file)
                .read_to_end(&mut bytes)
                .unwrap();
            let input = Input {
                url: Some(&url),
                ..Input::default()
            };
            let tree_text = full_text(&bytes, &input);
            let tree = crate::extract(&bytes, &input);
            let (html, _, _) = decode_html(&bytes, None);
            let s = extract(&html, Some(&url));
            let (a, b) = (words(&tree_text), words(&s.text));
            let jaccard = a.intersection(&b).count() as f64 / a.union(&b).count().max(1) as f64;
            if jaccard < worst.0 {
                worst = (jaccard, e.file_name().to_string_lossy().into_owned());
            }
            pages += 1;
            same_text += usize::from(jaccard >= 0.95);
            let urls = |l: &[Link]| l.iter().map(|l| l.url.to_string()).collect::<HashSet<_>>();
            same_links += usize::from(urls(&tree.links) == urls(&s.links));
            if tree.title != s.meta.title {
                eprintln!("title: {:?} vs {:?}", tree.title, s.meta.title);
            }
        }
        eprintln!(
            "{pages} pages: text word sets within 0.95 on {same_text}, same links on \
             {same_links}; lowest word Jaccard {:.3} ({})",
            worst.0, worst.1
        );
        assert!(pages >= 50, "{pages} pages read");
        assert!(same_text * 100 >= pages * 95, "{same_text} of {pages}");
        assert!(same_links * 100 >= pages * 95, "{same_links} of {pages}");
    }
}
