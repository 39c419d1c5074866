//! The shared gate on a real 3-node Redis Cluster on loopback: workers
//! judging at the same time get the verdicts one machine gives judging the
//! pages in the log's order, and every planted copy is caught once.
//!
//! Needs `redis-server` and `redis-cli` (Debian's `redis-server` and
//! `redis-tools`, which `.ci/run` installs).

mod common;

use std::collections::HashMap;

use nearcrawl_cluster::{LogId, SharedGate};
use nearcrawl_index::{DedupConfig, Deduper, Doc, Verdict};

use common::Cluster;

/// Originals, each with a near copy (1% of its words changed: close enough
/// for the gate's simhash check on 300 words) and an exact one.
fn planted(originals: usize) -> Vec<(usize, String)> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut docs = Vec::new();
    for group in 0..originals {
        let words: Vec<String> = (0..300).map(|_| format!("w{}", next() % 5000)).collect();
        let mut near = words.clone();
        for _ in 0..3 {
            let i = (next() % 300) as usize;
            near[i] = format!("edit{}", next() % 5000);
        }
        docs.push((group, words.join(" ")));
        docs.push((group, near.join(" ")));
        docs.push((group, words.join(" ")));
    }
    // Interleave the groups so copies land on different workers, in any order.
    for i in (1..docs.len()).rev() {
        docs.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    docs
}

fn replica(dir: &std::path::Path, name: &str) -> Deduper {
    Deduper::open(dir.join(name), DedupConfig::default()).unwrap()
}

#[test]
fn workers_judging_at_once_agree_with_one_machine_in_log_order() {
    let cluster = Cluster::start(3);
    let nodes = cluster.urls();
    let tmp = tempdir("shared-gate");
    let docs = planted(60);
    let workers = 3;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    // Three workers, each judging its share of the pages as fast as it can.
    let judged: Vec<(LogId, usize, Verdict)> = rt.block_on(async {
        let mut tasks = Vec::new();
        for w in 0..workers {
            let mine: Vec<(usize, String)> =
                docs.iter().skip(w).step_by(workers).cloned().collect();
            let nodes = nodes.clone();
            let gate = replica(&tmp, &format!("worker{w}"));
            tasks.push(tokio::spawn(async move {
                let mut fingerprinter = gate.fingerprinter();
                let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
                let mut shared = SharedGate::open(&urls, "test", gate).await.unwrap();
                let mut out = Vec::new();
                for (group, text) in mine {
                    let p = fingerprinter.prepare(Doc::from(&text));
                    let (place, j) = shared.judge(&p).await.unwrap();
                    out.push((place, group, j.decision.verdict));
                }
                out
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    });
    assert_eq!(judged.len(), docs.len());

    // One machine: a fresh replica applying the whole log in order.
    let reference: Vec<(LogId, Verdict)> = rt.block_on(async {
        let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
        let mut one = SharedGate::open(&urls, "test", replica(&tmp, "one"))
            .await
            .unwrap();
        let mut seen = Vec::new();
        let n = one
            .catch_up(|id, j| seen.push((id, j.decision.verdict)))
            .await
            .unwrap();
        assert_eq!(n, docs.len());
        seen
    });
    let by_place: HashMap<LogId, Verdict> = reference.iter().copied().collect();
    for (place, _, verdict) in &judged {
        assert_eq!(
            by_place.get(place),
            Some(verdict),
            "entry {place}: the worker's verdict is not one machine's"
        );
    }

    // The planted truth: in every group the first page in the log is new
    // and the other two are copies of it.
    let mut groups: HashMap<usize, Vec<(LogId, Verdict)>> = HashMap::new();
    for (place, group, verdict) in &judged {
        groups.entry(*group).or_default().push((*place, *verdict));
    }
    for (group, mut pages) in groups {
        pages.sort_by_key(|p| p.0);
        assert_eq!(pages[0].1, Verdict::New, "group {group}: {pages:?}");
        for (_, verdict) in &pages[1..] {
            let of = match verdict {
                Verdict::Exact { of } | Verdict::Near { of, .. } => *of,
                Verdict::New => panic!("group {group}: a copy kept: {pages:?}"),
            };
            assert_eq!(of, pages[0].0.doc(), "group {group}: {pages:?}");
        }
    }
    std::fs::remove_dir_all(&tmp).ok();
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nearcrawl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
