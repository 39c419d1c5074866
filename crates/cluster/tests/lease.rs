//! Partition leases on a 3-node Redis Cluster on loopback: one owner at a
//! time, a lapsed lease passes to another worker with a newer epoch, and
//! the old owner's writes are refused.
//!
//! Needs `redis-server` and `redis-cli` (installed by `.ci/run`).

use nearcrawl_tests::redis_cluster as common;

use std::time::Duration;

use nearcrawl_cluster::{ClusterError, Partitions};

/// A fenced write: append ARGV[2] to the partition's list KEYS[2].
const PUSH: &str = "return redis.call('RPUSH', KEYS[2], ARGV[2])";

#[test]
fn a_lapsed_lease_passes_on_and_the_old_owner_is_fenced_out() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let ttl = Duration::from_millis(600);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut a = Partitions::open(&urls, "test", "a", ttl).await.unwrap();
            let mut b = Partitions::open(&urls, "test", "b", ttl).await.unwrap();
            let list = vec![a.key(7, "queue")];

            // One owner at a time; several partitions, on different nodes.
            let mut lease_a = a.acquire(7).await.unwrap().expect("partition 7 is free");
            assert_eq!(lease_a.epoch, 1);
            assert_eq!(b.acquire(7).await.unwrap(), None, "a holds it");
            for p in 0..20 {
                if p != 7 {
                    assert!(b.acquire(p).await.unwrap().is_some(), "partition {p}");
                }
            }
            let n: u64 = a
                .fenced(&lease_a, PUSH, &list, &[b"x".to_vec()])
                .await
                .unwrap();
            assert_eq!(n, 1);

            // Renewed, the lease outlives its first term.
            tokio::time::sleep(ttl / 2).await;
            assert!(a.renew(&mut lease_a).await.unwrap());
            tokio::time::sleep(ttl / 2).await;
            assert_eq!(b.acquire(7).await.unwrap(), None, "renewed: a holds it");
            assert!(lease_a.usable(Duration::from_millis(100)));

            // a stops renewing (paused, cut off): the lease lapses, b takes
            // the partition with a newer epoch, and a is fenced out.
            tokio::time::sleep(ttl + Duration::from_millis(100)).await;
            assert!(!lease_a.usable(Duration::ZERO), "a knows its lease is over");
            let lease_b = b.acquire(7).await.unwrap().expect("lapsed: free again");
            assert_eq!(lease_b.epoch, 2);
            let stale = a
                .fenced::<u64>(&lease_a, PUSH, &list, &[b"late".to_vec()])
                .await;
            assert!(
                matches!(
                    stale,
                    Err(ClusterError::Stale {
                        partition: 7,
                        epoch: 1
                    })
                ),
                "{stale:?}"
            );
            assert!(
                !a.renew(&mut lease_a).await.unwrap(),
                "a cannot renew b's lease"
            );
            let n: u64 = b
                .fenced(&lease_b, PUSH, &list, &[b"y".to_vec()])
                .await
                .unwrap();
            assert_eq!(n, 2, "a's late write never landed");

            // Released, a partition is free at once, and its epoch goes on.
            b.release(lease_b).await.unwrap();
            let again = a.acquire(7).await.unwrap().expect("released");
            assert_eq!(again.epoch, 3);
        });
}

#[test]
fn an_idle_worker_asks_and_a_busy_one_gives_it_a_partition() {
    let cluster = common::Cluster::start(3);
    let nodes = cluster.urls();
    let urls: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let ttl = Duration::from_secs(5);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut busy = Partitions::open(&urls, "gift", "busy", ttl).await.unwrap();
            let mut idle = Partitions::open(&urls, "gift", "idle", ttl).await.unwrap();
            let lease = busy.acquire(3).await.unwrap().unwrap();
            assert_eq!(busy.claim_hungry().await.unwrap(), None, "nobody asked");
            idle.ask_for_work().await.unwrap();
            assert_eq!(idle.claim_hungry().await.unwrap(), None, "not its own ask");
            assert_eq!(busy.claim_hungry().await.unwrap().as_deref(), Some("idle"));
            assert_eq!(
                busy.claim_hungry().await.unwrap(),
                None,
                "an ask is answered once"
            );
            busy.give(lease, "idle").await.unwrap();
            let got = idle.gifts().await.unwrap();
            assert_eq!(got.len(), 1);
            assert_eq!(
                (got[0].partition, got[0].epoch),
                (3, 2),
                "a new owner, a new epoch"
            );
            assert!(idle.gifts().await.unwrap().is_empty());
        });
}
