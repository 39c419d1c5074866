//! Page metadata from `<head>` and the document: title, description,
//! language, canonical URL, publication date, robots directives.

use url::Url;

use crate::classify::attr;
use crate::dom::{Dom, ElementRef};

/// Robots directives of a page (`<meta name=robots>` and X-Robots-Tag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Robots {
    /// Not to be indexed: the crawler may still follow its links.
    pub noindex: bool,
    /// Links not to be followed.
    pub nofollow: bool,
}

impl Robots {
    /// Adds the directives of X-Robots-Tag header lines (newline-separated),
    /// but for lines naming another bot.
    pub fn add_header(&mut self, header: &str) {
        // "otherbot: noindex" lines are for that bot only.
        let for_a_named_bot = |line: &str| {
            line.split_once(':')
                .is_some_and(|(bot, _)| !bot.trim().contains(' ') && !is_directive(bot))
        };
        for line in header.split('\n').filter(|l| !for_a_named_bot(l)) {
            self.add(line);
        }
    }

    /// Adds the directives of one `content` value or header line, e.g.
    /// `"noindex, nofollow"`, `"none"`, or `"googlebot: noindex"`.
    pub fn add(&mut self, directives: &str) {
        for d in directives.split([',', ' ']) {
            // "otherbot: noindex" names a bot: for us only if unnamed.
            let d = d.trim().to_ascii_lowercase();
            match d.as_str() {
                "noindex" => self.noindex = true,
                "nofollow" => self.nofollow = true,
                "none" => {
                    self.noindex = true;
                    self.nofollow = true;
                }
                _ => {}
            }
        }
    }
}

pub(crate) struct Meta {
    pub title: Option<String>,
    pub heading: Option<String>,
    /// `og:site_name`.
    pub site_name: Option<String>,
    pub description: Option<String>,
    /// The longest of the declared descriptions (`description`,
    /// `og:description`): sites often cut the first short and give the
    /// whole opening post or text in the second.
    pub summary: Option<String>,
    pub lang: Option<String>,
    pub canonical: Option<Url>,
    pub published: Option<String>,
    pub robots: Robots,
    /// `og:type` is `article`: the page says it is a story or a post.
    pub declares_article: bool,
    /// What `og:type` (a product) and microdata's types declare
    /// (JSON-LD, in scripts, is read apart: [`json_ld_declares`]).
    pub declares: Declares,
}

pub(crate) fn clean(s: &str) -> Option<String> {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// `<meta name|property|itemprop>` values that may date a page, most
/// trusted first.
const PUBLISHED_META: [(&str, &str); 7] = [
    ("property", "article:published_time"),
    ("itemprop", "datePublished"),
    ("name", "pubdate"),
    ("name", "publishdate"),
    ("name", "date"),
    ("name", "dc.date"),
    ("name", "DC.date.issued"),
];

/// The first value found of each kind, in document order; `read` picks
/// among them by precedence.
#[derive(Default)]
struct Found {
    og_title: Option<String>,
    og_site_name: Option<String>,
    title: Option<String>,
    h1: Option<String>,
    class_title: Option<String>,
    description: Option<String>,
    og_description: Option<String>,
    html_lang: Option<String>,
    content_language: Option<String>,
    canonical: Option<Url>,
    published_meta: [Option<String>; PUBLISHED_META.len()],
    published_time: Option<String>,
    robots: Robots,
    og_type_article: bool,
    declares: Declares,
}

fn element_text(el: ElementRef<'_>) -> Option<String> {
    clean(&el.text().collect::<String>())
}

fn set(slot: &mut Option<String>, value: impl FnOnce() -> Option<String>) {
    if slot.is_none() {
        *slot = value();
    }
}

fn has_ancestor(el: ElementRef<'_>, name: &str) -> bool {
    el.ancestors()
        .filter_map(ElementRef::wrap)
        .any(|a| a.value().name() == name)
}

impl Found {
    fn element(&mut self, el: ElementRef<'_>, base: Option<&Url>) {
        let e = el.value();
        let content = || attr(e, "content").and_then(clean);
        match e.name() {
            "html" => set(&mut self.html_lang, || attr(e, "lang").and_then(clean)),
            "title" => set(&mut self.title, || element_text(el)),
            "h1" => set(&mut self.h1, || element_text(el)),
            "meta" => self.meta(e, content),
            "link" if self.canonical.is_none() => {
                let canonical = e
                    .attr("rel")
                    .is_some_and(|r| r.split_ascii_whitespace().any(|t| t == "canonical"));
                if canonical {
                    self.canonical = attr(e, "href").and_then(|h| resolve(base, h));
                }
            }
            _ => {}
        }
        if let Some(types) = attr(e, "itemtype") {
            self.declares = self.declares.or(Declares::of_types(types));
        }
        // Generators that style the page heading rather than mark it up
        // (doxygen's `div.title`) name the class.
        if self.class_title.is_none()
            && attr(e, "class").is_some_and(|c| c.split_ascii_whitespace().any(|c| c == "title"))
            && has_ancestor(el, "body")
        {
            self.class_title = element_text(el);
        }
        if self.published_time.is_none() && attr(e, "datetime").is_some() {
            let dated = attr(e, "itemprop") == Some("datePublished")
                || (e.name() == "time"
                    && (attr(e, "pubdate").is_some() || has_ancestor(el, "article")));
            if dated {
                self.published_time = attr(e, "datetime").and_then(clean);
            }
        }
    }

    fn meta(&mut self, e: crate::dom::Element<'_>, content: impl Fn() -> Option<String>) {
        if attr(e, "content").is_some() {
            if let Some(name) = attr(e, "name") {
                if name.eq_ignore_ascii_case("robots") {
                    self.robots.add(attr(e, "content").unwrap_or(""));
                }
            }
        }
        match (attr(e, "name"), attr(e, "property")) {
            (Some("description"), _) => set(&mut self.description, &content),
            (_, Some("og:title")) => set(&mut self.og_title, &content),
            (_, Some("og:site_name")) => set(&mut self.og_site_name, &content),
            (_, Some("og:description")) => set(&mut self.og_description, &content),
            (_, Some("og:type")) => {
                let og_type = attr(e, "content").unwrap_or("").trim().to_ascii_lowercase();
                self.og_type_article |= og_type == "article";
                // "product", "product.item", "og:product" (Shopify, Facebook's
                // catalog types).
                self.declares.product |= og_type.trim_start_matches("og:").starts_with("product");
            }
            _ => {}
        }
        if attr(e, "http-equiv").is_some_and(|v| v.eq_ignore_ascii_case("content-language")) {
            set(&mut self.content_language, &content);
        }
        for (i, (key, value)) in PUBLISHED_META.iter().enumerate() {
            if attr(e, key) == Some(*value) {
                set(&mut self.published_meta[i], &content);
            }
        }
    }
}

/// The longer of two declared descriptions.
pub(crate) fn longest(a: &Option<String>, b: &Option<String>) -> Option<String> {
    [a, b]
        .into_iter()
        .flatten()
        .max_by_key(|d| d.len())
        .cloned()
}

/// The page's metadata, in one pass over its elements.
pub(crate) fn read(doc: &Dom, base: Option<&Url>, x_robots_tag: Option<&str>) -> Meta {
    let mut found = Found::default();
    for node in doc.root().descendants() {
        if let Some(el) = ElementRef::wrap(node) {
            found.element(el, base);
        }
    }
    let mut robots = found.robots;
    if let Some(h) = x_robots_tag {
        robots.add_header(h);
    }
    Meta {
        title: found.og_title.or(found.title).or_else(|| found.h1.clone()),
        heading: found.h1.or(found.class_title),
        site_name: found.og_site_name,
        summary: longest(&found.description, &found.og_description),
        description: found.description.or(found.og_description),
        lang: found
            .html_lang
            .or(found.content_language)
            .map(|l| l.to_ascii_lowercase()),
        canonical: found.canonical,
        published: found
            .published_meta
            .into_iter()
            .flatten()
            .next()
            .or(found.published_time),
        robots,
        declares_article: found.og_type_article,
        declares: found.declares,
    }
}

/// The kinds of page that schema.org types on it declare, as selection
/// asks them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Declares {
    /// A `Product` (or `ProductGroup`): a shop's product page.
    pub product: bool,
    /// A `DiscussionForumPosting`: a forum's thread.
    pub discussion: bool,
    /// An `Article` (`NewsArticle`, `BlogPosting`, ...) at the top of a
    /// JSON-LD block or its `@graph`: the page is a story or a post. Not
    /// inside another item, where a listing names its entries' types.
    pub article: bool,
}

impl Declares {
    /// From a schema.org type URL (microdata's `itemtype`, a list) or
    /// name (JSON-LD's `@type`).
    fn of_types(types: &str) -> Declares {
        let mut d = Declares::default();
        for t in types.split_ascii_whitespace() {
            match t.rsplit('/').next().unwrap_or(t) {
                "Product" | "ProductGroup" => d.product = true,
                "DiscussionForumPosting" => d.discussion = true,
                _ => {}
            }
        }
        d
    }

    pub(crate) fn or(self, other: Declares) -> Declares {
        Declares {
            product: self.product || other.product,
            discussion: self.discussion || other.discussion,
            article: self.article || other.article,
        }
    }
}

/// What the page's JSON-LD blocks (`<script type="application/ld+json">`)
/// declare, the way shops and forums describe their pages to search
/// engines. Read from the markup before scripts are stripped; only blocks
/// that name one of the types at all are parsed.
pub(crate) fn json_ld_declares(html: &str) -> Declares {
    let mut found = Declares::default();
    let mut rest = html;
    while let Some(at) = memchr::memmem::find(rest.as_bytes(), b"application/ld+json") {
        rest = &rest[at..];
        let Some(open_end) = rest.find('>') else {
            break;
        };
        let body = &rest[open_end + 1..];
        let end = memchr::memmem::find(body.as_bytes(), b"</").unwrap_or(body.len());
        let block = &body[..end];
        let named = |t: &[u8]| memchr::memmem::find(block.as_bytes(), t).is_some();
        // "Posting": DiscussionForumPosting, BlogPosting.
        if named(b"Product") || named(b"Article") || named(b"Posting") {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(block) {
                found = found.or(declared_in(&v));
                found.article |= is_article_at_top(&v);
            }
        }
        rest = &body[end..];
    }
    found
}

fn declared_in(v: &serde_json::Value) -> Declares {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let own = match map.get("@type") {
                Some(Value::String(t)) => Declares::of_types(t),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .map(Declares::of_types)
                    .fold(Declares::default(), Declares::or),
                _ => Declares::default(),
            };
            map.values().map(declared_in).fold(own, Declares::or)
        }
        Value::Array(items) => items
            .iter()
            .map(declared_in)
            .fold(Declares::default(), Declares::or),
        _ => Declares::default(),
    }
}

/// The JSON-LD value (an item, a list of items, an `@graph`) declares an
/// article of its own.
fn is_article_at_top(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let types = match map.get("@type") {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            types.into_iter().any(is_article_type)
                || map.get("@graph").is_some_and(is_article_at_top)
        }
        Value::Array(items) => items.iter().any(is_article_at_top),
        _ => false,
    }
}

/// schema.org's stories and posts: `Article` and its kinds but
/// `TechArticle` (documentation), and `BlogPosting`.
fn is_article_type(t: &str) -> bool {
    let t = t.rsplit('/').next().unwrap_or(t);
    (t.ends_with("Article") && t != "TechArticle") || matches!(t, "BlogPosting" | "LiveBlogPosting")
}

fn is_directive(s: &str) -> bool {
    matches!(
        s.trim().to_ascii_lowercase().as_str(),
        "noindex" | "nofollow" | "none" | "unavailable_after"
    )
}

/// `href` resolved against `base`, http(s) only, fragment dropped.
pub(crate) fn resolve(base: Option<&Url>, href: &str) -> Option<Url> {
    let href = href.trim();
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    if href.is_empty()
        || ["javascript:", "mailto:", "tel:", "data:"]
            .iter()
            .any(|p| lower.starts_with(p))
    {
        return None;
    }
    let mut url = match base {
        Some(b) => b.join(href).ok()?,
        None => Url::parse(href).ok()?,
    };
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}
