//! The duplicate gate: exact, near (verified), or new.

use std::path::Path;

use nearcrawl_simhash::hash::fmix64;
use nearcrawl_simhash::{Fingerprint, Options, Simhash, Simhasher, Tokens, Weighting};

use crate::band_index::IndexConfig;
use crate::candidates::{Candidate, Keys, Tables};
use crate::error::IndexError;
use crate::names::{self, Names, TitleModel};
use crate::record::{
    DocRecord, Judgement, SlotRecord, TextSummary, short_word, word_chars, word_hash,
};
use crate::record_file::RecordLog;
use crate::sketch::{SKETCH_BYTES, Sketch, SketchBuilder};
use crate::verdict::{Check, Decision, Verdict};

/// How duplicates are decided. The defaults were measured with
/// `examples/dedup_quality.rs` and the docs-site gate bench
/// (`bench/docs_gate.py`); see the crate docs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DedupConfig {
    /// A near duplicate's fingerprint is within `index.k` bits;
    /// `index.capacity` sizes the band tables (they grow past it);
    /// `index.blocks` is [`BandIndex`](crate::BandIndex)'s, not used here.
    pub index: IndexConfig,
    /// Features and weights of the fingerprint.
    pub simhash: Options,
    /// Tokens per shingle of the verification sketch.
    pub sketch_shingle: usize,
    /// A candidate is a near duplicate when the sketches' estimated Jaccard
    /// similarity of shingle sets is at least this, with fingerprints that
    /// agree; more as they differ.
    pub min_similarity: f32,
    /// Texts with fewer tokens than this are short: their token sequence is
    /// kept and compared word by word instead of by sketch.
    pub short_features: u32,
    /// A short text is a near duplicate of a candidate when the longer of
    /// the two holds at least this share of the shorter's characters, in
    /// whole words and in order (and is at most half as long again), with
    /// fingerprints that agree; more as they differ.
    pub short_similarity: f32,
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
            short_features: 100,
            short_similarity: 0.8,
            max_candidates: 16,
        }
    }
}

/// A document as the gate sees it: its main text, and where known its
/// title (whose non-template words name what the page is about) and its
/// host (whose titles tell which title words are template).
#[derive(Debug, Clone, Copy, Default)]
pub struct Doc<'a> {
    pub text: &'a str,
    pub title: Option<&'a str>,
    /// The host (or registrable domain, or any group of pages that share a
    /// template); documents without one share one group.
    pub host: Option<&'a str>,
    /// The page's URL, where known: a title word that names a directory
    /// of its path is a section word of the page (see `names`).
    pub url: Option<&'a str>,
}

impl<'a> From<&'a str> for Doc<'a> {
    fn from(text: &'a str) -> Self {
        Doc {
            text,
            ..Doc::default()
        }
    }
}

impl<'a> From<&'a String> for Doc<'a> {
    fn from(text: &'a String) -> Self {
        Doc::from(text.as_str())
    }
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
    /// The last text's tokens (its buffers, for the next).
    tokens: Tokens,
}

/// Texts up to this many bytes are read once for the fingerprint, the
/// sketch and a short text's words; a larger one is read by each, so that
/// its tokens (twice its size) are never held.
const READ_ONCE_BYTES: usize = 1 << 20;

/// Token buffers kept for the next text up to this many tokens (192 KiB).
const KEPT_TOKENS: usize = 1 << 14;

/// Where the fingerprinter and the shingler (one tokenizer) take a text's
/// tokens from.
enum Read<'a> {
    Once(&'a Tokens),
    Each(&'a str),
}

impl Read<'_> {
    fn hash(&self, h: &mut Simhasher) -> Simhash {
        match self {
            Read::Once(tokens) => h.hash_tokens(tokens),
            Read::Each(text) => h.hash(text),
        }
    }

    fn features(&self, h: &mut Simhasher, sink: impl FnMut(u64)) -> u32 {
        match self {
            Read::Once(tokens) => h.features_of_tokens(tokens, sink),
            Read::Each(text) => h.features(text, sink),
        }
    }

    fn features_measured(&self, h: &mut Simhasher, sink: impl FnMut(u64, u32)) -> u32 {
        match self {
            Read::Once(tokens) => h.features_measured_of_tokens(tokens, sink),
            Read::Each(text) => h.features_measured(text, sink),
        }
    }
}

/// What [`Fingerprinter::prepare`] computes for one document.
///
/// Storable as bytes ([`to_bytes`](Prepared::to_bytes)), so workers that
/// share one gate can put what they want judged in a log that every
/// replica of the gate applies in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    simhash: Simhash,
    content_hash: u128,
    short: bool,
    /// Which title words name a directory of the page's URL (bit i for
    /// word i): used to judge it, not recorded.
    directories: u64,
    /// What the checks need of it, and what is recorded if it is new.
    record: DocRecord,
}

/// Flag in the byte of [`Prepared::to_bytes`] that says short: the
/// directory words follow (8 bytes; none when no title word names a
/// directory, as in the bytes of earlier versions).
const WITH_DIRECTORIES: u8 = 2;

impl Prepared {
    /// A long document made of `features` (shingle hashes) with the given
    /// fingerprint, as [`Fingerprinter::prepare`] would make it: for
    /// benchmarks at sizes where generating texts would take longer than
    /// what they measure (`examples/gate_bench.rs`).
    #[doc(hidden)]
    pub fn synthetic(fingerprint: u64, features: &[u64]) -> Prepared {
        let mut sketch = SketchBuilder::default();
        let mut content = ContentHash::default();
        for &f in features {
            sketch.add(f);
            content.add(f);
        }
        Prepared {
            simhash: Simhash {
                fingerprint: Fingerprint(fingerprint),
                features: features.len() as u32,
            },
            content_hash: content.finish(),
            short: false,
            directories: 0,
            record: DocRecord {
                host: 0,
                title: Vec::new(),
                text: TextSummary::Sketch(Box::new(sketch.finish())),
            },
        }
    }

    /// A compact encoding (about 200 bytes for a page).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(32 + SKETCH_BYTES + 64);
        b.extend_from_slice(&self.simhash.fingerprint.0.to_be_bytes());
        b.extend_from_slice(&self.simhash.features.to_be_bytes());
        b.extend_from_slice(&self.content_hash.to_be_bytes());
        if self.directories == 0 {
            b.push(u8::from(self.short));
        } else {
            b.push(u8::from(self.short) | WITH_DIRECTORIES);
            b.extend_from_slice(&self.directories.to_be_bytes());
        }
        b.extend_from_slice(&self.record.to_bytes());
        b
    }

    /// Reads what [`to_bytes`](Prepared::to_bytes) wrote.
    pub fn from_bytes(b: &[u8]) -> Option<Prepared> {
        let u = |range: std::ops::Range<usize>| b.get(range);
        let flags = *b.get(28)?;
        let (directories, record) = if flags & WITH_DIRECTORIES != 0 {
            (u64::from_be_bytes(u(29..37)?.try_into().ok()?), 37)
        } else {
            (0, 29)
        };
        Some(Prepared {
            simhash: Simhash {
                fingerprint: Fingerprint(u64::from_be_bytes(u(0..8)?.try_into().ok()?)),
                features: u32::from_be_bytes(u(8..12)?.try_into().ok()?),
            },
            content_hash: u128::from_be_bytes(u(12..28)?.try_into().ok()?),
            short: flags & 1 != 0,
            directories,
            record: DocRecord::from_bytes(b.get(record..)?)?,
        })
    }
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
            tokens: Tokens::default(),
        })
    }

    pub fn prepare<'a>(&mut self, doc: impl Into<Doc<'a>>) -> Prepared {
        let doc = doc.into();
        let mut tokens = std::mem::take(&mut self.tokens);
        let read = if doc.text.len() <= READ_ONCE_BYTES {
            self.fingerprinter.read_tokens(doc.text, &mut tokens);
            Read::Once(&tokens)
        } else {
            Read::Each(doc.text)
        };
        let simhash = read.hash(&mut self.fingerprinter);
        let mut sketch = SketchBuilder::default();
        let mut content = ContentHash::default();
        read.features(&mut self.shingler, |f| {
            sketch.add(f);
            content.add(f);
        });
        let short = simhash.features < self.short_features;
        let text = if short {
            let mut words = Vec::new();
            read.features_measured(&mut self.fingerprinter, |f, chars| {
                words.push(short_word(f, chars))
            });
            // Within a third of the line, a line added takes a copy past
            // it: such a text keeps the sketch a long one is compared by.
            if simhash.features * 3 >= self.short_features * 2 {
                TextSummary::WordsAndSketch(words, Box::new(sketch.finish()))
            } else {
                TextSummary::Words(words)
            }
        } else {
            TextSummary::Sketch(Box::new(sketch.finish()))
        };
        if tokens.len() <= KEPT_TOKENS {
            self.tokens = tokens;
        }
        let directories = match (doc.title, doc.url) {
            (Some(title), Some(url)) => names::directory_words(title, url),
            _ => 0,
        };
        Prepared {
            simhash,
            content_hash: content.finish(),
            short,
            directories,
            record: DocRecord {
                host: names::host_key(doc.host.unwrap_or("")),
                title: doc.title.map(names::title_words).unwrap_or_default(),
                text,
            },
        }
    }
}

/// Decides, per document and in order, whether it duplicates an earlier one,
/// and records the new ones. Persistent: reopening the same directory keeps
/// every document recorded before the last [`flush`](Deduper::flush).
///
/// A duplicate must pass two tests against one earlier document:
/// - **names alike** (`names`): on one host, titles without their host's
///   template words that differ in a word naming an item are two items,
///   however alike their text; titles that differ only in section words
///   swapped in place are one item under two paths when the texts are near
///   identical; names on two hosts that differ are no evidence;
/// - **the same text**: the same hash of the normalized token sequence
///   (exact), or a MinHash-estimated Jaccard similarity of word 3-shingles
///   of at least `min_similarity` when the simhashes agree, rising evenly
///   with their distance to [`SKETCH_ALONE`] (0.8) at 2k bits, which
///   suffices whatever the simhash (near; [`DedupConfig::similarity_needed`]). A short
///   text near the line also keeps a sketch, and is compared with a long
///   one by it.
///   A long text must also hold most of the earlier document's *own*
///   text, the text no other kept page holds: text kept pages share (a
///   template, a shop's notice) makes no page a copy (`own_text_held`).
///   Short texts (under `short_features` tokens), where simhash and
///   sketches say little, are compared word by word instead, each word
///   weighing its length in characters (a CJK character is a word): the
///   longer must hold at least `short_similarity` of the shorter's
///   characters, in order, rising with the fingerprints' distance to
///   [`NEAR_IDENTICAL`] (0.9) at 2k bits, unless the two pages have the
///   same non-empty name (a line added to a 25-word page moves its
///   fingerprint 10-20 bits).
///
/// Candidates are the documents filed under one of the two rarest words of
/// its name (the item's own words: a copy keeps them), then those found by
/// MinHash LSH ([`Sketch::band_keys`]: 16 bands of two bins) over the
/// sketch of a long text or the word sketch of a short one, most shared
/// bands first; see the crate docs for why not the simhash band index. Empty texts (no tokens) are never duplicates and are not
/// recorded: nothing can be said about them.
#[derive(Debug)]
pub struct Deduper {
    config: DedupConfig,
    db: sled::Db,
    /// The records of new documents ([`SlotRecord`]) by slot, numbered
    /// from 0 in recording order.
    records: RecordLog,
    tables: Tables,
    names: TitleModel,
    prepare: Fingerprinter,
}

/// Documents with one text whose names are compared before an exact
/// match is given up.
const MAX_EXACT_CANDIDATES: usize = 8;
/// A text is near identical to another, a copy whatever its fingerprint
/// and one item whatever section its name is in: a short text that holds
/// at least this share of the other's characters in order (of its words,
/// for names swapped in place; [`word_similarity`]), or a long one whose
/// sketch estimates this Jaccard similarity of shingles (at most about one
/// in ten differs). A line added to a page of 100-300 words
/// moves its 64-bit fingerprint 9-12 bits (doxygen pages with a one-line
/// banner), past any k that keeps template pages apart.
const NEAR_IDENTICAL: f32 = 0.9;
/// A long text is a copy whatever its fingerprint when the sketches agree
/// this much: at most a fifth of the larger text is its own. The
/// fingerprint moves past k with a paragraph or an ad block added; in
/// `examples/dedup_quality.rs` recall of copies with up to 10% edits goes
/// 0.966 -> 0.977 (a paragraph added 0.922 -> 0.944, an ad block 0.911 ->
/// 0.961), precision 0.987 both. Lower lets go of pages with more of their
/// own: at 0.6 recall is 0.999, but a page holding a recorded article and
/// another of two thirds its length is then a copy of the first (Jaccard
/// 0.6), and the second article is lost.
const SKETCH_ALONE: f32 = 0.8;

impl DedupConfig {
    /// The similarity a near duplicate needs, as `check` measures it, when
    /// the two fingerprints are `distance` bits apart: the floor
    /// (`min_similarity`, `short_similarity`) when they agree, rising
    /// evenly to the sure bar (0.8 of a sketch, `SKETCH_ALONE`; 0.9 of a
    /// short text, `NEAR_IDENTICAL`) at 2k bits (16 at the default k),
    /// which suffices at any distance. Exact
    /// texts need none.
    ///
    /// The fingerprint and the text's measure are two estimates of how
    /// alike two texts are: the further apart the fingerprints, the more
    /// of the text must agree; past 2k they are further apart than a
    /// template's other pages or a later story (13-14 bits at the median
    /// in `bench/judged_pairs.py`), and only a near-identical text is a
    /// copy. A cut edge at k let pairs just within it pass at the floor (a
    /// later story that reuses half of an earlier one: Jaccard 0.45-0.6 at
    /// 5-8 bits) and refused pairs just past it (edited copies: 0.6-0.8 at
    /// 9-15 bits; Chinese passages with five characters replaced).
    pub fn similarity_needed(&self, check: Check, distance: u32) -> f32 {
        let (floor, sure) = match check {
            Check::Sketch => (self.min_similarity, SKETCH_ALONE),
            Check::ShortText => (self.short_similarity, NEAR_IDENTICAL),
            Check::ExactText => return 1.0,
        };
        let far = (distance as f32 / (2 * self.index.k.max(1)) as f32).min(1.0);
        floor + (sure.max(floor) - floor) * far
    }
}

/// Candidates sharing at least this many band keys are read even when
/// their fingerprints are past k: a pair at [`SKETCH_ALONE`] shares 10 of
/// 16 bands on average (6 or more with probability 0.99), one at Jaccard
/// 0.5, which cannot pass past k, 4 (6 or more 0.19), a chance match one
/// or two: the reads stay few.
const FAR_READ_BANDS: usize = 6;
/// What a candidate is of a page ([`Deduper::compare`]).
enum Compared {
    /// The page is a copy of it.
    Copy(Verdict),
    /// Alike in all their text, but the page holds little of the
    /// candidate's own ([`own_text_held`]): pages of one template.
    SharesCommonText,
    /// Not alike, or named apart.
    Unlike,
}

/// Kept candidates read to find the text a page shares with other kept
/// pages than the one it is compared with ([`own_text_held`]). A template's pages are candidates of
/// each other (they share its bands).
const COMMON_PROBES: usize = 8;
/// Band keys a candidate shares with a page when it shares text with it:
/// two documents with nothing in common share one by chance now and then.
const SHARING_BANDS: usize = 2;
/// Bins of text not common below which a pair is judged on all its text:
/// an estimate from fewer is a guess (one bin either way is 1/8).
const MIN_OWN_BINS: u32 = 8;
/// Records read at open before their keys go into the tables.
const LOAD_BATCH: usize = 65_536;
/// Candidate records read per near check, as a multiple of
/// `max_candidates`: those of dead documents or beyond k bits are read
/// and skipped.
const READS_PER_CANDIDATE: usize = 4;
/// Stored with the gate's records; "gate 2" state (simhash band index,
/// records by document) is converted at open.
const GATE_VERSION: &str = "gate 3";
/// The file of the gate's records, in the directory given at open.
pub const RECORDS_FILE: &str = "gate.records";

impl Deduper {
    /// Opens (or creates) a deduper in its own sled database at `path`.
    pub fn open(path: impl AsRef<Path>, config: DedupConfig) -> Result<Self, IndexError> {
        let db = crate::store::open_db(path.as_ref())?;
        Self::open_in(&db, path.as_ref(), config)
    }

    /// Opens (or creates) a deduper in trees of an open sled database, its
    /// records in the file [`RECORDS_FILE`] of `dir` (the database's own
    /// directory will do).
    pub fn open_in(db: &sled::Db, dir: &Path, config: DedupConfig) -> Result<Self, IndexError> {
        check_config(&config)?;
        let prepare = Fingerprinter::new(&config)?;
        let stored = stored_settings(db, &config)?;
        let mut tables = Tables::new(config.index.capacity);
        let mut names = TitleModel::open_in(db)?;
        let mut bad = None;
        let path = dir.join(RECORDS_FILE);
        let mut batch: Vec<(u32, Vec<u8>)> = Vec::with_capacity(LOAD_BATCH);
        let mut load = |batch: &mut Vec<(u32, Vec<u8>)>| {
            if bad.is_none() {
                match keyed(batch) {
                    Ok(mut docs) => {
                        for (_, _, keys, (host, title)) in &mut docs {
                            match names.rarest(*host, title) {
                                Ok(words) => keys.name_words = words,
                                Err(e) => bad = Some(e),
                            }
                        }
                        tables.index_all(&docs);
                    }
                    Err(slot) => bad = Some(IndexError::Corrupt(format!("gate record {slot}"))),
                }
            }
            batch.clear();
        };
        let records = RecordLog::open(&path, db.open_tree("dedup.records")?, |slot, bytes| {
            batch.push((slot, bytes.to_vec()));
            if batch.len() == LOAD_BATCH {
                load(&mut batch);
            }
        })?;
        load(&mut batch);
        if let Some(e) = bad {
            return Err(e);
        }
        let mut dedup = Deduper {
            tables,
            names,
            records,
            db: db.clone(),
            config,
            prepare,
        };
        if stored == Stored::Gate2 {
            // A conversion that was flushed but not finished is not redone.
            if dedup.indexed() == 0 {
                crate::upgrade::gate2_records(db, |r| {
                    dedup.names.add(r.record.host, &r.record.title)?;
                    let keys = dedup.keys(&r.record, r.text_hash)?;
                    dedup.append(r, &keys)
                })?;
                dedup.flush()?;
            }
            crate::upgrade::drop_gate2_trees(db)?;
        }
        db.open_tree("dedup.meta")?
            .insert("settings", settings(GATE_VERSION, &config).as_bytes())?;
        Ok(dedup)
    }

    pub fn config(&self) -> &DedupConfig {
        &self.config
    }

    /// Documents recorded as new (the ones later documents are compared
    /// with).
    pub fn indexed(&self) -> usize {
        self.records.len() as usize
    }

    /// Bytes of the in-memory tables.
    pub fn memory_bytes(&self) -> usize {
        self.tables.memory_bytes()
    }

    /// Judges a document (its text, or a [`Doc`] with title and host) as
    /// document `doc` (any id the caller keeps, unique per document)
    /// against every earlier document, and records it if new.
    pub fn check_insert<'a>(
        &mut self,
        doc: u64,
        page: impl Into<Doc<'a>>,
    ) -> Result<Decision, IndexError> {
        let judgement = self.judge(page, |_| true)?;
        self.record(doc, &judgement)?;
        Ok(judgement.decision)
    }

    /// Judges a document against every recorded document without recording
    /// it: the first half of [`check_insert`](Deduper::check_insert), for
    /// callers that persist their own record of the document first (the
    /// crawler writes it with its frontier, atomically) and then call
    /// [`record`](Deduper::record).
    ///
    /// `live` says whether an earlier document still exists: a caller that
    /// lost documents in a crash (recorded here, never committed there)
    /// answers false for them, and they are not duplicated against.
    pub fn judge<'a>(
        &mut self,
        page: impl Into<Doc<'a>>,
        live: impl Fn(u64) -> bool,
    ) -> Result<Judgement, IndexError> {
        let prepared = self.prepare.prepare(page);
        self.judge_prepared(prepared, live)
    }

    /// A [`Fingerprinter`] with this deduper's settings.
    pub fn fingerprinter(&self) -> Fingerprinter {
        self.prepare.clone()
    }

    /// [`judge`](Deduper::judge) for a document prepared by a
    /// [`fingerprinter`](Deduper::fingerprinter) of this deduper.
    pub fn judge_prepared(
        &mut self,
        p: Prepared,
        live: impl Fn(u64) -> bool,
    ) -> Result<Judgement, IndexError> {
        let Prepared {
            simhash,
            content_hash,
            short,
            directories,
            record,
        } = p;
        let decide = |verdict, record| Judgement {
            decision: Decision {
                verdict,
                short,
                simhash,
                content_hash,
            },
            record,
        };
        if simhash.features == 0 {
            return Ok(decide(Verdict::New, None));
        }
        let this = SlotRecord {
            doc: 0,
            fingerprint: simhash.fingerprint,
            text_hash: content_hash as u64,
            record,
        };
        let keys = self.keys(&this.record, this.text_hash)?;
        let candidates = self.tables.candidates(&keys);
        let verdict = match self.exact_match(&this, directories, &keys, &live)? {
            Some(of) => Verdict::Exact { of },
            None => self
                .near_match(&this, directories, &candidates, &live)?
                .unwrap_or(Verdict::New),
        };
        // Every judged page's title counts, duplicates' too: the words a
        // host's copies differ in (a namespace that re-exports) are its
        // section words only if the copies are counted.
        self.names.add(this.record.host, &this.record.title)?;
        let record = (verdict == Verdict::New).then_some(this.record);
        Ok(decide(verdict, record))
    }

    /// An earlier live document with the same text and a name not
    /// different: among those filed under the same bits of the text's
    /// hash, one with the same name first (items whose pages say the same
    /// thing, a mirror's page and its original on two hosts: the original),
    /// else the earliest.
    fn exact_match(
        &mut self,
        this: &SlotRecord,
        directories: u64,
        keys: &Keys,
        live: &impl Fn(u64) -> bool,
    ) -> Result<Option<u64>, IndexError> {
        let (mut tried, mut first) = (0, None);
        for slot in self.tables.maybe_same_text(keys) {
            if self.tables.top_distance(slot, this.fingerprint) != 0 {
                continue;
            }
            let other = self.slot_record(slot)?;
            let same_text =
                other.text_hash == this.text_hash && other.fingerprint == this.fingerprint;
            if !same_text || !live(other.doc) {
                continue;
            }
            match self.names(&this.record, directories, &other.record)? {
                Names::Same => return Ok(Some(other.doc)),
                Names::Different => {}
                Names::Qualified | Names::Unknown => {
                    first = first.or(Some(other.doc));
                }
            }
            tried += 1;
            if tried == MAX_EXACT_CANDIDATES {
                break;
            }
        }
        Ok(first)
    }

    /// The earlier live document with the same name, within k bits (or
    /// near identical), whose text passes verification, trying those that share the most bands
    /// first (then the earliest).
    fn near_match(
        &mut self,
        this: &SlotRecord,
        directories: u64,
        candidates: &[Candidate],
        live: &impl Fn(u64) -> bool,
    ) -> Result<Option<Verdict>, IndexError> {
        let k = self.config.index.k;
        let short = this.record.text.words().is_some();
        let mut verified = 0;
        let reads = self.config.max_candidates * READS_PER_CANDIDATE;
        let near: Vec<u32> = candidates
            .iter()
            .filter(|c| {
                short
                    || c.bands >= FAR_READ_BANDS
                    || self.tables.top_distance(c.slot, this.fingerprint) <= k
            })
            .map(|c| c.slot)
            .take(reads)
            .collect();
        // Read once a candidate passes: see `own_text_held`.
        let mut kept = None;
        for slot in near {
            let other = self.slot_record(slot)?;
            if !live(other.doc) {
                continue;
            }
            match self.compare(
                this,
                directories,
                (slot, &other),
                candidates,
                &mut kept,
                live,
            )? {
                Compared::Copy(verdict) => return Ok(Some(verdict)),
                // A template's pages come first (they share its bands):
                // they are no verification of a copy, and the page's own
                // original may follow.
                Compared::SharesCommonText => continue,
                Compared::Unlike => {}
            }
            verified += 1;
            if verified == self.config.max_candidates {
                break;
            }
        }
        Ok(None)
    }

    /// What a candidate (`other`, in its slot) is of the page judged.
    /// `kept` holds the sketches of the page's candidates once read.
    fn compare(
        &mut self,
        this: &SlotRecord,
        directories: u64,
        (slot, other): (u32, &SlotRecord),
        candidates: &[Candidate],
        kept: &mut Option<Vec<(u32, Sketch)>>,
        live: &impl Fn(u64) -> bool,
    ) -> Result<Compared, IndexError> {
        let distance = this.fingerprint.distance(other.fingerprint);
        let (a, b) = (&this.record.text, &other.record.text);
        // Short texts word by word; a long one with a long one, or with a
        // short one near the line, by sketch; a long text and a short one
        // far from it are not copies of each other.
        let short_pair = a.words().is_some() || b.words().is_some();
        let (similarity, check, threshold, sketches) =
            match (a.words(), b.words(), a.sketch(), b.sketch()) {
                (Some(a), Some(b), _, _) => {
                    let threshold = self.config.short_similarity;
                    let Some(s) = word_similarity(a, b, Weigh::Characters, threshold) else {
                        return Ok(Compared::Unlike);
                    };
                    (s, Check::ShortText, threshold, None)
                }
                (_, _, Some(a), Some(b)) => (
                    a.similarity(b),
                    Check::Sketch,
                    self.config.min_similarity,
                    Some((a, b)),
                ),
                _ => return Ok(Compared::Unlike),
            };
        if similarity < threshold {
            return Ok(Compared::Unlike);
        }
        // A fingerprint moves many bits with a line added to a short page:
        // for a short text the same (non-empty) name stands in for it.
        let names = self.names(&this.record, directories, &other.record)?;
        let close = similarity >= self.config.similarity_needed(check, distance)
            || (short_pair && names == Names::Same);
        let named_alike = match names {
            Names::Different => false,
            // One item under two paths has one text, word for word: a
            // path word swapped in the text (`f64` for `f32`, `net` for
            // `rmi`) names another item, however few its characters.
            Names::Qualified => match (a.words(), b.words()) {
                (Some(a), Some(b)) => word_similarity(a, b, Weigh::Words, NEAR_IDENTICAL).is_some(),
                _ => similarity >= NEAR_IDENTICAL,
            },
            Names::Same | Names::Unknown => true,
        };
        if !close || !named_alike {
            return Ok(Compared::Unlike);
        }
        if let Some((a, b)) = sketches {
            let kept = match kept {
                Some(kept) => kept,
                None => kept.insert(self.kept_sketches(candidates, live)?),
            };
            if own_text_held(a, b, slot, kept).is_some_and(|held| held < threshold) {
                return Ok(Compared::SharesCommonText);
            }
        }
        Ok(Compared::Copy(Verdict::Near {
            of: other.doc,
            distance,
            similarity,
            check,
        }))
    }

    /// The sketches of the first [`COMMON_PROBES`] live candidates that
    /// share text with the page judged (at least [`SHARING_BANDS`] band
    /// keys), with their slots.
    fn kept_sketches(
        &self,
        candidates: &[Candidate],
        live: &impl Fn(u64) -> bool,
    ) -> Result<Vec<(u32, Sketch)>, IndexError> {
        let mut kept = Vec::new();
        let sharing = candidates.iter().filter(|c| c.bands >= SHARING_BANDS);
        for c in sharing.take(COMMON_PROBES * READS_PER_CANDIDATE) {
            let record = self.slot_record(c.slot)?;
            if let (true, Some(sketch)) = (live(record.doc), record.record.text.sketch()) {
                kept.push((c.slot, sketch.clone()));
                if kept.len() == COMMON_PROBES {
                    break;
                }
            }
        }
        Ok(kept)
    }

    /// What the titles of `a` (the page judged, whose title words in
    /// `directories` name directories of its URL) and `b` say.
    fn names(
        &mut self,
        a: &DocRecord,
        directories: u64,
        b: &DocRecord,
    ) -> Result<Names, IndexError> {
        self.names
            .compare_placed((a.host, &a.title), directories, (b.host, &b.title))
    }

    fn slot_record(&self, slot: u32) -> Result<SlotRecord, IndexError> {
        self.records
            .with(slot, SlotRecord::from_bytes)?
            .ok_or_else(|| IndexError::Corrupt(format!("gate record {slot}")))
    }

    /// Records a document judged [`Verdict::New`] as `doc`; does nothing for
    /// duplicates, empty texts, and a document recorded before with the same
    /// text (which is what replaying a crash's lost tail does).
    pub fn record(&mut self, doc: u64, judgement: &Judgement) -> Result<(), IndexError> {
        let d = &judgement.decision;
        let Some(record) = &judgement.record else {
            return Ok(());
        };
        if d.verdict != Verdict::New || d.simhash.features == 0 {
            return Ok(());
        }
        // Recorded before (a replay): the same document with the same text.
        let keys = self.keys(record, d.content_hash as u64)?;
        for slot in self.tables.maybe_same_text(&keys) {
            if self.tables.top_distance(slot, d.simhash.fingerprint) != 0 {
                continue;
            }
            let other = self.slot_record(slot)?;
            if other.doc == doc && other.text_hash == d.content_hash as u64 {
                return Ok(());
            }
        }
        let r = SlotRecord {
            doc,
            fingerprint: d.simhash.fingerprint,
            text_hash: d.content_hash as u64,
            record: record.clone(),
        };
        self.append(r, &keys)
    }

    /// Adds every document of another gate (its [`RECORDS_FILE`], read and
    /// never changed) as documents of this one, under the ids `id` maps
    /// theirs to: a crawl judged against an earlier crawl's pages. Counted
    /// like this gate's own (memory and disk per document alike), and
    /// their titles count in their hosts' names. Returns how many. Call
    /// [`flush`](Deduper::flush) after: a crash before it loses them all.
    pub fn remember(&mut self, records: &Path, id: impl Fn(u64) -> u64) -> Result<u64, IndexError> {
        let io = |e: std::io::Error| IndexError::Io(format!("{}: {e}", records.display()));
        let file = std::fs::File::open(records).map_err(io)?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let (mut record, mut n) = (Vec::new(), 0);
        loop {
            let mut length = [0u8; 2];
            match std::io::Read::read_exact(&mut reader, &mut length) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(io(e)),
            }
            record.resize(usize::from(u16::from_le_bytes(length)), 0);
            // A tail torn by a crash of the other crawl is not its own.
            if std::io::Read::read_exact(&mut reader, &mut record).is_err() {
                break;
            }
            let Some(mut r) = SlotRecord::from_bytes(&record) else {
                return Err(IndexError::Corrupt(format!(
                    "{}: record {n}",
                    records.display()
                )));
            };
            r.doc = id(r.doc);
            self.names.add(r.record.host, &r.record.title)?;
            let keys = self.keys(&r.record, r.text_hash)?;
            self.append(r, &keys)?;
            n += 1;
        }
        Ok(n)
    }

    /// What a document is looked up by: its text's band keys, its title,
    /// and its name's rarest words as its host's titles tell them.
    fn keys(&mut self, record: &DocRecord, text_hash: u64) -> Result<Keys, IndexError> {
        let mut keys = record.keys(text_hash);
        keys.name_words = self.names.rarest(record.host, &record.title)?;
        Ok(keys)
    }

    /// Stores a new document's record and adds it, by `keys`, to the
    /// tables.
    fn append(&mut self, r: SlotRecord, keys: &Keys) -> Result<(), IndexError> {
        let slot = self.records.push(&r.to_bytes())?;
        self.tables.index(slot, r.fingerprint, keys);
        Ok(())
    }

    /// Makes every recorded document durable.
    pub fn flush(&mut self) -> Result<(), IndexError> {
        self.records.flush()?;
        self.names.flush()?;
        self.db.flush()?;
        Ok(())
    }
}

/// A stored record's slot, fingerprint and keys, and its host and title
/// (for the keys of its name, which the host's title counts decide).
type Keyed = (u32, Fingerprint, Keys, (u64, Vec<u32>));

/// Stored records read and keyed on every core (reopening a 10M-document
/// gate decodes and keys 10M records); the slot of a record that does not
/// decode, if any.
fn keyed(batch: &[(u32, Vec<u8>)]) -> Result<Vec<Keyed>, u32> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = batch.len().div_ceil(threads).max(1);
    let parts: Vec<Result<Vec<_>, u32>> = std::thread::scope(|scope| {
        let workers: Vec<_> = batch
            .chunks(per_thread)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(slot, bytes)| {
                            let r = SlotRecord::from_bytes(bytes).ok_or(*slot)?;
                            let keys = r.record.keys(r.text_hash);
                            Ok((*slot, r.fingerprint, keys, (r.record.host, r.record.title)))
                        })
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("keying records does not panic"))
            .collect()
    });
    let mut docs = Vec::with_capacity(batch.len());
    for part in parts {
        docs.extend(part?);
    }
    Ok(docs)
}

fn check_config(config: &DedupConfig) -> Result<(), IndexError> {
    let bad = |what: String| Err(IndexError::Config(what));
    if config.sketch_shingle == 0 || config.sketch_shingle > nearcrawl_simhash::MAX_SHINGLE {
        return bad(format!(
            "sketch_shingle must be 1 to {}",
            nearcrawl_simhash::MAX_SHINGLE
        ));
    }
    if config.index.k > 64 {
        return bad(format!("k must be 0 to 64, got {}", config.index.k));
    }
    for (name, v) in [
        ("min_similarity", config.min_similarity),
        ("short_similarity", config.short_similarity),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return bad(format!("{name} must be 0 to 1, got {v}"));
        }
    }
    Ok(())
}

/// Which gate wrote the state found.
#[derive(Debug, PartialEq)]
enum Stored {
    Nothing,
    Current,
    Gate2,
}

fn settings(version: &str, config: &DedupConfig) -> String {
    format!(
        "{version}; simhash shingle={} weighting={:?}; sketch shingle={}; short={}",
        config.simhash.shingle,
        config.simhash.weighting,
        config.sketch_shingle,
        config.short_features
    )
}

/// Fingerprints, sketches and records made with other settings (or by an
/// earlier version of the gate) are not comparable with new ones; state of
/// the previous version is converted.
fn stored_settings(db: &sled::Db, config: &DedupConfig) -> Result<Stored, IndexError> {
    let wanted = settings(GATE_VERSION, config);
    match db.open_tree("dedup.meta")?.get("settings")? {
        None => Ok(Stored::Nothing),
        Some(stored) if stored.as_ref() == wanted.as_bytes() => Ok(Stored::Current),
        Some(stored) if stored.as_ref() == settings("gate 2", config).as_bytes() => {
            Ok(Stored::Gate2)
        }
        Some(stored) => Err(IndexError::LayoutMismatch {
            stored: String::from_utf8_lossy(&stored).into_owned(),
            requested: wanted,
        }),
    }
}

/// How much of a kept page's own text (`other`, in `slot`) a page
/// (`this`) holds: its text that no other kept page of `kept` holds
/// (candidates of the page: those it shares text with). Text that other
/// kept pages hold too (a template, a shop's notice, a shared background
/// paragraph) is no page's own, and holding it makes no page a copy: a
/// shop's third product page holds none of the first's own text, however
/// much of the two the template is, while a copy of the first, with a
/// banner added or words changed, holds most of it. This only takes
/// evidence away: the pair must be alike in all its text as well. `None`
/// when no other kept page shares text with the page, or fewer than
/// [`MIN_OWN_BINS`] bins are the kept page's own (its text is all other
/// kept pages', as when two kept pages have one text and their names tell
/// them apart): the pair is judged on all its text.
fn own_text_held(this: &Sketch, other: &Sketch, slot: u32, kept: &[(u32, Sketch)]) -> Option<f32> {
    let mut others = kept.iter().filter(|(s, _)| *s != slot).peekable();
    // No other kept page shares text with the page: all of the kept
    // page's text is its own, and the pair has been judged on it.
    others.peek()?;
    let elsewhere = others.fold(0u128, |bins, (_, k)| bins | other.agreeing_bins(k));
    let (share, bins) = this.share_held(other, !elsewhere);
    (bins >= MIN_OWN_BINS).then_some(share)
}

/// What a word of a short text weighs in [`word_similarity`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Weigh {
    /// Its length in characters.
    Characters,
    /// One.
    Words,
}

/// How much of the shorter text the longer one holds in order, as `weigh`
/// says (in characters, or in words): the heaviest common subsequence of
/// words over the shorter text's weight; 0 when the longer is more than
/// half as long again (then it is another page that quotes this one). A
/// copy with a line added (a banner, a timestamp) or a few words changed
/// scores high; two pages of one template that differ in a name score by
/// the name's length ("No usage of java.io.ByteArrayOutputStream" and
/// "… BufferedOutputStream": 0.83 by words, under 0.5 by characters). In
/// Chinese a character is a word. Records of earlier versions kept no
/// lengths: a pair with one is compared word by word. Short texts only (a
/// few hundred words at most): quadratic.
///
/// `None` when the similarity is under `needed`. The words the texts
/// share in any order bound the subsequence, so a pair that shares too
/// few is ruled out without the quadratic table: most pairs of one
/// template's pages, which differ in their names and descriptions (the
/// table was a third of the gate's time on the Rust docs).
fn word_similarity(a: &[u32], b: &[u32], weigh: Weigh, needed: f32) -> Option<f32> {
    let measured = weigh == Weigh::Characters && a.iter().chain(b).all(|&w| word_chars(w) > 0);
    let key = |w: u32| if measured { w } else { word_hash(w) };
    let weight = |w: u32| if measured { word_chars(w) } else { 1 };
    let length = |t: &[u32]| t.iter().map(|&w| weight(w)).sum::<u32>();
    let (a_len, b_len) = (length(a), length(b));
    let ((short, short_len), (long, long_len)) = if a_len <= b_len {
        ((a, a_len), (b, b_len))
    } else {
        ((b, b_len), (a, a_len))
    };
    let reaching = |s: f32| (s >= needed).then_some(s);
    if short_len == 0 || long_len * 2 > short_len * 3 {
        return reaching(0.0);
    }
    // Words the texts begin and end with alike are in a heaviest common
    // subsequence (a word's weight is its key's): a copy's texts are
    // compared in full only where they differ.
    let head = short
        .iter()
        .zip(long)
        .take_while(|&(&x, &y)| key(x) == key(y))
        .count();
    let (short_rest, long_rest) = (&short[head..], &long[head..]);
    let tail = short_rest
        .iter()
        .rev()
        .zip(long_rest.iter().rev())
        .take_while(|&(&x, &y)| key(x) == key(y))
        .count();
    let alike = length(&short[..head]) + length(&short_rest[short_rest.len() - tail..]);
    let short_mid = &short_rest[..short_rest.len() - tail];
    let long_keys: Vec<u32> = long_rest[..long_rest.len() - tail]
        .iter()
        .map(|&y| key(y))
        .collect();
    // Both similarities divide by one length, and an integer's f32 grows
    // with it: under the bound's, the table's is under too.
    let similarity = |held: u32| (alike + held) as f32 / short_len as f32;
    if similarity(shared_weight(short_mid, &long_keys, key, weight)) < needed {
        return None;
    }
    // One row of the table, its cell to the left and the one diagonally
    // up-left in registers: reading them back from the row made each cell
    // wait on the store before it (1.6x the time).
    let mut row = vec![0u32; long_keys.len()];
    for &x in short_mid {
        let (x_key, x_weight) = (key(x), weight(x));
        let (mut diag, mut left) = (0, 0);
        for (cell, &y_key) in row.iter_mut().zip(&long_keys) {
            let up = *cell;
            let next = if x_key == y_key {
                diag + x_weight
            } else {
                left.max(up)
            };
            diag = up;
            left = next;
            *cell = next;
        }
    }
    reaching(similarity(row.last().copied().unwrap_or(0)))
}

/// The weight of the words `short` and `long_keys` share, in any order (a
/// word counted as often as both hold it): no common subsequence weighs
/// more. A word's weight is its key's (`weight` reads either).
fn shared_weight(
    short: &[u32],
    long_keys: &[u32],
    key: impl Fn(u32) -> u32,
    weight: impl Fn(u32) -> u32,
) -> u32 {
    let mut xs: Vec<u32> = short.iter().map(|&x| key(x)).collect();
    let mut ys = long_keys.to_vec();
    xs.sort_unstable();
    ys.sort_unstable();
    let (mut i, mut j, mut shared) = (0, 0, 0);
    while i < xs.len() && j < ys.len() {
        match xs[i].cmp(&ys[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += weight(xs[i]);
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_documents_read_back_as_written() {
        let mut f = Fingerprinter::new(&DedupConfig::default()).unwrap();
        let long: String = (0..300).map(|i| format!("word{} ", i * 7 % 113)).collect();
        for (text, title, url) in [
            (
                long.as_str(),
                Some("Integer in java.lang"),
                Some("https://docs.example/api/java.base/java/lang/Integer.html"),
            ),
            (long.as_str(), Some("Integer in java::lang"), None),
            ("a short page of a few words", None, None),
            ("", Some("empty"), None),
        ] {
            let p = f.prepare(Doc {
                text,
                title,
                host: Some("docs.example"),
                url,
            });
            assert_eq!(p.directories != 0, url.is_some(), "{title:?}");
            assert_eq!(Prepared::from_bytes(&p.to_bytes()), Some(p.clone()));
            assert!(p.to_bytes().len() < 220, "{} bytes", p.to_bytes().len());
        }
        assert_eq!(Prepared::from_bytes(&[0; 20]), None);
    }

    #[test]
    fn texts_read_once_or_by_each_prepare_alike() {
        let config = DedupConfig::default();
        let mut f = Fingerprinter::new(&config).unwrap();
        let mut simhasher = Simhasher::new(config.simhash).unwrap();
        let long: String = (0..300).map(|i| format!("word{} ", i * 7 % 113)).collect();
        // Over READ_ONCE_BYTES: its tokens are read by each.
        let huge = long.repeat(READ_ONCE_BYTES / long.len() + 1);
        let doc = |text| Doc {
            text,
            title: None,
            host: None,
            url: None,
        };
        let first = f.prepare(doc(&long));
        for text in [
            long.as_str(),
            "a short page of a few words",
            &huge,
            "",
            &long,
        ] {
            let p = f.prepare(doc(text));
            assert_eq!(p.simhash, simhasher.hash(text));
            // A fresh fingerprinter (no buffers from earlier texts) agrees.
            let fresh = Fingerprinter::new(&config).unwrap().prepare(doc(text));
            assert_eq!(p, fresh);
        }
        assert_eq!(f.prepare(doc(&long)), first);
    }

    /// [`word_similarity`] with nothing needed: always the value.
    fn similarity(a: &[u32], b: &[u32], weigh: Weigh) -> f32 {
        word_similarity(a, b, weigh, 0.0).expect("every similarity reaches 0")
    }

    #[test]
    fn word_similarity_weighs_words_by_their_characters() {
        let words = |text: &str| -> Vec<u32> {
            let mut w = Vec::new();
            Simhasher::default().features_measured(text, |f, chars| w.push(short_word(f, chars)));
            w
        };
        let (a, b) = (
            words(
                "Uses of Class java.io.ByteArrayOutputStream No usage of java.io.ByteArrayOutputStream",
            ),
            words(
                "Uses of Class java.io.BufferedOutputStream No usage of java.io.BufferedOutputStream",
            ),
        );
        // 10 of 12 words; 32 characters of the shorter 72.
        assert!((similarity(&a, &b, Weigh::Characters) - 32.0 / 72.0).abs() < 1e-6);
        assert!((similarity(&a, &b, Weigh::Words) - 10.0 / 12.0).abs() < 1e-6);
        let unmeasured: Vec<u32> = b.iter().map(|&w| word_hash(w)).collect();
        assert!((similarity(&a, &unmeasured, Weigh::Characters) - 10.0 / 12.0).abs() < 1e-6);
        // Chinese: a character is a word.
        let zh = words("如果没有给定文件，则编辑器会打开一个空的缓冲区。");
        let edited = words("如果没有给出文件，则编辑器将打开一个空的缓冲区。");
        assert!((similarity(&zh, &edited, Weigh::Characters) - 20.0 / 22.0).abs() < 1e-6);
    }

    #[test]
    fn word_similarity_is_containment_of_the_shorter() {
        let a: Vec<u32> = (0..20).collect();
        assert_eq!(similarity(&a, &a, Weigh::Characters), 1.0);
        // A line of 6 words added at the front: still all of `a`.
        let banner: Vec<u32> = (100..106).chain(0..20).collect();
        assert_eq!(similarity(&a, &banner, Weigh::Characters), 1.0);
        // Two words replaced: 18 of 20.
        let mut edited = a.clone();
        edited[3] = 999;
        edited[11] = 998;
        assert!((similarity(&a, &edited, Weigh::Characters) - 0.9).abs() < 1e-6);
        // Much longer: another page.
        let long: Vec<u32> = (0..31).collect();
        assert_eq!(similarity(&a, &long, Weigh::Characters), 0.0);
        assert_eq!(similarity(&[], &a, Weigh::Characters), 0.0);
    }

    /// The heaviest common subsequence over the whole texts, with no
    /// shortcut: what `word_similarity` computes.
    fn heaviest_common(short: &[u32], long: &[u32]) -> u32 {
        let mut row = vec![0u32; long.len() + 1];
        for &x in short {
            let mut diag = 0;
            for (j, &y) in long.iter().enumerate() {
                let next = if x == y {
                    diag + word_chars(x)
                } else {
                    row[j].max(row[j + 1])
                };
                diag = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[long.len()]
    }

    #[test]
    fn texts_alike_at_their_ends_score_as_compared_in_full() {
        // Words of 1-3 characters from a small vocabulary, so that texts
        // share beginnings, ends and words in between.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..3000 {
            let len = 1 + next(30) as usize;
            let a: Vec<u32> = (0..len)
                .map(|_| short_word(next(6), 1 + next(3) as u32))
                .collect();
            let mut b = a.clone();
            for _ in 0..next(6) {
                let at = next(b.len() as u64 + 1) as usize;
                let word = short_word(next(6), 1 + next(3) as u32);
                match next(3) {
                    0 if at < b.len() => {
                        b.remove(at);
                    }
                    1 => b.insert(at, word),
                    _ if at < b.len() => b[at] = word,
                    _ => {}
                }
            }
            let length = |t: &[u32]| t.iter().map(|&w| word_chars(w)).sum::<u32>();
            let (short, long) = if length(&a) <= length(&b) {
                (&a, &b)
            } else {
                (&b, &a)
            };
            let got = similarity(&a, &b, Weigh::Characters);
            let want = if length(short) == 0 || length(long) * 2 > length(short) * 3 {
                0.0
            } else {
                heaviest_common(short, long) as f32 / length(short) as f32
            };
            assert!(
                (got - want).abs() < 1e-6,
                "{a:?} {b:?}: {got} against {want}"
            );
            // What the shared words rule out, the table would have too.
            for needed in [0.3, 0.5, 0.8, 0.9, 1.0] {
                assert_eq!(
                    word_similarity(&a, &b, Weigh::Characters, needed),
                    (got >= needed).then_some(got),
                    "{a:?} {b:?} needing {needed}"
                );
            }
        }
    }
}

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
        let a = fmix64(self.a ^ self.n);
        let b = fmix64(self.b ^ self.n.rotate_left(32));
        (u128::from(a) << 64) | u128::from(b)
    }
}
