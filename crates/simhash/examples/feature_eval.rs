//! Chooses the simhash defaults by measurement: for each feature and weight
//! setting, how close do edited copies of a page land (recall at distance k),
//! and how close do unrelated pages land (false positives at k)?
//!
//! ```text
//! cargo run --release -p nearcrawl-simhash --example feature_eval [-- ZH_DIR]
//! ```
//!
//! Latin-script text: the article bodies of `../shared/bench/extraction`, with
//! 1-20% of words replaced, deleted or inserted. Chinese text (when ZH_DIR,
//! made by `make-zh-corpus.sh`, is given): the same with Han characters.
//! Only documents with at least 100 tokens are used: short texts are the
//! index's business (exact matching), not simhash's.

mod common;

use common::*;
use nearcrawl_simhash::{Fingerprint, Options, Simhasher, Weighting};

const RATES: [f64; 5] = [0.01, 0.02, 0.05, 0.10, 0.20];
const KS: [u32; 4] = [3, 6, 9, 12];

fn main() {
    let latin: Vec<String> = article_bodies()
        .into_iter()
        .map(|(_, b)| b)
        .filter(|b| han_count(b) == 0 && b.split_whitespace().count() >= 100)
        .collect();
    let latin = distinct(latin);
    let vocab_text = latin.join(" ");
    let vocab: Vec<&str> = vocab_text.split_whitespace().collect();
    println!("# Latin-script articles: {} documents", latin.len());
    run(&latin, &|t, r, rng| edit_words(t, r, &vocab, rng));

    if let Some(dir) = std::env::args().nth(1) {
        let zh: Vec<String> = text_files(dir.as_ref())
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| han_count(t) >= 300)
            .collect();
        let zh = distinct(zh);
        let han: Vec<char> = zh
            .iter()
            .flat_map(|t| t.chars())
            .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
            .collect();
        println!("\n# Chinese documents: {} documents", zh.len());
        run(&zh, &|t, r, rng| edit_chars(t, r, &han, rng));
    }
}

type Editor<'a> = dyn Fn(&str, f64, &mut Rng) -> String + 'a;

fn run(docs: &[String], edit: &Editor) {
    print!(
        "{:<19} {:>6} {:>5} {:>5}",
        "features", "mean", "min", "p.1%"
    );
    for k in KS {
        print!(" | k={k:<2} {:>6}", "FPR");
        for r in RATES {
            print!(" {:>5}", format!("R{}", (r * 100.0) as u32));
        }
    }
    println!();
    for shingle in 1..=4 {
        for weighting in [Weighting::Tf, Weighting::SublinearTf] {
            let mut h = Simhasher::new(Options { shingle, weighting }).unwrap();
            let fps: Vec<Fingerprint> = docs.iter().map(|d| h.hash(d).fingerprint).collect();
            let mut unrelated = pairwise(&fps);
            unrelated.sort_unstable();
            let p01 = unrelated[unrelated.len() / 1000];
            let mut rng = Rng(42);
            let near: Vec<Vec<u32>> = RATES
                .iter()
                .map(|&r| {
                    docs.iter()
                        .zip(&fps)
                        .map(|(d, fp)| h.hash(&edit(d, r, &mut rng)).fingerprint.distance(*fp))
                        .collect()
                })
                .collect();
            let name = format!("{shingle}-gram {weighting:?}");
            print!(
                "{name:<19} {:>6.1} {:>5} {:>5}",
                mean(&unrelated),
                unrelated[0],
                p01
            );
            for k in KS {
                print!(" | k={k:<2} {:>6.4}", share_within(&unrelated, k));
                for d in &near {
                    print!(" {:>5.2}", share_within(d, k));
                }
            }
            println!();
        }
    }
}
