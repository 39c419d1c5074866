//! Converting gate state of earlier versions.

use std::collections::HashMap;

use fnv::FnvBuildHasher;
use nearcrawl_simhash::Fingerprint;

use crate::error::IndexError;
use crate::record::{DocRecord, SlotRecord};

/// "gate 2" kept records by document (`dedup.docs`), the fingerprints in a
/// simhash band index (`dedup.simhash.*`, and `dedup.same_fingerprint` for
/// documents whose fingerprint an earlier one had) and the content hashes
/// as keys of `dedup.exact`. Hands `push` one slot record per document, in
/// document order; the caller flushes them, then drops the old trees
/// ([`drop_gate2_trees`]). A crash before the flush leaves no records and
/// the old trees in place, and the conversion starts over.
pub(crate) fn gate2_records(
    db: &sled::Db,
    mut push: impl FnMut(SlotRecord) -> Result<(), IndexError>,
) -> Result<(), IndexError> {
    let docs = db.open_tree("dedup.docs")?;
    let mut fingerprint: HashMap<u64, u64, FnvBuildHasher> = HashMap::default();
    for (fp, doc) in crate::band_index::log_entries(db, "dedup.simhash")? {
        fingerprint.entry(doc).or_insert(fp);
    }
    let same = db.open_tree("dedup.same_fingerprint")?;
    for key in same.iter().keys() {
        let key = key?;
        fingerprint.insert(
            part(&key, 8, "same-fingerprint")?,
            part(&key, 0, "same-fingerprint")?,
        );
    }
    let exact = db.open_tree("dedup.exact")?;
    let mut content_hash: HashMap<u64, u128, FnvBuildHasher> = HashMap::default();
    for key in exact.iter().keys() {
        let key = key?;
        let hash = key
            .get(..16)
            .and_then(|b| b.try_into().ok())
            .map(u128::from_be_bytes)
            .ok_or_else(|| IndexError::Corrupt(format!("exact-duplicate key {key:?}")))?;
        content_hash.insert(part(&key, 16, "exact-duplicate")?, hash);
    }
    for entry in docs.iter() {
        let (key, value) = entry?;
        let doc = part(&key, 0, "document")?;
        let record = DocRecord::from_bytes(&value)
            .ok_or_else(|| IndexError::Corrupt(format!("record of document {doc}")))?;
        let (Some(&fp), Some(&hash)) = (fingerprint.get(&doc), content_hash.get(&doc)) else {
            return Err(IndexError::Corrupt(format!(
                "document {doc} has no fingerprint or content hash"
            )));
        };
        let r = SlotRecord {
            doc,
            fingerprint: Fingerprint(fp),
            text_hash: hash as u64,
            record,
        };
        push(r)?;
    }
    Ok(())
}

/// Drops the trees of "gate 2" once their records are converted.
pub(crate) fn drop_gate2_trees(db: &sled::Db) -> Result<(), IndexError> {
    for tree in [
        "dedup.docs",
        "dedup.exact",
        "dedup.same_fingerprint",
        "dedup.simhash.log",
        "dedup.simhash.meta",
    ] {
        db.drop_tree(tree)?;
    }
    Ok(())
}

/// The big-endian u64 at `at` in a key; a short key is corrupt state.
fn part(key: &[u8], at: usize, what: &str) -> Result<u64, IndexError> {
    key.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| IndexError::Corrupt(format!("{what} key is {} bytes", key.len())))
}

#[cfg(test)]
mod tests {
    use crate::band_index::{BandIndex, IndexConfig};
    use crate::dedup::{DedupConfig, Deduper};
    use crate::verdict::Verdict;

    fn article(seed: u64) -> String {
        (0..400)
            .map(|i| {
                format!(
                    "w{}",
                    nearcrawl_simhash::hash::fmix64(seed * 1000 + i) % 5000
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// State as "gate 2" wrote it: records by document, fingerprints in the
    /// simhash band index (one document per fingerprint, the others in
    /// `same_fingerprint`), content hashes as keys.
    #[test]
    fn gate2_state_is_converted_and_still_finds_its_documents() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-upgrade-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = crate::store::open_db(&dir).unwrap();
        let config = DedupConfig::default();
        let texts = [article(1), article(2), article(1)];
        {
            let mut fresh = Deduper::open(
                std::env::temp_dir().join("nearcrawl-upgrade-scratch"),
                config,
            )
            .unwrap();
            let meta = db.open_tree("dedup.meta").unwrap();
            let settings = format!(
                "gate 2; simhash shingle={} weighting={:?}; sketch shingle={}; short={}",
                config.simhash.shingle,
                config.simhash.weighting,
                config.sketch_shingle,
                config.short_features
            );
            meta.insert("settings", settings.as_bytes()).unwrap();
            let mut index = BandIndex::open_in(
                &db,
                "dedup.simhash",
                IndexConfig {
                    k: 8,
                    capacity: 1000,
                    blocks: None,
                },
            )
            .unwrap();
            let same = db.open_tree("dedup.same_fingerprint").unwrap();
            for (doc, text) in texts.iter().enumerate() {
                let doc = doc as u64 + 10;
                let j = fresh.judge(text.as_str(), |_| true).unwrap();
                let record = j.record.as_ref().unwrap();
                db.open_tree("dedup.docs")
                    .unwrap()
                    .insert(doc.to_be_bytes(), record.to_bytes())
                    .unwrap();
                let mut key = j.decision.content_hash.to_be_bytes().to_vec();
                key.extend_from_slice(&doc.to_be_bytes());
                db.open_tree("dedup.exact")
                    .unwrap()
                    .insert(key, &[])
                    .unwrap();
                let fp = j.decision.simhash.fingerprint;
                if !index.insert(fp, doc) {
                    let mut key = fp.0.to_be_bytes().to_vec();
                    key.extend_from_slice(&doc.to_be_bytes());
                    same.insert(key, &[]).unwrap();
                }
            }
            index.flush().unwrap();
        }
        let mut d = Deduper::open_in(&db, &dir, config).unwrap();
        assert_eq!(d.indexed(), 3);
        assert!(!db.tree_names().iter().any(|n| n.as_ref() == b"dedup.docs"));
        assert_eq!(
            d.check_insert(20, article(2).as_str()).unwrap().verdict,
            Verdict::Exact { of: 11 }
        );
        let edited = article(2).replacen("w", "changed", 5);
        assert!(matches!(
            d.check_insert(21, edited.as_str()).unwrap().verdict,
            Verdict::Near { of: 11, distance, .. } if distance <= 8
        ));
        drop(d);
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join("nearcrawl-upgrade-scratch"));
    }
}
