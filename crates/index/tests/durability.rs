//! After `flush()` returns, a crash loses nothing: a child process inserts
//! and flushes in a loop, reports each flush, and is killed with SIGKILL in
//! the middle of its inserts; the reopened index must hold every flushed
//! fingerprint. Three rounds, each resuming the same index.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use nearcrawl_index::{BandIndex, IndexConfig};
use nearcrawl_simhash::Fingerprint;

const CHILD_ENV: &str = "NEARCRAWL_INDEX_CRASH_CHILD";
const BATCH: u64 = 700;
const CONFIG: IndexConfig = IndexConfig {
    k: 3,
    capacity: 100_000,
    blocks: None,
};

fn fp_of(doc: u64) -> Fingerprint {
    Fingerprint(nearcrawl_simhash::hash::fmix64(doc + 1))
}

/// The child: insert forever from where the index stands, flushing every
/// BATCH inserts and saying so only after `flush` has returned.
fn child(dir: &str) {
    let mut index = BandIndex::open(dir, CONFIG).unwrap();
    let start = index.len() as u64;
    for doc in start.. {
        index.insert(fp_of(doc), doc);
        if (doc + 1) % BATCH == 0 {
            index.flush().unwrap();
            println!("flushed {}", doc + 1);
        }
        if doc > start + 10_000_000 {
            break;
        }
    }
}

#[test]
fn sigkill_after_flush_loses_nothing() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let dir = std::env::temp_dir().join(format!("nearcrawl-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut flushed = 0u64;
    for (round, flushes) in [3u64, 5, 8].into_iter().enumerate() {
        let mut kid = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sigkill_after_flush_loses_nothing",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(kid.stdout.take().unwrap());
        let mut seen = 0;
        for line in out.lines() {
            let line = line.unwrap();
            if let Some(n) = line.strip_prefix("flushed ") {
                flushed = n.trim().parse().unwrap();
                seen += 1;
                if seen == flushes {
                    break;
                }
            }
        }
        assert_eq!(seen, flushes, "round {round}: child stopped early");
        kid.kill().unwrap(); // SIGKILL, while it inserts the next batch
        kid.wait().unwrap();

        let index = BandIndex::open(&dir, CONFIG).unwrap();
        assert!(
            index.len() as u64 >= flushed,
            "round {round}: {} < {flushed}",
            index.len()
        );
        for doc in 0..flushed {
            let m = index.query(fp_of(doc));
            assert_eq!(
                m.first().map(|m| (m.doc, m.distance)),
                Some((doc, 0)),
                "round {round}: doc {doc}"
            );
        }
    }
    assert!(flushed >= (3 + 5 + 8) * BATCH);
    let _ = std::fs::remove_dir_all(&dir);
}
