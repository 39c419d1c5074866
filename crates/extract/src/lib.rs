//! HTML bytes in, the page's main text, metadata and links out; PDFs too
//! ([`extract_pdf`]), and the same text as Markdown when asked
//! ([`Input::markdown`]), with the page's language ([`page_language`]).
//!
//! Near-duplicate decisions are only as good as the text fed to them: pages
//! of one site share header, menus, sidebars and footer, and fingerprinting
//! that boilerplate makes distinct pages look alike. [`extract`] keeps the
//! main content, scored the way readability does (paragraph text and commas
//! flow up to their containers, link-heavy and boilerplate-named blocks
//! count against), and falls back to the full visible text when no content
//! block stands out, so a page with visible text never comes out empty.
//!
//! ```
//! use nearcrawl_extract::{extract, ContentPath, Input};
//!
//! let html = br#"<html lang="en"><head><title>Fox news</title></head><body>
//!   <nav><a href="/">Home</a> <a href="/about">About</a></nav>
//!   <article><h1>Fox news</h1>
//!     <p>The quick brown fox jumped over the lazy dog, again, to nobody's surprise.</p>
//!     <p>Witnesses said the dog, as usual, did not react at all to the jumping fox.</p>
//!     <p>Experts, asked about it later, agreed that this is what dogs and foxes do.</p>
//!     <p>The fox, for its part, declined to comment on the matter, as foxes tend to.</p>
//!   </article>
//!   <footer>Copyright 2024 <a href="mailto:x@example.com">Contact</a></footer>
//! </body></html>"#;
//! let url = url::Url::parse("https://example.com/news/fox").unwrap();
//! let page = extract(html, &Input { url: Some(&url), ..Input::default() });
//! assert_eq!(page.title.as_deref(), Some("Fox news"));
//! assert_eq!(page.lang.as_deref(), Some("en"));
//! assert!(page.text.starts_with("The quick brown fox"));
//! assert!(!page.text.contains("Copyright"));
//! assert_eq!(page.path, ContentPath::MainContent);
//! assert_eq!(page.links.len(), 2); // mailto: is not a link to crawl
//! assert_eq!(page.links[1].url.as_str(), "https://example.com/about");
//! ```

//!
//! # Quality and speed
//!
//! On the 181 pages of the Article Extraction Benchmark
//! (`../shared/bench/extraction`, scored like its `score.py`; run
//! `cargo test --release -p nearcrawl-extract --test benchmark -- --ignored
//! --nocapture`): F1 0.976 (precision 0.970, recall 0.982), no empty output,
//! against 0.970 for rs_trafilatura and 0.958 for trafilatura; a median of
//! about 1.3 ms per page (2 ms on `wcxb-dev`) when measured, before the
//! parse got a tokenizer of its own (`tokenize.rs`: byte runs found with
//! memchr, fed to html5ever's tree builder), which made these pages 1.8
//! to 2 times faster to extract (`extract_bench`, one run each); the parse
//! is now about a quarter of the time, the content rules most of the rest.
//! The tokens build a tree of the crate's own (`dom.rs`: small nodes in
//! one vector, every element's attributes in another, the text and the
//! attribute values in two strings) through a tree builder of its own
//! (`tree_builder.rs`) for what ordinary pages hold;
//! html5ever's builds scraper's tree for the rest (SVG and MathML,
//! templates, text a table fosters out, misnested formatting), copied
//! into ours. The trees are the same as html5ever's.
//!
//! The rules are general ones (readability's scoring, boilerplate words in
//! class names, link density), not fitted to single pages of that set.
//!
//! Pages built for a browser running scripts are read as a client without
//! scripts sees them: a page with no text of its own is read from its
//! `<noscript>` markup (Discourse forums serve whole threads there), or,
//! failing that, with what it hides shown (a wrapper hidden until the page
//! has loaded); React's streamed segments (`<div hidden id="S:1">`) are
//! content; an `aside`/`nav`/`header`/`footer` left open around `<main>`
//! is read as a `div`; and when the winning block is one of three or more
//! items of the same markup (forum posts, answers), its siblings come in.
//! On `../shared/bench/wcxb-dev` (1,497 pages of seven types, run the
//! `report_wcxb_by_page_type` bench of the same test file) that took F1
//! from 0.803 to 0.815 on the part used to choose the rules and from 0.826
//! to 0.844 on the part held out (forums 0.607 to 0.797).
//!
//! Link lists inside the main block are navigation (related links, tag
//! clouds) and are dropped, unless they hold two thirds of its text and
//! more than one navigation block's worth: then they are what the page is
//! (a category, an index, a listing), and stay. Listings 0.548 to 0.577
//! (chosen on) and 0.719 to 0.764 (held out); all types 0.819 and 0.847.
//!
//! A page built as a stack of sections (three or more sibling blocks of a
//! couple of sentences each, mostly outside links, the others holding more
//! than the winner: service and landing pages) is read whole; a `<header>`
//! holding half of the page's text is a block a page builder named, not
//! the page's header; popovers and blocks hidden by utility classes
//! (`hidden`, `d-none`) are hidden; and a page that shows next to no text,
//! less than its own description, is read from that description (app
//! shells). All types 0.832 (chosen on) and 0.855 (held out); articles
//! 0.945 and 0.945, services 0.774 and 0.827, forums 0.738 and 0.795; no
//! empty text where the page has any.
//!
//! Where one look at the markup misleads, what an element holds decides:
//! the words of a link are not a list of links (Sphinx wraps a reference's
//! words in a span), a `role="tablist"` holding its panels is an accordion
//! of answers, tab panels are read whether their tab is open or not (as a
//! closed `<details>` is), ad words in a class do not make a paragraph or
//! heading an ad (a page builder's `kt-adv-heading`), and microdata's
//! `itemprop="author"` is a byline (a forum post's user panel). Closed
//! panels of disclosure widgets (a button with `aria-expanded` and
//! `aria-controls`: accordions) are opened, and on a page built from
//! widgets (blocks named so hold 40% of its text, its largest block among
//! them, as Elementor names every block) "widget" does not mark
//! boilerplate; a span around a
//! single link is inline styling, not a list of links. All types 0.844
//! and 0.866 (0.851 over the whole set; rs-trafilatura 0.839);
//! documentation 0.928 and 0.925; forums 0.746 and 0.802; services 0.798
//! and 0.838; articles 0.948 and 0.948.
//!
//! What the page declares of itself also counts. A declared main with a
//! paragraph ahead of the winner is taken whole (MDN's and javadoc's
//! introduction sits apart from the body scoring picks); a section whose
//! heading links to it is not judged by its id (Sphinx's `id="cookies"`
//! section); a `<header>` inside a `<section>` or `<main>` heads that part,
//! as HTML maps it to the banner only outside them. Blocks between the
//! page's `<h1>` and the content that hold a paragraph open the content (a
//! landing page's hero), and a link list right after a paragraph, between
//! the content's first and last ones, is text (a tutorial index), except
//! on a page whose `og:type` is `article`, where both are a story's
//! furniture and inserts. All types 0.849 (chosen on) and 0.872 (held
//! out), 0.856 over the whole set; every page type above rs-trafilatura's
//! figure (documentation 0.932, services 0.818).
//!
//! schema.org types count as `og:type` does. On a page that declares a
//! `Product` (og:type, microdata or JSON-LD), "reviews" are customers'
//! asides; elsewhere they are a service's testimonials, and read. On one
//! that declares a `DiscussionForumPosting`, "comment" names the replies
//! (not on a Q&A page, where comments are remarks under the answers). A
//! page with three or more `<h1>`s heads its items with them, and they
//! stay. A paragraph that is one link is a line (a listing's entry
//! title), not a list, but on a declared article, where such a line
//! points to another story. A button naming the panel it controls opens
//! it with or without `aria-expanded`; a tab list holding the panels its
//! labels control is read; a block holding 40% of the text is kept whatever its name, a
//! block named "comments" included (a forum's replies), while comments
//! each named so are still dropped. Runners-up in `<article>`s of another
//! kind than the winner's are other posts' teasers, not parts of it, and
//! a stack of sections that is one section of a larger stack is read
//! with it. All types 0.852 (chosen on) and 0.874 (held out), 0.859 over
//! the whole set.
//!
//! What a reader opens with a click is read, and what a page repeats to
//! animate is read once. A hidden block right after a question is an
//! FAQ's answer; a `<button>` naming its panel heads it when it stands in
//! a heading or asks a question (ARIA's accordion), while a "Read more"
//! button is not text; a list that is one run of items repeated whole is
//! a marquee, read once. A `<h1>` worded apart from the title is a landing
//! page's pitch or a thread's subject and stays, but on a story (og:type,
//! or a JSON-LD `Article` or `BlogPosting` at the top of a block), where
//! it is the headline. "disclaimer" names legal small print, and a card's
//! "footer" is part of the card. A list whose items hold a sentence's
//! worth of words outside their links ("Flagship hotel: ...") is text,
//! not navigation. All types 0.854 (chosen on) and 0.876 (held out),
//! 0.861 over the whole set; rs-trafilatura 0.836, 0.848 and 0.839.
//!
//! Pages with more than a megabyte of markup (script and style bodies left
//! out) are read in one pass over the tokens, without a tree, which would
//! take about thirteen times their size: their full visible text, with the
//! same junk rules (a 6 MB javadoc index page: 78 MB and 0.37 s with a
//! tree, 24 MB and 0.08 s without). On `wcxb-dev` that is 10 of 1,497
//! pages, and F1 over the set stays 0.810.

mod chars;
mod classify;
mod content;
mod decode;
mod dom;
mod elements;
mod json;
mod language;
mod links;
mod markdown;
mod meta;
mod nesting;
mod node_map;
#[cfg(test)]
mod parse_floor;
mod pdf;
mod plain;
mod prestrip;
mod render;
mod repair;
mod shell;
mod stream;
mod tag;
mod tokenize;
mod tree_builder;

use chars::visible_chars;
use dom::{Dom, Node};
use url::Url;

pub use decode::{EncodingSource, decode_html};
pub use json::{page_from_json, page_to_json};
pub use language::{iso_639_1, page_language, parse_languages};
pub use links::{Link, LinkKind};
pub use markdown::MarkdownOptions;
pub use meta::Robots;
pub use pdf::{MAX_PDF_PAGES, PdfError, extract_pdf, is_pdf};

/// What the caller knows about the bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Input<'a> {
    /// The page's URL: links and the canonical URL are resolved against it
    /// (and `<base href>`). Without it only absolute links are kept.
    pub url: Option<&'a Url>,
    /// The charset the server declared (Content-Type), if any.
    pub charset: Option<&'a str>,
    /// The X-Robots-Tag header value(s), newline-separated.
    pub x_robots_tag: Option<&'a str>,
    /// The Content-Language header: the page's language when its markup
    /// declares none.
    pub content_language: Option<&'a str>,
    /// Write the text as Markdown too ([`Page::markdown`]).
    pub markdown: Option<MarkdownOptions>,
    /// Anchor texts are not needed: [`Link::text`] may be left empty (a
    /// crawl that only follows links does not build them).
    pub links_without_text: bool,
}

/// The parts of extraction, as [`extract_timed`] reports their ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Decoding the bytes and parsing the markup into a tree.
    Parse,
    /// Reading the metadata and choosing and writing the main text.
    Extract,
    /// Collecting the links.
    Links,
    /// Deciding the page's language.
    Language,
}

/// How the text was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentPath {
    /// A main-content block was found and kept, boilerplate dropped.
    MainContent,
    /// No block stood out (or it held too little): the full visible text.
    FullText,
    /// The page shows next to no text, less than its own description says
    /// (a page its scripts fill in): the description.
    Description,
}

/// What [`extract`] found.
#[derive(Debug, Clone)]
pub struct Page {
    pub title: Option<String>,
    /// The page's main heading: the first `<h1>`, else the first element
    /// of class `title` (doxygen). With the title, it names what the page
    /// is about.
    pub heading: Option<String>,
    /// The site's name as the page declares it (`og:site_name`).
    pub site_name: Option<String>,
    pub description: Option<String>,
    /// `<html lang>` or Content-Language as declared, else detected from
    /// the text (ISO 639-3 code from whatlang), else none.
    pub lang: Option<String>,
    /// The language the text is in, as an ISO 639-1 code: detected when
    /// the detector is sure, else declared (see [`page_language`]).
    pub language: Option<&'static str>,
    /// `language` was detected, not declared, in a text whose first
    /// tokens are more identifiers, code and numbers than words: the
    /// words between them (keywords, fragments) are weak evidence, and
    /// C++ signatures read as French or Latin. The crawl's language
    /// filter lets the page's host decide such a page, as it does one
    /// whose language is unknown.
    pub language_from_code: bool,
    pub canonical: Option<Url>,
    /// As declared (`article:published_time`, `datePublished`, ...), not
    /// parsed.
    pub published: Option<String>,
    pub robots: Robots,
    /// Main text: one line per block (paragraph, heading, list item, table
    /// row).
    pub text: String,
    /// The same text as Markdown, when [`Input::markdown`] asks for it.
    pub markdown: Option<String>,
    pub path: ContentPath,
    pub links: Vec<Link>,
    /// The served HTML is an app shell: it shows next to no text and loads
    /// the script that builds the page (see `shell.rs` for the rule).
    pub app_shell: bool,
    /// The encoding the bytes were read in, and why.
    pub encoding: &'static str,
    pub encoding_source: EncodingSource,
}

/// Main text below this many characters is not trusted over the full text,
/// unless it is most of a page of at least as much ([`MAIN_SHARE`]).
const MIN_MAIN_CHARS: usize = 200;
/// A main text that holds this share of the page's characters (three
/// quarters) is trusted however short: what it leaves out is the page's
/// furniture, not text a short, wrong pick missed. A floor alone put twin
/// pages on both sides of it (rustdoc's `arm` and `aarch64` intrinsics, 198
/// and 206 characters of main text for one template: one page kept its
/// heading and the other did not).
const MAIN_SHARE: (usize, usize) = (3, 4);
/// A pass that finds this much main text (or half the page) is kept; a
/// shorter one makes the next, more lenient pass run.
const ENOUGH_MAIN_CHARS: usize = 500;
/// A page that declares its main content (`<main>`) needs half of it too,
/// up to this much. A strict pass that finds a paragraph or two of a long
/// declared main has dropped the page's own sections for a word that
/// names boilerplate elsewhere (a landing page's "teaser" sections, a
/// buying guide's product "widget"s); one that finds this much has found
/// the text (what the next pass adds is then mostly reviews and buy boxes).
const ENOUGH_OF_DECLARED_MAIN: usize = 2000;

/// Extracts the main text, metadata and links of an HTML document.
///
/// Never fails and never panics: malformed or truncated markup is parsed
/// the way browsers do, undecodable bytes become U+FFFD.
pub fn extract(bytes: &[u8], input: &Input<'_>) -> Page {
    extract_timed(bytes, input, &mut |_| {})
}

/// [`extract`], calling `lap` as each part of the work ends, so that a
/// caller can tell where the time goes. A part may end more than once
/// (the main text is read in two stretches, around the links).
pub fn extract_timed(bytes: &[u8], input: &Input<'_>, lap: &mut dyn FnMut(Stage)) -> Page {
    let (html, enc, encoding_source) = decode_html(bytes, input.charset);
    // The tree's size follows the markup left once script and style
    // bodies are dropped (inline scripts make many pages large). A page
    // too large for a tree is measured, not copied.
    if html.len() > stream::STREAM_ABOVE && prestrip::stripped_len(&html) > stream::STREAM_ABOVE {
        lap(Stage::Parse);
        return extract_streamed(&html, input, (enc, encoding_source), lap);
    }
    let stripped = prestrip::strip(&html);
    let json_ld = meta::json_ld_declares(&html);
    let mut doc = parse_stripped(&stripped.markup, stripped.lts);
    drop(stripped);
    drop(html);
    repair::repair(&mut doc);
    lap(Stage::Parse);
    let base = links::base_url(&doc, input.url);
    let meta = meta::read(&doc, base.as_ref(), input.x_robots_tag);
    lap(Stage::Extract);
    let with_text = !input.links_without_text;
    let mut links = links::collect(&doc, base.as_ref(), with_text);
    lap(Stage::Links);
    let reading = Reading {
        title: meta.title.as_deref(),
        declared: content::Declared {
            article: meta.declares_article,
            schema: meta.declares.or(json_ld),
        },
        markdown: input.markdown.map(|o| (o, base.as_ref())),
    };
    let mut text = main_or_full_text(&doc, &reading);
    if text.path == ContentPath::FullText {
        let full_chars = text.full_chars;
        let noscript =
            noscript_view(&doc, &reading).filter(|(t, _)| visible_chars(&t.plain) > full_chars);
        if let Some((noscript_text, inner)) = noscript {
            text = noscript_text;
            let known: std::collections::HashSet<Url> =
                links.iter().map(|l| l.url.clone()).collect();
            let inner = links::collect(&inner, base.as_ref(), with_text);
            links.extend(inner.into_iter().filter(|l| !known.contains(&l.url)));
        } else if full_chars < MIN_MAIN_CHARS && repair::unhide(&mut doc) {
            // Read again only if something was shown: the same tree reads
            // the same (a third of javadoc's pages are this short, and
            // most hide nothing).
            let shown = main_or_full_text(&doc, &reading);
            if shown.full_chars > full_chars {
                text = shown;
            }
        }
        if let Some(summary) = described_better(&text.plain, meta.summary.as_deref()) {
            text = Text {
                markdown: input
                    .markdown
                    .map(|_| markdown::MarkdownWriter::paragraphs(&summary)),
                plain: summary,
                path: ContentPath::Description,
                full_chars: text.full_chars,
            };
        }
    }
    let app_shell = text.path != ContentPath::MainContent && shell::is_app_shell(&doc);
    lap(Stage::Extract);
    // Dropping the tree is part of what parsing costs.
    drop(doc);
    lap(Stage::Parse);
    let mut page = page(meta, text, links, input, (enc, encoding_source), lap);
    page.app_shell = app_shell;
    page
}

/// What reading a tree needs besides the tree: the page's title and what
/// it declares itself, and how to write Markdown, if asked.
struct Reading<'a> {
    title: Option<&'a str>,
    declared: content::Declared,
    markdown: Option<(MarkdownOptions, Option<&'a Url>)>,
}

/// A page's text, as read.
struct Text {
    plain: String,
    markdown: Option<String>,
    path: ContentPath,
    /// Visible characters of the whole page.
    full_chars: usize,
}

/// The page's declared description, when the page shows next to no text
/// and less than the description says: a page its scripts fill in
/// (Discourse and other single-page apps serve an empty shell, with the
/// opening post in `og:description`). What the page says of itself is
/// better than its menu, or nothing; pages with text of their own never
/// come here.
fn described_better(text: &str, summary: Option<&str>) -> Option<String> {
    let summary = summary?;
    let shown = visible_chars(text);
    (shown < MIN_MAIN_CHARS && visible_chars(summary) > shown).then(|| summary.to_owned())
}

/// The page as a client without scripts shows it, when its `<noscript>`
/// elements hold markup: main or full text, and the parsed markup (for its
/// links). Parsed once more, as such a client would; noscript elements
/// inside are left as they are (no second fallback).
fn noscript_view(doc: &Dom, reading: &Reading<'_>) -> Option<(Text, Dom)> {
    let markup = noscript_markup(doc)?;
    let inner = parse(&markup);
    let text = main_or_full_text(&inner, reading);
    Some((text, inner))
}

/// The page's main text, or its full visible text when no main part stands
/// out; with the visible characters of the whole page. Markdown, when
/// asked for, is written from the same elements.
fn main_or_full_text(doc: &Dom, reading: &Reading<'_>) -> Text {
    let root = doc.root();
    let declared = reading.declared;
    let title = (reading.title).map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "));
    let title = title.as_deref();
    // Strict rules first; relax them while the result is short of what the
    // page holds. Lengths count non-whitespace characters.
    let elements = elements::Elements::of(root);
    let facts = classify::FactsMap::new(elements.places(), elements.items.len());
    let outline = content::outline(&elements, &facts);
    let (wrappers, full_chars) = (&outline.wrappers, outline.chars as usize);
    // Asked only of a pass that found between the two amounts.
    let declared_main = std::cell::OnceCell::new();
    let enough = |len: usize| {
        len >= ENOUGH_MAIN_CHARS.min(full_chars / 2)
            && (len >= ENOUGH_OF_DECLARED_MAIN
                || len * 2 >= *declared_main.get_or_init(|| outline.declared_main_chars()) as usize)
    };
    let (mut best, mut best_len, mut best_analysis) = (String::new(), 0, None);
    // "Widget" names boilerplate, but not on a page whose builder names
    // every block so.
    let widgets_are_layout = outline.built_from_widgets(root, &facts);
    let mut last_pass = None;
    for rules in classify::Rules::PASSES {
        let rules = classify::Rules {
            widgets_are_layout,
            reviews_are_asides: declared.schema.product,
            comments_are_posts: declared.schema.discussion,
            ..rules
        };
        // A pass that reads the page as the last one did finds what it
        // found.
        if last_pass.is_some_and(|last| facts.reads_alike(last, rules)) {
            continue;
        }
        last_pass = Some(rules);
        let analysis = content::analyze(&elements, rules, wrappers, &facts);
        let main = render_content(
            root,
            &analysis,
            declared,
            title,
            plain::TextBuilder::default(),
        );
        let main = main.finish();
        // A laxer pass must find clearly more to be preferred: a little
        // more is usually the boilerplate the stricter pass dropped.
        let len = visible_chars(&main);
        if len * 2 > best_len * 3 + 400 || best_len == 0 {
            (best, best_len, best_analysis) = (main, len, Some(analysis));
        }
        if enough(best_len) {
            break;
        }
    }
    let markdown = |(options, base)| markdown::MarkdownWriter::new(options, base);
    match best_analysis {
        Some(analysis) if !best.is_empty() && trusted(best_len, full_chars) => Text {
            markdown: (reading.markdown.map(markdown))
                .map(|w| render_content(root, &analysis, declared, title, w).finish()),
            plain: best,
            path: ContentPath::MainContent,
            full_chars,
        },
        _ => Text {
            plain: render_all(root, plain::TextBuilder::default()).finish(),
            markdown: (reading.markdown.map(markdown)).map(|w| render_all(root, w).finish()),
            path: ContentPath::FullText,
            full_chars,
        },
    }
}

/// Whether a main text of `main` characters is taken over the full text of
/// `full`: at least [`MIN_MAIN_CHARS`] (or all of a shorter page), or most
/// of a page that long.
fn trusted(main: usize, full: usize) -> bool {
    let (num, den) = MAIN_SHARE;
    main >= MIN_MAIN_CHARS.min(full) || (full >= MIN_MAIN_CHARS && main * den >= full * num)
}

/// Writes the content `analysis` selects under `root`, cleaned.
fn render_content<W: render::Writer>(
    root: dom::NodeRef<'_>,
    analysis: &content::Analysis<'_>,
    declared: content::Declared,
    title: Option<&str>,
    mut out: W,
) -> W {
    for node in content::select(root, analysis, declared) {
        let lists = render::link_lists_carry(node, analysis, declared.article);
        let cleaning = render::Cleaning::Content {
            analysis,
            title,
            lists,
            article: declared.article,
            story: declared.article || declared.schema.article,
        };
        render::render(node, cleaning, &mut out);
    }
    out
}

/// Writes all of `root` but junk.
fn render_all<W: render::Writer>(root: dom::NodeRef<'_>, mut out: W) -> W {
    render::render(root, render::Cleaning::None, &mut out);
    out
}

/// The markup inside the body's `<noscript>` elements, when there is some:
/// what a client without scripts shows. Pages built by scripts (Discourse
/// forums, for one) put their whole content there for such clients, and
/// leave the scripted page empty. The parser reads noscript content as
/// text (scripting is on, as in browsers), so it is parsed again here.
fn noscript_markup(doc: &Dom) -> Option<String> {
    let mut markup = String::new();
    for node in doc.root().descendants() {
        let Node::Element(e) = node.value() else {
            continue;
        };
        if e.name() != "noscript"
            || !node
                .ancestors()
                .any(|a| matches!(a.value(), Node::Element(p) if p.name() == "body"))
        {
            continue;
        }
        for child in node.children() {
            if let Node::Text(t) = child.value() {
                markup.push_str(t.as_str());
                markup.push('\n');
            }
        }
    }
    markup.contains('<').then_some(markup)
}

/// A page too large for an element tree (see [`stream`]): its full
/// visible text, metadata and links in one pass over the tokens.
fn extract_streamed(
    html: &str,
    input: &Input<'_>,
    encoding: (&'static encoding_rs::Encoding, EncodingSource),
    lap: &mut dyn FnMut(Stage),
) -> Page {
    let s = stream::extract(html, input.url);
    let mut meta = s.meta;
    if let Some(h) = input.x_robots_tag {
        meta.robots.add_header(h);
    }
    let text = Text {
        markdown: input
            .markdown
            .map(|_| markdown::MarkdownWriter::paragraphs(&s.text)),
        full_chars: visible_chars(&s.text),
        plain: s.text,
        path: ContentPath::FullText,
    };
    // One pass reads text and links alike.
    lap(Stage::Extract);
    page(meta, text, s.links, input, encoding, lap)
}

/// The page of its parts, and its language.
fn page(
    meta: meta::Meta,
    text: Text,
    links: Vec<Link>,
    input: &Input<'_>,
    (enc, encoding_source): (&'static encoding_rs::Encoding, EncodingSource),
    lap: &mut dyn FnMut(Stage),
) -> Page {
    // The header may list several languages: the first is the page's.
    let header = (input.content_language)
        .and_then(|h| h.split(',').next())
        .map(|l| l.trim().to_ascii_lowercase())
        .filter(|l| !l.is_empty());
    let declared = meta.lang.or(header);
    let decided = language::decide(declared.as_deref(), &text.plain);
    lap(Stage::Language);
    Page {
        language: decided.language,
        language_from_code: decided.from_code,
        lang: declared.or_else(|| decided.detected.map(str::to_string)),
        title: meta.title,
        heading: meta.heading,
        site_name: meta.site_name,
        description: meta.description,
        canonical: meta.canonical,
        published: meta.published,
        robots: meta.robots,
        text: text.plain,
        markdown: text.markdown,
        path: text.path,
        links,
        app_shell: false,
        encoding: enc.name(),
        encoding_source,
    }
}

/// At most this many nodes are made room for before parsing (64 bytes
/// each: 4 MiB).
const PRESIZED_NODES: usize = 1 << 16;

fn parse(html: &str) -> Dom {
    let stripped = prestrip::strip(html);
    parse_stripped(&stripped.markup, stripped.lts)
}

/// Markup cleaned by [`prestrip::strip`], which counted its `lts`, parsed
/// as a document.
/// The tree is sized for the page from the start: grown by doubling, its
/// copies were a twentieth of the parse. A start tag makes an element and
/// the text after any tag a text node, end tags none: so a page makes up
/// to one and a half nodes per `<` (javadoc 1.26: a node per `<` made
/// every tree grow once), and room is made for that many (what is never
/// written is never touched). Capped, as text can hold `<` that make no
/// node: a larger tree still grows as it needs.
fn parse_stripped(stripped: &str, lts: usize) -> Dom {
    let nodes = (lts + lts / 2).min(PRESIZED_NODES);
    tree_builder::parse_document(stripped, nodes)
}

/// The full visible text of a document (all but scripts, styles, hidden and
/// structural boilerplate elements), without choosing a main block.
pub fn full_text(bytes: &[u8], input: &Input<'_>) -> String {
    let (html, _, _) = decode_html(bytes, input.charset);
    let doc = parse(&html);
    let mut full = plain::TextBuilder::default();
    render::render(doc.root(), render::Cleaning::None, &mut full);
    full.finish()
}
