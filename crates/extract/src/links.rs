//! Outgoing links: `<a href>`, `<area href>`, `<link rel=next|prev>`.

use html5ever::ns;
use scraper::node::Element;
use scraper::{ElementRef, Html};

use crate::classify::attr;
use url::Url;

use crate::meta::resolve;

/// A link found on the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Absolute http(s) URL, without fragment.
    pub url: Url,
    /// Anchor text, whitespace collapsed (alt text for areas).
    pub text: String,
    /// `rel` has `nofollow` (or `ugc`/`sponsored`, which imply it for
    /// crawlers).
    pub nofollow: bool,
    pub kind: LinkKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    Anchor,
    Area,
    /// `<link rel=next>` or `rel=prev`: pagination.
    Pagination,
}

/// An attribute in no namespace: what the selector `[name]` matches
/// (`xlink:href` is not `href`).
fn plain_attr<'a>(el: &'a Element, name: &str) -> Option<&'a str> {
    el.attrs
        .iter()
        .find(|(q, _)| q.ns == ns!() && &*q.local == name)
        .map(|(_, v)| &**v)
}

/// `rel` holds one of `words` (any case).
fn rel_has(el: &Element, words: &[&str]) -> bool {
    plain_attr(el, "rel")
        .unwrap_or("")
        .split_ascii_whitespace()
        .any(|r| words.iter().any(|w| r.eq_ignore_ascii_case(w)))
}

/// The document's elements in the parser's order (detached ones too), as
/// scraper's `Html::select` walks them: a walk by name and attribute, not a
/// CSS selector, which cost a selector parse per page and a match per
/// element.
fn elements(doc: &Html) -> impl Iterator<Item = ElementRef<'_>> {
    doc.tree.nodes().filter_map(ElementRef::wrap)
}

/// The document's base: `<base href>` resolved against the page URL.
pub(crate) fn base_url(doc: &Html, page: Option<&Url>) -> Option<Url> {
    let from_base = elements(doc)
        .filter(|e| e.value().name() == "base")
        .find_map(|e| plain_attr(e.value(), "href"))
        .and_then(|h| match page {
            Some(p) => p.join(h.trim()).ok(),
            None => Url::parse(h.trim()).ok(),
        });
    from_base.or_else(|| page.cloned())
}

/// `<a href>`, `<area href>` and `<link href rel=next|prev>`, in the
/// parser's order.
pub(crate) fn collect(doc: &Html, base: Option<&Url>) -> Vec<Link> {
    let mut out = Vec::new();
    for node in elements(doc) {
        let e = node.value();
        let Some(href) = plain_attr(e, "href") else {
            continue;
        };
        let kind = match e.name() {
            "a" => LinkKind::Anchor,
            "area" => LinkKind::Area,
            "link" if rel_has(e, &["next", "prev"]) => LinkKind::Pagination,
            _ => continue,
        };
        let Some(url) = resolve(base, href) else {
            continue;
        };
        let text = match kind {
            LinkKind::Area => attr(e, "alt").unwrap_or("").to_string(),
            _ => node.text().collect::<String>(),
        };
        out.push(Link {
            url,
            text: text.split_whitespace().collect::<Vec<_>>().join(" "),
            nofollow: rel_has(e, &["nofollow", "ugc", "sponsored"]),
            kind,
        });
    }
    out
}
