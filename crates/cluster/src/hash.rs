//! The one hash every worker computes alike.

/// 64-bit FNV-1a: stable across workers, versions and platforms (the
/// partition of a key and a URL's seen hash must be the same everywhere).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}
