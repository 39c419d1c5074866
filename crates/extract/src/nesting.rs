//! The cap on element nesting: start and end tags nested deeper than
//! [`MAX_DEPTH`] are dropped, their text kept.
//!
//! Real pages stay far below the cap; a hostile page nested 100,000 deep
//! would make the tree builders' scope checks quadratic. The tokenizer
//! asks [`Nesting::admits`] of every tag it reads, so both tree builders
//! (ours and html5ever's) and the streaming reader see a capped page.
//! (The cap was a scan of the markup before parsing, which found every
//! tag a second time: a ninth of the parse on javadoc.)

use html5ever::tokenizer::TagKind;
use html5ever::{LocalName, local_name};

/// Deepest element nesting kept.
pub(crate) const MAX_DEPTH: u32 = 512;

/// How deep the tags read so far nest.
#[derive(Default)]
pub(crate) struct Nesting {
    depth: u32,
}

impl Nesting {
    /// Whether a tag is kept; counts it. Only elements that nest count:
    /// a self-closed start tag does not ([`counts_for_depth`]).
    pub(crate) fn admits(&mut self, kind: TagKind, name: &LocalName, self_closing: bool) -> bool {
        if !counts_for_depth(name) {
            return true;
        }
        match kind {
            TagKind::StartTag if self_closing => true,
            TagKind::StartTag => {
                self.depth += 1;
                self.depth <= MAX_DEPTH
            }
            TagKind::EndTag => {
                let kept = self.depth <= MAX_DEPTH;
                self.depth = self.depth.saturating_sub(1);
                kept
            }
        }
    }
}

/// Elements that nest: not void ones, and not those the parser closes by
/// itself when the next one starts (`<p>`, `<li>`, table cells...), which
/// pages often leave open.
fn counts_for_depth(name: &LocalName) -> bool {
    // Atoms: each alternative is one compare of a word.
    !matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
            | local_name!("param")
            | local_name!("keygen")
            | local_name!("p")
            | local_name!("li")
            | local_name!("dt")
            | local_name!("dd")
            | local_name!("tr")
            | local_name!("td")
            | local_name!("th")
            | local_name!("option")
            | local_name!("optgroup")
            | local_name!("tbody")
            | local_name!("thead")
            | local_name!("tfoot")
            | local_name!("colgroup")
            | local_name!("caption")
            | local_name!("rb")
            | local_name!("rt")
            | local_name!("rp")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_past_the_cap_are_dropped_and_the_count_comes_back_down() {
        let mut n = Nesting::default();
        let div = local_name!("div");
        let kept_opening = (0..1000)
            .filter(|_| n.admits(TagKind::StartTag, &div, false))
            .count();
        assert_eq!(kept_opening, MAX_DEPTH as usize);
        let kept_closing = (0..1000)
            .filter(|_| n.admits(TagKind::EndTag, &div, false))
            .count();
        assert_eq!(kept_closing, MAX_DEPTH as usize);
        // Back at the top: nothing is dropped.
        assert!(n.admits(TagKind::StartTag, &div, false));
    }

    #[test]
    fn a_page_nested_past_the_cap_is_parsed_capped_with_its_text() {
        let deep = format!("{}text{}", "<div>".repeat(1000), "</div>".repeat(1000));
        let dom = crate::tree_builder::parse_document(&deep, 0);
        let depth = |n: crate::dom::NodeRef<'_>| n.ancestors().count();
        let deepest = dom.root().descendants().max_by_key(|n| depth(*n)).unwrap();
        // The divs kept, under the document, `<html>` and `<body>`.
        assert_eq!(depth(deepest), MAX_DEPTH as usize + 3);
        assert_eq!(dom.root().text().collect::<String>(), "text");
    }

    #[test]
    fn void_self_closed_and_implied_end_elements_do_not_count() {
        let mut n = Nesting::default();
        for _ in 0..1000 {
            assert!(n.admits(TagKind::StartTag, &local_name!("p"), false));
            assert!(n.admits(TagKind::StartTag, &local_name!("br"), false));
            assert!(n.admits(TagKind::StartTag, &local_name!("div"), true));
        }
        assert_eq!(n.depth, 0);
    }
}
