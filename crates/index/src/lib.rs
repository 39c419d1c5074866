//! Near-duplicate detection at crawl time: "is this page within Hamming
//! distance k of an earlier one, and of which?" — answered fast and durably.
//!
//! - [`BandIndex`]: simhash fingerprints in pigeonhole band tables
//!   ([`Layout`]), persisted as a packed log in sled and rebuilt in memory
//!   at open. No false negatives within k, no matches beyond k.
//! - [`Deduper`]: the gate the crawler and `nearcrawl dedup` use. Exact
//!   duplicates by a hash of the normalized text; near duplicates by simhash
//!   candidates confirmed with a MinHash [`Sketch`] of word shingles; short
//!   texts by exact match only.
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

mod band_index;
mod dedup;
mod error;
mod layout;
mod sketch;
mod store;

pub use band_index::{BandIndex, IndexConfig, Match};
pub use dedup::{Decision, DedupConfig, Deduper, Verdict};
pub use error::IndexError;
pub use layout::Layout;
pub use sketch::{SKETCH_BINS, Sketch, SketchBuilder};
