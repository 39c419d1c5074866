//! Band index figures at scale: inserts/s, query latency and rate, memory
//! and disk per fingerprint, reopen time, against a brute-force scan.
//!
//! ```text
//! cargo run --release -p nearcrawl-index --example index_bench -- [N] [K] [BLOCKS]
//! ```
//!
//! N random fingerprints (default 1,000,000), k (default 3), and the block
//! count (default: the index chooses from k and N). Queries: half
//! random, half planted 1..=k bits from a held fingerprint (each must find
//! it). The brute-force baseline scans the same fingerprints with XOR and
//! popcount.

use std::time::Instant;

use nearcrawl_index::{BandIndex, IndexConfig};
use nearcrawl_simhash::Fingerprint;

mod common;
use common::{dir_bytes, status_kib};

fn splitmix(state: &mut u64) -> u64 {
    let mut rng = common::Rng(*state);
    let v = rng.next();
    *state = rng.0;
    v
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|a| a.parse().expect("N"))
        .unwrap_or(1_000_000);
    let k: u32 = args.next().map(|a| a.parse().expect("K")).unwrap_or(3);
    let blocks: Option<u32> = args.next().map(|a| a.parse().expect("BLOCKS"));
    let dir = std::env::temp_dir().join(format!("nearcrawl-index-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = IndexConfig {
        k,
        capacity: n,
        blocks,
    };

    let mut rng = 42u64;
    let fps: Vec<u64> = (0..n).map(|_| splitmix(&mut rng)).collect();
    let rss_before = status_kib("VmRSS:");

    let mut index = BandIndex::open(&dir, config).unwrap();
    println!(
        "layout: {} ({:.1} candidates per query expected at N={n})",
        index.layout(),
        index.layout().expected_candidates(n)
    );
    let t = Instant::now();
    for (doc, &fp) in fps.iter().enumerate() {
        index.insert(Fingerprint(fp), doc as u64);
        if (doc + 1) % 100_000 == 0 {
            index.flush().unwrap();
        }
    }
    index.flush().unwrap();
    let insert_s = t.elapsed().as_secs_f64();
    println!(
        "inserts: {n} in {insert_s:.2} s = {:.0}/s (flushed every 100k, durable)",
        n as f64 / insert_s
    );

    // Queries: half planted near a held fingerprint, half random.
    let queries = 200_000usize.min(4 * n as usize);
    let mut qs = Vec::with_capacity(queries);
    for i in 0..queries {
        if i % 2 == 0 {
            let held = fps[(splitmix(&mut rng) % n) as usize];
            let bits = 1 + (splitmix(&mut rng) % u64::from(k.max(1))) as u32;
            let mut q = held;
            let mut flipped = 0;
            while flipped < bits.min(k) {
                let b = 1u64 << (splitmix(&mut rng) >> 58);
                if (q ^ held) & b == 0 {
                    q ^= b;
                    flipped += 1;
                }
            }
            qs.push((q, Some(held)));
        } else {
            qs.push((splitmix(&mut rng), None));
        }
    }
    let mut lat = Vec::with_capacity(queries);
    let mut found = 0usize;
    let t = Instant::now();
    for &(q, planted) in &qs {
        let t0 = Instant::now();
        let m = index.query(Fingerprint(q));
        lat.push(t0.elapsed().as_nanos() as u64);
        if let Some(h) = planted {
            assert!(
                m.iter().any(|m| m.fingerprint.0 == h),
                "planted neighbour missed"
            );
            found += 1;
        }
    }
    let query_s = t.elapsed().as_secs_f64();
    lat.sort_unstable();
    let qps = queries as f64 / query_s;
    println!(
        "queries: {queries} ({found} planted, all found): {qps:.0}/s, p50 {:.2} µs, p99 {:.2} µs",
        lat[lat.len() / 2] as f64 / 1e3,
        lat[lat.len() * 99 / 100] as f64 / 1e3
    );

    // Brute force over the same set.
    let scans = 300usize;
    let t = Instant::now();
    let mut hits = 0usize;
    for &(q, _) in qs.iter().take(scans) {
        hits += fps.iter().filter(|&&f| (f ^ q).count_ones() <= k).count();
    }
    let brute_qps = scans as f64 / t.elapsed().as_secs_f64();
    println!(
        "brute force: {brute_qps:.0} queries/s ({:.2} ns per fingerprint; {hits} hits); index is {:.0}x faster",
        1e9 / brute_qps / n as f64,
        qps / brute_qps
    );

    let rss_after = status_kib("VmRSS:");
    println!(
        "memory: index {:.1} B/fingerprint (tables + map); process RSS grew {:.1} B/fingerprint \
         (includes the sled cache); peak RSS {} MiB",
        index.memory_bytes() as f64 / n as f64,
        (rss_after.saturating_sub(rss_before)) as f64 * 1024.0 / n as f64,
        status_kib("VmHWM:") / 1024
    );
    drop(index);
    let disk = dir_bytes(&dir);
    println!(
        "disk: {disk} bytes = {:.1} B/fingerprint",
        disk as f64 / n as f64
    );
    let t = Instant::now();
    let index = BandIndex::open(&dir, config).unwrap();
    println!(
        "reopen: {:.2} s ({} fingerprints)",
        t.elapsed().as_secs_f64(),
        index.len()
    );
    drop(index);
    let _ = std::fs::remove_dir_all(&dir);
}
