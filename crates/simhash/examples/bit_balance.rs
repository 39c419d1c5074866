//! Is every bit of a feature hash a fair coin? Raw FNV-1a 64 against FNV-1a
//! followed by murmur3's fmix64 (what the fingerprinter uses), on the real
//! tokens of `../shared/bench/extraction`'s article bodies.
//!
//! ```text
//! cargo run --release -p nearcrawl-simhash --example bit_balance
//! ```
//!
//! Balance: per bit, the share of distinct tokens whose hash has it set.
//! Avalanche: each token with its last byte changed (`a`->`b`, ...): bits
//! flipped on average (32 is ideal), and per bit, how far the flip rate is
//! from 1/2.

mod common;

use std::collections::BTreeSet;

use nearcrawl_simhash::hash::{fmix64, fnv1a};

fn main() {
    let mut words = BTreeSet::new();
    for (_, body) in common::article_bodies() {
        for w in body.split(|c: char| !c.is_alphanumeric()) {
            if !w.is_empty() {
                words.insert(w.to_lowercase());
            }
        }
    }
    let words: Vec<Vec<u8>> = words.into_iter().map(String::into_bytes).collect();
    println!("{} distinct tokens", words.len());
    println!(
        "{:<16} {:>12} {:>14} {:>14} {:>16}",
        "hash", "max |p-1/2|", "mean flipped", "min/max flips", "max |flip-1/2|"
    );
    report("fnv1a", &words, fnv1a);
    report("fnv1a+fmix64", &words, |b| fmix64(fnv1a(b)));
}

fn report(name: &str, words: &[Vec<u8>], hash: impl Fn(&[u8]) -> u64) {
    let mut ones = [0u64; 64];
    let mut flips = [0u64; 64];
    let mut flipped_total = 0u64;
    let (mut min_f, mut max_f) = (64, 0);
    for w in words {
        let h = hash(w);
        for (i, o) in ones.iter_mut().enumerate() {
            *o += h >> i & 1;
        }
        let mut changed = w.clone();
        let last = changed.last_mut().unwrap();
        *last = last.wrapping_add(1);
        let d = h ^ hash(&changed);
        flipped_total += u64::from(d.count_ones());
        min_f = min_f.min(d.count_ones());
        max_f = max_f.max(d.count_ones());
        for (i, f) in flips.iter_mut().enumerate() {
            *f += d >> i & 1;
        }
    }
    let n = words.len() as f64;
    let bias = ones
        .iter()
        .map(|&o| (o as f64 / n - 0.5).abs())
        .fold(0.0, f64::max);
    let flip_bias = flips
        .iter()
        .map(|&f| (f as f64 / n - 0.5).abs())
        .fold(0.0, f64::max);
    println!(
        "{name:<16} {:>12.4} {:>14.2} {:>14} {:>16.4}",
        bias,
        flipped_total as f64 / n,
        format!("{min_f}/{max_f}"),
        flip_bias
    );
}
