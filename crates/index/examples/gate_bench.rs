//! The duplicate gate at scale, with the crawl's default settings: checks/s
//! with N documents recorded, memory and disk per document, reopen time,
//! and the recall of the candidate stage on planted near duplicates.
//!
//! ```text
//! cargo run --release -p nearcrawl-index --example gate_bench -- [N] [CHECKS] [--no-reopen]
//! ```
//!
//! Documents are synthetic (generating and fingerprinting N texts would
//! take longer than what is measured): 300 shingle hashes each, a fifth of
//! them drawn from 20,000 shingles every document shares at random (phrases
//! a site repeats), the rest its own. After N documents are recorded,
//! CHECKS more (default 200,000) are judged and recorded as the crawl does:
//! half new documents, half edited copies of a recorded one (1 to 40% of
//! shingles replaced, the fingerprint 0 to 8 bits away). A copy whose
//! sketch similarity to its original is what the gate needs at that
//! distance (`DedupConfig::similarity_needed`) must be found: the share
//! that is, is the recall of the candidate stage (the verification is
//! exact given the candidates).

use std::time::Instant;

use nearcrawl_index::{Check, DedupConfig, Deduper, Prepared, Sketch, Verdict};
use nearcrawl_simhash::hash::fmix64;

mod common;
use common::{dir_bytes, status_kib};

const FEATURES: usize = 300;
const SHARED_POOL: u64 = 20_000;

/// The shingles of document `seed`, and its fingerprint.
fn document(seed: u64) -> (Vec<u64>, u64) {
    let features = (0..FEATURES as u64)
        .map(|i| {
            let r = fmix64(seed.wrapping_mul(0x9e37_79b9) ^ i);
            if r.is_multiple_of(5) {
                fmix64(r % SHARED_POOL)
            } else {
                r
            }
        })
        .collect();
    (features, fmix64(seed ^ 0x5555))
}

/// An edited copy of document `seed`: `replaced` of 1,000 shingles
/// replaced, `bits` fingerprint bits flipped.
fn copy_of(seed: u64, replaced: u64, bits: u32, salt: u64) -> (Vec<u64>, u64) {
    let (mut features, mut fp) = document(seed);
    for (i, f) in features.iter_mut().enumerate() {
        if fmix64(salt ^ i as u64) % 1000 < replaced {
            *f = fmix64(salt.wrapping_add(i as u64) ^ 0xabcdef);
        }
    }
    for b in 0..bits {
        fp ^= 1 << ((fmix64(salt ^ u64::from(b)) % 64) as u32);
    }
    (features, fp)
}

#[derive(Default)]
struct Recall {
    /// Per similarity tenth (5 = 0.5..0.6 … 9 = 0.9..1.0): (found, due).
    by_tenth: [(u64, u64); 10],
    wrong: u64,
}

fn main() {
    let reopen_too = !std::env::args().any(|a| a == "--no-reopen");
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let n: u64 = args.next().map_or(1_000_000, |a| a.parse().expect("N"));
    let checks: u64 = args.next().map_or(200_000, |a| a.parse().expect("CHECKS"));
    let dir = std::env::temp_dir().join(format!("nearcrawl-gate-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = DedupConfig::default();
    let rss_before = status_kib("VmRSS:");
    let mut gate = Deduper::open(&dir, config).expect("open");

    let start = Instant::now();
    for seed in 0..n {
        let (features, fp) = document(seed);
        let j = gate
            .judge_prepared(Prepared::synthetic(fp, &features), |_| true)
            .expect("judge");
        gate.record(seed, &j).expect("record");
        if seed % 1_000_000 == 999_999 {
            gate.flush().expect("flush");
            eprintln!(
                "{} recorded, {:.0} s",
                seed + 1,
                start.elapsed().as_secs_f64()
            );
        }
    }
    gate.flush().expect("flush");
    let build = start.elapsed().as_secs_f64();
    let recorded = gate.indexed() as f64;
    let rss = (status_kib("VmRSS:") - rss_before) as f64 * 1024.0;
    let tables = gate.memory_bytes() as f64;

    let mut recall = Recall::default();
    // Seconds judging and recording new documents; judging copies.
    let (mut judging, mut recording, mut copies) = (0.0f64, 0.0f64, 0.0f64);
    let mut next_seed = n;
    for batch in 0..checks.div_ceil(10_000) {
        // Prepared outside the timed part: generating is not checking.
        let mut docs = Vec::new();
        for i in 0..10_000u64.min(checks - batch * 10_000) {
            let salt = fmix64(batch << 20 | i);
            if i % 2 == 0 {
                docs.push((None, document(next_seed), next_seed));
            } else {
                let of = salt % n;
                let bits = (salt >> 32) as u32 % 9;
                let (features, fp) = copy_of(of, 10 + salt % 390, bits, salt);
                let (original, _) = document(of);
                let sim = Sketch::of(features.iter().copied()).similarity(&Sketch::of(original));
                docs.push((Some((of, sim, bits)), (features, fp), next_seed));
            }
            next_seed += 1;
        }
        let prepared: Vec<Prepared> = docs
            .iter()
            .map(|(_, (f, fp), _)| Prepared::synthetic(*fp, f))
            .collect();
        let mut verdicts = Vec::with_capacity(prepared.len());
        for (p, (_, _, seed)) in prepared.into_iter().zip(&docs) {
            let t = Instant::now();
            let j = gate.judge_prepared(p, |_| true).expect("judge");
            let t2 = Instant::now();
            gate.record(*seed, &j).expect("record");
            if j.decision.verdict == Verdict::New {
                judging += (t2 - t).as_secs_f64();
                recording += t2.elapsed().as_secs_f64();
            } else {
                copies += (t2 - t).as_secs_f64();
            }
            verdicts.push(j.decision.verdict);
        }
        for ((planted, _, _), verdict) in docs.iter().zip(verdicts) {
            let of = verdict.duplicate_of().map(|(of, ..)| of);
            match planted {
                None if of.is_some() => recall.wrong += 1,
                None => {}
                Some((original, sim, bits)) => {
                    if of.is_some_and(|of| of != *original) {
                        recall.wrong += 1;
                    }
                    if *sim >= config.similarity_needed(Check::Sketch, *bits) {
                        let tenth = &mut recall.by_tenth[((sim * 10.0) as usize).min(9)];
                        tenth.1 += 1;
                        tenth.0 += u64::from(of == Some(*original));
                    }
                }
            }
        }
    }
    gate.flush().expect("flush");
    let held = gate.indexed();
    drop(gate);
    let disk = dir_bytes(&dir) as f64;
    let mut reopen = f64::NAN;
    if reopen_too {
        let t = Instant::now();
        let gate = Deduper::open(&dir, config).expect("reopen");
        reopen = t.elapsed().as_secs_f64();
        assert_eq!(gate.indexed(), held, "every recorded document is back");
    }
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "gate_bench: {n} documents, default settings (k = {}, min similarity {})",
        config.index.k, config.min_similarity
    );
    println!("  build        {:>10.0} documents/s", n as f64 / build);
    let new = (checks / 2) as f64;
    println!(
        "  checks       {:>10.0} checks/s of new documents (judge {:.1} µs + record {:.1} µs), at {n} documents",
        new / (judging + recording),
        judging * 1e6 / new,
        recording * 1e6 / new,
    );
    println!(
        "               {:>10.0} checks/s of copies (judge {:.1} µs: their candidates' records are read)",
        (checks as f64 - new) / copies,
        copies * 1e6 / (checks as f64 - new),
    );
    println!(
        "  RAM          {:>10.1} B/document (tables {:.1}; RSS growth {:.1})",
        tables / recorded,
        tables / recorded,
        rss / recorded
    );
    println!("  disk         {:>10.1} B/document", disk / recorded);
    if reopen_too {
        println!("  reopen       {:>10.2} s", reopen);
    }
    let (mut found, mut due) = (0, 0);
    for (tenth, &(f, d)) in recall.by_tenth.iter().enumerate() {
        if d > 0 {
            println!(
                "  recall J {:.1}-{:.1} {:>7.4} ({f} of {d})",
                tenth as f64 / 10.0,
                (tenth + 1) as f64 / 10.0,
                f as f64 / d as f64
            );
        }
        found += f;
        due += d;
    }
    println!(
        "  recall       {:>10.4} ({found} of {due} copies at or above the threshold)",
        found as f64 / due as f64
    );
    println!(
        "  wrong        {:>10} (a new document matched, or a copy matched another)",
        recall.wrong
    );
}
