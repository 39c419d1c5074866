//! The shared frontier on a 3-node Redis Cluster on loopback: links queued
//! once, leases spaced by each key's delay whoever holds the partition, a
//! dead worker's URLs and partitions passed on, and three workers (one
//! killed) crawling a link graph with every page counted exactly once.
//!
//! Needs `redis-server` and `redis-cli` (installed by `.ci/run`).

use nearcrawl_tests::redis_cluster as common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nearcrawl_cluster::{
    ClusterError, FrontierConfig, Lease, Leased, Link, Partitions, SharedFrontier,
};
use url::Url;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn config(delay_ms: u64) -> FrontierConfig {
    FrontierConfig {
        partitions: 16,
        seen_buckets: 4,
        flight: Duration::from_millis(1500),
        delay: Duration::from_millis(delay_ms),
        start_slack: Duration::from_millis(10),
        per_key_concurrency: 1,
        ..FrontierConfig::default()
    }
}

/// Leases once from every partition held; acknowledges each URL at once
/// when `ack`. Returns what was leased.
async fn lease_all(
    frontier: &SharedFrontier,
    held: &[Lease],
    ack: bool,
) -> Result<Vec<Leased>, ClusterError> {
    let mut out = Vec::new();
    for lease in held {
        for leased in frontier.lease(lease, 64).await?.urls {
            if ack {
                assert!(
                    frontier
                        .ack(lease, &leased, Some(Duration::ZERO), None)
                        .await?
                        .done
                );
            }
            out.push(leased);
        }
    }
    Ok(out)
}

/// Links to `urls`, all of politeness key `key`, at depth 0.
fn on_key<'a>(key: &'a str, urls: &'a [String]) -> Vec<Link<'a>> {
    urls.iter().map(|url| Link { key, url, depth: 0 }).collect()
}

/// The frontier of crawl `crawl` (of one partition) and worker "a"
/// holding that partition.
async fn holding_one_partition(
    nodes: &[&str],
    crawl: &str,
    cfg: FrontierConfig,
) -> (SharedFrontier, Partitions, Vec<Lease>) {
    let mut parts = Partitions::open(nodes, crawl, "a", Duration::from_secs(10))
        .await
        .unwrap();
    let frontier = SharedFrontier::open(nodes, crawl, cfg).await.unwrap();
    let mut held = Vec::new();
    parts.balance(&mut held, 1).await.unwrap();
    (frontier, parts, held)
}

/// Per key, the server times of its leases in order.
fn starts_by_key(leased: &[Leased]) -> BTreeMap<String, Vec<u64>> {
    let mut by_key: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for l in leased {
        by_key
            .entry(l.key.clone())
            .or_default()
            .push(l.leased_at_ms);
    }
    for starts in by_key.values_mut() {
        starts.sort_unstable();
    }
    by_key
}

fn least_gap(starts: &[u64]) -> u64 {
    starts
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(u64::MAX)
}

#[test]
fn links_are_queued_once_and_leased_no_closer_than_each_keys_delay() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    runtime().block_on(async {
        let cfg = config(150);
        let mut parts = Partitions::open(&nodes, "t1", "a", Duration::from_secs(10))
            .await
            .unwrap();
        let frontier = SharedFrontier::open(&nodes, "t1", cfg.clone())
            .await
            .unwrap();
        let mut held = Vec::new();
        assert!(parts.balance(&mut held, 16).await.unwrap().is_empty());
        assert_eq!(held.len(), 16, "the only worker holds every partition");

        let urls: Vec<(String, String)> = (0..4)
            .flat_map(|h| (0..5).map(move |i| (format!("h{h}"), format!("http://h{h}/{i}"))))
            .collect();
        let links: Vec<Link<'_>> = urls
            .iter()
            .map(|(key, url)| Link { key, url, depth: 1 })
            .collect();
        assert_eq!(frontier.add(&links).await.unwrap().queued, 20);
        assert_eq!(
            frontier.add(&links[..7]).await.unwrap().queued,
            0,
            "seen before"
        );
        assert_eq!(frontier.pending().await.unwrap(), 20);
        frontier
            .set_delay("h3", Duration::from_millis(400))
            .await
            .unwrap();

        let mut leased = Vec::new();
        while frontier.pending().await.unwrap() > 0 {
            leased.extend(lease_all(&frontier, &held, true).await.unwrap());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let got: HashSet<&str> = leased.iter().map(|l| l.url.as_str()).collect();
        assert_eq!((leased.len(), got.len()), (20, 20), "each URL leased once");
        for (key, starts) in starts_by_key(&leased) {
            let delay = if key == "h3" { 400 } else { 150 };
            assert!(least_gap(&starts) >= delay + 10, "{key}: {starts:?}");
        }
    });
}

#[test]
fn a_key_with_a_url_in_flight_rests_until_it_is_acknowledged() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    runtime().block_on(async {
        let mut parts = Partitions::open(&nodes, "t2", "a", Duration::from_secs(10))
            .await
            .unwrap();
        let frontier = SharedFrontier::open(&nodes, "t2", config(20))
            .await
            .unwrap();
        let mut held = Vec::new();
        parts.balance(&mut held, 16).await.unwrap();
        let links = [
            Link {
                key: "h",
                url: "http://h/1",
                depth: 0,
            },
            Link {
                key: "h",
                url: "http://h/2",
                depth: 0,
            },
        ];
        frontier.add(&links).await.unwrap();
        let first = lease_all(&frontier, &held, false).await.unwrap();
        assert_eq!(first.len(), 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            lease_all(&frontier, &held, false).await.unwrap().is_empty(),
            "the delay passed, but the key's one request is in flight"
        );
        let lease = held
            .iter()
            .find(|l| l.partition == first[0].partition)
            .unwrap();
        assert!(
            frontier
                .ack(lease, &first[0], Some(Duration::from_millis(100)), None)
                .await
                .unwrap()
                .done
        );
        assert!(
            frontier
                .ack(lease, &first[0], Some(Duration::from_millis(100)), None)
                .await
                .unwrap()
                .done,
            "an ack repeated"
        );
        let second = lease_all(&frontier, &held, false).await.unwrap();
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].url, "http://h/2");
        assert!(
            frontier
                .acked(first[0].partition, first[0].id)
                .await
                .unwrap()
        );
        assert!(
            !frontier
                .acked(second[0].partition, second[0].id)
                .await
                .unwrap()
        );
    });
}

#[test]
fn a_dead_workers_partitions_and_urls_pass_on_and_its_late_acks_are_refused() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let ttl = Duration::from_millis(800);
    runtime().block_on(async {
        let cfg = config(300);
        let mut a_parts = Partitions::open(&nodes, "t3", "a", ttl).await.unwrap();
        let a = SharedFrontier::open(&nodes, "t3", cfg.clone())
            .await
            .unwrap();
        let mut a_held = Vec::new();
        a_parts.balance(&mut a_held, 16).await.unwrap();
        let urls: Vec<(String, String)> = (0..6)
            .flat_map(|h| (0..2).map(move |i| (format!("h{h}"), format!("http://h{h}/{i}"))))
            .collect();
        let links: Vec<Link<'_>> = urls
            .iter()
            .map(|(key, url)| Link { key, url, depth: 0 })
            .collect();
        a.add(&links).await.unwrap();
        let taken = lease_all(&a, &a_held, false).await.unwrap();
        assert_eq!(taken.len(), 6, "one URL of each key");

        // a stops (killed): b waits for a's registration and leases to
        // lapse, then holds every partition with newer epochs.
        let mut b_parts = Partitions::open(&nodes, "t3", "b", ttl).await.unwrap();
        let b = SharedFrontier::open(&nodes, "t3", cfg.clone())
            .await
            .unwrap();
        let mut b_held = Vec::new();
        b_parts.balance(&mut b_held, 16).await.unwrap();
        assert!(b_held.len() <= 8, "a is alive: b takes at most half");
        for _ in 0..40 {
            tokio::time::sleep(ttl / 4).await;
            b_parts.balance(&mut b_held, 16).await.unwrap();
            if b_held.len() == 16 {
                break;
            }
        }
        assert_eq!(b_held.len(), 16, "a's partitions passed to b");

        // a may have sent a request up to the moment it died: a key it had
        // in flight waits a whole delay from b's takeover, though a's
        // leases are older than the delay.
        let first = lease_all(&b, &b_held, true).await.unwrap();
        assert!(first.is_empty(), "leased at the takeover: {first:?}");

        // b gets a's URLs back (a's acks would be refused), and every
        // key's schedule goes on from a's leases.
        let mut leased = taken.clone();
        while b.pending().await.unwrap() > 0 {
            leased.extend(lease_all(&b, &b_held, true).await.unwrap());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let b_urls: Vec<&str> = leased[6..].iter().map(|l| l.url.as_str()).collect();
        assert_eq!(b_urls.len(), 12, "a's 6 again, and the 6 never leased");
        for (key, starts) in starts_by_key(&leased) {
            assert!(least_gap(&starts) >= 310, "{key}: {starts:?}");
        }
        let a_lease = a_held
            .iter()
            .find(|l| l.partition == taken[0].partition)
            .unwrap();
        let late = a.ack(a_lease, &taken[0], None, None).await;
        assert!(matches!(late, Err(ClusterError::Stale { .. })), "{late:?}");
        assert!(!b.acked(taken[0].partition, taken[0].id).await.unwrap());
    });
}

/// The link graph of the simulated crawl: `hosts` hosts of `pages` pages;
/// page i links to the next page of its host and to a page of the next
/// host, so every page is reachable from page 0 of host 0.
fn links_of(url: &str, hosts: usize, pages: usize) -> Vec<(String, String)> {
    let rest = url.strip_prefix("http://h").unwrap();
    let (h, i) = rest.split_once('/').unwrap();
    let (h, i): (usize, usize) = (h.parse().unwrap(), i.parse().unwrap());
    let next_host = (h + 1) % hosts;
    vec![
        (format!("h{h}"), format!("http://h{h}/{}", (i + 1) % pages)),
        (
            format!("h{next_host}"),
            format!("http://h{next_host}/{}", (i * 7) % pages),
        ),
    ]
}

/// What the workers did, for the checks: pages counted (acknowledged) by
/// worker, and the server time of every lease that was started.
#[derive(Default)]
struct Record {
    counted: Vec<(String, String)>,
    started: Vec<Leased>,
    /// Acknowledgements sent, as a worker's outbox keeps them: a worker
    /// killed after Redis applied one but before the reply came back
    /// finds it acknowledged when it recovers.
    acking: Vec<(String, Leased)>,
}

/// One worker: balance every 200 ms; lease from its share; start each
/// leased URL at once (or give it back), "fetch" it, add its links, then
/// acknowledge it; count it only if acknowledged. Runs until the frontier
/// is empty.
async fn worker(nodes: Vec<String>, name: String, cfg: FrontierConfig, record: Arc<Mutex<Record>>) {
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let ttl = Duration::from_millis(900);
    let mut parts = Partitions::open(&nodes, "t4", &name, ttl).await.unwrap();
    let frontier = SharedFrontier::open(&nodes, "t4", cfg.clone())
        .await
        .unwrap();
    let mut held = Vec::new();
    let mut idle = 0;
    let mut balanced = tokio::time::Instant::now() - ttl;
    loop {
        if balanced.elapsed() > ttl / 4 {
            let surplus = parts.balance(&mut held, cfg.partitions).await.unwrap();
            for lease in surplus {
                parts.release(lease).await.unwrap();
            }
            balanced = tokio::time::Instant::now();
        }
        let mut did = 0;
        for lease in held.iter().filter(|l| l.usable(ttl / 3)) {
            for leased in frontier.lease(lease, 16).await.unwrap().urls {
                if !leased.startable(cfg.start_slack) {
                    frontier.give_back(lease, &leased).await.unwrap();
                    continue;
                }
                record.lock().unwrap().started.push(leased.clone());
                tokio::time::sleep(Duration::from_millis(2)).await; // the fetch
                let found = links_of(&leased.url, 12, 10);
                let links: Vec<Link<'_>> = found
                    .iter()
                    .map(|(key, url)| Link {
                        key,
                        url,
                        depth: leased.depth + 1,
                    })
                    .collect();
                frontier.add(&links).await.unwrap();
                (record.lock().unwrap().acking).push((name.clone(), leased.clone()));
                if frontier
                    .ack(lease, &leased, Some(Duration::from_millis(2)), None)
                    .await
                    .is_ok_and(|a| a.done)
                {
                    record
                        .lock()
                        .unwrap()
                        .counted
                        .push((name.clone(), leased.url.clone()));
                }
                did += 1;
            }
        }
        if did == 0 {
            if frontier.pending().await.unwrap() == 0 {
                idle += 1;
                if idle > 3 {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        } else {
            idle = 0;
        }
    }
}

#[test]
fn three_workers_one_killed_count_every_page_once_and_keep_every_delay() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let cfg = config(60);
    let record = Arc::new(Mutex::new(Record::default()));
    runtime().block_on(async {
        let seed = SharedFrontier::open(
            &nodes.iter().map(String::as_str).collect::<Vec<_>>(),
            "t4",
            cfg.clone(),
        )
        .await
        .unwrap();
        seed.add(&[Link {
            key: "h0",
            url: "http://h0/0",
            depth: 0,
        }])
        .await
        .unwrap();
        let spawn = |name: &str| {
            tokio::spawn(worker(
                nodes.clone(),
                name.to_string(),
                cfg.clone(),
                record.clone(),
            ))
        };
        let (a, b, c) = (spawn("a"), spawn("b"), spawn("c"));
        // Kill b mid-crawl (its task and connections dropped, as kill -9
        // would), and start it again under a new name later.
        tokio::time::sleep(Duration::from_millis(700)).await;
        b.abort();
        let counted_at_kill = record.lock().unwrap().counted.len();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let b2 = spawn("b2");
        for w in [a, c, b2] {
            w.await.unwrap();
        }
        assert!(
            counted_at_kill > 10,
            "b was killed mid-crawl ({counted_at_kill} counted)"
        );
        assert_eq!(
            seed.pending().await.unwrap(),
            0,
            "nothing queued or in flight"
        );
        // b's recovery: what it sent to be acknowledged and the cluster
        // did acknowledge counts, as a worker replays its outbox.
        let sent: Vec<(String, Leased)> = record.lock().unwrap().acking.clone();
        for (name, leased) in sent.into_iter().filter(|(n, _)| n == "b") {
            let known = (record.lock().unwrap().counted.iter())
                .any(|(n, u)| *n == name && *u == leased.url);
            if !known && seed.acked(leased.partition, leased.id).await.unwrap() {
                record.lock().unwrap().counted.push((name, leased.url));
            }
        }
    });
    let record = record.lock().unwrap();
    let mut times: HashMap<&str, usize> = HashMap::new();
    for (_, url) in &record.counted {
        *times.entry(url).or_default() += 1;
    }
    assert_eq!(times.len(), 120, "every page of the 12 x 10 graph counted");
    assert!(times.values().all(|&n| n == 1), "no page counted twice");
    let workers: HashSet<&str> = record.counted.iter().map(|(w, _)| w.as_str()).collect();
    // The first worker up takes every partition and hands the surplus back
    // within a balance or two: in so short a crawl, one of the others may
    // end up with nothing to count.
    assert!(workers.len() >= 2, "the work was shared: {workers:?}");
    for (key, starts) in starts_by_key(&record.started) {
        assert!(least_gap(&starts) >= 60 + 10, "{key}: {starts:?}");
    }
}

#[test]
fn a_host_takes_its_budget_a_lease_says_when_the_key_is_due_and_an_unsent_one_gives_its_turn_back()
{
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    runtime().block_on(async {
        let cfg = FrontierConfig {
            max_per_host: 3,
            partitions: 1,
            ..config(500)
        };
        let (frontier, _parts, held) = holding_one_partition(&nodes, "t5", cfg).await;
        let urls: Vec<String> = (0..3).map(|i| format!("http://h/{i}")).collect();
        let links = on_key("h", &urls);
        assert_eq!(frontier.add(&links).await.unwrap().queued, 3);
        assert_eq!(frontier.add(&links).await.unwrap().queued, 0, "seen");
        // Pages fetched count, not URLs queued: five takers at once, three
        // pages taken.
        let page = Url::parse("http://h/page").unwrap();
        let takes = (0..5).map(|_| frontier.take_page(&page));
        let taken = futures_util::future::join_all(takes).await;
        let spent: Vec<_> = taken.into_iter().map(Result::unwrap).collect();
        assert_eq!(spent.iter().filter(|s| s.is_none()).count(), 3, "{spent:?}");
        assert!(spent.iter().flatten().all(|s| *s == "host_page_limit"));
        let first = frontier.lease(&held[0], 8).await.unwrap();
        assert_eq!(first.urls.len(), 1);
        assert!(
            frontier
                .ack(&held[0], &first.urls[0], Some(Duration::ZERO), None)
                .await
                .unwrap()
                .done
        );
        let next = frontier.lease(&held[0], 8).await.unwrap();
        assert!(next.urls.is_empty());
        let due = next.next_in.expect("h waits for its delay");
        assert!(
            due > Duration::from_millis(400) && due <= Duration::from_millis(510),
            "{due:?}"
        );
        // A lease that sent no request gives the key's turn back.
        tokio::time::sleep(due).await;
        let second = frontier.lease(&held[0], 8).await.unwrap();
        assert_eq!(second.urls.len(), 1);
        let acked = frontier.ack(&held[0], &second.urls[0], None, None);
        assert!(acked.await.unwrap().done);
        let third = frontier.lease(&held[0], 8).await.unwrap();
        assert_eq!(third.urls.len(), 1, "{third:?}");
    });
}

#[test]
fn domain_and_host_budgets_hold_and_a_section_of_duplicates_becomes_a_trap() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    runtime().block_on(async {
        let cfg = FrontierConfig {
            max_per_domain: 4,
            max_keys: 4,
            ..config(0)
        };
        let frontier = SharedFrontier::open(&nodes, "t6", cfg).await.unwrap();
        assert_eq!(
            frontier.partition_of("a.example.org"),
            frontier.partition_of("b.example.org:8080"),
            "a domain's hosts share a partition"
        );
        let urls: Vec<(&str, String)> = ["a.example.org", "b.example.org"]
            .into_iter()
            .flat_map(|k| (0..3).map(move |i| (k, format!("http://{k}/{i}"))))
            .collect();
        fn link<'a>((key, url): &'a (&'static str, String)) -> Link<'a> {
            Link {
                key,
                url: url.as_str(),
                depth: 0,
            }
        }
        let links: Vec<Link<'_>> = urls.iter().map(link).collect();
        let added = frontier.add(&links).await.unwrap();
        assert_eq!(added.queued, 6, "{added:?}");
        // The domain's budget holds over its hosts.
        let mut spent = Vec::new();
        for (_, url) in &urls {
            spent.push(frontier.take_page(&Url::parse(url).unwrap()).await.unwrap());
        }
        let last = [Some("domain_page_limit"); 2];
        assert!(
            spent[..4].iter().all(Option::is_none) && spent[4..] == last,
            "{spent:?}"
        );
        // Two keys are admitted; of three new ones, two more may come.
        let more: Vec<(&str, String)> = ["c.test", "d.test", "e.test"]
            .into_iter()
            .map(|k| (k, format!("http://{k}/")))
            .collect();
        let links: Vec<Link<'_>> = more.iter().map(link).collect();
        let added = frontier.add(&links).await.unwrap();
        assert_eq!((added.queued, added.over_max_keys), (2, 1), "{added:?}");
        let again = frontier.add(&links).await.unwrap();
        assert_eq!((again.queued, again.over_max_keys), (0, 1), "{again:?}");
    });

    runtime().block_on(async {
        let cfg = FrontierConfig {
            partitions: 1,
            trap_window: 4,
            trap_duplicates: 3,
            ..config(0)
        };
        let (frontier, _parts, held) = holding_one_partition(&nodes, "t7", cfg).await;
        let lease = &held[0];
        let urls: Vec<String> = (0..6).map(|i| format!("http://h/s/{i}")).collect();
        let links = on_key("h", &urls);
        let added = frontier.add(&links).await.unwrap();
        // The adder learns whose partition got URLs, and tells it.
        assert_eq!(added.woken, [(0, "a".to_string())]);
        frontier.wake("a", &[0]).await.unwrap();
        assert_eq!(frontier.woken("a").await.unwrap(), [0]);
        assert!(frontier.woken("a").await.unwrap().is_empty());
        // The key's next start is the start slack after its last lease.
        let next = || async {
            for _ in 0..100 {
                let got = frontier.lease(lease, 8).await.unwrap();
                if let [leased] = got.urls.as_slice() {
                    return (leased.clone(), got.trapped);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            panic!("nothing leased");
        };
        // Not judged (an error): not a verdict.
        let (l, _) = next().await;
        let a = frontier.ack(lease, &l, None, None).await.unwrap();
        assert_eq!((a.done, a.trap), (true, None));
        for duplicate in [true, true, false] {
            let (l, trapped) = next().await;
            assert_eq!(trapped, 0);
            let a = frontier
                .ack(lease, &l, None, Some(duplicate))
                .await
                .unwrap();
            assert_eq!((a.done, a.trap), (true, None));
        }
        let (l, _) = next().await;
        let a = frontier.ack(lease, &l, None, Some(true)).await.unwrap();
        assert_eq!((a.done, a.trap), (true, Some(3)), "3 of the last 4");
        let repeated = frontier.ack(lease, &l, None, Some(true)).await.unwrap();
        assert_eq!((repeated.done, repeated.trap), (true, None), "counted once");
        let (_, trapped) = next().await;
        assert_eq!(trapped, 1);
        assert_eq!(
            frontier.trapped(0).await.unwrap(),
            HashSet::from(["h/s/".to_string()])
        );
    });
}

/// `tests/fixtures/trap_verdicts.txt`, which the embedded detector is
/// tested on too: each case's verdicts acknowledged in order, on URLs of
/// one section.
#[test]
fn the_shared_table_of_trap_verdicts() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let table = include_str!("../../../tests/fixtures/trap_verdicts.txt");
    let cases = table
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    runtime().block_on(async {
        for (n, case) in cases.enumerate() {
            let (given, want) = case.split_once(" -> ").unwrap();
            let [window, share, verdicts] = given.split(' ').collect::<Vec<_>>()[..] else {
                panic!("{case}")
            };
            let (window, share) = (window.parse().unwrap(), share.parse().unwrap());
            let cfg = FrontierConfig {
                partitions: 1,
                trap_window: window,
                trap_duplicates: nearcrawl_crawl::traps::trap_threshold(window, share),
                ..config(0)
            };
            let name = format!("tv{n}");
            let (frontier, _parts, held) = holding_one_partition(&nodes, &name, cfg).await;
            let urls: Vec<String> = (0..verdicts.len())
                .map(|i| format!("http://h/s/{i}"))
                .collect();
            frontier.add(&on_key("h", &urls)).await.unwrap();
            let mut traps = Vec::new();
            for (i, verdict) in verdicts.chars().enumerate() {
                let leased = loop {
                    let got = frontier.lease(&held[0], 1).await.unwrap();
                    if let [leased] = got.urls.as_slice() {
                        break leased.clone();
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                };
                let duplicate = (verdict != '-').then_some(verdict == '1');
                let acked = frontier.ack(&held[0], &leased, None, duplicate);
                if let Some(dups) = acked.await.unwrap().trap {
                    traps.push(format!("{}:{dups}", i + 1));
                }
            }
            let traps = if traps.is_empty() {
                "none".to_string()
            } else {
                traps.join(" ")
            };
            assert_eq!(traps, want, "{case}");
        }
    });
}
