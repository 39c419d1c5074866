//! Finding the main content: per-element text statistics, paragraph scores
//! that flow up to their containers (readability's scheme), the best
//! container and its qualifying siblings.
//!
//! Every walk is iterative (`traverse` edges and explicit stacks): a page
//! nested 100,000 deep must not overflow the stack.

use crate::dom::{Node, NodeId, NodeRef};

use crate::classify::{FactsMap, Rules, attr, is_block};
use crate::elements::{ElementMap, Elements};
use crate::node_map::NodeMap;

/// Text statistics of an element's non-junk content.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Stats {
    /// Non-whitespace characters.
    pub text: u32,
    /// Non-whitespace characters inside links.
    pub link_text: u32,
    pub commas: u32,
    /// Characters whose nearest block ancestor is this element.
    pub own_text: u32,
    pub own_commas: u32,
}

impl Stats {
    pub fn link_density(&self) -> f64 {
        if self.text == 0 {
            0.0
        } else {
            f64::from(self.link_text) / f64::from(self.text)
        }
    }
}

pub(crate) struct Analysis<'a> {
    /// The page's elements, as the pass walked them.
    pub elements: &'a Elements<'a>,
    pub stats: ElementMap<'a, Stats>,
    pub rules: Rules,
    /// Elements holding most of the page's text: never dropped for their
    /// class or id alone (a page wrapper named "ad-margins" is layout; a
    /// thread's replies in a block named "comments" are the thread).
    /// Where each comment is named so, as blog engines name them, the
    /// comments inside are still dropped.
    pub wrappers: &'a NodeMap<()>,
    pub facts: &'a FactsMap<'a>,
}

impl Analysis<'_> {
    /// Dropped with its subtree under these rules.
    pub(crate) fn is_junk(&self, node: NodeRef<'_>, el: crate::dom::Element<'_>) -> bool {
        drops(node, el, self.rules, self.wrappers, self.facts)
    }

    /// As [`crate::classify::Facts::class_weight`], 0 when these rules
    /// leave class weights out.
    fn class_weight(&self, node: NodeRef<'_>, el: crate::dom::Element<'_>) -> i32 {
        if self.rules.class_weights {
            self.facts.get(node, el).class_weight(self.rules)
        } else {
            0
        }
    }
}

fn drops(
    node: NodeRef<'_>,
    el: crate::dom::Element<'_>,
    rules: Rules,
    wrappers: &NodeMap<()>,
    facts: &FactsMap<'_>,
) -> bool {
    let f = facts.get(node, el);
    if !f.is_junk(rules) {
        return false;
    }
    let by_name_only = !f.is_junk(Rules::FULL_TEXT);
    !(by_name_only && wrappers.contains_key(&node.id()))
}

/// What the structure-only pass finds: elements holding at least 40% of
/// the visible text of the page, the page's visible (non-whitespace)
/// characters, and every element's statistics.
pub(crate) struct Outline<'a> {
    pub wrappers: NodeMap<()>,
    pub chars: u32,
    elements: &'a Elements<'a>,
    full: ElementMap<'a, Stats>,
}

impl Outline<'_> {
    /// Visible characters of the page's declared main content (`<main>` or
    /// `role="main"`, the largest), 0 if it declares none.
    pub(crate) fn declared_main_chars(&self) -> u32 {
        (self.elements.items.iter().enumerate())
            .filter(|(_, item)| is_declared_main(self.elements.node(item)))
            .filter_map(|(place, _)| self.full.get_at(place))
            .map(|s| s.text)
            .max()
            .unwrap_or(0)
    }

    /// The page is built from widgets, as Elementor and other page
    /// builders call every block: blocks named so hold 40% of its text
    /// (the share of a wrapper), and the block with the most text of its
    /// own is one of them. "Widget" then marks nothing, where it usually
    /// marks a sidebar's boxes; a sidebar of widgets beside an article
    /// does not make its page one (the article's body is not in them).
    pub(crate) fn built_from_widgets(&self, root: NodeRef<'_>, facts: &FactsMap<'_>) -> bool {
        // The outline read every element's facts.
        if !facts.widget_seen() {
            return false;
        }
        let mut in_widgets = 0u32;
        let (mut most_in, mut most_out) = (0u32, 0u32);
        let mut widget: Option<NodeId> = None;
        for edge in root.traverse() {
            match edge {
                crate::dom::Edge::Open(n) => {
                    let Node::Element(e) = n.value() else {
                        continue;
                    };
                    let Some(s) = self.full.get(&n.id()) else {
                        continue;
                    };
                    if widget.is_none() && facts.get(n, e).is_widget_named() {
                        in_widgets += s.text;
                        widget = Some(n.id());
                    }
                    let most = if widget.is_some() {
                        &mut most_in
                    } else {
                        &mut most_out
                    };
                    *most = (*most).max(s.own_text);
                }
                crate::dom::Edge::Close(n) if widget == Some(n.id()) => widget = None,
                _ => {}
            }
        }
        u64::from(in_widgets) * 10 >= u64::from(self.chars) * 4
            && in_widgets > 0
            && most_in >= most_out
    }
}

pub(crate) fn outline<'a>(elements: &'a Elements<'a>, facts: &FactsMap<'_>) -> Outline<'a> {
    let none = NodeMap::default();
    let full = element_stats(elements, Rules::FULL_TEXT, &none, facts);
    let total = full.values().map(|s| s.text).max().unwrap_or(0);
    let mut wrappers = NodeMap::default();
    for (place, item) in elements.items.iter().enumerate() {
        let holds = full
            .get_at(place)
            .is_some_and(|s| u64::from(s.text) * 10 >= u64::from(total) * 4);
        if total > 0 && holds {
            wrappers.insert(item.id, ());
        }
    }
    Outline {
        wrappers,
        chars: total,
        elements,
        full,
    }
}

fn is_declared_main(n: NodeRef<'_>) -> bool {
    match n.value() {
        Node::Element(e) => e.name() == "main" || attr(e, "role") == Some("main"),
        _ => false,
    }
}

/// Elements open at once that a pass makes room for before it starts.
const OPEN_DEPTH: usize = 32;

/// One pass over the page's elements under `rules`.
pub(crate) fn analyze<'a>(
    elements: &'a Elements<'a>,
    rules: Rules,
    wrappers: &'a NodeMap<()>,
    facts: &'a FactsMap<'a>,
) -> Analysis<'a> {
    Analysis {
        elements,
        stats: element_stats(elements, rules, wrappers, facts),
        rules,
        wrappers,
        facts,
    }
}

/// Statistics of every element, junk skipped.
fn element_stats<'e>(
    elements: &'e Elements<'_>,
    rules: Rules,
    wrappers: &NodeMap<()>,
    facts: &FactsMap<'_>,
) -> ElementMap<'e, Stats> {
    let mut stats = ElementMap::new(elements);
    // Open elements: (index in the list, stats so far); and where the
    // open blocks are in it, the nearest last. Room for the depth of most
    // pages (grown from nothing, each grew three times a pass).
    let mut stack: Vec<(usize, Stats)> = Vec::with_capacity(OPEN_DEPTH);
    let mut blocks: Vec<usize> = Vec::with_capacity(OPEN_DEPTH);
    let items = &elements.items;
    let close = |stack: &mut Vec<(usize, Stats)>,
                 blocks: &mut Vec<usize>,
                 stats: &mut ElementMap<Stats>| {
        let Some((at, s)) = stack.pop() else {
            return;
        };
        if items[at].block {
            blocks.pop();
        }
        if let Some(parent) = stack.last_mut() {
            parent.1.text += s.text;
            parent.1.link_text += s.link_text;
            parent.1.commas += s.commas;
        }
        stats.insert_at(at, s);
    };
    let mut i = 0;
    while let Some(item) = items.get(i) {
        while stack
            .last()
            .is_some_and(|&(at, _)| items[at].end as usize <= i)
        {
            close(&mut stack, &mut blocks, &mut stats);
        }
        let node = elements.node(item);
        let Node::Element(el) = node.value() else {
            unreachable!("the list holds elements only");
        };
        if drops(node, el, rules, wrappers, facts) {
            i = item.end as usize;
            continue;
        }
        if item.block {
            blocks.push(stack.len());
        }
        stack.push((
            i,
            Stats {
                text: item.chars,
                link_text: if item.in_link { item.chars } else { 0 },
                commas: item.commas,
                own_text: 0,
                own_commas: 0,
            },
        ));
        // Its own text's nearest block: itself or the nearest open one.
        if let Some(&block) = blocks.last() {
            stack[block].1.own_text += item.chars;
            stack[block].1.own_commas += item.commas;
        }
        i += 1;
    }
    while !stack.is_empty() {
        close(&mut stack, &mut blocks, &mut stats);
    }
    stats
}

/// Paragraph-like blocks shorter than this don't vote.
const MIN_PARAGRAPH: u32 = 25;

/// What the page says of itself, as selection needs it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Declared {
    /// It declares itself an article (`og:type`).
    pub article: bool,
    /// What schema.org types (and `og:type`) on it declare: a product, a
    /// discussion.
    pub schema: crate::meta::Declares,
}

/// The elements holding the main content, in document order; empty when
/// nothing scores.
pub(crate) fn select<'a>(
    root: NodeRef<'a>,
    a: &Analysis<'_>,
    declared: Declared,
) -> Vec<NodeRef<'a>> {
    let (scores, ranked) = score_blocks(a);
    let Some(&(best_id, best_score)) = ranked.first() else {
        return Vec::new();
    };
    let Some(winner) = root.tree().get(best_id) else {
        return Vec::new();
    };
    let top = climb(rivals_ancestor(winner, &ranked).unwrap_or(winner), &scores);
    let out = around_winner(top, best_score, &scores, a);
    // Only ever more: the items' parent, then the stack of sections, when
    // it holds all of the above.
    let widen = |out: Vec<NodeRef<'a>>, wider: Option<NodeRef<'a>>| match wider {
        Some(w) if out.iter().all(|n| is_under(*n, w.id())) => vec![w],
        _ => out,
    };
    let out = widen(out, repeated_items(top, a));
    let first = out.first().copied();
    let out = widen(out, first.and_then(|n| outermost_stack(n, a)));
    if declared.article {
        out
    } else {
        with_opening(root, out, a)
    }
}

/// The content with the blocks that open it: from the page's `<h1>` down
/// to the content, those that hold a paragraph. A landing page puts its
/// title and pitch in a hero apart from the sections that score; a
/// listing or a thread, its introduction above the items. Not on a page
/// that declares itself an article: there, what stands between the
/// headline and the body is the story's furniture (a standfirst, a
/// dateline, a photo's caption), not its text. Blocks are only added
/// before the content, inside the nearest element holding both it and
/// the `<h1>`, and never when that is the body (a site header's `<h1>` is
/// the site's name).
fn with_opening<'a>(
    root: NodeRef<'a>,
    out: Vec<NodeRef<'a>>,
    a: &Analysis<'_>,
) -> Vec<NodeRef<'a>> {
    let Some(&first) = out.first() else {
        return out;
    };
    let is_h1 = |n: &NodeRef<'_>| {
        matches!(n.value(), Node::Element(e) if e.name() == "h1") && a.stats.contains_key(&n.id())
    };
    let Some(h1) = root
        .descendants()
        .take_while(|n| n.id() != first.id())
        .find(is_h1)
    else {
        return out;
    };
    let Some(holder) = first.ancestors().find(|anc| is_under(h1, anc.id())) else {
        return out;
    };
    let is_page = matches!(holder.value(), Node::Element(e) if matches!(e.name(), "body" | "html"));
    if is_page || !holder.value().is_element() {
        return out;
    }
    // Up from the content to the holder: at each level, the earlier
    // siblings back to the one holding the `<h1>`.
    let mut opening: Vec<NodeRef<'a>> = Vec::new();
    let mut cur = first;
    while cur.id() != holder.id() {
        let mut level: Vec<NodeRef<'a>> = Vec::new();
        for sib in cur.prev_siblings() {
            if sib.descendants().any(|n| is_paragraph(n, a)) {
                level.push(sib);
            }
            if is_under(h1, sib.id()) {
                break;
            }
        }
        level.reverse();
        level.append(&mut opening);
        opening = level;
        let Some(parent) = cur.parent() else { break };
        cur = parent;
    }
    opening.extend(out);
    opening
}

/// Text outside links (non-whitespace characters) that makes a block a
/// section of a page: a couple of sentences.
const SECTION_CHARS: u32 = 150;

/// A page built as a stack of sections (service and landing pages, page
/// builders, product pages: a pitch, features, specifications, questions
/// and answers): the winner, or one of its ancestors, is one of three or
/// more sibling blocks that each hold a couple of sentences of their own,
/// mostly outside links, and the others hold more such text than the
/// winner. Scoring picks the section with the most paragraphs; a reader
/// reads the stack. Headers, footers, navigation and negatively named
/// blocks (sidebars, comments, related links) are not sections, and
/// boilerplate inside the stack is still cleaned when rendering.
fn stacked_sections<'a>(top: NodeRef<'a>, a: &Analysis<'_>) -> Option<NodeRef<'a>> {
    let plain = |s: &Stats| s.text.saturating_sub(s.link_text);
    let t = plain(a.stats.get(&top.id())?);
    let is_section = |n: NodeRef<'_>| {
        let Node::Element(e) = n.value() else {
            return false;
        };
        if a.class_weight(n, e) < 0 {
            return false;
        }
        a.stats
            .get(&n.id())
            .is_some_and(|s| plain(s) >= SECTION_CHARS && s.link_density() < 0.5)
    };
    for item in std::iter::once(top).chain(top.ancestors()) {
        let parent = item.parent()?;
        if !matches!(parent.value(), Node::Element(_)) {
            return None;
        }
        let sections: Vec<NodeRef<'_>> = parent.children().filter(|n| is_section(*n)).collect();
        let others: u32 = sections
            .iter()
            .filter(|n| n.id() != item.id())
            .filter_map(|n| a.stats.get(&n.id()))
            .map(plain)
            .sum();
        if sections.len() >= 3 && others > t {
            return Some(parent);
        }
        if matches!(parent.value(), Node::Element(e) if e.name() == "body") {
            return None;
        }
    }
    None
}

/// The stack of sections around `top`, climbing while that stack is
/// itself one section of a larger one: a buying guide's methodology (its
/// paragraphs and a list, in an accordion's pane) is a stack, and so are
/// the reviews of the products around it, of which it is one part.
fn outermost_stack<'a>(top: NodeRef<'a>, a: &Analysis<'_>) -> Option<NodeRef<'a>> {
    let mut stack = stacked_sections(top, a)?;
    // Each step is to an ancestor: the climb ends at the body.
    while let Some(up) = stacked_sections(stack, a) {
        stack = up;
    }
    Some(stack)
}

/// Scores of the blocks and of the ancestors they vote for (up to three
/// levels, halving), after link density; and the scored elements, best
/// first.
fn score_blocks<'a>(a: &Analysis<'a>) -> (ElementMap<'a, f64>, Vec<(NodeId, f64)>) {
    let mut scores = ElementMap::new(a.elements);
    let mut order: Vec<NodeId> = Vec::new();
    // The page's elements in document order, as the pass listed them.
    for (place, item) in a.elements.items.iter().enumerate() {
        let Some(s) = a.stats.get_at(place) else {
            continue;
        };
        if s.own_text < MIN_PARAGRAPH || !item.block {
            continue;
        }
        let node = a.elements.node(item);
        let mut score = 1.0 + f64::from(s.own_commas) + (f64::from(s.own_text) / 100.0).min(3.0);
        // A text block in its own right also counts as a candidate.
        let mut target = Some(node);
        for level in 0..4 {
            let Some(n) = target else { break };
            let Node::Element(e) = n.value() else { break };
            if !a.stats.contains_key(&n.id()) {
                break;
            }
            let entry = scores.get_or_insert_with(n.id(), || {
                order.push(n.id());
                a.facts.get(n, e).base_score(e.name(), a.rules)
            });
            *entry += score;
            if level > 0 {
                score /= 2.0;
            }
            target = n.parent();
        }
    }
    let mut ranked: Vec<(NodeId, f64)> = Vec::with_capacity(order.len());
    for id in &order {
        let score = scores[id] * (1.0 - a.stats[id].link_density());
        scores.insert(*id, score);
        ranked.push((*id, score));
    }
    ranked.sort_by(|x, y| y.1.total_cmp(&x.1));
    (scores, ranked)
}

/// Content split into several blocks (a teaser, the body, a second body
/// part) gives several close runners-up: if three of them sit under one
/// ancestor of the winner, that ancestor is the content. Runners-up that
/// are compositions of their own (another post's teaser) do not count.
fn rivals_ancestor<'a>(winner: NodeRef<'a>, ranked: &[(NodeId, f64)]) -> Option<NodeRef<'a>> {
    let best_score = ranked.first()?.1;
    let rivals: Vec<NodeRef<'_>> = ranked[1..ranked.len().min(5)]
        .iter()
        .filter(|(_, s)| *s >= best_score * 0.75)
        .filter_map(|(id, _)| winner.tree().get(*id))
        .filter(|r| !is_another_composition(*r, winner))
        .collect();
    if rivals.len() < 3 {
        return None;
    }
    winner
        .ancestors()
        .take_while(|anc| !matches!(anc.value(), Node::Element(e) if e.name() == "body"))
        .find(|anc| {
            let under = |r: &&NodeRef<'_>| r.ancestors().any(|x| x.id() == anc.id());
            rivals.iter().filter(under).count() >= 3
        })
}

/// `rival` is inside an `<article>` of another kind than the winner's
/// (another class), or the winner is in none: a composition of its own,
/// such as a teaser of another post, not a part of the winner's content.
/// A thread's posts are articles of one kind.
fn is_another_composition<'a>(rival: NodeRef<'a>, winner: NodeRef<'a>) -> bool {
    let article = |n: NodeRef<'a>| {
        std::iter::once(n)
            .chain(n.ancestors())
            .find(|a| matches!(a.value(), Node::Element(e) if e.name() == "article"))
    };
    let class = |n: NodeRef<'a>| match n.value() {
        Node::Element(e) => attr(e, "class"),
        _ => None,
    };
    let Some(theirs) = article(rival) else {
        return false;
    };
    match article(winner) {
        _ if is_under(winner, theirs.id()) => false,
        Some(ours) => class(ours) != class(theirs),
        None => true,
    }
}

/// Climbs to an ancestor that outscores `top`: it was one part of a larger
/// content block. Unscored ancestors are passed through; an ancestor under
/// a third of the score ends the climb.
fn climb<'a>(top: NodeRef<'a>, scores: &ElementMap<'_, f64>) -> NodeRef<'a> {
    let threshold = scores.get(&top.id()).copied().unwrap_or(0.0) / 3.0;
    let mut last = threshold * 3.0;
    for anc in top.ancestors() {
        if matches!(anc.value(), Node::Element(e) if e.name() == "body") {
            break;
        }
        if let Some(&ps) = scores.get(&anc.id()) {
            if ps < threshold {
                break;
            }
            if ps > last {
                return anc;
            }
            last = ps;
        }
    }
    top
}

/// `node` is `ancestor` or inside it.
fn is_under(node: NodeRef<'_>, ancestor: NodeId) -> bool {
    node.id() == ancestor || node.ancestors().any(|x| x.id() == ancestor)
}

/// The declared main content around the winner, or the winner with its
/// siblings that read like more of the same content.
fn around_winner<'a>(
    top: NodeRef<'a>,
    best_score: f64,
    scores: &ElementMap<'_, f64>,
    a: &Analysis<'_>,
) -> Vec<NodeRef<'a>> {
    if let Some(main) = declared_main(top, a) {
        return vec![main];
    }

    // Siblings of the winner that read like more of the same content.
    let threshold = (best_score * 0.2).max(10.0);
    let Some(parent) = top.parent() else {
        return vec![top];
    };
    let mut out = Vec::new();
    for sib in parent.children() {
        if sib.id() == top.id() {
            out.push(sib);
            continue;
        }
        let Node::Element(el) = sib.value() else {
            continue;
        };
        let Some(s) = a.stats.get(&sib.id()) else {
            continue;
        };
        let score = scores.get(&sib.id()).copied().unwrap_or(0.0);
        let weight = a.class_weight(sib, el);
        let keep = (score >= threshold && weight >= 0)
            || (el.name() == "p"
                && ((s.text > 80 && s.link_density() < 0.25)
                    || (s.text > 0 && s.link_density() == 0.0 && ends_sentence(sib))));
        if keep {
            out.push(sib);
        }
    }
    out
}

/// Items in a row that hold text of their own, when the winner is one of
/// them (or inside one, up to three levels): forum posts, answers,
/// reviews, the entries of a listing. Each alone scores below the first
/// one, and a reader reads them all, so the content is their parent. Items
/// are siblings of one tag and class; at least three of them, each with a
/// paragraph's worth of text mostly outside links, and the others together
/// with at least as much text as the winner's own item.
fn repeated_items<'a>(top: NodeRef<'a>, a: &Analysis<'_>) -> Option<NodeRef<'a>> {
    let is_item = |n: NodeRef<'_>| {
        a.stats
            .get(&n.id())
            .is_some_and(|s| s.text >= MIN_PARAGRAPH && s.link_density() < 0.5)
    };
    for item in top
        .ancestors()
        .take(3)
        .chain(std::iter::once(top))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        let Node::Element(el) = item.value() else {
            continue;
        };
        let parent = item.parent()?;
        if matches!(parent.value(), Node::Element(p) if p.name() == "body") || !is_item(item) {
            continue;
        }
        let class = attr(el, "class");
        let same = |n: &NodeRef<'_>| matches!(n.value(), Node::Element(e) if e.name() == el.name() && attr(e, "class") == class);
        let others: Vec<NodeRef<'_>> = parent
            .children()
            .filter(|n| n.id() != item.id() && same(n) && is_item(*n))
            .collect();
        if others.len() >= 2 {
            return Some(parent);
        }
    }
    None
}

/// The page's declared main content (`<main>` or `role="main"`) when the
/// winner is only a part of it and it is itself content rather than
/// navigation: a documentation page is its description, its summary
/// tables *and* its details, of which scoring picks only the largest
/// block (javadoc: the method summary table alone). Boilerplate inside it
/// is still cleaned when rendering.
fn declared_main<'a>(top: NodeRef<'a>, a: &Analysis<'_>) -> Option<NodeRef<'a>> {
    let main = top.ancestors().find(|n| is_declared_main(*n))?;
    let (m, t) = (a.stats.get(&main.id())?, a.stats.get(&top.id())?);
    // What main adds must be a real part of the page, not what surrounds
    // an article (a news page's main adds a dateline, a byline, a share
    // bar, related links): at least a third as much text outside links as
    // the winner has, or a paragraph ahead of the winner. Link lists
    // inside main are still cleaned when rendering.
    let plain = |s: &Stats| s.text.saturating_sub(s.link_text);
    let extra = plain(m).saturating_sub(plain(t));
    (extra * 3 >= t.text || has_intro(main, top, a)).then_some(main)
}

/// `main` holds a paragraph (a couple of sentences, mostly outside links)
/// before `top`: the page's introduction, set apart from the body that
/// scoring picks (MDN and rustdoc put a page's summary in main's header,
/// a service page its pitch in a hero). What follows the body is not
/// asked: there, a paragraph is as often an author's bio or a sign-up
/// pitch.
fn has_intro(main: NodeRef<'_>, top: NodeRef<'_>, a: &Analysis<'_>) -> bool {
    main.descendants()
        .take_while(|n| n.id() != top.id())
        .any(|n| is_paragraph(n, a))
}

/// A block with a couple of sentences of its own, mostly outside links.
pub(crate) fn is_paragraph(n: NodeRef<'_>, a: &Analysis<'_>) -> bool {
    matches!(n.value(), Node::Element(e) if is_block(e.name()))
        && a.stats
            .get(&n.id())
            .is_some_and(|s| s.own_text >= SECTION_CHARS && s.link_density() < 0.25)
}

fn ends_sentence(node: NodeRef<'_>) -> bool {
    let mut last = None;
    for d in node.descendants() {
        if let Node::Text(t) = d.value() {
            if let Some(c) = t.trim_end().chars().last() {
                last = Some(c);
            }
        }
    }
    matches!(last, Some('.' | '!' | '?' | '。' | '！' | '？'))
}
