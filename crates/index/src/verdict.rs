//! What the gate says of a document: new, or a duplicate of which
//! document, by which check ([`Verdict`], [`Check`]), and what the verdict
//! was based on ([`Decision`]).

use nearcrawl_simhash::Simhash;

/// Which check found a duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The same normalized token sequence.
    ExactText,
    /// Simhash candidate confirmed by the MinHash sketch of word shingles.
    Sketch,
    /// Short text: simhash candidate confirmed word by word.
    ShortText,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::ExactText => "exact-text",
            Check::Sketch => "sketch",
            Check::ShortText => "short-text",
        }
    }
}

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Not a duplicate of anything earlier; recorded.
    New,
    /// The same normalized text as document `of`.
    Exact { of: u64 },
    /// Close to document `of`: fingerprints `distance` bits apart and
    /// `similarity` as measured by `check` (sketch or short text).
    Near {
        of: u64,
        distance: u32,
        similarity: f32,
        check: Check,
    },
}

impl Verdict {
    /// The check that decided a duplicate; none for a new document.
    pub fn check(&self) -> Option<Check> {
        match self {
            Verdict::New => None,
            Verdict::Exact { .. } => Some(Check::ExactText),
            Verdict::Near { check, .. } => Some(*check),
        }
    }

    /// What a duplicate's record names: the earlier document, `"exact"` or
    /// `"near"`, the distance and the similarity; none for a new document.
    pub fn duplicate_of(&self) -> Option<(u64, &'static str, u32, f32)> {
        match *self {
            Verdict::New => None,
            Verdict::Exact { of } => Some((of, "exact", 0, 1.0)),
            Verdict::Near {
                of,
                distance,
                similarity,
                ..
            } => Some((of, "near", distance, similarity)),
        }
    }
}

/// The verdict and what it was based on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    /// Fewer tokens than `short_features`: verified word by word.
    pub short: bool,
    pub simhash: Simhash,
    /// Hash of the normalized token sequence (the exact-duplicate key).
    pub content_hash: u128,
}
