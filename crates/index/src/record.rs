//! What the gate keeps of a document: the record of a new one (under its
//! slot in the record file), and the judgement a caller may store and
//! record again after a crash, as bytes.

use nearcrawl_simhash::hash::fmix64;
use nearcrawl_simhash::{Fingerprint, Simhash};

use crate::candidates::Keys;
use crate::sketch::{BANDS, SKETCH_BYTES, Sketch};
use crate::verdict::{Check, Decision, Verdict};

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

/// First byte of a slot record whose document id is a varint. Earlier
/// versions wrote the id as 8 big-endian bytes, whose first is 0 (ids stay
/// far below 2^56).
const VARINT_DOC: u8 = 1;

impl SlotRecord {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(32 + 16 + SKETCH_BYTES);
        b.push(VARINT_DOC);
        put_varint(&mut b, self.doc);
        b.extend_from_slice(&self.fingerprint.0.to_be_bytes());
        b.extend_from_slice(&self.text_hash.to_be_bytes());
        b.extend_from_slice(&self.record.to_bytes());
        b
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Option<SlotRecord> {
        let (doc, rest) = match *b.first()? {
            VARINT_DOC => varint(&b[1..])?,
            0 => (u64::from_be_bytes(b.get(..8)?.try_into().ok()?), &b[8..]),
            _ => return None,
        };
        Some(SlotRecord {
            doc,
            fingerprint: Fingerprint(u64::from_be_bytes(rest.get(..8)?.try_into().ok()?)),
            text_hash: u64::from_be_bytes(rest.get(8..16)?.try_into().ok()?),
            record: DocRecord::from_bytes(rest.get(16..)?)?,
        })
    }
}

/// Appends `v` as a LEB128 varint.
fn put_varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

/// A LEB128 varint at the head of `b`, and the bytes after it.
fn varint(b: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, &b[i + 1..]));
        }
    }
    None
}

/// Bits of a short text's word hash: stored in 2 bytes. The word-by-word
/// check finds the longest common run of words in order; between two
/// unrelated 50-word texts chance matches add 0.04 of a word to it.
const SHORT_WORD_BITS: u32 = 16;
/// The longest a short text's word is counted, in characters (a byte).
const MAX_WORD_CHARS: u32 = 255;

/// A short text's word as the gate compares it: the low bits of its
/// feature hash (hashes of earlier versions, 32 bits, are cut to it when
/// read), and above them its length in characters, what it weighs in the
/// word-by-word check (1 to 255; 0 in records of versions that did not
/// keep it).
pub(crate) fn short_word(feature: u64, chars: u32) -> u32 {
    feature as u32 & ((1 << SHORT_WORD_BITS) - 1) | chars.min(MAX_WORD_CHARS) << SHORT_WORD_BITS
}

/// The hash of a short text's word ([`short_word`]).
pub(crate) fn word_hash(word: u32) -> u32 {
    word & ((1 << SHORT_WORD_BITS) - 1)
}

/// The length in characters of a short text's word ([`short_word`]); 0
/// when its record did not keep it.
pub(crate) fn word_chars(word: u32) -> u32 {
    word >> SHORT_WORD_BITS
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
    /// A short text near the line (at least two thirds of
    /// `short_features` tokens): its words, and the sketch a long text
    /// would have, so that a copy with a line added, past the line, is
    /// still compared with it.
    WordsAndSketch(Vec<u32>, Box<Sketch>),
}

impl TextSummary {
    /// The words of a short text.
    pub(crate) fn words(&self) -> Option<&[u32]> {
        match self {
            TextSummary::Words(w) | TextSummary::WordsAndSketch(w, _) => Some(w),
            TextSummary::Sketch(_) => None,
        }
    }

    /// The sketch of word shingles, of a long text or one near the line.
    pub(crate) fn sketch(&self) -> Option<&Sketch> {
        match self {
            TextSummary::Sketch(s) | TextSummary::WordsAndSketch(_, s) => Some(s),
            TextSummary::Words(_) => None,
        }
    }
}

impl DocRecord {
    /// Its text's band keys (its name's are the gate's: they depend on
    /// its host's titles).
    /// What the record is found by; `text_hash`: its text's (see
    /// [`SlotRecord::text_hash`]).
    pub(crate) fn keys(&self, text_hash: u64) -> Keys {
        let shingle_bands = match &self.text {
            TextSummary::WordsAndSketch(_, s) => s.band_keys(),
            _ => None,
        };
        Keys {
            bands: self.band_keys(),
            shingle_bands,
            name_words: [None; 2],
            text: text_hash as u32,
        }
    }

    /// LSH keys of the text: of the sketch of a long text, of a sketch of
    /// the words of a short one.
    pub(crate) fn band_keys(&self) -> Option<[u32; BANDS]> {
        match &self.text {
            TextSummary::Sketch(s) => s.band_keys(),
            TextSummary::Words(words) | TextSummary::WordsAndSketch(words, _) => {
                Sketch::of(words.iter().map(|&w| fmix64(u64::from(word_hash(w))))).band_keys()
            }
        }
    }

    /// The host, the title words (3 bytes each, after a count whose top bit
    /// says so: earlier versions wrote 4) and the text summary (a sketch,
    /// or a short text's words in 2 bytes each: earlier versions wrote 4).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + self.title.len() * 3 + SKETCH_BYTES);
        b.extend_from_slice(&self.host.to_be_bytes());
        b.push(self.title.len() as u8 | NARROW_TITLE);
        self.title
            .iter()
            .for_each(|w| b.extend_from_slice(&w.to_le_bytes()[..3]));
        match &self.text {
            TextSummary::Sketch(s) => {
                b.push(SKETCH);
                b.extend_from_slice(&s.to_bytes());
            }
            TextSummary::Words(words) => {
                b.push(MEASURED_WORDS);
                put_measured(&mut b, words);
            }
            TextSummary::WordsAndSketch(words, s) => {
                b.push(MEASURED_WORDS_AND_SKETCH);
                b.extend_from_slice(&(words.len() as u16).to_le_bytes());
                put_measured(&mut b, words);
                b.extend_from_slice(&s.to_bytes());
            }
        }
        b
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Option<DocRecord> {
        let host = u64::from_be_bytes(b.get(..8)?.try_into().ok()?);
        let count = *b.get(8)?;
        let (n, width) = if count & NARROW_TITLE != 0 {
            (usize::from(count & !NARROW_TITLE), 3)
        } else {
            (usize::from(count), 4)
        };
        let title = words(
            b.get(9..9 + width * n)?,
            width,
            crate::title_counts::title_word,
        )?;
        let rest = b.get(9 + width * n..)?;
        let text = match *rest.first()? {
            SKETCH => TextSummary::Sketch(Box::new(Sketch::from_bytes(&rest[1..])?)),
            WIDE_WORDS => TextSummary::Words(words(&rest[1..], 4, word_hash)?),
            NARROW_WORDS => TextSummary::Words(words(&rest[1..], 2, |w| w)?),
            MEASURED_WORDS => TextSummary::Words(words(&rest[1..], 3, |w| w)?),
            WORDS_AND_SKETCH | MEASURED_WORDS_AND_SKETCH => {
                let width = if rest[0] == WORDS_AND_SKETCH { 2 } else { 3 };
                let n = usize::from(u16::from_le_bytes(rest.get(1..3)?.try_into().ok()?));
                let (w, s) = rest.get(3..)?.split_at_checked(width * n)?;
                let words = words(w, width, |w| w)?;
                TextSummary::WordsAndSketch(words, Box::new(Sketch::from_bytes(s)?))
            }
            _ => return None,
        };
        Some(DocRecord { host, title, text })
    }
}

/// Flags a title word count: the words take 3 bytes each.
const NARROW_TITLE: u8 = 0x80;
/// Kinds of text summary: a sketch; a short text's words in 4 bytes or in
/// 2 (as earlier versions wrote them, without lengths).
const SKETCH: u8 = 0;
const WIDE_WORDS: u8 = 1;
const NARROW_WORDS: u8 = 2;
/// A short text near the line: a word count (2 bytes), its words in 2
/// bytes each, then its sketch.
const WORDS_AND_SKETCH: u8 = 3;
/// A short text's words in 3 bytes: 2 of hash, 1 of length in characters
/// ([`short_word`]); and the same near the line, as `WORDS_AND_SKETCH`.
const MEASURED_WORDS: u8 = 4;
const MEASURED_WORDS_AND_SKETCH: u8 = 5;

/// Short words as [`MEASURED_WORDS`] stores them.
fn put_measured(b: &mut Vec<u8>, words: &[u32]) {
    for &w in words {
        b.extend_from_slice(&w.to_le_bytes()[..3]);
    }
}

/// Little-endian words of `width` bytes, each passed through `narrow`.
fn words(b: &[u8], width: usize, narrow: impl Fn(u32) -> u32) -> Option<Vec<u32>> {
    b.len().is_multiple_of(width).then(|| {
        b.chunks_exact(width)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..width].copy_from_slice(c);
                narrow(u32::from_le_bytes(w))
            })
            .collect()
    })
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

impl Decision {
    /// A compact encoding (46 bytes), as in [`Judgement::to_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        Judgement {
            decision: *self,
            record: None,
        }
        .to_bytes()
    }

    /// Reads what [`to_bytes`](Decision::to_bytes) wrote.
    pub fn from_bytes(b: &[u8]) -> Option<Decision> {
        (b.len() == HEAD)
            .then(|| Judgement::from_bytes(b))
            .flatten()
            .map(|j| j.decision)
    }
}

impl Judgement {
    /// A compact encoding: verdict, fingerprint, features, content hash and
    /// the document's record when it is new (about 200 bytes for a page).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(text: TextSummary) -> SlotRecord {
        SlotRecord {
            doc: 300_000,
            fingerprint: Fingerprint(0x0123_4567_89ab_cdef),
            text_hash: 42,
            record: DocRecord {
                host: 7,
                title: crate::names::title_words("ArrayList (Java SE 17 & JDK 17)"),
                text,
            },
        }
    }

    /// The record as earlier versions wrote it: 8-byte document id, 4-byte
    /// title words and short-text words.
    fn earlier_bytes(r: &SlotRecord, wide_title: &[u32], wide_words: Option<&[u32]>) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&r.doc.to_be_bytes());
        b.extend_from_slice(&r.fingerprint.0.to_be_bytes());
        b.extend_from_slice(&r.text_hash.to_be_bytes());
        b.extend_from_slice(&r.record.host.to_be_bytes());
        b.push(wide_title.len() as u8);
        wide_title
            .iter()
            .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
        match (&r.record.text, wide_words) {
            (TextSummary::Sketch(s), _) => {
                b.push(0);
                b.extend_from_slice(&s.to_bytes());
            }
            (TextSummary::Words(_), Some(words)) => {
                b.push(1);
                words
                    .iter()
                    .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
            }
            (TextSummary::Words(_), None) | (TextSummary::WordsAndSketch(..), _) => unreachable!(),
        }
        b
    }

    #[test]
    fn short_words_keep_their_lengths_and_earlier_narrow_ones_read_without() {
        let words: Vec<u32> = (0..40u64)
            .map(|i| short_word(fmix64(i), 1 + i as u32 * 7))
            .collect();
        assert_eq!(
            word_chars(words[39]),
            MAX_WORD_CHARS,
            "a length is cut to a byte"
        );
        let sketch = Box::new(Sketch::of((0..80u64).map(fmix64)));
        for text in [
            TextSummary::Words(words.clone()),
            TextSummary::WordsAndSketch(words.clone(), sketch.clone()),
        ] {
            let r = record(text);
            assert_eq!(SlotRecord::from_bytes(&r.to_bytes()), Some(r));
        }
        // Earlier versions wrote 2 bytes a word, no length.
        let unmeasured = record(TextSummary::Words(
            words.iter().map(|&w| word_hash(w)).collect(),
        ));
        let mut narrow = unmeasured.to_bytes();
        let at = narrow.len() - 3 * words.len() - 1;
        narrow.truncate(at);
        narrow.push(NARROW_WORDS);
        words
            .iter()
            .for_each(|&w| narrow.extend_from_slice(&(w as u16).to_le_bytes()));
        let read = SlotRecord::from_bytes(&narrow).unwrap();
        assert_eq!(read, unmeasured);
        assert!(
            read.record
                .text
                .words()
                .unwrap()
                .iter()
                .all(|&w| word_chars(w) == 0)
        );
    }

    #[test]
    fn records_round_trip_and_earlier_wide_records_read_as_narrow() {
        // Full 32-bit hashes, as earlier versions kept them.
        let wide_title: Vec<u32> = (0..9u32).map(|i| 0xfe00_0000 | i << 20 | i).collect();
        let wide_words: Vec<u32> = (0..40u64).map(|i| fmix64(i) as u32).collect();
        let sketch = Sketch::of((0..500u64).map(fmix64));
        for (text, wide) in [
            (TextSummary::Sketch(Box::new(sketch)), None),
            (
                TextSummary::Words(wide_words.iter().map(|&w| word_hash(w)).collect()),
                Some(&wide_words[..]),
            ),
        ] {
            let mut r = record(text);
            assert_eq!(SlotRecord::from_bytes(&r.to_bytes()), Some(r.clone()));
            assert!(r.to_bytes().len() < earlier_bytes(&r, &wide_title, wide).len());
            let old = SlotRecord::from_bytes(&earlier_bytes(&r, &wide_title, wide)).unwrap();
            r.record.title = wide_title
                .iter()
                .map(|&w| crate::title_counts::title_word(w))
                .collect();
            assert_eq!(old, r, "an earlier record reads as this version's");
            assert!(old.record.title.iter().all(|&w| w < 1 << 24));
            // Judgements carry records too (in the outbox).
            let j = Judgement {
                decision: Decision {
                    verdict: Verdict::New,
                    short: wide.is_some(),
                    simhash: Simhash {
                        fingerprint: r.fingerprint,
                        features: 40,
                    },
                    content_hash: 9,
                },
                record: Some(r.record.clone()),
            };
            assert_eq!(Judgement::from_bytes(&j.to_bytes()), Some(j.clone()));
            let d = j.decision;
            assert_eq!(Decision::from_bytes(&d.to_bytes()), Some(d));
        }
        assert_eq!(SlotRecord::from_bytes(&[2, 0, 0]), None, "an unknown kind");
    }
}
