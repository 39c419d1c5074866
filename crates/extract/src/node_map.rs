//! Maps keyed by a node of the parsed tree, as every pass of extraction
//! fills and reads them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ego_tree::NodeId;

/// Hashes a node id (an index into the tree's arena) with one multiply:
/// these maps are filled and read for every element on every pass, and
/// SipHash was a tenth of extraction time.
#[derive(Default)]
pub(crate) struct NodeIdHasher(u64);

impl Hasher for NodeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type NodeMap<V> = HashMap<NodeId, V, BuildHasherDefault<NodeIdHasher>>;
