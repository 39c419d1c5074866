//! Element trees to plain text with line breaks between blocks.

use crate::classify::{Rules, is_block, is_junk};
use crate::content::Analysis;
use crate::dom::{Edge, Element, Node, NodeRef};

/// How much to drop besides junk.
#[derive(Clone, Copy)]
pub(crate) enum Cleaning<'a> {
    /// Junk only: the full visible text.
    None,
    /// Also link lists, share bars and the page title inside the content.
    Content {
        analysis: &'a Analysis<'a>,
        /// The page's title, when known.
        title: Option<&'a str>,
        /// Whether link lists are the content ([`link_lists_carry`]).
        lists: LinkLists,
        /// The page declares itself an article by `og:type`
        /// ([`is_link_list`]).
        article: bool,
        /// It declares itself a story by `og:type` or schema.org: its
        /// `<h1>` is the headline, reported as the title.
        story: bool,
    },
}

/// What a walk over the kept part of a tree writes to: plain lines
/// ([`crate::plain::TextBuilder`]) or Markdown ([`crate::markdown`]).
/// Both see the same elements and text: what is kept is decided here,
/// how it is written there.
pub(crate) trait Writer {
    /// A kept element starts.
    fn open(&mut self, node: NodeRef<'_>, el: Element<'_>);
    /// It ends (after its kept content).
    fn close(&mut self, node: NodeRef<'_>, el: Element<'_>);
    fn text(&mut self, t: &str);
}

/// Writes the kept part of `root` to `out`: all of it but junk, and with
/// `cleaning`, what the content drops.
pub(crate) fn render<W: Writer>(root: NodeRef<'_>, cleaning: Cleaning<'_>, out: &mut W) {
    let mut skip: Option<crate::dom::NodeId> = None;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => {
                if skip.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Element(el) => {
                        let junk = match cleaning {
                            Cleaning::None => is_junk(node, el, Rules::FULL_TEXT),
                            Cleaning::Content { analysis, .. } => analysis.is_junk(node, el),
                        };
                        if junk || drop_in_content(node, cleaning) {
                            skip = Some(node.id());
                            continue;
                        }
                        out.open(node, el);
                    }
                    Node::Text(t) => out.text(t.as_str()),
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Some(s) = skip {
                    if s == node.id() {
                        skip = None;
                    }
                    continue;
                }
                if let Node::Element(el) = node.value() {
                    out.close(node, el);
                }
            }
        }
    }
}

/// Inside the content: link lists and share bars, and a `<h1>` that is
/// the page's title (reported separately).
fn drop_in_content(node: NodeRef<'_>, cleaning: Cleaning<'_>) -> bool {
    let Cleaning::Content {
        analysis: a,
        title,
        lists,
        article,
        story,
    } = cleaning
    else {
        return false;
    };
    if !a.rules.conditional {
        return false;
    }
    let Node::Element(el) = node.value() else {
        return false;
    };
    let tag = el.name();
    // A `<h1>` repeating the title goes. A story's is its headline, even
    // worded apart from the title, but a page that heads each of its
    // items with one (HTML5's sections, a news list's entries) has three
    // or more. Elsewhere, a `<h1>` worded apart is the pitch of a landing
    // page, the subject of a thread.
    if tag == "h1" {
        let is_headline = story && !heads_items_with_h1(node);
        return is_headline || title.is_some_and(|t| repeats_title(node, t));
    }
    // Captions and credits, forms (sign-ups, searches).
    if matches!(tag, "figcaption" | "form") {
        return true;
    }
    if is_block(tag) && is_loop_copy(node, a) {
        return true;
    }
    if is_ad_label(node) {
        return true;
    }
    if matches!(tag, "h2" | "h3" | "h4" | "p" | "div")
        && title.is_some_and(|t| repeats_title(node, t))
    {
        return true;
    }
    if !matches!(
        tag,
        "div" | "section" | "ul" | "ol" | "table" | "form" | "figure" | "dl" | "p" | "span"
    ) {
        return false;
    }
    match lists {
        LinkLists::Keep => false,
        LinkLists::Drop => is_link_list(node, a, article),
        LinkLists::DropAtEdges(first, last) => {
            is_link_list(node, a, article)
                && !(node.id() > first && node.id() < last && follows_p(node))
        }
    }
}

/// Link-dense blocks shorter than this are navigation inside the content.
const NAV_BLOCK_CHARS: u32 = 1000;

/// What to do with link lists inside the content.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum LinkLists {
    /// Navigation, related links, tag clouds: dropped.
    Drop,
    /// The content itself (a category, an index, a listing): kept.
    Keep,
    /// Dropped before the content's first paragraph and after its last
    /// (navigation, related links), kept between them right after a
    /// paragraph: there a list goes on with what the paragraph says (an
    /// index's links under each of its headings, a guide's "see also").
    /// The two paragraphs. Node ids are compared for document order: the
    /// parser numbers nodes as it creates them, which is that order but
    /// for the few it moves when it repairs broken markup.
    DropAtEdges(crate::dom::NodeId, crate::dom::NodeId),
}

/// Siblings this long or longer that read the same are copies.
const COPY_CHARS: u32 = 20;

/// The block is a copy in a loop: its parent's children are one run of
/// items repeated whole (twice or more), as a marquee or a looping
/// carousel repeats its items so that they scroll without a gap, and the
/// block is in a repeat. Read once. Items that merely recur (a training
/// plan's "rest day", a heading per section) do not make the whole list
/// a loop.
fn is_loop_copy(node: NodeRef<'_>, a: &Analysis<'_>) -> bool {
    // Asked of every block rendered: most are too short to be a copy, and
    // then their siblings need no look.
    if text_len(node, a) < COPY_CHARS {
        return false;
    }
    let Some(parent) = node.parent() else {
        return false;
    };
    // In a loop every item is a copy of another, so its first and last
    // are long enough to be one (a parent of more than LOOP_ITEMS is no
    // loop, whatever its last): two looks rule out the lists that open or
    // close with a short item (a table's header cell, a heading, a "more"
    // link), before the walk back through up to 64 siblings below.
    let elements = || parent.children().filter(|c| c.value().is_element());
    let long = |item: Option<NodeRef<'_>>| item.is_some_and(|i| text_len(i, a) >= COPY_CHARS);
    if !long(elements().next()) || !long(elements().next_back()) {
        return false;
    }
    // The loop's period: the distance back to the nearest copy. Bounded,
    // as is the list: a marquee turns a handful of items.
    let Some(period) = node
        .prev_siblings()
        .filter(|s| s.value().is_element())
        .take(LOOP_ITEMS / 2)
        .position(|s| same_item(s, node, a))
        .map(|p| p + 1)
    else {
        return false;
    };
    let items: Vec<NodeRef<'_>> = elements().take(LOOP_ITEMS + 1).collect();
    items.len() <= LOOP_ITEMS
        && items.len() >= 2 * period
        && (period..items.len()).all(|i| same_item(items[i - period], items[i], a))
}

/// At most this many items in a loop.
const LOOP_ITEMS: usize = 128;

/// Two blocks of a tag and class, of some length, that read the same.
fn same_item(x: NodeRef<'_>, y: NodeRef<'_>, a: &Analysis<'_>) -> bool {
    let (Node::Element(ex), Node::Element(ey)) = (x.value(), y.value()) else {
        return false;
    };
    // Lengths first: they tell most pairs apart at the least cost.
    let len = text_len(x, a);
    len >= COPY_CHARS
        && len == text_len(y, a)
        && ex.name() == ey.name()
        && crate::classify::attr(ex, "class") == crate::classify::attr(ey, "class")
        && same_text(x, y)
}

/// The non-whitespace characters of the block's content.
fn text_len(node: NodeRef<'_>, a: &Analysis<'_>) -> u32 {
    a.stats.get(&node.id()).map_or(0, |s| s.text)
}

/// The two subtrees hold the same words.
fn same_text(x: NodeRef<'_>, y: NodeRef<'_>) -> bool {
    words(x).eq(words(y))
}

fn words<'a>(n: NodeRef<'a>) -> impl Iterator<Item = &'a str> {
    n.descendants()
        .filter_map(|d| match d.value() {
            Node::Text(t) => Some(t.as_str().split_whitespace()),
            _ => None,
        })
        .flatten()
}

/// The page holds three or more `<h1>`s. Asked of each `<h1>` in the
/// content: the walk stops at the third.
fn heads_items_with_h1(node: NodeRef<'_>) -> bool {
    node.tree()
        .nodes()
        .filter(|n| matches!(n.value(), Node::Element(e) if e.name() == "h1"))
        .take(3)
        .count()
        >= 3
}

/// The element before `node` is a paragraph.
fn follows_p(node: NodeRef<'_>) -> bool {
    node.prev_siblings()
        .find(|n| n.value().is_element())
        .is_some_and(|n| matches!(n.value(), Node::Element(e) if e.name() == "p"))
}

/// A block of mostly link text, short enough to be navigation. Not a
/// paragraph holding one link: that is a line of text, such as the title
/// of a listing's entry or a sentence that is all link; but on a page that
/// declares itself an article, where such a line points to another story
/// ("Read more: ...").
fn is_link_list(node: NodeRef<'_>, a: &Analysis<'_>, article: bool) -> bool {
    let Node::Element(el) = node.value() else {
        return false;
    };
    let tag = el.name();
    if !matches!(
        tag,
        "div" | "section" | "ul" | "ol" | "table" | "form" | "figure" | "dl" | "p" | "span"
    ) {
        return false;
    }
    let Some(s) = a.stats.get(&node.id()) else {
        return false;
    };
    let density = s.link_density();
    let link_dense = (density > 0.5 && s.text < NAV_BLOCK_CHARS)
        || (matches!(tag, "ul" | "ol") && density > 0.35 && s.text < 300);
    if !link_dense || is_list_of_sentences(node, s) {
        return false;
    }
    // Asked only of link-dense blocks: both walk the tree.
    // Inside a link it is that link's text (Sphinx wraps a reference's
    // words in a span), not a list of links. A span around one link is
    // that link's styling (a wiki's template for a man page reference),
    // inline in its sentence, and a paragraph of one link a line: a list
    // has two.
    let one_link_line = tag == "span" || (tag == "p" && !article);
    let link_text = density == 1.0 && is_inside_link(node);
    let a_line = one_link_line && links_under(node) < 2;
    !(link_text || a_line)
}

/// Words outside links, per item, that make a list's items sentences
/// with links in them ("Flagship hotel: ...", "This hotel features in my
/// list of ..."), not links with a separator.
const ITEM_WORDS_CHARS: u32 = 20;

/// A list whose items hold a sentence's worth of text outside their links.
fn is_list_of_sentences(node: NodeRef<'_>, s: &crate::content::Stats) -> bool {
    if !matches!(node.value(), Node::Element(e) if matches!(e.name(), "ul" | "ol")) {
        return false;
    }
    let items = node
        .children()
        .filter(|c| matches!(c.value(), Node::Element(e) if e.name() == "li"))
        .count() as u32;
    items >= 2 && s.text.saturating_sub(s.link_text) >= ITEM_WORDS_CHARS * items
}

fn links_under(node: NodeRef<'_>) -> usize {
    node.descendants()
        .filter(|n| matches!(n.value(), Node::Element(e) if e.name() == "a"))
        .take(2)
        .count()
}

fn is_inside_link(node: NodeRef<'_>) -> bool {
    node.ancestors()
        .any(|n| matches!(n.value(), Node::Element(e) if e.name() == "a"))
}

/// Whether the link lists inside `root` are its content. An article with a
/// list of related links around it holds more prose than links; a category
/// page, an index or a listing is its lists, with a line or two of
/// introduction: dropping them would leave the introduction alone. Two
/// margins keep the reading stable, so that a copy of a page with a line
/// added reads the same (the gate compares the texts): the lists must hold
/// two thirds of the text, and more than one navigation block can hold.
/// Otherwise the lists between paragraphs stay ([`LinkLists::DropAtEdges`]),
/// but on a page that declares itself an `article`: there a list set
/// between paragraphs is an insert pointing to other stories ("Related:",
/// "Don't miss").
pub(crate) fn link_lists_carry(root: NodeRef<'_>, a: &Analysis<'_>, article: bool) -> LinkLists {
    let Some(total) = a.stats.get(&root.id()).map(|s| s.text) else {
        return LinkLists::Drop;
    };
    let mut in_lists = 0;
    let mut paragraphs: Option<(crate::dom::NodeId, crate::dom::NodeId)> = None;
    let mut skip: Option<crate::dom::NodeId> = None;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) if skip.is_none() => {
                let Node::Element(el) = node.value() else {
                    continue;
                };
                if a.is_junk(node, el) {
                    skip = Some(node.id());
                } else if node.id() != root.id() && is_link_list(node, a, article) {
                    in_lists += a.stats.get(&node.id()).map_or(0, |s| s.text);
                    skip = Some(node.id());
                } else if !article && crate::content::is_paragraph(node, a) {
                    // An article's lists go wherever they stand: its
                    // paragraphs are not looked for.
                    let first = paragraphs.map_or(node.id(), |p| p.0);
                    paragraphs = Some((first, node.id()));
                }
            }
            Edge::Close(node) if skip == Some(node.id()) => skip = None,
            _ => {}
        }
    }
    if in_lists * 3 > total * 2 && in_lists > NAV_BLOCK_CHARS {
        LinkLists::Keep
    } else if let Some((first, last)) = paragraphs {
        LinkLists::DropAtEdges(first, last)
    } else {
        LinkLists::Drop
    }
}

/// A heading that repeats the page title (which is reported separately):
/// the same words, or the title's first words before a " | Site" suffix.
/// `title`'s words are single-spaced. Asked of every heading, paragraph and
/// div of the content on every pass: the heading's text is read only as
/// far as the title's length.
fn repeats_title(node: NodeRef<'_>, title: &str) -> bool {
    // The heading's words joined by single spaces must be a start of the
    // title: each word is compared where it would stand in the title, and
    // the first that does not fit ends the walk.
    let title = title.as_bytes();
    let mut len = 0;
    for d in node.descendants().take(64) {
        if let Node::Text(t) = d.value() {
            for word in t.split_whitespace() {
                let at = if len == 0 { 0 } else { len + 1 };
                let end = at + word.len();
                let fits = end <= title.len()
                    && (len == 0 || title[len] == b' ')
                    && &title[at..end] == word.as_bytes();
                if !fits {
                    return false;
                }
                len = end;
            }
        }
    }
    // The whole title, or at least half of it.
    len > 0 && len * 2 >= title.len()
}

/// The most text, in bytes, a block read for an advertisement label may
/// hold (with the white space around it).
const LABEL_BYTES: usize = 40;

/// A block whose whole text is an advertisement label.
fn is_ad_label(node: NodeRef<'_>) -> bool {
    let Node::Element(el) = node.value() else {
        return false;
    };
    if !is_block(el.name()) {
        return false;
    }
    // Asked of every block rendered, and most blocks are longer than a
    // label: the text is gathered on the stack, and a block stops at its
    // 41st byte without copying the rest.
    let mut buf = [0u8; LABEL_BYTES];
    let mut len = 0;
    // Bounded: a label is a few nodes deep, and a walk per block over a
    // deeply nested page must stay cheap.
    for d in node.descendants().take(16) {
        if let Node::Text(t) = d.value() {
            let raw = d.parent().is_some_and(|p| {
                matches!(p.value(), Node::Element(e) if matches!(e.name(), "noscript" | "script" | "style" | "template"))
            });
            if raw {
                continue;
            }
            let Some(piece) = buf.get_mut(len..len + t.len()) else {
                return false;
            };
            piece.copy_from_slice(t.as_bytes());
            len += t.len();
        }
    }
    // Whole texts joined: UTF-8 still.
    let Ok(text) = std::str::from_utf8(&buf[..len]) else {
        return false;
    };
    // No label is longer than 14 characters, and lowercase has at least
    // the characters of the text it is made from.
    let text = text.trim();
    if text.is_empty() || text.chars().nth(14).is_some() {
        return false;
    }
    matches!(
        text.to_lowercase().as_str(),
        "advertisement"
            | "advertisements"
            | "advert"
            | "adverts"
            | "ad"
            | "ads"
            | "sponsored"
            | "publicidade"
            | "reklame"
            | "anzeige"
            | "werbung"
            | "publicidad"
            | "publicité"
            | "pubblicità"
            | "реклама"
            | "广告"
            | "廣告"
            | "広告"
            | "광고"
    )
}
