//! The shared gate on a real 3-node Redis Cluster on loopback: workers
//! judging at the same time get the verdicts one machine gives judging the
//! pages in the log's order, every planted copy is caught once, a worker
//! that reopens its replica goes on where it flushed it, and a node killed
//! and restarted in the middle changes nothing.
//!
//! Needs `redis-server` and `redis-cli` (Debian's `redis-server` and
//! `redis-tools`, which `.ci/run` installs).

use nearcrawl_tests::redis_cluster as common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use nearcrawl_cluster::{ClusterError, LogId, SharedGate};
use nearcrawl_index::{DedupConfig, Doc, Fingerprinter, Verdict};

use common::Cluster;

const WORKERS: usize = 3;
/// The log's key for the crawl named "test" (one hash slot).
const LOG: &str = "{test:gate}:log";

/// Originals, each with a near copy (1% of its words changed: close enough
/// for the gate's simhash check on 300 words) and an exact one, shuffled.
/// A page's request id is its index.
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
    for i in (1..docs.len()).rev() {
        docs.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    docs
}

async fn gate(nodes: &[String], dir: &Path, name: &str) -> SharedGate {
    let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
    SharedGate::open(&urls, "test", &dir.join(name), DedupConfig::default())
        .await
        .unwrap()
}

fn fingerprinter() -> Fingerprinter {
    Fingerprinter::new(&DedupConfig::default()).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// (place, group, verdict) of every page, judged by [`WORKERS`] workers at
/// once, each with its share of the pages; on a thread of its own, so the
/// caller can disturb the cluster meanwhile.
fn judge_on_workers(
    nodes: Vec<String>,
    tmp: PathBuf,
    docs: Vec<(usize, String)>,
) -> JoinHandle<Vec<(LogId, usize, Verdict)>> {
    std::thread::spawn(move || {
        runtime().block_on(async {
            let mut tasks = Vec::new();
            for w in 0..WORKERS {
                let mine: Vec<(u64, usize, String)> = (w..docs.len())
                    .step_by(WORKERS)
                    .map(|i| (i as u64, docs[i].0, docs[i].1.clone()))
                    .collect();
                let nodes = nodes.clone();
                let tmp = tmp.clone();
                tasks.push(tokio::spawn(async move {
                    let mut fingerprinter = fingerprinter();
                    let name = format!("worker{w}");
                    let mut shared = gate(&nodes, &tmp, &name).await;
                    let mut out = Vec::new();
                    for (k, (request, group, text)) in mine.iter().enumerate() {
                        let p = fingerprinter.prepare(Doc::from(text));
                        let (place, decision) =
                            shared.judge(*request, &url_of(*request), &p).await.unwrap();
                        out.push((place, *group, decision.verdict));
                        if w == 0 && k == mine.len() / 3 {
                            // Worker 0 stops with its last judgings not
                            // flushed, opens its replica again, and judges
                            // those pages again: same places, same answers.
                            shared.flush().unwrap();
                            let again: Vec<_> = mine[k + 1..].iter().take(5).collect();
                            for (request, _, text) in &again {
                                let p = fingerprinter.prepare(Doc::from(text));
                                shared.judge(*request, &url_of(*request), &p).await.unwrap();
                            }
                            drop(shared);
                            shared = gate(&nodes, &tmp, &name).await;
                        }
                    }
                    shared.flush().unwrap();
                    out
                }));
            }
            let mut all = Vec::new();
            for t in tasks {
                all.extend(t.await.unwrap());
            }
            all
        })
    })
}

/// One machine: a fresh replica applying the whole log in order; the
/// (place, request, verdict) of every page it judged.
fn one_machine(nodes: &[String], tmp: &Path, name: &str) -> Vec<(LogId, u64, Verdict)> {
    runtime().block_on(async {
        let mut one = gate(nodes, tmp, name).await;
        let mut seen = Vec::new();
        one.catch_up(|id, request, d| seen.push((id, request, d.verdict)))
            .await
            .unwrap();
        seen
    })
}

/// Every worker's verdict is one machine's, and in every planted group the
/// first page in the log is new and the other two are copies of it.
fn check(judged: &[(LogId, usize, Verdict)], reference: &[(LogId, u64, Verdict)]) {
    assert_eq!(judged.len(), reference.len(), "pages judged once each");
    let by_place: HashMap<LogId, Verdict> = reference.iter().map(|r| (r.0, r.2)).collect();
    for (place, _, verdict) in judged {
        assert_eq!(
            by_place.get(place),
            Some(verdict),
            "entry {place}: the worker's verdict is not one machine's"
        );
    }
    let mut groups: HashMap<usize, Vec<(LogId, Verdict)>> = HashMap::new();
    for (place, group, verdict) in judged {
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
}

#[test]
fn workers_judging_at_once_agree_with_one_machine_in_log_order() {
    let cluster = Cluster::start(3);
    let tmp = tempdir("shared-gate");
    let docs = planted(60);
    let judged = judge_on_workers(cluster.urls(), tmp.clone(), docs.clone())
        .join()
        .unwrap();

    // An append sent twice (its reply lost) is in the log twice; no
    // replica judges it again.
    let first = fingerprinter().prepare(Doc::from(&docs[0].1));
    let nodes = cluster.urls();
    let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
    runtime().block_on(async {
        let mut con = redis::cluster::ClusterClient::new(urls.clone())
            .unwrap()
            .get_async_connection()
            .await
            .unwrap();
        let _: String = redis::cmd("XADD")
            .arg(LOG)
            .arg("*")
            .arg("q")
            .arg(&0u64.to_be_bytes()[..])
            .arg("p")
            .arg(first.to_bytes())
            .query_async(&mut con)
            .await
            .unwrap();
    });
    let reference = one_machine(&cluster.urls(), &tmp, "one");
    check(&judged, &reference);

    // A page judged again under its request id gets its first answer.
    let (place, decision, original) = runtime().block_on(async {
        let mut late = gate(&nodes, &tmp, "late").await;
        let (place, decision) = late.judge(0, &url_of(0), &first).await.unwrap();
        (place, decision, late.url_of(place.doc()).unwrap())
    });
    let (first_place, _, first_verdict) = reference.iter().find(|r| r.1 == 0).unwrap();
    assert_eq!((place, decision.verdict), (*first_place, *first_verdict));
    assert_eq!(
        original.as_deref(),
        Some(url_of(0).as_str()),
        "every replica names a new page's URL"
    );

    // A replica belongs to one crawl's log.
    let other = runtime().block_on(async {
        SharedGate::open(&urls, "other", &tmp.join("late"), DedupConfig::default()).await
    });
    let err = other.expect_err("another crawl's replica is refused");
    assert!(err.to_string().contains("not {other:gate}:log"), "{err}");
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn a_node_killed_and_restarted_while_workers_judge_changes_nothing() {
    let mut cluster = Cluster::start_durable(3);
    let tmp = tempdir("shared-gate-kill");
    let docs = planted(150);
    let workers = judge_on_workers(cluster.urls(), tmp.clone(), docs);
    // The node that holds the log, killed once the workers are well under
    // way: every judging waits for it.
    let node = cluster.node_of(LOG);
    let start = std::time::Instant::now();
    while cluster.log_len(node, LOG) < 50 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the workers never got going"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    cluster.kill(node);
    std::thread::sleep(Duration::from_secs(1));
    cluster.restart(node);
    assert!(
        cluster.log_len(node, LOG) < 400,
        "the workers were done before the node came back"
    );
    let judged = workers.join().unwrap();
    let reference = one_machine(&cluster.urls(), &tmp, "one");
    check(&judged, &reference);
    std::fs::remove_dir_all(&tmp).ok();
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nearcrawl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The URL a test page is judged under.
fn url_of(request: u64) -> String {
    format!("http://h/{request}")
}

#[test]
fn the_log_is_trimmed_to_what_every_replica_flushed_and_a_late_replica_starts_from_a_copy() {
    let cluster = Cluster::start(3);
    let tmp = tempdir("shared-gate-trim");
    let nodes = cluster.urls();
    let log = "{test:gate}:log";
    runtime().block_on(async {
        let (mut a, mut b) = (gate(&nodes, &tmp, "a").await, gate(&nodes, &tmp, "b").await);
        a.join("a").await.unwrap();
        b.join("b").await.unwrap();
        let mut fp = fingerprinter();
        for i in 0..20u64 {
            let text = format!("page {i} {}", "words of its own ".repeat(i as usize + 3));
            a.judge(i, &url_of(i), &fp.prepare(Doc::from(text.as_str())))
                .await
                .unwrap();
        }
        let node = cluster.node_of(log);
        assert_eq!(cluster.log_len(node, log), 20);
        a.flush().unwrap();
        a.trim().await.unwrap();
        assert_eq!(
            cluster.log_len(node, log),
            20,
            "b has applied nothing: nothing is cut"
        );
        b.catch_up(|_, _, _| {}).await.unwrap();
        b.flush().unwrap();
        b.trim().await.unwrap();
        assert!(
            cluster.log_len(node, log) <= 1,
            "both replicas hold every entry"
        );
        // A replica that has applied nothing cannot join any more; it asks
        // for a copy of a running worker's replica, and joins with it.
        let mut late = gate(&nodes, &tmp, "late").await;
        let refused = late.join("late").await;
        assert!(
            matches!(&refused, Err(ClusterError::Trimmed { .. })),
            "{refused:?}"
        );
        drop(late);
        let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
        let wait = Duration::from_secs(30);
        let late_dir = tmp.join("late");
        let receive = SharedGate::receive_snapshot(&urls, "test", &late_dir, "late", wait);
        let send = async {
            loop {
                if let Some(joiner) = a.snapshot_wanted().await.unwrap() {
                    let file = tmp.join("a.sending");
                    a.dump_for(&joiner, &file).await.unwrap();
                    a.send_snapshot(joiner, file).await.unwrap();
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let (received, ()) = tokio::join!(receive, send);
        received.unwrap();
        let mut late = gate(&nodes, &tmp, "late").await;
        late.join("late").await.unwrap();
        assert_eq!(late.applied(), a.applied());
        assert_eq!(late.replica().indexed(), a.replica().indexed());
        // It judges as the others do: a copy of a page judged before it
        // joined is a duplicate, its original named by URL as on `a`.
        let text = format!("page 7 {}", "words of its own ".repeat(10));
        let (_, copy) = late
            .judge(100, &url_of(100), &fp.prepare(Doc::from(text.as_str())))
            .await
            .unwrap();
        let (of, ..) = copy.verdict.duplicate_of().expect("a duplicate");
        let original = late.url_of(of).unwrap();
        assert!(original.is_some());
        assert_eq!(original, a.url_of(of).unwrap());
        // Registered where the copy stood: the log is kept for it.
        late.flush().unwrap();
        late.trim().await.unwrap();
        assert!(cluster.log_len(node, log) >= 1);
    });
}
