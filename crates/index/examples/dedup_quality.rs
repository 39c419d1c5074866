//! Precision and recall of the duplicate gate on near-duplicates built from
//! real text, over a grid of k and similarity thresholds.
//!
//! ```text
//! cargo run --release -p nearcrawl-index --example dedup_quality
//! ```
//!
//! Positives: each article body of `../shared/bench/extraction` with 1-20%
//! of words replaced, deleted or inserted; with a paragraph from another
//! article inserted; with a paragraph deleted; with an extra ad/related-links
//! block. Negatives: all the articles themselves, every one wrapped in the
//! same site header and footer (distinct pages of one template); and "thin
//! pages": the first 40 words of each article inside a template three
//! times as heavy, where the shared boilerplate outweighs the content. An index
//! holds the originals; each variant is then judged: a duplicate of its own
//! original is a true positive, of anything else a false positive.

use std::path::PathBuf;

use nearcrawl_index::{DedupConfig, Deduper, IndexConfig, Verdict};

const HEADER: &str = "Home News World Business Technology Science Health Sport Culture Opinion \
    Video Podcasts Newsletters Subscribe Sign in Search Menu Trending now Live updates";
const FOOTER: &str = "About us Contact Careers Advertise with us Terms of use Privacy policy \
    Cookie settings Accessibility Help centre Follow us on social media Download our app \
    Copyright 2019 Example Media Group All rights reserved Registered in England and Wales";
const EXTRA: &str = "Sponsored content You may also like Ten tips for a better night's sleep \
    Why everyone is talking about this new kitchen gadget Deals of the week Sign up for our \
    daily briefing and get the best stories in your inbox every morning";

mod common;
use common::Rng;

fn page(body: &str) -> String {
    format!("{HEADER}\n{body}\n{FOOTER}")
}

fn edit_words(body: &str, rate: f64, vocab: &[&str], rng: &mut Rng) -> String {
    let mut out: Vec<&str> = Vec::new();
    for w in body.split_whitespace() {
        if (rng.next() >> 11) as f64 / (1u64 << 53) as f64 >= rate {
            out.push(w);
            continue;
        }
        match rng.below(3) {
            0 => out.push(vocab[rng.below(vocab.len())]),
            1 => {}
            _ => {
                out.push(w);
                out.push(vocab[rng.below(vocab.len())]);
            }
        }
    }
    out.join(" ")
}

fn paragraphs(body: &str) -> Vec<&str> {
    body.split('\n').filter(|p| !p.trim().is_empty()).collect()
}

fn main() {
    let gt_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/bench/extraction/ground-truth.json");
    let gt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&gt_path).expect("ground truth")).unwrap();
    let mut bodies: Vec<String> = gt
        .as_object()
        .unwrap()
        .values()
        .map(|v| v["articleBody"].as_str().unwrap_or("").to_string())
        .filter(|b| b.split_whitespace().count() >= 20)
        .collect();
    bodies.sort();
    bodies.dedup();
    let vocab_text = bodies.join(" ");
    let vocab: Vec<&str> = vocab_text.split_whitespace().collect();

    // Variants, by kind.
    let mut rng = Rng(2024);
    let mut kinds: Vec<(&str, Vec<String>)> = Vec::new();
    for rate in [0.01, 0.02, 0.05, 0.10, 0.20] {
        let v = bodies
            .iter()
            .map(|b| page(&edit_words(b, rate, &vocab, &mut rng)))
            .collect();
        kinds.push((
            ["words 1%", "words 2%", "words 5%", "words 10%", "words 20%"][kinds.len()],
            v,
        ));
    }
    let v = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut ps = paragraphs(b);
            let other = paragraphs(&bodies[(i + 1) % bodies.len()]);
            let p = other[rng.below(other.len())];
            ps.insert(rng.below(ps.len() + 1), p);
            page(&ps.join("\n"))
        })
        .collect();
    kinds.push(("paragraph +", v));
    let v = bodies
        .iter()
        .map(|b| {
            let mut ps = paragraphs(b);
            if ps.len() > 1 {
                ps.remove(rng.below(ps.len()));
            }
            page(&ps.join("\n"))
        })
        .collect();
    kinds.push(("paragraph -", v));
    kinds.push((
        "ad block +",
        bodies
            .iter()
            .map(|b| page(&format!("{b}\n{EXTRA}")))
            .collect(),
    ));

    println!(
        "{} articles (each also a negative, all in one template)",
        bodies.len()
    );
    let heavy =
        |body: &str| format!("{HEADER} {HEADER} {HEADER}\n{body}\n{FOOTER} {FOOTER} {FOOTER}");
    let thin: Vec<String> = bodies
        .iter()
        .map(|b| heavy(&b.split_whitespace().take(40).collect::<Vec<_>>().join(" ")))
        .collect();
    print!("{:>2} {:>5} | {:>5} {:>5} |", "k", "sim", "P", "R≤10%");
    for (name, _) in &kinds {
        print!(" {name:>11}");
    }
    println!(" | orig FP  thin FP  short");
    let tmp = std::env::temp_dir().join(format!("nearcrawl-quality-{}", std::process::id()));
    for k in [3, 4, 5, 6, 7, 8] {
        for sim in [0.0f32, 0.3, 0.4, 0.5, 0.6] {
            let config = DedupConfig {
                index: IndexConfig {
                    k,
                    capacity: 10_000,
                    blocks: None,
                },
                min_similarity: sim,
                ..DedupConfig::default()
            };
            let mut fp = 0usize;
            let mut tp = 0usize;
            let mut orig_fp = 0usize;
            let mut short = 0usize;
            let mut recalls = Vec::new();
            let (mut tp10, mut n10) = (0usize, 0usize);
            for (ki, (_, variants)) in kinds.iter().enumerate() {
                let _ = std::fs::remove_dir_all(&tmp);
                let mut d = Deduper::open(&tmp, config).unwrap();
                for (i, b) in bodies.iter().enumerate() {
                    let dec = d.check_insert(i as u64, &page(b)).unwrap();
                    if ki == 0 {
                        short += usize::from(dec.short);
                        if dec.verdict != Verdict::New {
                            orig_fp += 1;
                        }
                    }
                }
                let mut hit = 0;
                for (i, v) in variants.iter().enumerate() {
                    let doc = 1_000_000 + i as u64;
                    match d.check_insert(doc, v).unwrap().verdict {
                        Verdict::New => {}
                        Verdict::Exact { of } | Verdict::Near { of, .. } => {
                            if of == i as u64 {
                                hit += 1;
                            } else {
                                fp += 1;
                            }
                        }
                    }
                }
                tp += hit;
                if ki != 4 {
                    tp10 += hit;
                    n10 += variants.len();
                }
                recalls.push(hit as f64 / variants.len() as f64);
                drop(d);
            }
            let _ = std::fs::remove_dir_all(&tmp);
            let mut d = Deduper::open(&tmp, config).unwrap();
            let mut thin_fp = 0usize;
            for (i, page) in thin.iter().enumerate() {
                if d.check_insert(i as u64, page).unwrap().verdict != Verdict::New {
                    thin_fp += 1;
                }
            }
            drop(d);
            fp += orig_fp + thin_fp;
            let precision = tp as f64 / (tp + fp).max(1) as f64;
            print!(
                "{k:>2} {sim:>5.2} | {precision:>5.3} {:>5.3} |",
                tp10 as f64 / n10 as f64
            );
            for r in recalls {
                print!(" {r:>11.3}");
            }
            println!(" | {orig_fp:>7} {thin_fp:>8} {short:>6}");
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
