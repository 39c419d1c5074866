//! Feature hashing: FNV-1a 64 (the `fnv` crate) followed by a 64-bit finalizer.
//!
//! Why the finalizer: raw FNV-1a output is biased on real tokens. Tokens that
//! differ in their last byte differ only in the low bits before the final
//! multiply, and one multiply spreads a change upward only, so the top and
//! bottom bits of raw FNV-1a are poorly mixed. Simhash needs every bit of every
//! feature to be a fair coin. MurmurHash3's `fmix64` is a bijection, so it adds no
//! collisions, and costs two multiplies per feature (not per byte).
//! `examples/bit_balance.rs` measures both on real tokens.

use std::hash::Hasher;

pub use fnv::FnvHasher;

/// MurmurHash3's 64-bit finalizer: every input bit affects every output bit.
#[inline]
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// Raw FNV-1a 64 of a byte string (no finalizer).
#[inline]
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = FnvHasher::default();
    h.write(bytes);
    h.finish()
}

/// Combines token hashes into one shingle hash, order-sensitive. The result is
/// raw: finalize it with [`fmix64`] like a unigram.
///
/// One rotate, xor and multiply per token (not per byte, as FNV over the
/// hashes' bytes would be): the finalizer does the mixing.
#[inline]
pub fn combine(tokens: impl IntoIterator<Item = u64>) -> u64 {
    let mut h = 0u64;
    for t in tokens {
        h = (h.rotate_left(29) ^ t).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn fmix64_is_a_bijection_on_samples() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..10_000u64 {
            assert!(seen.insert(fmix64(i)));
        }
        assert_eq!(fmix64(0), 0);
    }

    #[test]
    fn combine_is_order_sensitive() {
        assert_ne!(combine([1, 2]), combine([2, 1]));
        assert_eq!(combine([1, 2]), combine([1, 2]));
    }
}
