//! Pages whose markup reads differently from what a reader sees: a
//! boilerplate element left open around the whole page, and content that
//! the page's scripts reveal. Each repair changes the element tree before
//! the content is chosen.

use html5ever::local_name;

use crate::dom::{Dom, Node, NodeId};

use std::collections::HashSet;

use crate::chars::visible_chars;
use crate::classify::{attr, hidden_by_class, is_hidden, is_hiding_class};

/// Every repair below, in order, from one walk over the tree: the
/// elements each looks at are found together (a walk of its own each was
/// 3% of a crawl's CPU time).
pub(crate) fn repair(doc: &mut Dom) {
    let found = Found::of(doc);
    unclose_boilerplate_around_main(doc, &found.mains);
    unname_header_holding_the_page(doc, &found.headers);
    open_disclosures(doc, &found.controls, &found.hidden);
    open_answers(doc, &found.hidden);
}

/// The elements the repairs look at, in document order.
#[derive(Default)]
struct Found {
    mains: Vec<NodeId>,
    headers: Vec<NodeId>,
    /// Buttons and controls that may name a panel.
    controls: Vec<NodeId>,
    /// Hidden when the page was parsed (each is asked again when shown:
    /// an earlier repair may have shown it).
    hidden: Vec<NodeId>,
}

impl Found {
    fn of(doc: &Dom) -> Found {
        let mut found = Found::default();
        for node in doc.root().descendants() {
            let Node::Element(e) = node.value() else {
                continue;
            };
            match e.name() {
                "main" => found.mains.push(node.id()),
                "header" => found.headers.push(node.id()),
                _ => {}
            }
            let button = e.name() == "button" || attr(e, "role") == Some("button");
            if (button || attr(e, "aria-expanded").is_some()) && attr(e, "aria-controls").is_some()
            {
                found.controls.push(node.id());
            }
            if is_hidden(|name| attr(e, name)) {
                found.hidden.push(node.id());
            }
        }
        found
    }
}

/// A page's `<main>` inside `aside`, `nav`, `header` or `footer` is an
/// unclosed boilerplate element: HTML allows `main` only under `html`,
/// `body`, `div` and `form`, and a browser shows the page all the same. The
/// boilerplate elements around a `main` are read as `div`s, so the page
/// is not dropped with them.
fn unclose_boilerplate_around_main(doc: &mut Dom, mains: &[NodeId]) {
    let mut around = Vec::new();
    for &id in mains {
        let Some(main) = doc.get(id) else {
            continue;
        };
        around.extend(
            main.ancestors()
                .filter(|a| {
                    matches!(a.value(), Node::Element(e)
                        if matches!(e.name(), "aside" | "nav" | "header" | "footer"))
                })
                .map(|a| a.id()),
        );
    }
    rename_to_div(doc, around);
}

/// Text outside links (non-whitespace characters) a header must hold to be
/// taken for a post: a few paragraphs.
const POST_CHARS: usize = 500;

/// A `header` that holds half of the page's text, mostly outside links,
/// and a few paragraphs' worth of it, is a block a page builder named, not
/// the page's header: Webflow's templates put the whole post in
/// `<header class="section_blog-post">`. It is read as a `div`. A header
/// with a large menu is mostly links; a footer may well hold half of a thin
/// page's text, and stays a footer.
fn unname_header_holding_the_page(doc: &mut Dom, headers: &[NodeId]) {
    let root = doc.root();
    // A post's worth of text outside links, before the page is counted:
    // most headers hold a logo and a menu. (A header around a `<main>` is
    // a `div` by now.)
    let headers: Vec<_> = (headers.iter())
        .filter_map(|&id| doc.get(id))
        .filter(|n| matches!(n.value(), Node::Element(e) if e.name() == "header"))
        .map(|h| (h, text_chars(h)))
        .filter(|(_, (text, in_links))| text - in_links >= POST_CHARS)
        .collect();
    if headers.is_empty() {
        return;
    }
    let page: usize = root
        .descendants()
        .filter_map(|n| match n.value() {
            Node::Text(t) => Some(visible_chars(t.as_str())),
            _ => None,
        })
        .sum();
    let holding: Vec<NodeId> = headers
        .into_iter()
        .filter(|(_, (text, in_links))| text * 2 >= page && in_links * 2 < *text)
        .map(|(h, _)| h.id())
        .collect();
    rename_to_div(doc, holding);
}

/// Non-whitespace characters of text under `node`, and those inside links.
fn text_chars(node: crate::dom::NodeRef<'_>) -> (usize, usize) {
    let (mut text, mut in_links) = (0, 0);
    for n in node.descendants() {
        if let Node::Text(t) = n.value() {
            let chars = visible_chars(t.as_str());
            text += chars;
            let linked = n
                .ancestors()
                .take_while(|a| a.id() != node.id())
                .any(|a| matches!(a.value(), Node::Element(e) if e.name() == "a"));
            if linked {
                in_links += chars;
            }
        }
    }
    (text, in_links)
}

fn rename_to_div(doc: &mut Dom, ids: Vec<NodeId>) {
    for id in ids {
        doc.rename(id, local_name!("div"));
    }
}

/// Shows what the page hides (`hidden`, `display: none`,
/// `visibility: hidden`, a hiding class). Only for a page that shows next to no text: such
/// a page is revealed by its scripts (a wrapper hidden until the page has
/// loaded, a product block filled in later), and what it hides is what a
/// reader sees. Popovers stay closed: they are prompts over the page, not
/// the page. Whether it showed anything (the page is as it was if not).
pub(crate) fn unhide(doc: &mut Dom) -> bool {
    let all: Vec<NodeId> = doc.root().descendants().map(|n| n.id()).collect();
    show_hidden(doc, &all, |_, _| true)
}

/// Opens the panels of disclosure widgets (accordions, "read more"): a
/// button, or a control that says whether its panel is open
/// (`aria-expanded`), that names the panel (`aria-controls`): WAI-ARIA's
/// disclosure and accordion patterns. Sites leave out `aria-expanded` as
/// often as not (a heading link with `role="button"`). A closed panel is
/// a click away, like the body of a closed `<details>`, and is the page's
/// content as much as an open one. A `<button>` in a heading, or asking
/// a question, is the panel's heading and is read as text; a "Read more"
/// button is not.
fn open_disclosures(doc: &mut Dom, controls: &[NodeId], hidden: &[NodeId]) {
    let mut controlled: HashSet<String> = HashSet::new();
    let mut labels = Vec::new();
    for node in controls.iter().filter_map(|&id| doc.get(id)) {
        let Node::Element(e) = node.value() else {
            continue;
        };
        if let Some(ids) = attr(e, "aria-controls") {
            controlled.extend(ids.split_ascii_whitespace().map(str::to_owned));
            if e.name() == "button" && (asks(node) || in_heading(node)) {
                labels.push(node.id());
            }
        }
    }
    if !controlled.is_empty() {
        show_hidden(doc, hidden, |_, e| {
            e.id().is_some_and(|id| controlled.contains(id))
        });
    }
    // The button's words head the panel (ARIA's accordion puts them in a
    // heading): the question an answer answers.
    rename_to_div(doc, labels);
}

/// Opens the answers of a list of questions (an FAQ's accordion) that
/// names no panel: a hidden block right after one whose text is a
/// question. The answer is a click away, as a closed `<details>`'s body.
fn open_answers(doc: &mut Dom, hidden: &[NodeId]) {
    show_hidden(doc, hidden, |node, e| {
        attr(e, "popover").is_none()
            && node
                .prev_siblings()
                .find(|s| s.value().is_element())
                .is_some_and(asks)
    });
}

/// The element stands in a heading (`<h2>`...`<h6>`).
fn in_heading(node: crate::dom::NodeRef<'_>) -> bool {
    node.parent().is_some_and(|p| {
        matches!(p.value(), Node::Element(e) if matches!(e.name(), "h2" | "h3" | "h4" | "h5" | "h6"))
    })
}

/// The element's text is a question: it ends in a question mark.
fn asks(node: crate::dom::NodeRef<'_>) -> bool {
    let mut last = None;
    // Bounded: a question is a line.
    for d in node.descendants().take(32) {
        if let Node::Text(t) = d.value() {
            if let Some(c) = t.trim_end().chars().last() {
                last = Some(c);
            }
        }
    }
    matches!(last, Some('?' | '？'))
}

/// Shows the elements among `candidates` (in document order) that are
/// hidden and that `which` picks.
fn show_hidden(
    doc: &mut Dom,
    candidates: &[NodeId],
    which: impl Fn(crate::dom::NodeRef<'_>, crate::dom::Element<'_>) -> bool,
) -> bool {
    let hidden: Vec<NodeId> = (candidates.iter())
        .filter_map(|&id| doc.get(id))
        .filter(|n| {
            matches!(n.value(), Node::Element(e)
                if is_hidden(|name| attr(e, name)) && which(*n, e))
        })
        .map(|n| n.id())
        .collect();
    let any = !hidden.is_empty();
    show(doc, hidden);
    any
}

/// Drops what hides these elements.
fn show(doc: &mut Dom, ids: Vec<NodeId>) {
    for id in ids {
        doc.retain_attrs(id, |name| {
            !matches!(&*name.local, "hidden" | "style" | "aria-hidden")
        });
        // Only the hiding words go: the others still say what the
        // element is ("unit-price caption hidden" stays a caption).
        let Some(Node::Element(el)) = doc.get(id).map(|n| n.value()) else {
            continue;
        };
        if let Some(class) = el.attr("class").filter(|c| hidden_by_class(c)) {
            let shown: Vec<&str> = class
                .split_ascii_whitespace()
                .filter(|c| !is_hiding_class(c))
                .collect();
            let shown = shown.join(" ");
            doc.set_attr(id, "class", &shown);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::dump;
    use crate::tree_builder::parse_document;

    #[test]
    fn unhide_says_whether_it_showed_anything() {
        let mut hiding =
            parse_document("<div style='display:none'><p>later</p></div><p>now</p>", 0);
        let before = dump(&hiding);
        assert!(unhide(&mut hiding));
        assert_ne!(dump(&hiding), before);
        // Nothing hidden: the tree is left as it was, and so reads the same.
        let mut plain = parse_document("<div class=a><p style='color:red'>now</p></div>", 0);
        let before = dump(&plain);
        assert!(!unhide(&mut plain));
        assert_eq!(dump(&plain), before);
    }
}
