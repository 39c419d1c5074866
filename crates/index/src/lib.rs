//! Near-duplicate detection at crawl time: "is this page a copy of an
//! earlier one, and of which?" — answered fast and durably.
//!
//! - [`Deduper`]: the gate the crawler and `nearcrawl dedup` use. A
//!   duplicate has the same *text*: exact (a hash of the normalized text),
//!   or near (a simhash within k bits, confirmed with a MinHash [`Sketch`]
//!   of word shingles, or a sketch at 0.8 or more whatever the simhash;
//!   short texts word by word); a long text must also hold most of the
//!   earlier page's own text, as text other kept pages hold too (a
//!   template) makes no page a copy. Its *name* (title and heading without the
//!   site's name and its host's template words) weighs as evidence: on one
//!   host, names that differ in a word naming an item keep pages apart
//!   however alike their text, names that differ only in section words
//!   swapped in place (a re-export: `std`/`alloc`) need near-identical
//!   text; two hosts' names that differ say nothing ([`page_name`], and
//!   the `names` module).
//!   Candidates come from MinHash LSH over the sketch ([`Sketch::band_keys`]),
//!   the title and the name's rarest words.
//! - [`dust`]: URL rewrite rules learned from the duplicates the gate
//!   confirms (`/std/…` ↔ `/core/…`, `story?id=N` ↔ `story_N.html`, a
//!   session id dropped), proven on pairs and checked as they are used,
//!   which predict the duplicates a crawler need not fetch.
//! - [`BandIndex`]: every simhash fingerprint within Hamming distance k, in
//!   pigeonhole band tables ([`Layout`]) persisted in sled. Exact (no false
//!   negatives within k), and fast for small k; not what the gate uses
//!   (see below).
//!
//! ```
//! use nearcrawl_index::{BandIndex, IndexConfig};
//! use nearcrawl_simhash::Fingerprint;
//!
//! let dir = std::env::temp_dir().join(format!("nearcrawl-doc-{}", std::process::id()));
//! let mut index = BandIndex::open(&dir, IndexConfig { k: 3, capacity: 1_000, blocks: None })?;
//! assert_eq!(index.check_insert(Fingerprint(0b1111_0000), 1), None);
//! let m = index.check_insert(Fingerprint(0b1111_0011), 2).expect("2 bits away");
//! assert_eq!((m.doc, m.distance), (1, 2));
//! index.flush()?; // durable from here
//! # drop(index); std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), nearcrawl_index::IndexError>(())
//! ```

//!
//! # The gate's candidates: MinHash LSH, not simhash bands
//!
//! The gate asks for near copies at k = 8 (recall on edited copies needs
//! it, table below). Pigeonhole simhash bands at k = 8 key each table on 7
//! bits, so a query scans N/14 fingerprints: 9,772 checks/s at 1M
//! documents, ~1 ms a page at 10M. Permuted-table variants find a pair 8
//! bits apart with a few percent chance per table. So the gate draws its
//! candidates from the sketch it verifies with instead: 16 bands of two
//! 16-bit MinHash bins, one in-memory table each (~4.5 bytes an entry, bit-packed), a
//! candidate being any earlier document sharing a band; most shared bands
//! are tried first. A pair at Jaccard J shares a band with probability
//! 1 - (1 - J²)^16: 0.990 at the threshold 0.5, 0.99996 at 0.7. The verdict
//! is unchanged: the fingerprint still has to be within k bits (the top
//! half of every fingerprint is kept in memory to skip most candidates
//! without reading their record), the sketch at or above the threshold,
//! the name the same — or the sketch near identical (≥ 0.9; such a pair
//! shares half the bands or more, so only those candidates are read past
//! k bits). Exact copies share all bands, so they need no table
//! of their own. One more table, of each document's rarest name word,
//! puts the documents that share one of a new one's two rarest name words
//! first: where many pages share most of their text, the keys they share
//! fill up (16 documents a key) with other items, and a copy keeps its
//! item's name, if not its whole title. For the same reason exact copies
//! have a table of their own, by 32 bits of the text's hash (~4.5 bytes a
//! document): a page whose every band key is full of other items' pages
//! is still found by its copy, also one on another host, whose name model
//! differs (among pages of one text, the one named alike comes first).
//!
//! `examples/gate_bench.rs` measures it with the default settings
//! (synthetic documents of 300 shingles, a fifth of them shared at random;
//! 2-core machine):
//!
//! | documents | checks/s (new / copies) | RAM: tables, RSS growth | disk | candidate recall, J ≥ 0.5 |
//! |---|---|---|---|---|
//! | 1M | 117k / 200k | 92 B, 112–125 B | 188 B | 0.9993 |
//! | 10M | 132k / 164k | 91 B, 107 B | 198 B | 0.9992 |
//! | 100M | 44k / 31k | 109 B, 121 B | 196 B | 0.9991 |
//!
//! per document (disk at 10M and 100M before the records shrank by 27 B
//! a document: 6-bit narrow sketch bins, varint document ids; the 100M row
//! with 6-byte entries, before they were bit-packed; packing them cost 0.6 µs a check at 1M and nothing at 10M,
//! where the smaller tables miss the cache less). Recall is 0.997 for copies at J 0.5–0.6 and 1.000 from
//! 0.7. A check of a new document reads no record (the fingerprint tops
//! rule out chance band matches); a copy's costs one read from the record
//! file (at 100M it is not in the page cache: 32 µs a copy). Reopening
//! rebuilds the tables from the file: 3 s at 1M, 39 s at 10M.

//! # Why these duplicate defaults
//!
//! `examples/dedup_quality.rs`: 180 real articles, each in one site
//! template (negatives), plus "thin" pages (40 words in a template three
//! times as heavy); positives are edited copies. Precision over all
//! verdicts; recall of copies with up to 10% edits (words, a paragraph in or
//! out, an ad block):
//!
//! | k | min similarity | precision | recall ≤10% | thin pages wrongly joined |
//! |---|---|---|---|---|
//! | 8 | 0 (no sketch check) | 0.902 | 0.967 | 148 of 180 |
//! | 8 | 0.4 | 0.904 | 0.967 | 143 |
//! | **8** | **0.5** | **0.987** | **0.966** | 17 |
//! | 8 | 0.6 | 1.000 | 0.940 | 0 |
//! | 6 | 0.5 | 0.991 | 0.928 | 11 |
//! | 4 | 0.5 | 0.995 | 0.817 | 5 |
//!
//! (Measured before a sketch at 0.8 or more decided alone past k; with it
//! the default row reads 0.987, 0.977, 17: a paragraph or an ad block added
//! moves a fingerprint past k. Since a copy must also hold the earlier
//! page's own text, the text no other kept page holds, the row reads
//! 1.000, 0.977, 0: a thin page shares the template with its candidates,
//! and nothing of their own. Every row at 0.3 or more now reads precision
//! 1.000 and no thin page joined.)
//!
//! (With 8-bit narrow sketch bins whose chance agreements were left in,
//! the k = 8, 0.5 row read 0.983, 0.965, 22; with the simhash band index as
//! the candidate stage, 0.981, 0.963, 24.)
//!
//! (Text only: these pages have no titles, so the names do not help here.
//! On real documentation sites they are what keeps distinct pages apart and
//! lets copies under other paths go: `bench/docs_gate.py` crawls javadoc,
//! doxygen, sphinx and rustdoc from 127.0.0.1 and judges every drop by the
//! item each page documents: 0, 1, 0 and 1 pages dropped as copies of
//! another item, and rust-doc's re-exports (8,991 copies of 8,533 items
//! under std, core and alloc and the architecture modules) 89.5% kept out,
//! no item lost. `bench/crosshost_gate.py`: one story on several news hosts,
//! each with its own template and title style: plain copies 100% caught,
//! edited ones 74-78%, no false drop.)
//!
//! Simhash alone joins template-heavy pages; the sketch separates them once
//! its threshold passes the share of text the template contributes. The
//! crawler feeds extracted main text, not whole pages, which removes most
//! of that shared text before it gets here.

mod band_index;
mod candidates;
mod dedup;
pub mod dust;
mod error;
mod key_table;
mod layout;
mod names;
mod page_name;
mod record;
mod record_file;
mod sketch;
mod store;
mod title_counts;
mod upgrade;
mod verdict;

pub use band_index::{BandIndex, IndexConfig, Match};
pub use dedup::{DedupConfig, Deduper, Doc, Fingerprinter, Prepared, RECORDS_FILE};
pub use error::IndexError;
pub use layout::Layout;
pub use names::MIN_TITLES;
pub use page_name::page_name;
pub use record::Judgement;
pub use sketch::{BANDS, SKETCH_BINS, SKETCH_BYTES, Sketch, SketchBuilder};
pub use store::open_sled;
pub use verdict::{Check, Decision, Verdict};
