//! CJK tokenization, measured: single characters (the standard tokenizer),
//! character bigrams, and jieba word segmentation, on Chinese text with
//! planted character edits: recall of edited copies and false positives
//! between distinct documents at distance k, and tokenizer speed.
//!
//! ```text
//! bash crates/simhash/examples/make-zh-corpus.sh /tmp/zh-corpus
//! cargo run --release -p nearcrawl-simhash --features jieba-eval --example cjk_tokenizers -- /tmp/zh-corpus
//! ```

mod common;

use std::hash::Hasher;
use std::time::Instant;

use common::*;
use nearcrawl_simhash::hash::{FnvHasher, fnv1a};
use nearcrawl_simhash::{Fingerprint, Options, Simhasher, StandardTokenizer, Tokenizer, Weighting};

const RATES: [f64; 4] = [0.01, 0.02, 0.05, 0.10];
const KS: [u32; 3] = [3, 6, 9];

/// jieba words (HMM on for unknown words), lowercased; whitespace and
/// punctuation dropped.
struct Jieba(jieba_rs::Jieba);

impl Tokenizer for Jieba {
    fn tokenize<F: FnMut(u64)>(&mut self, text: &str, mut emit: F) {
        for w in self.0.cut(text, true) {
            if w.word.chars().any(|c| c.is_alphanumeric()) {
                emit(fnv1a(w.word.to_lowercase().as_bytes()));
            }
        }
    }
}

/// One token per pair of adjacent Han characters (a lone one gives itself);
/// other text as the standard tokenizer does.
struct HanBigrams;

impl Tokenizer for HanBigrams {
    fn tokenize<F: FnMut(u64)>(&mut self, text: &str, mut emit: F) {
        let is_han = |c: &char| ('\u{4e00}'..='\u{9fff}').contains(c);
        let chars: Vec<char> = text.chars().collect();
        let mut rest = String::new();
        for (i, c) in chars.iter().enumerate() {
            if !is_han(c) {
                rest.push(*c);
                continue;
            }
            rest.push(' ');
            let next_han = chars.get(i + 1).is_some_and(is_han);
            let prev_han = i > 0 && is_han(&chars[i - 1]);
            if next_han || !prev_han {
                let mut h = FnvHasher::default();
                h.write(c.encode_utf8(&mut [0; 4]).as_bytes());
                if next_han {
                    h.write(chars[i + 1].encode_utf8(&mut [0; 4]).as_bytes());
                }
                emit(h.finish());
            }
        }
        StandardTokenizer::new().tokenize(&rest, emit);
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: cjk_tokenizers ZH_DIR");
    let docs = distinct(
        text_files(dir.as_ref())
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| han_count(t) >= 300)
            .collect(),
    );
    let han: Vec<char> = docs
        .iter()
        .flat_map(|t| t.chars())
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .collect();
    let bytes: usize = docs.iter().map(|d| d.len()).sum();
    println!(
        "# {} Chinese documents, {:.1} MB",
        docs.len(),
        bytes as f64 / 1e6
    );
    print!(
        "{:<26} {:>7} {:>5} {:>5}",
        "tokenizer / features", "MB/s", "mean", "min"
    );
    for k in KS {
        print!(" | k={k} {:>6}", "FPR");
        for r in RATES {
            print!(" {:>5}", format!("R{}", (r * 100.0) as u32));
        }
    }
    println!();
    let t = Instant::now();
    let jieba = jieba_rs::Jieba::new();
    println!(
        "(jieba dictionary load: {:.0} ms)",
        t.elapsed().as_secs_f64() * 1e3
    );
    for shingle in [1, 2] {
        for weighting in [Weighting::Tf, Weighting::SublinearTf] {
            let o = Options { shingle, weighting };
            let tag = format!("{shingle}-gram {weighting:?}");
            eval(
                &format!("chars {tag}"),
                Simhasher::new(o).unwrap(),
                &docs,
                &han,
            );
            eval(
                &format!("bigrams {tag}"),
                Simhasher::with_tokenizer(HanBigrams, o).unwrap(),
                &docs,
                &han,
            );
            eval(
                &format!("jieba {tag}"),
                Simhasher::with_tokenizer(Jieba(jieba.clone()), o).unwrap(),
                &docs,
                &han,
            );
        }
    }
}

fn eval<T: Tokenizer>(name: &str, mut h: Simhasher<T>, docs: &[String], han: &[char]) {
    let bytes: usize = docs.iter().map(|d| d.len()).sum();
    let t = Instant::now();
    let fps: Vec<Fingerprint> = docs.iter().map(|d| h.hash(d).fingerprint).collect();
    let mbps = bytes as f64 / 1e6 / t.elapsed().as_secs_f64();
    let mut unrelated = pairwise(&fps);
    unrelated.sort_unstable();
    let mut rng = Rng(7);
    let near: Vec<Vec<u32>> = RATES
        .iter()
        .map(|&r| {
            docs.iter()
                .zip(&fps)
                .map(|(d, fp)| {
                    h.hash(&edit_chars(d, r, han, &mut rng))
                        .fingerprint
                        .distance(*fp)
                })
                .collect()
        })
        .collect();
    print!(
        "{name:<26} {mbps:>7.1} {:>5.1} {:>5}",
        mean(&unrelated),
        unrelated[0]
    );
    for k in KS {
        print!(" | k={k} {:>6.4}", share_within(&unrelated, k));
        for d in &near {
            print!(" {:>5.2}", share_within(d, k));
        }
    }
    println!();
}
