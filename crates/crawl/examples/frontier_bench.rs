//! The frontier with many queued hosts: memory per queued host and pops/s.
//!
//! ```text
//! cargo run --release -p nearcrawl-crawl --example frontier_bench -- [HOSTS] [URLS_PER_HOST]
//! ```
//!
//! Queues URLs on HOSTS distinct hosts (default 100,000 × 2) in a state
//! like the crawl's (sled with a 32 MiB page cache, and the frontier's
//! files), reopens it as a resumed crawl would, and pops every URL with
//! every host always ready, finishing them in groups of 64 as the crawl
//! commits them. Prints the process RSS before and after queueing and at
//! the end, and the state's bytes on disk.

mod common;

use std::time::Instant;

use nearcrawl_crawl::embedded::frontier::{Additions, Frontier, Popped, Unpaced};
use std::sync::Arc;

use nearcrawl_crawl::embedded::store::{SledStore, Store, Writes};
use url::Url;

use common::{arg, proc_status};

fn rss_kib() -> u64 {
    proc_status("self", "VmRSS:")
}

fn main() {
    let (hosts, per_host) = (arg(1, 100_000), arg(2, 2));
    let dir = std::env::temp_dir().join(format!("nearcrawl-frontier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = sled::Config::new()
        .path(&dir)
        .cache_capacity(32 << 20)
        .open()
        .unwrap();
    let tree: Arc<dyn Store> = Arc::new(SledStore::open_in(&db, "crawl").unwrap());
    let before = rss_kib();
    let t = Instant::now();
    {
        let mut f = Frontier::open_in(tree.clone(), &dir).unwrap();
        // In groups of 64 URLs per batch, as the crawl commits them.
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        let mut in_group = 0;
        for h in 0..hosts {
            for p in 0..per_host {
                let url =
                    Url::parse(&format!("https://host-{h}.example{}/page/{p}", h % 97)).unwrap();
                let _ = f.push(&mut writes, &mut adds, &url, 1).unwrap();
                in_group += 1;
                if in_group == 64 {
                    let adds = std::mem::take(&mut adds);
                    f.apply(std::mem::take(&mut writes), adds).unwrap();
                    in_group = 0;
                }
            }
        }
        f.apply(writes, adds).unwrap();
        let mut saved = Writes::default();
        f.save(&mut saved).unwrap();
        tree.apply(saved).unwrap();
        println!(
            "queued {} URLs on {hosts} hosts in {:.1} s; RSS {} MiB -> {} MiB ({:.0} B per queued host, sled cache included)",
            f.len(),
            t.elapsed().as_secs_f64(),
            before / 1024,
            rss_kib() / 1024,
            (rss_kib() - before) as f64 * 1024.0 / hosts as f64
        );
    }
    // As a resumed crawl: the queue is read back from disk.
    let t = Instant::now();
    let mut f = Frontier::open_in(tree.clone(), &dir).unwrap();
    println!(
        "reopened in {:.1} s: {} queued, {} hosts in turn; RSS {} MiB",
        t.elapsed().as_secs_f64(),
        f.len(),
        f.active_hosts(),
        rss_kib() / 1024
    );
    let t = Instant::now();
    let mut popped = 0usize;
    let mut adds = Additions::default();
    while let Popped::Entry(e) = f.pop(&Unpaced).unwrap() {
        f.done(&e, &Unpaced);
        e.finish(&mut adds);
        popped += 1;
        if popped.is_multiple_of(64) {
            f.apply(Writes::default(), std::mem::take(&mut adds))
                .unwrap();
        }
    }
    f.apply(Writes::default(), adds).unwrap();
    let mut saved = Writes::default();
    f.compact_and_save(&mut saved).unwrap();
    tree.apply(saved).unwrap();
    f.saved();
    db.flush().unwrap();
    println!(
        "popped {popped} in {:.1} s = {:.0} pops/s; RSS {} MiB",
        t.elapsed().as_secs_f64(),
        popped as f64 / t.elapsed().as_secs_f64(),
        rss_kib() / 1024
    );
    let bytes: u64 = common::dir_bytes(&dir);
    println!("state on disk: {:.1} MB", bytes as f64 / 1e6);
    drop(f);
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}
