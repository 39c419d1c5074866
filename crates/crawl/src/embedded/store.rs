//! Where the crawl state lives: the [`Store`] trait, and [`SledStore`], the
//! embedded default (a sled tree under the output directory).
//!
//! The frontier and the state encode their records as ordered keys (a
//! tag byte, then e.g. a host; the frontier's queue and seen set, which
//! churn most, are files beside the store, see [`crate::embedded::frontier`]), so
//! what they need from a store is small: point reads, ordered range scans, single writes, a batch
//! of writes applied **atomically** (everything one URL changes, so a crash
//! never leaves half of it), and a way to make writes durable. That is the
//! trait. Keeping it this narrow keeps the crawl's crash-exactness argument
//! in one place ([`crate::embedded::state`]) whatever holds the bytes.
//!
//! A store shared by many workers (a Redis Cluster) cannot offer atomic
//! batches across its partitions; it will need operations at the level of
//! a partition (queue, seen set, leases of one politeness key), a coarser
//! trait beside this one, not this one over the network.
//!
//! ```
//! use nearcrawl_crawl::embedded::store::{SledStore, Store, Writes};
//!
//! let db = sled::Config::new().temporary(true).open().unwrap();
//! let store = SledStore::open_in(&db, "crawl").unwrap();
//! let mut w = Writes::default();
//! w.insert(*b"q1", b"a");
//! w.insert(*b"q2", b"b");
//! w.insert(*b"s1", b"c");
//! store.apply(w).unwrap();
//! let queued: Vec<_> = store.scan_prefix(b"q").map(|kv| kv.unwrap().1).collect();
//! assert_eq!(queued, [b"a".to_vec(), b"b".to_vec()]);
//! ```

use std::fmt;

/// A store that failed, or a record in it that does not decode.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync>),
    /// Not written by this version, or damaged on disk.
    #[error("{0}")]
    Corrupt(String),
}

impl From<sled::Error> for StoreError {
    fn from(e: sled::Error) -> StoreError {
        StoreError::Backend(Box::new(e))
    }
}

/// The tags of the store's keys, every kind of record in one list, so a
/// new kind takes a byte no other has (the URL rules once took `u`, an
/// older seen set's, and a resumed crawl's upgrade read them as that).
pub(crate) mod tag {
    // The state's.
    pub(crate) const HOST: u8 = b'h';
    pub(crate) const DOMAIN: u8 = b'g';
    /// Sections of sites (`host/first-segment/`; a bare host from earlier
    /// versions: all of it) cut off as duplicate traps.
    pub(crate) const TRAP: u8 = b't';
    /// Per-host figures for `stats.json`.
    pub(crate) const HOST_STATS: u8 = b'p';
    pub(crate) const META: u8 = b'm';
    pub(crate) const SITEMAPS_READ: u8 = b'x';
    pub(crate) const ROBOTS: u8 = b'r';
    /// Canonical URLs whose pages were read through redirects from other
    /// URLs.
    pub(crate) const READ_TARGET: u8 = b'w';
    /// URLs a URL rule skipped, by rule: queued again if it retires.
    pub(crate) const SKIPPED: u8 = b'n';
    /// The URL rules as the last checkpoint saved them, in pieces by number.
    pub(crate) const URL_RULES: u8 = b'z';
    /// Documents' URLs (and once their judgements) as earlier versions kept
    /// them (now in `DocUrls` and the outbox).
    pub(crate) const DOC: u8 = b'd';
    /// Outbox entries as earlier versions kept them: a key per group, zstd
    /// inside.
    pub(crate) const OLD_OUTBOX: u8 = b'o';
    // The frontier's.
    /// Hosts ever admitted (for `max_hosts`).
    pub(crate) const KNOWN: u8 = b'k';
    /// The recorded lengths of the frontier's files.
    pub(crate) const FILES: u8 = b'f';
    /// The queue and in-flight set as earlier versions kept them: store
    /// keys (host 0x00 depth seq → URL).
    pub(crate) const OLD_QUEUE: u8 = b'q';
    pub(crate) const OLD_IN_FLIGHT: u8 = b'i';
    /// The seen set as earlier versions kept it: fingerprints, then before
    /// that whole URLs, as store keys.
    pub(crate) const OLD_SEEN: u8 = b'u';
    pub(crate) const OLD_SEEN_URLS: u8 = b's';

    #[cfg(test)]
    pub(crate) const ALL: [u8; 18] = [
        HOST,
        DOMAIN,
        TRAP,
        HOST_STATS,
        META,
        SITEMAPS_READ,
        ROBOTS,
        READ_TARGET,
        SKIPPED,
        URL_RULES,
        DOC,
        OLD_OUTBOX,
        KNOWN,
        FILES,
        OLD_QUEUE,
        OLD_IN_FLIGHT,
        OLD_SEEN,
        OLD_SEEN_URLS,
    ];
}

/// `tag` then `rest`: records are kept under keys tagged by their kind.
pub(crate) fn key(tag: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(rest.len() + 1);
    k.push(tag);
    k.extend_from_slice(rest);
    k
}

/// A big-endian u64 value (0 if it is not 8 bytes).
pub(crate) fn be_u64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().unwrap_or([0; 8]))
}

/// A file beside the store that failed.
pub(crate) fn io_error(e: std::io::Error) -> StoreError {
    StoreError::Backend(Box::new(e))
}

/// One key and its value.
pub type KeyValue = (Vec<u8>, Vec<u8>);

/// Records in key order.
pub type Scan<'a> = Box<dyn Iterator<Item = Result<KeyValue, StoreError>> + Send + 'a>;

/// An ordered byte-key map holding the crawl state. Writes made by
/// [`apply`](Store::apply) are atomic; [`flush`](Store::flush) makes every
/// write before it durable. Single writes ([`insert`](Store::insert),
/// [`remove`](Store::remove)) need not be durable until a flush.
pub trait Store: Send + Sync + fmt::Debug {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;

    fn contains(&self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.get(key)?.is_some())
    }

    /// Records with `start <= key < end` (no `end`: to the last key), in
    /// key order.
    fn range(&self, start: &[u8], end: Option<&[u8]>) -> Scan<'_>;

    /// Records whose key starts with `prefix`, in key order.
    fn scan_prefix(&self, prefix: &[u8]) -> Scan<'_> {
        self.range(prefix, prefix_end(prefix).as_deref())
    }

    fn insert(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError>;

    fn remove(&self, key: &[u8]) -> Result<(), StoreError>;

    /// Applies every write in `writes`, all or none.
    fn apply(&self, writes: Writes) -> Result<(), StoreError>;

    /// Makes every write so far durable.
    fn flush(&self) -> Result<(), StoreError>;
}

/// The first key after every key that starts with `prefix` (none if the
/// prefix is all 0xff).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Writes gathered before being applied as one atomic batch (one URL's
/// effects; several URLs' are merged into one batch, since each costs a
/// store-wide lock in sled).
#[derive(Debug, Default)]
pub struct Writes(Vec<(Vec<u8>, Option<Vec<u8>>)>);

impl Writes {
    pub fn insert(&mut self, key: impl Into<Vec<u8>>, value: impl AsRef<[u8]>) {
        self.0.push((key.into(), Some(value.as_ref().to_vec())));
    }

    pub fn remove(&mut self, key: impl Into<Vec<u8>>) {
        self.0.push((key.into(), None));
    }

    pub fn append(&mut self, other: Writes) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The writes in order: a value to set, or `None` to remove.
    pub fn into_inner(self) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        self.0
    }
}

/// The embedded store: one sled tree; [`flush`](Store::flush) flushes
/// the whole database (the duplicate index shares it, and is made durable
/// by the same flush).
#[derive(Debug, Clone)]
pub struct SledStore {
    db: sled::Db,
    tree: sled::Tree,
}

impl SledStore {
    /// The tree `name` of `db`.
    pub fn open_in(db: &sled::Db, name: &str) -> Result<SledStore, StoreError> {
        Ok(SledStore {
            db: db.clone(),
            tree: db.open_tree(name)?,
        })
    }
}

impl Store for SledStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.tree.get(key)?.map(|v| v.to_vec()))
    }

    fn contains(&self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.tree.contains_key(key)?)
    }

    fn range(&self, start: &[u8], end: Option<&[u8]>) -> Scan<'_> {
        let records = match end {
            Some(end) => self.tree.range(start.to_vec()..end.to_vec()),
            None => self.tree.range(start.to_vec()..),
        };
        Box::new(records.map(|kv| {
            kv.map(|(k, v)| (k.to_vec(), v.to_vec()))
                .map_err(Into::into)
        }))
    }

    fn insert(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.tree.insert(key, value)?;
        Ok(())
    }

    fn remove(&self, key: &[u8]) -> Result<(), StoreError> {
        self.tree.remove(key)?;
        Ok(())
    }

    fn apply(&self, writes: Writes) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        for (k, v) in writes.into_inner() {
            match v {
                Some(v) => batch.insert(k, v),
                None => batch.remove(k),
            }
        }
        self.tree.apply_batch(batch)?;
        Ok(())
    }

    fn flush(&self) -> Result<(), StoreError> {
        self.db.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_record_has_a_tag_of_its_own() {
        let mut tags = tag::ALL.to_vec();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(
            tags.len(),
            tag::ALL.len(),
            "two kinds of record share a tag"
        );
    }

    #[test]
    fn prefix_scans_stop_at_the_prefix_and_batches_apply_in_order() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let store = SledStore::open_in(&db, "t").unwrap();
        let mut w = Writes::default();
        for k in [&b"a\xff"[..], b"a\xff\xff", b"a", b"b", b"\xff\xff"] {
            w.insert(k.to_vec(), k);
        }
        w.remove(b"b".to_vec());
        w.insert(b"b".to_vec(), b"again");
        store.apply(w).unwrap();
        let keys =
            |p: &[u8]| -> Vec<Vec<u8>> { store.scan_prefix(p).map(|kv| kv.unwrap().0).collect() };
        assert_eq!(keys(b"a\xff"), [b"a\xff".to_vec(), b"a\xff\xff".to_vec()]);
        assert_eq!(keys(b"a").len(), 3);
        assert_eq!(keys(b"\xff"), [b"\xff\xff".to_vec()]);
        assert_eq!(store.get(b"b").unwrap().as_deref(), Some(&b"again"[..]));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff"), None);
    }
}
