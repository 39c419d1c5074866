//! The state as earlier versions kept parts of it in the store, read
//! where this version reads its own files: the outbox as store keys (gone
//! at the next checkpoint), and documents' URLs and judgements as records
//! (read for as long as the crawl lives).

use nearcrawl_index::Judgement;

use super::{State, corrupt};
use crate::embedded::outbox::Block;
use crate::embedded::store::{Store, StoreError, Writes, be_u64, key};
use crate::sink::Outcome;

use crate::embedded::store::tag::{DOC, OLD_OUTBOX};

/// The outbox entries of an earlier version, in order, as blocks.
pub(super) fn old_outbox(store: &dyn Store) -> Result<Vec<Block>, StoreError> {
    let mut blocks = Vec::new();
    for item in store.scan_prefix(&[OLD_OUTBOX]) {
        let (k, v) = item?;
        let unpacked = v.get(..4).and_then(|n| {
            let n = u32::from_be_bytes(n.try_into().ok()?) as usize;
            zstd::bulk::decompress(&v[4..], n).ok()
        });
        // Losing these silently would lose pages: say so instead.
        let block = unpacked
            .and_then(|b| Outcome::decode_all(&b))
            .ok_or_else(|| corrupt(format!("outbox entry {} is unreadable", be_u64(&k[1..]))))?;
        blocks.push(Block {
            docs: Vec::new(),
            tails: Vec::new(),
            outcomes: block,
        });
    }
    Ok(blocks)
}

/// Removes them, in `batch` (a checkpoint: their outcomes are written).
pub(super) fn remove_old_outbox(store: &dyn Store, batch: &mut Writes) -> Result<(), StoreError> {
    for kv in store.scan_prefix(&[OLD_OUTBOX]) {
        batch.remove(kv?.0);
    }
    Ok(())
}

pub(super) fn has_old_docs(store: &dyn Store) -> bool {
    store.scan_prefix(&[DOC]).next().is_some()
}

/// A document's URL from its record of an earlier version.
pub(super) fn old_doc_url(store: &dyn Store, doc: u64) -> Result<Option<String>, StoreError> {
    Ok(store.get(&key(DOC, &doc.to_be_bytes()))?.and_then(|v| {
        let n = u16::from_be_bytes(v.get(..2)?.try_into().ok()?) as usize;
        Some(String::from_utf8_lossy(v.get(2..2 + n)?).into_owned())
    }))
}

pub(super) fn old_doc_exists(store: &dyn Store, doc: u64) -> bool {
    store
        .contains(&key(DOC, &doc.to_be_bytes()))
        .unwrap_or(false)
}

impl State {
    /// Documents from `first` on whose records carry their judgements
    /// (written by earlier versions; now the outbox carries them).
    pub fn docs_from(
        &self,
        first: u64,
    ) -> impl Iterator<Item = Result<(u64, Judgement), StoreError>> + '_ {
        self.store
            .range(&key(DOC, &first.to_be_bytes()), Some(&[DOC + 1][..]))
            .map(|item| {
                let (k, v) = item?;
                let doc = be_u64(&k[1..]);
                let url_len = v
                    .get(..2)
                    .map_or(0, |n| u16::from_be_bytes([n[0], n[1]]) as usize);
                // Nothing after the URL: a record of this version.
                let Some(rest) = v.get(2 + url_len..).filter(|r| !r.is_empty()) else {
                    return Ok(None);
                };
                Judgement::from_bytes(rest)
                    .map(|j| Some((doc, j)))
                    .ok_or_else(|| corrupt(format!("document {doc} is unreadable")))
            })
            .filter_map(Result::transpose)
    }
}
