//! What an element is: boilerplate to drop, a block or inline, and how its
//! class and id lean.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use crate::dom::{Element, Node, NodeRef};
use crate::node_map::Places;

/// The value of attribute `name`, in any namespace.
#[inline(always)]
pub(crate) fn attr<'a>(el: Element<'a>, name: &str) -> Option<&'a str> {
    el.any_attr(name)
}

/// Tags whose content is never page text.
fn is_never_text(tag: &str) -> bool {
    matches!(
        tag,
        "script"
            | "style"
            | "noscript"
            | "template"
            | "svg"
            | "math"
            | "canvas"
            | "iframe"
            | "object"
            | "embed"
            | "button"
            | "select"
            | "option"
            | "input"
            | "textarea"
            | "head"
            | "title"
            | "meta"
            | "link"
            | "audio"
            | "video"
            | "source"
            | "track"
            | "map"
            | "dialog"
    )
}

/// Structural boilerplate.
fn is_boilerplate_tag(tag: &str) -> bool {
    matches!(tag, "nav" | "aside" | "footer" | "header" | "menu")
}

/// Block-level tags: they start a new line of text.
pub(crate) fn is_block(tag: &str) -> bool {
    matches!(
        tag,
        "p" | "div"
            | "section"
            | "article"
            | "main"
            | "body"
            | "html"
            | "blockquote"
            | "pre"
            | "ul"
            | "ol"
            | "li"
            | "dl"
            | "dt"
            | "dd"
            | "table"
            | "thead"
            | "tbody"
            | "tfoot"
            | "tr"
            | "td"
            | "th"
            | "caption"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "hr"
            | "br"
            | "figure"
            | "figcaption"
            | "address"
            | "center"
            | "form"
            | "fieldset"
            | "details"
            | "summary"
            | "header"
            | "footer"
            | "nav"
            | "aside"
            | "hgroup"
            | "picture"
            | "noscript"
            | "legend"
    )
}

/// Class/id words of blocks that are never the content (matched anywhere:
/// "sharebar", "comments-area"; a forum post's "signaturecontainer", a
/// Q&A answer's "post-signature" author card).
#[rustfmt::skip]
const STRONG_NEGATIVE: &[&str] = &[
    "cookie", "consent", "gdpr", "share", "sharing", "social", "related",
    "recommend", "newsletter", "subscribe", "signup", "advert", "sponsor", "breadcrumb",
    "pagination", "popup", "modal", "footer", "navbar", "outbrain", "taboola", "signature",
    "more-stories", "most-read",
];
/// Class/id words of blocks that are usually not the content.
#[rustfmt::skip]
const NEGATIVE: &[&str] = &[
    "promo", "sidebar", "masthead", "toolbar", "banner", "byline", "author",
    "tagcloud", "rating", "login", "subscription", "caption", "credit", "teaser", "trending",
    "popular", "disclaimer",
];
/// Short words that are boilerplate only as whole tokens of a class or id
/// ("nav" but not "canvas", "pager" but not "PageBuilder-pageRow"). So is
/// "reviews", but only on a product's page ([`Rules::reviews_are_asides`];
/// a review article's own "review" is not the plural).
#[rustfmt::skip]
const NEGATIVE_WHOLE_WORDS: &[&str] = &["pager", "menu", "nav", "skip", "tags", "hide", "date", "dateline", "timestamp"];
/// Whole tokens (so that "ad" does not hit "header" or "read"), always
/// boilerplate.
const NEGATIVE_TOKENS: &[&str] = &["ad", "ads", "adv", "dfp", "gpt", "visually"];
/// The advertising ones among them: ads are slots (a div, an iframe) that
/// scripts fill, never a paragraph or heading of text ("kt-adv-heading" is
/// a page builder's advanced heading).
const AD_TOKENS: &[&str] = &["ad", "ads", "adv", "dfp", "gpt"];

fn is_text_element(tag: &str) -> bool {
    matches!(tag, "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

#[rustfmt::skip]
const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "main", "page", "post", "text", "blog", "story",
    "column", "prose", "richtext", "rich-text",
];

/// What an element's class and id words (and its microdata author
/// property) say. Found in one scan of each
/// word for every list at once: these questions are asked of every element
/// in every pass, and a substring search per listed word was a sixth of a
/// crawl's CPU time.
#[derive(Debug, Clone, Copy, Default)]
struct ClassFacts {
    /// The element has an id or a class.
    named: bool,
    bits: Bits,
}

/// What a class or id's words say, as bits.
type Bits = u16;

const STRONG: Bits = 1;
const WEAK: Bits = 2;
const TOKEN: Bits = 4;
const WEAK_TOKEN: Bits = 8;
const POS: Bits = 16;
const CONTAINS_CONTAINER: Bits = 32;
/// "widget": a weak boilerplate word, but for a page built from widgets
/// ([`Rules::widgets_are_layout`]).
const WIDGET: Bits = 64;
/// "reviews": a weak boilerplate word on a page that declares a product
/// ([`Rules::reviews_are_asides`]).
const REVIEWS: Bits = 128;
/// "comment", "disqus": a strong boilerplate word, but on a page that
/// declares a discussion ([`Rules::comments_are_posts`]).
const COMMENT: Bits = 256;

impl ClassFacts {
    fn has(self, bit: Bits) -> bool {
        self.bits & bit != 0
    }

    /// `page_words`: which of the words that depend on the page
    /// ([`Rules::page_words`]) mark boilerplate on this one.
    fn negative(self, weak: bool, page_words: Bits) -> bool {
        let strong = STRONG | TOKEN | (page_words & COMMENT);
        let weak_words = WEAK | WEAK_TOKEN | (page_words & (WIDGET | REVIEWS));
        self.bits & strong != 0 || (weak && self.bits & weak_words != 0)
    }

    /// Dropped by class or id: a boilerplate word and no container word.
    fn is_named_junk(self, weak: bool, page_words: Bits) -> bool {
        self.named && self.negative(weak, page_words) && !self.has(CONTAINS_CONTAINER)
    }

    fn weight(self, page_words: Bits) -> i32 {
        if !self.named {
            return 0;
        }
        let neg = self.negative(true, page_words);
        if neg && !self.has(CONTAINS_CONTAINER) {
            return -1;
        }
        i32::from(self.has(POS)) - i32::from(neg)
    }
}

/// Every listed substring word, and what finding it means.
static WORDS: LazyLock<(AhoCorasick, Vec<Bits>)> = LazyLock::new(|| {
    let mut words: Vec<(&str, Bits)> = Vec::new();
    let lists: [(&[&str], Bits); 6] = [
        (STRONG_NEGATIVE, STRONG),
        (NEGATIVE, WEAK),
        (POSITIVE, POS),
        (CONTAINER, CONTAINS_CONTAINER),
        (&["widget"], WIDGET),
        (&["comment", "disqus"], COMMENT),
    ];
    for (list, bit) in lists {
        for w in list {
            match words.iter_mut().find(|(x, _)| x == w) {
                Some((_, bits)) => *bits |= bit,
                None => words.push((w, bit)),
            }
        }
    }
    let automaton = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(words.iter().map(|(w, _)| w))
        .expect("static words");
    (automaton, words.iter().map(|(_, b)| *b).collect())
});

fn class_facts(node: NodeRef<'_>, el: Element<'_>) -> ClassFacts {
    let mut f = ClassFacts::default();
    // Split here: `Element::classes` interns every class name of the
    // element (string_cache atoms), 4% of extraction time when asked of
    // every element.
    let classes = attr(el, "class").unwrap_or("").split_ascii_whitespace();
    // Microdata's author (a Person) is who wrote the text, not the text:
    // a byline, or a forum post's user panel (name, title, post count).
    if attr(el, "itemprop").is_some_and(|p| p.split_ascii_whitespace().any(|p| p == "author")) {
        f.named = true;
        f.bits |= STRONG;
    }
    if let Some(id) = el.id() {
        f.named = true;
        let bits = word_bits(id, el);
        if !(negative_bits(bits) && is_permalinked(node, el, id)) {
            f.bits |= bits;
        }
    }
    for class in classes {
        f.named = true;
        f.bits |= word_bits(class, el);
    }
    f
}

/// What the listed words found in one class name or id say.
fn word_bits(part: &str, el: Element<'_>) -> Bits {
    let words = PartWords::of(part);
    if words.ad_token && !is_text_element(el.name()) {
        words.bits | TOKEN
    } else {
        words.bits
    }
}

/// What a class name or id says whatever its element: the words found,
/// and whether an advertising token is among them (boilerplate but on a
/// text element).
#[derive(Clone, Copy)]
struct PartWords {
    bits: Bits,
    ad_token: bool,
}

/// Parts read at most, per thread, before the memo starts over.
const PARTS_REMEMBERED: usize = 16_384;

thread_local! {
    /// A site's templates repeat a few hundred class names on every page
    /// ("col-first even-row-color" on javadoc's every table row): each is
    /// read once, where reading it each time was 3.5% of javadoc's
    /// extraction instructions. Looked up for every class and id, so
    /// hashed eight bytes a step: FNV's byte a step made javadoc's
    /// extraction 1.6% slower.
    static PARTS_READ: std::cell::RefCell<std::collections::HashMap<Box<str>, PartWords, foldhash::fast::RandomState>> =
        Default::default();
}

impl PartWords {
    fn of(part: &str) -> PartWords {
        PARTS_READ.with_borrow_mut(|memo| {
            if let Some(words) = memo.get(part) {
                return *words;
            }
            if memo.len() >= PARTS_REMEMBERED {
                memo.clear();
            }
            let words = PartWords::read(part);
            memo.insert(part.into(), words);
            words
        })
    }

    fn read(part: &str) -> PartWords {
        let (automaton, bits) = &*WORDS;
        let mut words = PartWords {
            bits: 0,
            ad_token: false,
        };
        for m in automaton.find_overlapping_iter(part) {
            // A card's footer ("card-footer", "CustomerCardFooter") is a
            // part of the card (its quote, its price), not the page's
            // footer.
            if part[m.start()..m.end()].eq_ignore_ascii_case("footer") && is_card(part) {
                continue;
            }
            words.bits |= bits[m.pattern().as_usize()];
        }
        for token in part.split(|c: char| !c.is_ascii_alphanumeric()) {
            let is = |list: &[&str]| list.iter().any(|w| token.eq_ignore_ascii_case(w));
            if is(AD_TOKENS) {
                words.ad_token = true;
            } else if is(NEGATIVE_TOKENS) {
                words.bits |= TOKEN;
            }
            if is(NEGATIVE_WHOLE_WORDS) {
                words.bits |= WEAK_TOKEN;
            }
            if token.eq_ignore_ascii_case("reviews") {
                words.bits |= REVIEWS;
            }
        }
        words
    }
}

fn is_card(part: &str) -> bool {
    part.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"card"))
}

fn negative_bits(bits: Bits) -> bool {
    bits & (STRONG | WEAK | TOKEN | WEAK_TOKEN | WIDGET | REVIEWS | COMMENT) != 0
}

/// A section whose heading links to it (`<section id="cookies"><h3>Cookies
/// <a href="#cookies">¶</a>`, or a heading with its own permalink): a part
/// of a document that readers are sent to, as documentation generators
/// (Sphinx, MkDocs, rustdoc, MDN) and blog engines mark every section. Its
/// id is then the heading's words, not what kind of block it is: "Cookies"
/// in a web framework's guide is not a cookie banner. A widget has no
/// permalink to itself.
fn is_permalinked(node: NodeRef<'_>, el: Element<'_>, id: &str) -> bool {
    let is_heading = |tag: &str| matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
    let heading = if is_heading(el.name()) {
        Some(node)
    } else {
        node.children()
            .filter(|n| n.value().is_element())
            .take(2)
            .find(|n| matches!(n.value(), Node::Element(e) if is_heading(e.name())))
    };
    heading.is_some_and(|h| {
        h.descendants().any(|n| {
            matches!(n.value(), Node::Element(e) if e.name() == "a"
                && attr(e, "href").and_then(|href| href.strip_prefix('#')) == Some(id))
        })
    })
}

/// Words that keep a boilerplate-named element when dropping by name: the
/// page's own content wrappers ("sidebar-and-content", "main-column").
const CONTAINER: &[&str] = &[
    "article", "body", "column", "content", "main", "shadow", "and",
];

/// Which heuristics are on. Extraction starts strict and relaxes when the
/// strict pass finds too little (readability's retry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Drop elements whose class or id reads like boilerplate.
    pub class_junk: bool,
    /// ... counting the words that only usually mean boilerplate.
    pub weak_junk: bool,
    /// Let class and id words weigh candidate scores.
    pub class_weights: bool,
    /// Drop link lists and share bars inside the content.
    pub conditional: bool,
    /// The page is built from widgets: "widget" names its every block,
    /// so it says nothing of one ([`crate::content::Outline::built_from_widgets`]).
    pub widgets_are_layout: bool,
    /// The page declares a product: a block of "reviews" is customers'
    /// words on it, beside its description, as comments are readers' on
    /// an article. Elsewhere (a service's landing page) reviews are the
    /// testimonials it puts forward, and read.
    pub reviews_are_asides: bool,
    /// The page declares a discussion (schema.org's
    /// `DiscussionForumPosting`): its comments are the thread's replies,
    /// not readers' words under an article. A Q&A page (`QAPage`) is not
    /// one: there comments are remarks under the question and answers.
    pub comments_are_posts: bool,
}

impl Rules {
    pub(crate) const PASSES: [Rules; 3] = [
        Rules {
            class_junk: true,
            weak_junk: true,
            class_weights: true,
            conditional: true,
            widgets_are_layout: false,
            reviews_are_asides: false,
            comments_are_posts: false,
        },
        Rules {
            class_junk: true,
            weak_junk: false,
            class_weights: true,
            conditional: true,
            widgets_are_layout: false,
            reviews_are_asides: false,
            comments_are_posts: false,
        },
        Rules {
            class_junk: true,
            weak_junk: false,
            class_weights: false,
            conditional: true,
            widgets_are_layout: false,
            reviews_are_asides: false,
            comments_are_posts: false,
        },
    ];
    /// For the full visible text: structure only.
    pub(crate) const FULL_TEXT: Rules = Rules {
        class_junk: false,
        weak_junk: false,
        class_weights: false,
        conditional: false,
        widgets_are_layout: false,
        reviews_are_asides: false,
        comments_are_posts: false,
    };

    /// The words whose meaning depends on the page, as bits of
    /// [`ClassFacts`], that mark boilerplate under these rules.
    fn page_words(self) -> Bits {
        let widget = if self.widgets_are_layout { 0 } else { WIDGET };
        let reviews = if self.reviews_are_asides { REVIEWS } else { 0 };
        let comment = if self.comments_are_posts { 0 } else { COMMENT };
        widget | reviews | comment
    }
}

/// Dropped with everything inside it, wherever it is.
pub(crate) fn is_junk(node: NodeRef<'_>, el: Element<'_>, rules: Rules) -> bool {
    if !rules.class_junk {
        // The markup alone decides: no need to read the class words.
        return is_markup_junk(node, el);
    }
    Facts::of(node, el).is_junk(rules)
}

/// Junk by its tag and markup alone ([`is_junk_by_markup`]), but for tabs
/// that hold their panels.
fn is_markup_junk(node: NodeRef<'_>, el: Element<'_>) -> bool {
    let attr = |name: &str| attr(el, name);
    let junk = if el.name() == "header" && heads_a_section(node) {
        is_junk_by_attributes(attr)
    } else {
        is_junk_by_markup(el.name(), attr)
    };
    junk && !is_tabs_with_panels(node, el)
}

/// A `<header>` inside a `<section>` or `<main>` heads that part of the
/// page (its heading, its introduction: a landing page's pitch), where
/// one outside them is the site's banner, as HTML maps the element to the
/// banner role only there. Inside an `<article>` it stays boilerplate:
/// there it holds the story's headline, byline and date.
fn heads_a_section(node: NodeRef<'_>) -> bool {
    let mut sectioned = false;
    for anc in node.ancestors() {
        match anc.value() {
            Node::Element(e) if e.name() == "article" => return false,
            Node::Element(e) if matches!(e.name(), "section" | "main") => sectioned = true,
            _ => {}
        }
    }
    sectioned
}

/// What the rules ask of one element, read from its tag and attributes
/// once. Whether it is junk and how its class leans are asked of every
/// element on every pass (and twice by a pass that spares wrappers):
/// asking them of the attributes each time was a tenth of extraction time,
/// so a page's elements are read once into a [`FactsMap`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    /// Junk by its tag and markup alone ([`is_markup_junk`]).
    markup_junk: bool,
    /// `html`, `body`, `article` or `main`: never dropped for a class name.
    outer: bool,
    /// `itemprop="articleBody"`.
    content_container: bool,
    class: ClassFacts,
}

impl Facts {
    pub(crate) fn of(node: NodeRef<'_>, el: Element<'_>) -> Facts {
        let tag = el.name();
        Facts {
            markup_junk: is_markup_junk(node, el),
            outer: matches!(tag, "html" | "body" | "article" | "main"),
            content_container: looks_like_content_container(el),
            class: class_facts(node, el),
        }
    }

    /// Dropped with everything inside it, wherever it is.
    pub(crate) fn is_junk(self, rules: Rules) -> bool {
        if self.markup_junk {
            return true;
        }
        // Never drop the page's outer structure on a class name.
        if self.outer {
            return false;
        }
        rules.class_junk
            && self
                .class
                .is_named_junk(rules.weak_junk, rules.page_words())
            && !self.content_container
    }

    /// +1 for class/id words that mark content, -1 for boilerplate, 0
    /// neither (or both).
    pub(crate) fn class_weight(self, rules: Rules) -> i32 {
        self.class.weight(rules.page_words())
    }

    /// Named a widget.
    pub(crate) fn is_widget_named(self) -> bool {
        self.class.has(WIDGET)
    }

    /// Starting score of a candidate container, before its paragraphs
    /// count.
    pub(crate) fn base_score(self, tag: &str, rules: Rules) -> f64 {
        let weight = if rules.class_weights {
            self.class_weight(rules)
        } else {
            0
        };
        let itemprop = if self.content_container { 30.0 } else { 0.0 };
        tag_score(tag) + 25.0 * f64::from(weight) + itemprop
    }
}

/// The [`Facts`] of a page's elements, read as they are first asked for
/// and kept by element, as an [`crate::elements::ElementMap`] keeps its
/// values (not one itself: filled through a shared reference, the map
/// would sit in a `RefCell`, and the lifetime of the places it borrows
/// would no longer shorten to the passes'). An element the list does not
/// hold is read each time it is asked for.
#[derive(Default)]
pub(crate) struct FactsMap<'a> {
    places: Places<'a>,
    slots: std::cell::RefCell<Vec<Option<Facts>>>,
    /// The class and id words of the elements read so far.
    seen: std::cell::Cell<Bits>,
}

impl<'a> FactsMap<'a> {
    /// Room for the facts of a list's `elements` elements, placed by
    /// `places`.
    pub(crate) fn new(places: Places<'a>, elements: usize) -> FactsMap<'a> {
        FactsMap {
            places,
            slots: std::cell::RefCell::new(vec![None; elements]),
            seen: std::cell::Cell::default(),
        }
    }

    pub(crate) fn get(&self, node: NodeRef<'_>, el: Element<'_>) -> Facts {
        let place = self.places.of(&node.id());
        if let Some(f) = place.and_then(|p| self.slots.borrow().get(p).copied().flatten()) {
            return f;
        }
        let f = Facts::of(node, el);
        self.seen.set(self.seen.get() | f.class.bits);
        if let Some(p) = place {
            self.slots.borrow_mut()[p] = Some(f);
        }
        f
    }

    /// An element read so far is named a widget: asked after a pass over
    /// the page, it spares pages without one (most) a second walk.
    pub(crate) fn widget_seen(&self) -> bool {
        self.seen.get() & WIDGET != 0
    }

    /// Whether a pass under rules `b` reads the page as the pass under
    /// `a` did: they differ only in rules about class words that no
    /// element read so far has. Asked after the pass under `a`, it spares
    /// pages a pass that would find the same (the relaxed passes run on a
    /// third of javadoc's pages, most of which have no such word). Such a
    /// pass asks of the same elements: each verdict it reaches on the way
    /// is the last pass's, so it reaches the same elements.
    pub(crate) fn reads_alike(&self, a: Rules, b: Rules) -> bool {
        let seen = self.seen.get();
        let weak_read = seen & (WEAK | WEAK_TOKEN | WIDGET | REVIEWS) != 0;
        let weighed =
            seen & (STRONG | TOKEN | COMMENT | WEAK | WEAK_TOKEN | WIDGET | REVIEWS | POS) != 0;
        let rest_alike = Rules {
            weak_junk: a.weak_junk,
            class_weights: a.class_weights,
            ..b
        } == a;
        rest_alike
            && (a.weak_junk == b.weak_junk || !weak_read)
            && (a.class_weights == b.class_weights || !weighed)
    }
}

/// A React server-rendered segment streamed in ahead of its place: React
/// sends each suspended part of the page as `<div hidden id="S:1a">` (its
/// number in hex) and a script moves it over the placeholder
/// (`<template id="B:1a">`) where a loading skeleton stood. A client
/// without scripts sees only the skeleton, so on such pages the hidden
/// segments are the page's content.
fn is_streamed_segment(id: Option<&str>) -> bool {
    id.and_then(|id| id.strip_prefix("S:"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Hidden by its markup: `hidden` (but for a streamed segment),
/// `aria-hidden`, `display: none` or `visibility: hidden`, or `popover`
/// (HTML's popover API: not shown until a button or a script opens it, like
/// a closed `<dialog>`; app-install prompts and notification settings), or
/// a utility class that hides it ([`hidden_by_class`]).
pub(crate) fn is_hidden<'a>(attr: impl Fn(&str) -> Option<&'a str>) -> bool {
    // A tab panel is a click away, as the body of a closed `<details>` is:
    // the page's content whichever tab is open (a code sample per
    // language, a plan per tab), so it is read hidden or not.
    if attr("role") == Some("tabpanel") {
        return false;
    }
    if attr("hidden").is_some() && !is_streamed_segment(attr("id")) {
        return true;
    }
    if attr("class").is_some_and(hidden_by_class) {
        return true;
    }
    if attr("popover").is_some() {
        return true;
    }
    if attr("aria-hidden") == Some("true") {
        return true;
    }
    attr("style").is_some_and(|style| {
        let s: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        s.contains("display:none") || s.contains("visibility:hidden")
    })
}

/// Classes that hide an element at every width: `hidden` (Bootstrap 3,
/// Tailwind, Bulma's `is-hidden`) and `d-none` (Bootstrap 4 and later),
/// unless another class shows it at some width (Tailwind's `md:block`,
/// Bootstrap's `d-md-block`): such an element is hidden on phones only.
/// A hidden block of comma-separated data (a list of partner domains) once
/// outscored a whole article.
pub(crate) fn hidden_by_class(class: &str) -> bool {
    // Asked of every element with a class: most have neither word. Class
    // lists are short, and a plain scan cost a third of setting up a
    // searcher for each word (`str::contains`).
    let bytes = class.as_bytes();
    let mentions = (0..bytes.len()).any(|at| match bytes[at] {
        b'h' => bytes[at..].starts_with(b"hidden"),
        b'd' => bytes[at..].starts_with(b"d-none"),
        _ => false,
    });
    if !mentions {
        return false;
    }
    let mut hides = false;
    for token in class.split_ascii_whitespace() {
        match token {
            t if is_hiding_class(t) => hides = true,
            t if t.contains(':') || (t.starts_with("d-") && t != "d-none") => return false,
            _ => {}
        }
    }
    hides
}

/// The class names that hide an element at every width (see
/// [`hidden_by_class`]).
pub(crate) fn is_hiding_class(class: &str) -> bool {
    matches!(class, "hidden" | "is-hidden" | "d-none")
}

/// Junk by its tag and markup alone, whatever the rules: never text,
/// boilerplate tags and roles, hidden. The roles of form controls built
/// from plain elements (a listbox, a radio group of variants, a tooltip)
/// count as `<select>` and `<button>` do: their words are choices and
/// labels, not the page's text. (All of the full-text rules: the streaming
/// extractor, which has no element tree, asks this.)
pub(crate) fn is_junk_by_markup<'a>(tag: &str, attr: impl Fn(&str) -> Option<&'a str>) -> bool {
    is_never_text(tag) || is_boilerplate_tag(tag) || is_junk_by_attributes(attr)
}

/// Junk whatever its tag: hidden, or a boilerplate or form-control role.
fn is_junk_by_attributes<'a>(attr: impl Fn(&str) -> Option<&'a str>) -> bool {
    if is_hidden(&attr) {
        return true;
    }
    attr("role").is_some_and(|role| {
        matches!(
            role,
            "navigation"
                | "banner"
                | "contentinfo"
                | "complementary"
                | "menu"
                | "menubar"
                | "dialog"
                | "search"
                | "alertdialog"
                | "tablist"
                | "listbox"
                | "option"
                | "radiogroup"
                | "combobox"
                | "tooltip"
                | "slider"
                | "searchbox"
                | "checkbox"
                | "progressbar"
        )
    })
}

/// A `role="tablist"` is the strip of tab labels, and is dropped like a
/// menu; but one that holds the panels too (accordions of questions and
/// answers are often marked up so) is the content those labels open. A
/// panel is a `role="tabpanel"`, or what a label inside names as the
/// element it controls (`aria-controls`), whatever its role says.
fn is_tabs_with_panels(node: NodeRef<'_>, el: Element<'_>) -> bool {
    if attr(el, "role") != Some("tablist") {
        return false;
    }
    let elements = || {
        node.descendants().filter_map(|d| match d.value() {
            Node::Element(e) => Some(e),
            _ => None,
        })
    };
    let controlled: Vec<&str> = elements()
        .filter_map(|e| attr(e, "aria-controls"))
        .flat_map(str::split_ascii_whitespace)
        .collect();
    elements().any(|e| {
        attr(e, "role") == Some("tabpanel") || e.id().is_some_and(|id| controlled.contains(&id))
    })
}

fn looks_like_content_container(el: Element<'_>) -> bool {
    attr(el, "itemprop").is_some_and(|p| p.eq_ignore_ascii_case("articleBody"))
}

fn tag_score(tag: &str) -> f64 {
    match tag {
        "article" => 10.0,
        "main" => 5.0,
        "div" | "section" => 5.0,
        "pre" | "td" | "blockquote" => 3.0,
        "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form" => -3.0,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" => -5.0,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element's facts read, as a pass reads them (none kept: the
    /// words seen are what the tests ask).
    fn read_all(markup: &str) -> FactsMap<'static> {
        let dom = crate::tree_builder::parse_document(markup, 0);
        let facts = FactsMap::default();
        for node in dom.nodes() {
            if let Node::Element(e) = node.value() {
                facts.get(node, e);
            }
        }
        facts
    }

    #[test]
    fn passes_read_alike_where_no_class_word_tells_them_apart() {
        let [strict, no_weak, no_weights] = Rules::PASSES;
        let plain = read_all("<div class=x id=y><p>text</p></div>");
        assert!(plain.reads_alike(strict, no_weak));
        assert!(plain.reads_alike(no_weak, no_weights));
        assert!(plain.reads_alike(strict, no_weights));
        assert!(!plain.reads_alike(strict, Rules::FULL_TEXT));
        // A weak boilerplate word: junk under the strict rules only, and
        // it weighs.
        let weak = read_all("<div class=sidebar><p>text</p></div>");
        assert!(!weak.reads_alike(strict, no_weak));
        assert!(!weak.reads_alike(no_weak, no_weights));
        // A content word weighs, and is junk under no rules.
        let content = read_all("<div class=article-body><p>text</p></div>");
        assert!(content.reads_alike(strict, no_weak));
        assert!(!content.reads_alike(no_weak, no_weights));
    }
}
