//! Outgoing links: `<a href>`, `<area href>`, `<link rel=next|prev>`.

use crate::classify::attr;
use scraper::{ElementRef, Html, Selector};
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

fn rel_tokens(e: &ElementRef<'_>) -> Vec<String> {
    e.value()
        .attr("rel")
        .unwrap_or("")
        .split_ascii_whitespace()
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The document's base: `<base href>` resolved against the page URL.
pub(crate) fn base_url(doc: &Html, page: Option<&Url>) -> Option<Url> {
    let from_base = doc
        .select(&Selector::parse("base[href]").unwrap())
        .next()
        .and_then(|b| attr(b.value(), "href"))
        .and_then(|h| match page {
            Some(p) => p.join(h.trim()).ok(),
            None => Url::parse(h.trim()).ok(),
        });
    from_base.or_else(|| page.cloned())
}

pub(crate) fn collect(doc: &Html, base: Option<&Url>) -> Vec<Link> {
    let sel = Selector::parse("a[href], area[href], link[href][rel]").unwrap();
    let mut out = Vec::new();
    for e in doc.select(&sel) {
        let rel = rel_tokens(&e);
        let kind = match e.value().name() {
            "a" => LinkKind::Anchor,
            "area" => LinkKind::Area,
            _ if rel.iter().any(|r| r == "next" || r == "prev") => LinkKind::Pagination,
            _ => continue,
        };
        let Some(url) = resolve(base, attr(e.value(), "href").unwrap_or("")) else {
            continue;
        };
        let text = match kind {
            LinkKind::Area => attr(e.value(), "alt").unwrap_or("").to_string(),
            _ => e.text().collect::<String>(),
        };
        out.push(Link {
            url,
            text: text.split_whitespace().collect::<Vec<_>>().join(" "),
            nofollow: rel
                .iter()
                .any(|r| matches!(r.as_str(), "nofollow" | "ugc" | "sponsored")),
            kind,
        });
    }
    out
}
