//! The index against a brute-force scan: no false negatives within k, no
//! reported match beyond k, on random and planted fingerprints.

use nearcrawl_index::{BandIndex, IndexConfig, IndexError, Match};
use nearcrawl_simhash::Fingerprint;
use proptest::prelude::*;

fn tempdir(tag: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "nearcrawl-index-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn brute_force(held: &[(u64, u64)], q: u64, k: u32) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    for &(fp, doc) in held {
        let d = (fp ^ q).count_ones();
        if d <= k && !out.iter().any(|m| m.fingerprint.0 == fp) {
            out.push(Match {
                doc,
                fingerprint: Fingerprint(fp),
                distance: d,
            });
        }
    }
    out.sort_by_key(|m| (m.distance, m.doc));
    out
}

/// `fp` with exactly `bits` distinct bits flipped, chosen by `seed`.
fn flip(fp: u64, bits: u32, mut seed: u64) -> u64 {
    let mut out = fp;
    let mut flipped = 0;
    while flipped < bits {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let bit = 1u64 << (seed >> 58);
        if (out ^ fp) & bit == 0 {
            out ^= bit;
            flipped += 1;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn matches_brute_force(
        k in 0u32..=8,
        blocks_extra in 0u32..=2,
        base in proptest::collection::vec(any::<u64>(), 1..60),
        seeds in proptest::collection::vec(any::<u64>(), 40),
    ) {
        let blocks = Some(k + 1 + blocks_extra.min(63 - k));
        let dir = tempdir("prop");
        let mut index = BandIndex::open(&dir, IndexConfig { k, capacity: 1000, blocks }).unwrap();
        let mut held = Vec::new();
        // Planted neighbours at exactly 0..=k+1 bits from held fingerprints.
        let mut fps: Vec<u64> = base.clone();
        for (i, &s) in seeds.iter().enumerate() {
            let bits = (s % u64::from(k + 2)) as u32;
            fps.push(flip(base[i % base.len()], bits, s));
        }
        for (doc, &fp) in fps.iter().enumerate() {
            let q = Fingerprint(fp);
            let want = brute_force(&held, fp, k);
            prop_assert_eq!(index.query(q), want.clone(), "k={} fp={:016x}", k, fp);
            let got = index.check_insert(q, doc as u64);
            prop_assert_eq!(got, want.first().copied());
            if got.is_none() {
                held.push((fp, doc as u64));
            }
        }
        drop(index);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn reopen_keeps_flushed_fingerprints_and_rejects_other_layouts() {
    let dir = tempdir("reopen");
    let config = IndexConfig {
        k: 3,
        capacity: 10_000,
        blocks: None,
    };
    let fps: Vec<u64> = (0..5000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    {
        let mut index = BandIndex::open(&dir, config).unwrap();
        for (doc, &fp) in fps.iter().enumerate() {
            index.insert(Fingerprint(fp), doc as u64);
        }
        assert!(
            !index.insert(Fingerprint(fps[0]), 99_999),
            "same fingerprint keeps its first doc"
        );
        index.flush().unwrap();
    }
    let index = BandIndex::open(&dir, config).unwrap();
    assert_eq!(index.len(), fps.len());
    for (doc, &fp) in fps.iter().enumerate() {
        let m = index.query(Fingerprint(flip(fp, 2, doc as u64)));
        assert!(
            m.iter().any(|m| m.doc == doc as u64 && m.distance == 2),
            "doc {doc}"
        );
    }
    drop(index);
    for bad in [
        IndexConfig { k: 4, ..config },
        IndexConfig {
            blocks: Some(5),
            ..config
        },
    ] {
        match BandIndex::open(&dir, bad) {
            Err(IndexError::LayoutMismatch { stored, requested }) => {
                assert!(
                    stored.contains("k=3") && stored != requested,
                    "{stored} / {requested}"
                );
            }
            other => panic!("expected a layout mismatch, got {other:?}"),
        }
    }
    assert!(matches!(
        BandIndex::open(
            tempdir("bad"),
            IndexConfig {
                k: 3,
                capacity: 1,
                blocks: Some(2)
            }
        ),
        Err(IndexError::Config(_))
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merges_of_recent_inserts_keep_every_fingerprint() {
    let dir = tempdir("merge");
    let mut index = BandIndex::open(
        &dir,
        IndexConfig {
            k: 3,
            capacity: 200_000,
            blocks: None,
        },
    )
    .unwrap();
    let n = 150_000u64;
    let fps: Vec<u64> = (0..n)
        .map(|i| nearcrawl_simhash::hash::fmix64(i + 7))
        .collect();
    let mut merged_seen = false;
    for (doc, &fp) in fps.iter().enumerate() {
        assert!(index.insert(Fingerprint(fp), doc as u64));
        merged_seen |= index.recent_len() < index.len();
        // Mid-stream queries see both merged and recent parts.
        if doc % 9973 == 0 {
            let q = flip(fps[doc / 2], 3, doc as u64);
            let m = index.query(Fingerprint(q));
            assert!(
                m.iter()
                    .any(|m| m.doc == (doc / 2) as u64 && m.distance == 3),
                "doc {doc}"
            );
        }
    }
    assert!(merged_seen, "no merge happened");
    assert_eq!(index.len(), n as usize);
    let held: Vec<(u64, u64)> = fps
        .iter()
        .enumerate()
        .map(|(d, &f)| (f, d as u64))
        .collect();
    for i in 0..300u64 {
        let q = if i % 2 == 0 {
            flip(fps[(i * 491) as usize], (i % 4) as u32, i)
        } else {
            fmix(i)
        };
        assert_eq!(
            index.query(Fingerprint(q)),
            brute_force(&held, q, 3),
            "query {i}"
        );
    }
    index.flush().unwrap();
    drop(index);
    let index = BandIndex::open(
        &dir,
        IndexConfig {
            k: 3,
            capacity: 200_000,
            blocks: None,
        },
    )
    .unwrap();
    assert_eq!(index.len(), n as usize);
    for i in (0..n).step_by(997) {
        assert_eq!(index.query(Fingerprint(fps[i as usize]))[0].doc, i);
    }
    drop(index);
    let _ = std::fs::remove_dir_all(&dir);
}

fn fmix(i: u64) -> u64 {
    nearcrawl_simhash::hash::fmix64(i ^ 0xdead_beef)
}

/// sled lets go of its file lock a moment after the last handle is dropped;
/// reopening at once must wait for it, not fail.
#[test]
fn reopen_right_after_drop() {
    let dir = tempdir("race");
    let config = IndexConfig {
        k: 3,
        capacity: 10_000,
        blocks: None,
    };
    let mut total = 0u64;
    for round in 0..30 {
        let mut index =
            BandIndex::open(&dir, config).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(index.len() as u64, total, "round {round}");
        for i in 0..500u64 {
            index.insert(Fingerprint(fmix(total + i)), total + i);
        }
        total += 500;
        index.flush().unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
