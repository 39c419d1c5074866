//! A page's elements in document order, each with where its subtree ends
//! and what the text directly in it counts: what every pass of
//! [`crate::content::analyze`] walks, made in one walk of the tree.
//!
//! A page is read in two to four passes (the outline, then a pass per rule
//! set until one finds enough). Each walked the whole tree: text nodes as
//! well as elements, a pointer hop per edge, and every text and tag name
//! read again. Walking this list instead, a pass visits each element once,
//! skips a dropped subtree in one step and reads no text.
//!
//! What is kept per element (a pass's statistics, block scores, the
//! elements' facts) is kept by place in the list ([`ElementMap`]) and read
//! by node through the list's places.

use crate::chars::count_text;
use crate::classify::is_block;
use crate::dom::{Dom, Edge, Node, NodeId, NodeRef};
use crate::node_map::{NOT_LISTED, Places};

/// One element of the list, in 20 bytes: a page of 50,000 elements (a
/// syntax-highlighted source file) holds a megabyte of them.
#[derive(Clone, Copy)]
pub(crate) struct Item {
    pub id: NodeId,
    /// The index in the list just past its last descendant.
    pub end: u32,
    /// Non-whitespace characters and commas of its own text nodes.
    pub chars: u32,
    pub commas: u32,
    /// It is a block ([`is_block`]).
    pub block: bool,
    /// It is a link or inside one.
    pub in_link: bool,
}

const _: () = assert!(std::mem::size_of::<Item>() <= 20);

/// The elements under a root, in document order.
pub(crate) struct Elements<'a> {
    pub dom: &'a Dom,
    pub items: Vec<Item>,
    /// Each node's place in `items`, [`NOT_LISTED`] for other nodes.
    places: Vec<u32>,
}

impl<'a> Elements<'a> {
    /// Where each node stands in the list.
    pub(crate) fn places(&self) -> Places<'_> {
        Places::new(&self.places)
    }

    /// The element `item` is.
    pub(crate) fn node(&self, item: &Item) -> NodeRef<'a> {
        self.dom
            .get(item.id)
            .expect("an item is a node of its tree")
    }

    /// The elements under `root` (root itself included, if an element).
    pub(crate) fn of(root: NodeRef<'a>) -> Elements<'a> {
        let nodes = root.tree().nodes().len();
        // About half of a page's nodes are elements.
        let mut items: Vec<Item> = Vec::with_capacity(nodes / 2 + 1);
        // Indexes of the open elements in `items`.
        let mut open: Vec<usize> = Vec::with_capacity(32);
        let mut places = vec![NOT_LISTED; nodes];
        let mut links = 0u32;
        for edge in root.traverse() {
            match edge {
                Edge::Open(node) => match node.value() {
                    Node::Element(el) => {
                        let link = el.name() == "a";
                        links += u32::from(link);
                        open.push(items.len());
                        places[node.id().index()] = items.len() as u32;
                        items.push(Item {
                            id: node.id(),
                            end: 0,
                            chars: 0,
                            commas: 0,
                            block: is_block(el.name()),
                            in_link: links > 0,
                        });
                    }
                    Node::Text(t) => {
                        if let Some(&at) = open.last() {
                            let (chars, commas) = count_text(t.as_str());
                            items[at].chars += chars;
                            items[at].commas += commas;
                        }
                    }
                    _ => {}
                },
                Edge::Close(node) => {
                    if let Node::Element(el) = node.value() {
                        links -= u32::from(el.name() == "a");
                        if let Some(at) = open.pop() {
                            items[at].end = items.len() as u32;
                        }
                    }
                }
            }
        }
        Elements {
            dom: root.tree(),
            items,
            places,
        }
    }
}

/// A value per element of a list, in a vector by the element's place in
/// it: a pass's statistics take a slot per element, not per node (about
/// half of a page's nodes are text), filled by place and read by node.
pub(crate) struct ElementMap<'a, V> {
    places: Places<'a>,
    slots: Vec<Option<V>>,
}

impl<V> Default for ElementMap<'_, V> {
    /// A map of no elements: every node is unlisted.
    fn default() -> Self {
        ElementMap {
            places: Places::default(),
            slots: Vec::new(),
        }
    }
}

impl<'a, V> ElementMap<'a, V> {
    /// Empty, with a slot for each element of `elements`.
    pub(crate) fn new(elements: &'a Elements<'_>) -> ElementMap<'a, V> {
        let mut slots = Vec::with_capacity(elements.items.len());
        slots.resize_with(elements.items.len(), || None);
        ElementMap {
            places: elements.places(),
            slots,
        }
    }

    /// The value of the element at `place` in the list.
    pub(crate) fn insert_at(&mut self, place: usize, value: V) {
        self.slots[place] = Some(value);
    }

    pub(crate) fn get_at(&self, place: usize) -> Option<&V> {
        self.slots.get(place)?.as_ref()
    }

    /// The value of element `id`, made by `make` if it has none. Panics
    /// if `id` is not in the list.
    pub(crate) fn get_or_insert_with(&mut self, id: NodeId, make: impl FnOnce() -> V) -> &mut V {
        let place = self.places.of(&id).expect("a listed element");
        self.slots[place].get_or_insert_with(make)
    }

    /// Sets the value of element `id`. Panics if `id` is not in the list.
    pub(crate) fn insert(&mut self, id: NodeId, value: V) {
        let place = self.places.of(&id).expect("a listed element");
        self.slots[place] = Some(value);
    }

    pub(crate) fn get(&self, id: &NodeId) -> Option<&V> {
        self.slots.get(self.places.of(id)?)?.as_ref()
    }

    pub(crate) fn contains_key(&self, id: &NodeId) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().flatten()
    }
}

impl<V> std::ops::Index<&NodeId> for ElementMap<'_, V> {
    type Output = V;
    fn index(&self, id: &NodeId) -> &V {
        self.get(id).expect("an element with a value")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_element_knows_its_subtree_its_own_text_and_its_links() {
        let doc = crate::tree_builder::parse_document(
            "<div>ab <p>cd, <a href=x>ef <b>g</b></a></p> h</div><p>i</p>",
            0,
        );
        let elements = Elements::of(doc.root());
        let names: Vec<String> = elements
            .items
            .iter()
            .map(|i| match elements.node(i).value() {
                Node::Element(e) => e.name().to_owned(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(names, ["html", "head", "body", "div", "p", "a", "b", "p"]);
        let of = |name: &str, nth: usize| {
            let at = (names.iter().enumerate())
                .filter(|(_, n)| *n == name)
                .nth(nth)
                .unwrap()
                .0;
            (at, elements.items[at])
        };
        let (div, d) = of("div", 0);
        assert_eq!(
            (div, d.end, d.chars, d.block, d.in_link),
            (3, 7, 3, true, false)
        );
        let (_, p) = of("p", 0);
        assert_eq!((p.end, p.chars, p.commas), (7, 3, 1));
        let (a, l) = of("a", 0);
        assert_eq!(
            (a, l.end, l.chars, l.block, l.in_link),
            (5, 7, 2, false, true)
        );
        let (_, b) = of("b", 0);
        assert!(b.in_link && b.chars == 1 && b.end == 7);
        let (last, p) = of("p", 1);
        assert_eq!((last, p.end, p.in_link), (7, 8, false));
        assert_eq!(of("html", 0).1.end, 8);
    }

    #[test]
    fn a_map_by_element_is_read_by_node() {
        let doc = crate::tree_builder::parse_document("<p>a<b>b</b></p><i>c</i>", 0);
        let elements = Elements::of(doc.root());
        let mut map = ElementMap::new(&elements);
        for place in (0..elements.items.len()).step_by(2) {
            map.insert_at(place, place);
        }
        for (place, item) in elements.items.iter().enumerate() {
            assert_eq!(map.get(&item.id), (place % 2 == 0).then_some(&place));
        }
        assert_eq!(map.values().count(), elements.items.len().div_ceil(2));
        // By node: set, or made once.
        let last = elements.items.len() - 1;
        let id = elements.items[last].id;
        map.insert(id, 100);
        *map.get_or_insert_with(id, || 0) += 1;
        assert_eq!((map[&id], map.get_at(last)), (101, Some(&101)));
        // Text nodes have no place.
        for node in doc.nodes() {
            if matches!(node.value(), Node::Text(_)) {
                assert!(!map.contains_key(&node.id()));
            }
        }
    }
}
