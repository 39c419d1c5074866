//! What the gate keeps of a document: the record of a new one (under its
//! slot in the record file), and the judgement a caller may store and
//! record again after a crash, as bytes.

use nearcrawl_simhash::hash::fmix64;
use nearcrawl_simhash::{Fingerprint, Simhash};

use crate::candidates::Keys;
use crate::dedup::{Check, Decision, Verdict};
use crate::sketch::{BANDS, SKETCH_BYTES, Sketch};

/// What the gate stores of a new document, under its slot: the caller's
/// document id, the fingerprint (for the k-bit check), the content hash
/// (its low half, for the exact check), and the [`DocRecord`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlotRecord {
    pub(crate) doc: u64,
    pub(crate) fingerprint: Fingerprint,
    /// The low half of the content hash: with the fingerprint, 128 bits
    /// that must agree for an exact duplicate.
    pub(crate) text_hash: u64,
    pub(crate) record: DocRecord,
}

impl SlotRecord {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(32 + 16 + SKETCH_BYTES);
        b.extend_from_slice(&self.doc.to_be_bytes());
        b.extend_from_slice(&self.fingerprint.0.to_be_bytes());
        b.extend_from_slice(&self.text_hash.to_be_bytes());
        b.extend_from_slice(&self.record.to_bytes());
        b
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Option<SlotRecord> {
        Some(SlotRecord {
            doc: u64::from_be_bytes(b.get(..8)?.try_into().ok()?),
            fingerprint: Fingerprint(u64::from_be_bytes(b.get(8..16)?.try_into().ok()?)),
            text_hash: u64::from_be_bytes(b.get(16..24)?.try_into().ok()?),
            record: DocRecord::from_bytes(b.get(24..)?)?,
        })
    }
}

/// What the checks need of a recorded document: its host and title words
/// for the name, and a summary of its text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DocRecord {
    pub(crate) host: u64,
    pub(crate) title: Vec<u32>,
    pub(crate) text: TextSummary,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TextSummary {
    /// A long text's MinHash sketch of word shingles.
    Sketch(Box<Sketch>),
    /// A short text's words.
    Words(Vec<u32>),
}

impl DocRecord {
    pub(crate) fn keys(&self) -> Keys {
        let title = (!self.title.is_empty()).then(|| {
            let h = self
                .title
                .iter()
                .fold(self.title.len() as u64, |h, &w| fmix64(h ^ u64::from(w)));
            h as u32
        });
        Keys {
            bands: self.band_keys(),
            title,
        }
    }

    /// LSH keys of the text: of the sketch of a long text, of a sketch of
    /// the words of a short one.
    pub(crate) fn band_keys(&self) -> Option<[u32; BANDS]> {
        match &self.text {
            TextSummary::Sketch(s) => s.band_keys(),
            TextSummary::Words(words) => {
                Sketch::of(words.iter().map(|&w| fmix64(u64::from(w)))).band_keys()
            }
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + self.title.len() * 4 + SKETCH_BYTES);
        b.extend_from_slice(&self.host.to_be_bytes());
        b.push(self.title.len() as u8);
        self.title
            .iter()
            .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
        match &self.text {
            TextSummary::Sketch(s) => {
                b.push(0);
                b.extend_from_slice(&s.to_bytes());
            }
            TextSummary::Words(words) => {
                b.push(1);
                words
                    .iter()
                    .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
            }
        }
        b
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Option<DocRecord> {
        let host = u64::from_be_bytes(b.get(..8)?.try_into().ok()?);
        let n = usize::from(*b.get(8)?);
        let words = |s: &[u8]| -> Option<Vec<u32>> {
            (s.len() % 4 == 0).then(|| {
                s.chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect()
            })
        };
        let title = words(b.get(9..9 + 4 * n)?)?;
        let rest = b.get(9 + 4 * n..)?;
        let text = match rest.first()? {
            0 => TextSummary::Sketch(Box::new(Sketch::from_bytes(&rest[1..])?)),
            1 => TextSummary::Words(words(&rest[1..])?),
            _ => return None,
        };
        Some(DocRecord { host, title, text })
    }
}

/// A [`Decision`] and what recording the document takes; storable as bytes
/// so a caller can persist it and [`record`](Deduper::record) it again after
/// a crash.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub decision: Decision,
    /// What the checks need of a new, non-empty document.
    pub(crate) record: Option<DocRecord>,
}

const NEW: u8 = 0;
const EXACT: u8 = 1;
const NEAR_SKETCH: u8 = 2;
const NEAR_SHORT: u8 = 3;
const HEAD: usize = 2 + 8 + 4 + 4 + 8 + 4 + 16;

impl Judgement {
    /// A compact encoding: verdict, fingerprint, features, content hash and
    /// the document's record when it is new (about 300 bytes for a page).
    pub fn to_bytes(&self) -> Vec<u8> {
        let d = &self.decision;
        let mut b = Vec::with_capacity(HEAD + 16 + SKETCH_BYTES);
        let (tag, of, distance, similarity) = match d.verdict {
            Verdict::New => (NEW, 0, 0, 0.0),
            Verdict::Exact { of } => (EXACT, of, 0, 1.0),
            Verdict::Near {
                of,
                distance,
                similarity,
                check,
            } => {
                let tag = if check == Check::ShortText {
                    NEAR_SHORT
                } else {
                    NEAR_SKETCH
                };
                (tag, of, distance, similarity)
            }
        };
        b.push(tag);
        b.push(u8::from(d.short));
        b.extend_from_slice(&of.to_be_bytes());
        b.extend_from_slice(&distance.to_be_bytes());
        b.extend_from_slice(&similarity.to_be_bytes());
        b.extend_from_slice(&d.simhash.fingerprint.0.to_be_bytes());
        b.extend_from_slice(&d.simhash.features.to_be_bytes());
        b.extend_from_slice(&d.content_hash.to_be_bytes());
        if let Some(r) = &self.record {
            b.extend_from_slice(&r.to_bytes());
        }
        b
    }

    /// Reads what [`to_bytes`](Judgement::to_bytes) wrote.
    pub fn from_bytes(b: &[u8]) -> Option<Judgement> {
        if b.len() < HEAD {
            return None;
        }
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap());
        let of = u64_at(2);
        let near = |check| Verdict::Near {
            of,
            distance: u32_at(10),
            similarity: f32::from_bits(u32_at(14)),
            check,
        };
        let verdict = match b[0] {
            NEW => Verdict::New,
            EXACT => Verdict::Exact { of },
            NEAR_SKETCH => near(Check::Sketch),
            NEAR_SHORT => near(Check::ShortText),
            _ => return None,
        };
        let record = if b.len() > HEAD {
            Some(DocRecord::from_bytes(&b[HEAD..])?)
        } else {
            None
        };
        Some(Judgement {
            decision: Decision {
                verdict,
                short: b[1] != 0,
                simhash: Simhash {
                    fingerprint: Fingerprint(u64_at(18)),
                    features: u32_at(26),
                },
                content_hash: u128::from_be_bytes(b[30..46].try_into().unwrap()),
            },
            record,
        })
    }
}
