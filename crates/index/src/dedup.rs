//! The duplicate gate: exact, near (verified), or new.

use std::path::Path;

use nearcrawl_simhash::{Options, Simhash, Simhasher, Weighting};

use crate::band_index::{BandIndex, IndexConfig};
use crate::error::IndexError;
use crate::sketch::{Sketch, SketchBuilder};

/// How duplicates are decided. The defaults were measured with
/// `examples/dedup_quality.rs` (see the crate README).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DedupConfig {
    /// Simhash candidates: within `index.k` bits.
    pub index: IndexConfig,
    /// Features and weights of the fingerprint.
    pub simhash: Options,
    /// Tokens per shingle of the verification sketch.
    pub sketch_shingle: usize,
    /// A candidate is a near duplicate when the sketches' estimated Jaccard
    /// similarity of shingle sets is at least this.
    pub min_similarity: f32,
    /// Texts with fewer fingerprint features than this are short: simhash
    /// says little about them, so only an exact match makes them duplicates.
    pub short_features: u32,
    /// Most candidates verified per document (closest first).
    pub max_candidates: usize,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            index: IndexConfig {
                k: 8,
                capacity: 1_000_000,
                blocks: None,
            },
            simhash: Options::default(),
            sketch_shingle: 3,
            min_similarity: 0.5,
            short_features: 40,
            max_candidates: 16,
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
    /// estimated shingle Jaccard similarity `similarity`.
    Near {
        of: u64,
        distance: u32,
        similarity: f32,
    },
}

/// The verdict and what it was based on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    /// Fewer features than `short_features`: judged by exact match only.
    pub short: bool,
    pub simhash: Simhash,
    /// Hash of the normalized token sequence (the exact-duplicate key).
    pub content_hash: u128,
}

/// The per-document work of judging, which needs no index: fingerprint,
/// content hash, verification sketch. Separate so callers can do it on
/// many threads and hold the index only for the lookup
/// ([`Deduper::judge_prepared`]).
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    fingerprinter: Simhasher,
    shingler: Simhasher,
    short_features: u32,
}

/// What [`Fingerprinter::prepare`] computes for one text.
#[derive(Debug, Clone)]
pub struct Prepared {
    simhash: Simhash,
    content_hash: u128,
    short: bool,
    sketch: SketchBuilder,
}

impl Fingerprinter {
    pub fn new(config: &DedupConfig) -> Result<Fingerprinter, IndexError> {
        let fingerprinter =
            Simhasher::new(config.simhash).map_err(|e| IndexError::Config(e.to_string()))?;
        let shingler = Simhasher::new(Options {
            shingle: config.sketch_shingle,
            weighting: Weighting::Tf,
        })
        .map_err(|e| IndexError::Config(e.to_string()))?;
        Ok(Fingerprinter {
            fingerprinter,
            shingler,
            short_features: config.short_features,
        })
    }

    pub fn prepare(&mut self, text: &str) -> Prepared {
        let simhash = self.fingerprinter.hash(text);
        let mut sketch = SketchBuilder::default();
        let mut content = ContentHash::default();
        self.shingler.features(text, |f| {
            sketch.add(f);
            content.add(f);
        });
        Prepared {
            simhash,
            content_hash: content.finish(),
            short: simhash.features < self.short_features,
            sketch,
        }
    }
}

/// Decides, per document and in order, whether it duplicates an earlier one,
/// and records the new ones. Persistent: reopening the same directory keeps
/// every document recorded before the last [`flush`](Deduper::flush).
///
/// Exact duplicates: same hash of the normalized token sequence (128 bits).
/// Near duplicates: simhash within k bits of an earlier document *and*
/// MinHash-estimated Jaccard similarity of word shingles at least
/// `min_similarity`; the simhash finds candidates cheaply, the sketch keeps
/// distinct pages that merely share a template or vocabulary apart. Short
/// texts: exact match only. Empty texts (no tokens) are never duplicates and
/// are not recorded: nothing can be said about them.
#[derive(Debug)]
pub struct Deduper {
    config: DedupConfig,
    db: sled::Db,
    index: BandIndex,
    exact: sled::Tree,
    sketches: sled::Tree,
    prepare: Fingerprinter,
}

impl Deduper {
    /// Opens (or creates) a deduper in its own sled database at `path`.
    pub fn open(path: impl AsRef<Path>, config: DedupConfig) -> Result<Self, IndexError> {
        let db = crate::store::open_db(path.as_ref())?;
        Self::open_in(&db, config)
    }

    /// Opens (or creates) a deduper in trees of an open sled database.
    pub fn open_in(db: &sled::Db, config: DedupConfig) -> Result<Self, IndexError> {
        let bad = |what: String| Err(IndexError::Config(what));
        if config.sketch_shingle == 0 || config.sketch_shingle > nearcrawl_simhash::MAX_SHINGLE {
            return bad(format!(
                "sketch_shingle must be 1 to {}",
                nearcrawl_simhash::MAX_SHINGLE
            ));
        }
        if !(0.0..=1.0).contains(&config.min_similarity) {
            return bad(format!(
                "min_similarity must be 0 to 1, got {}",
                config.min_similarity
            ));
        }
        let prepare = Fingerprinter::new(&config)?;

        // Fingerprints and sketches made with other settings are not
        // comparable with new ones.
        let meta = db.open_tree("dedup.meta")?;
        let settings = format!(
            "simhash shingle={} weighting={:?}; sketch shingle={}",
            config.simhash.shingle, config.simhash.weighting, config.sketch_shingle
        );
        match meta.get("settings")? {
            None => {
                meta.insert("settings", settings.as_bytes())?;
            }
            Some(stored) if stored.as_ref() != settings.as_bytes() => {
                return Err(IndexError::LayoutMismatch {
                    stored: String::from_utf8_lossy(&stored).into_owned(),
                    requested: settings,
                });
            }
            Some(_) => {}
        }
        Ok(Deduper {
            index: BandIndex::open_in(db, "dedup.simhash", config.index)?,
            exact: db.open_tree("dedup.exact")?,
            sketches: db.open_tree("dedup.sketch")?,
            db: db.clone(),
            config,
            prepare,
        })
    }

    pub fn config(&self) -> &DedupConfig {
        &self.config
    }

    /// Documents with a fingerprint in the near-duplicate index.
    pub fn indexed(&self) -> usize {
        self.index.len()
    }

    /// Judges `text` as document `doc` (any id the caller keeps, unique per
    /// document) against every earlier document, and records it if new.
    pub fn check_insert(&mut self, doc: u64, text: &str) -> Result<Decision, IndexError> {
        let judgement = self.judge(text, |_| true)?;
        self.record(doc, &judgement)?;
        Ok(judgement.decision)
    }

    /// Judges `text` against every recorded document without recording it:
    /// the first half of [`check_insert`](Deduper::check_insert), for callers
    /// that persist their own record of the document first (the crawler
    /// writes it with its frontier, atomically) and then call
    /// [`record`](Deduper::record).
    ///
    /// `live` says whether an earlier document still exists: a caller that
    /// lost documents in a crash (recorded here, never committed there)
    /// answers false for them, and they are not duplicated against.
    pub fn judge(
        &mut self,
        text: &str,
        live: impl Fn(u64) -> bool,
    ) -> Result<Judgement, IndexError> {
        let prepared = self.prepare.prepare(text);
        self.judge_prepared(prepared, live)
    }

    /// A [`Fingerprinter`] with this deduper's settings.
    pub fn fingerprinter(&self) -> Fingerprinter {
        self.prepare.clone()
    }

    /// [`judge`](Deduper::judge) for a text prepared by a
    /// [`fingerprinter`](Deduper::fingerprinter) of this deduper.
    pub fn judge_prepared(
        &self,
        prepared: Prepared,
        live: impl Fn(u64) -> bool,
    ) -> Result<Judgement, IndexError> {
        let Prepared {
            simhash,
            content_hash,
            short,
            sketch,
        } = prepared;
        let judgement = |verdict, sketch| Judgement {
            decision: Decision {
                verdict,
                short,
                simhash,
                content_hash,
            },
            sketch,
        };
        if simhash.features == 0 {
            return Ok(judgement(Verdict::New, None));
        }
        if let Some(of) = self.exact.get(content_hash.to_be_bytes())? {
            let of = u64::from_be_bytes(of.as_ref().try_into().map_err(|_| {
                IndexError::Corrupt("exact-duplicate record is not 8 bytes".into())
            })?);
            if live(of) {
                return Ok(judgement(Verdict::Exact { of }, None));
            }
        }
        if short {
            return Ok(judgement(Verdict::New, None));
        }
        let sketch = sketch.finish();
        for m in self
            .index
            .query(simhash.fingerprint)
            .into_iter()
            .filter(|m| live(m.doc))
            .take(self.config.max_candidates)
        {
            let Some(bytes) = self.sketches.get(m.doc.to_be_bytes())? else {
                continue;
            };
            let other = Sketch::from_bytes(&bytes)
                .ok_or_else(|| IndexError::Corrupt(format!("sketch of document {}", m.doc)))?;
            let similarity = sketch.similarity(&other);
            if similarity >= self.config.min_similarity {
                return Ok(judgement(
                    Verdict::Near {
                        of: m.doc,
                        distance: m.distance,
                        similarity,
                    },
                    None,
                ));
            }
        }
        Ok(judgement(Verdict::New, Some(sketch)))
    }

    /// Records a document judged [`Verdict::New`] as `doc`; does nothing for
    /// duplicates and empty texts. Recording the same document again is
    /// harmless, which is what replaying a crash's lost tail needs.
    pub fn record(&mut self, doc: u64, judgement: &Judgement) -> Result<(), IndexError> {
        let d = &judgement.decision;
        if d.verdict != Verdict::New || d.simhash.features == 0 {
            return Ok(());
        }
        self.exact
            .insert(d.content_hash.to_be_bytes(), &doc.to_be_bytes())?;
        if let Some(sketch) = &judgement.sketch {
            self.sketches
                .insert(doc.to_be_bytes(), &sketch.to_bytes()[..])?;
            self.index.insert(d.simhash.fingerprint, doc);
        }
        Ok(())
    }

    /// Makes every recorded document durable.
    pub fn flush(&mut self) -> Result<(), IndexError> {
        self.index.flush()?;
        self.db.flush()?;
        Ok(())
    }
}

/// A [`Decision`] and what recording the document takes; storable as bytes
/// so a caller can persist it and [`record`](Deduper::record) it again after
/// a crash.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub decision: Decision,
    /// The verification sketch of a new, long-enough document.
    sketch: Option<Sketch>,
}

const NEW: u8 = 0;
const EXACT: u8 = 1;
const NEAR: u8 = 2;

impl Judgement {
    /// A compact encoding: verdict, fingerprint, features, content hash and
    /// the sketch when there is one (about 300 bytes for a new page).
    pub fn to_bytes(&self) -> Vec<u8> {
        let d = &self.decision;
        let mut b = Vec::with_capacity(48 + SKETCH_BYTES);
        let (tag, of, distance, similarity) = match d.verdict {
            Verdict::New => (NEW, 0, 0, 0.0),
            Verdict::Exact { of } => (EXACT, of, 0, 1.0),
            Verdict::Near {
                of,
                distance,
                similarity,
            } => (NEAR, of, distance, similarity),
        };
        b.push(tag);
        b.push(u8::from(d.short));
        b.extend_from_slice(&of.to_be_bytes());
        b.extend_from_slice(&distance.to_be_bytes());
        b.extend_from_slice(&similarity.to_be_bytes());
        b.extend_from_slice(&d.simhash.fingerprint.0.to_be_bytes());
        b.extend_from_slice(&d.simhash.features.to_be_bytes());
        b.extend_from_slice(&d.content_hash.to_be_bytes());
        if let Some(s) = &self.sketch {
            b.extend_from_slice(&s.to_bytes());
        }
        b
    }

    /// Reads what [`to_bytes`](Judgement::to_bytes) wrote.
    pub fn from_bytes(b: &[u8]) -> Option<Judgement> {
        const HEAD: usize = 2 + 8 + 4 + 4 + 8 + 4 + 16;
        if b.len() != HEAD && b.len() != HEAD + SKETCH_BYTES {
            return None;
        }
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().unwrap());
        let of = u64_at(2);
        let verdict = match b[0] {
            NEW => Verdict::New,
            EXACT => Verdict::Exact { of },
            NEAR => Verdict::Near {
                of,
                distance: u32_at(10),
                similarity: f32::from_bits(u32_at(14)),
            },
            _ => return None,
        };
        let sketch = if b.len() > HEAD {
            Some(Sketch::from_bytes(&b[HEAD..])?)
        } else {
            None
        };
        Some(Judgement {
            decision: Decision {
                verdict,
                short: b[1] != 0,
                simhash: Simhash {
                    fingerprint: nearcrawl_simhash::Fingerprint(u64_at(18)),
                    features: u32_at(26),
                },
                content_hash: u128::from_be_bytes(b[30..46].try_into().unwrap()),
            },
            sketch,
        })
    }
}

const SKETCH_BYTES: usize = crate::sketch::SKETCH_BINS * 2;

/// 128-bit hash of a sequence of feature hashes: two independent 64-bit
/// chains, so a collision among billions of documents stays negligible.
#[derive(Default)]
struct ContentHash {
    a: u64,
    b: u64,
    n: u64,
}

impl ContentHash {
    #[inline]
    fn add(&mut self, f: u64) {
        self.a = (self.a.rotate_left(23) ^ f).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.b = (self.b.rotate_left(41) ^ f).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
        self.n += 1;
    }

    fn finish(&self) -> u128 {
        use nearcrawl_simhash::hash::fmix64;
        let a = fmix64(self.a ^ self.n);
        let b = fmix64(self.b ^ self.n.rotate_left(32));
        (u128::from(a) << 64) | u128::from(b)
    }
}
