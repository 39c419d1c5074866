//! Maps keyed by a node of the parsed tree (the outline's wrappers, which
//! every pass reads). What is kept for every element, a pass's
//! statistics and the elements' facts, is kept by element instead
//! ([`crate::elements::ElementMap`]).

use crate::dom::NodeId;

/// A node's place in its tree: its index in the tree's vector.
fn slot(id: NodeId) -> usize {
    id.index()
}

/// A value per node, in a vector indexed by the node's place in the tree:
/// these maps are filled and read for every element on every pass, and a
/// lookup is an index where a hash map's was a hash, a probe and a
/// compare (SipHash was a tenth of extraction time; a multiplicative hash,
/// still 5% of a crawl's CPU time in `FactsMap::get` alone).
#[derive(Debug, Clone)]
pub(crate) struct NodeMap<V> {
    slots: Vec<Option<V>>,
}

impl<V> Default for NodeMap<V> {
    fn default() -> Self {
        NodeMap { slots: Vec::new() }
    }
}

impl<V> NodeMap<V> {
    pub(crate) fn get(&self, id: &NodeId) -> Option<&V> {
        self.slots.get(slot(*id))?.as_ref()
    }

    pub(crate) fn contains_key(&self, id: &NodeId) -> bool {
        self.get(id).is_some()
    }

    pub(crate) fn insert(&mut self, id: NodeId, value: V) -> Option<V> {
        self.slot_mut(id).replace(value)
    }

    /// `id`'s slot, the vector grown to hold it.
    fn slot_mut(&mut self, id: NodeId) -> &mut Option<V> {
        let at = slot(id);
        if at >= self.slots.len() {
            self.slots.resize_with(at + 1, || None);
        }
        &mut self.slots[at]
    }
}

impl<V> std::ops::Index<&NodeId> for NodeMap<V> {
    type Output = V;
    fn index(&self, id: &NodeId) -> &V {
        self.get(id).expect("a node with a value")
    }
}

/// The place of a node that is not in the list.
pub(crate) const NOT_LISTED: u32 = u32::MAX;

/// Where each node of a tree stands in a list of its elements
/// ([`crate::elements::Elements`]), [`NOT_LISTED`] if it is not in it:
/// how maps kept by element are read by node.
#[derive(Clone, Copy, Default)]
pub(crate) struct Places<'a>(&'a [u32]);

impl<'a> Places<'a> {
    /// Each node's place, by the node's index.
    pub(crate) fn new(places: &'a [u32]) -> Places<'a> {
        Places(places)
    }

    /// The place of node `id` in the list, if it is listed.
    pub(crate) fn of(self, id: &NodeId) -> Option<usize> {
        let place = *self.0.get(id.index())?;
        (place != NOT_LISTED).then_some(place as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_node_has_a_slot_of_its_own_within_the_tree() {
        let doc = crate::tree_builder::parse_document("<p>a<b>b</b><i>c</i></p><div>d</div>", 0);
        let nodes: Vec<NodeId> = doc.nodes().map(|n| n.id()).collect();
        let mut slots: Vec<usize> = nodes.iter().map(|&id| slot(id)).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), nodes.len());
        assert!(slots.iter().all(|&s| s <= nodes.len()));
        let mut map = NodeMap::default();
        for (i, &id) in nodes.iter().enumerate() {
            map.insert(id, i);
        }
        for (i, id) in nodes.iter().enumerate() {
            assert_eq!(map[id], i);
        }
        // A map made without room grows as it needs.
        let mut grown = NodeMap::default();
        grown.insert(nodes[3], 2);
        assert_eq!(grown.get(&nodes[3]), Some(&2));
        assert!(!grown.contains_key(&nodes[2]));
    }
}
