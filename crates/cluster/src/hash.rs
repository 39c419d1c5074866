//! The one hash every worker computes alike.

/// 64-bit FNV-1a, the fingerprint's: stable across workers, versions and
/// platforms (the partition of a key and a URL's seen hash must be the
/// same everywhere).
pub(crate) use nearcrawl_simhash::hash::fnv1a;
