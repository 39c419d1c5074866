//! Outgoing links: `<a href>`, `<area href>`, `<link rel=next|prev>`.

use std::collections::HashMap;

use crate::dom::{Dom, Element, ElementRef};

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

/// `rel` holds one of `words` (any case).
fn rel_has(el: Element<'_>, words: &[&str]) -> bool {
    el.attr("rel")
        .unwrap_or("")
        .split_ascii_whitespace()
        .any(|r| words.iter().any(|w| r.eq_ignore_ascii_case(w)))
}

/// The document's elements in the parser's order (detached ones too), as
/// scraper's `Html::select` walks them: a walk by name and attribute, not a
/// CSS selector, which cost a selector parse per page and a match per
/// element.
fn elements(doc: &Dom) -> impl Iterator<Item = ElementRef<'_>> {
    doc.nodes().filter_map(ElementRef::wrap)
}

/// The document's base: `<base href>` resolved against the page URL.
pub(crate) fn base_url(doc: &Dom, page: Option<&Url>) -> Option<Url> {
    if !doc.may_have_base() {
        return page.cloned();
    }
    let from_base = elements(doc)
        .filter(|e| e.value().name() == "base")
        .find_map(|e| e.value().attr("href"))
        .and_then(|h| match page {
            Some(p) => p.join(h.trim()).ok(),
            None => Url::parse(h.trim()).ok(),
        });
    from_base.or_else(|| page.cloned())
}

/// The (trimmed) href up to its fragment, which [`resolve`] drops: hrefs
/// alike up to it resolve alike. A bare fragment (`#top`, the page
/// itself) keeps its `#`, as an empty href resolves to nothing.
fn without_fragment(href: &str) -> &str {
    match href.find('#') {
        Some(0) => "#",
        Some(at) => &href[..at],
        None => href,
    }
}

/// `<a href>`, `<area href>` and `<link href rel=next|prev>`, in the
/// parser's order; their anchor texts when `with_text`.
pub(crate) fn collect(doc: &Dom, base: Option<&Url>, with_text: bool) -> Vec<Link> {
    let mut out = Vec::new();
    // A page links to the same place many times (a reference page to its
    // types and its own sections), so each href is resolved once: URL
    // parsing was a twentieth of extraction on API docs, whose hrefs
    // repeat four times over.
    let mut resolved: HashMap<&str, Option<Url>, foldhash::fast::RandomState> = HashMap::default();
    for node in elements(doc) {
        let e = node.value();
        let Some(href) = e.attr("href") else {
            continue;
        };
        let kind = match e.name() {
            "a" => LinkKind::Anchor,
            "area" => LinkKind::Area,
            "link" if rel_has(e, &["next", "prev"]) => LinkKind::Pagination,
            _ => continue,
        };
        let Some(url) = resolved
            .entry(without_fragment(href.trim()))
            .or_insert_with(|| resolve(base, href))
            .clone()
        else {
            continue;
        };
        let text = match kind {
            _ if !with_text => String::new(),
            LinkKind::Area => collapsed(attr(e, "alt").unwrap_or("")),
            _ => collapsed(&node.text().collect::<String>()),
        };
        out.push(Link {
            url,
            text,
            nofollow: rel_has(e, &["nofollow", "ugc", "sponsored"]),
            kind,
        });
    }
    out
}

/// `text` with its runs of white space made one space, trimmed.
fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_element_is_looked_for_only_in_a_tree_that_made_one() {
        let page = Url::parse("http://h.example/a/page.html").unwrap();
        let base = |markup: &str| {
            let doc = crate::parse(markup);
            (
                doc.may_have_base(),
                base_url(&doc, Some(&page)).unwrap().to_string(),
            )
        };
        let plain = (false, "http://h.example/a/page.html".to_string());
        assert_eq!(base("<p><a href=x>x</a>"), plain);
        let moved = (true, "http://h.example/b/".to_string());
        assert_eq!(base("<head><base href=/b/></head><p>x"), moved);
        // Late, in the body; and in a tree html5ever's builder made.
        assert_eq!(base("<p>x</p><base href=/b/>"), moved);
        assert_eq!(base("<template>t</template><base href=/b/>"), moved);
        // A base without an href leaves the page's URL.
        assert_eq!(base("<base target=_top><p>x").1, plain.1);
    }

    #[test]
    fn each_href_resolves_as_if_alone_when_hrefs_repeat() {
        let hrefs = [
            "a.html",
            " a.html#x",
            "a.html#y",
            "#top",
            "#",
            "",
            " ",
            " #top",
            "?q#f",
            "?q",
            "javascript:go()#x",
            "javascript:go()",
            "tel:1#2",
            "../b.html",
        ];
        let page: String = hrefs
            .iter()
            .chain(hrefs.iter().rev())
            .map(|h| format!("<a href=\"{h}\">x</a>"))
            .collect();
        let doc = crate::tree_builder::parse_document(&page, 0);
        let base = Url::parse("http://example.com/dir/page.html?p=1#here").unwrap();
        let got: Vec<String> = collect(&doc, Some(&base), true)
            .into_iter()
            .map(|l| l.url.to_string())
            .collect();
        let want: Vec<String> = hrefs
            .iter()
            .chain(hrefs.iter().rev())
            .filter_map(|h| resolve(Some(&base), h))
            .map(|u| u.to_string())
            .collect();
        assert_eq!(got, want);
        assert!(got.contains(&"http://example.com/dir/page.html?p=1".to_string()));
    }
}
