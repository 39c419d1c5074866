//! Shared by the measurement examples: real text, seeded edits, distance
//! statistics.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use nearcrawl_simhash::Fingerprint;

/// The article-extraction benchmark's hand-made article bodies, beside the
/// checkout in `../shared`.
pub fn ground_truth_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/extraction/ground-truth.json")
}

/// The 50 of them the repository ships (what the tests read).
pub fn fixture_ground_truth_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/articles/ground-truth.json")
}

/// `(id, article body)` of every page in the benchmark's ground truth,
/// sorted by id.
pub fn article_bodies() -> Vec<(String, String)> {
    article_bodies_in(&ground_truth_path())
}

/// `(id, article body)` of every page in the ground truth at `path`,
/// sorted by id.
pub fn article_bodies_in(path: &Path) -> Vec<(String, String)> {
    let raw = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e} (is ../shared beside the checkout?)",
            path.display()
        )
    });
    let json: serde_json::Value = serde_json::from_str(&raw).expect("ground truth is JSON");
    let mut out: Vec<(String, String)> = json
        .as_object()
        .expect("ground truth is an object")
        .iter()
        .map(|(id, v)| {
            (
                id.clone(),
                v["articleBody"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// English-like: at least 99% ASCII bytes (typographic quotes allowed).
pub fn is_english(text: &str) -> bool {
    let ascii = text.bytes().filter(|b| b.is_ascii()).count();
    !text.is_empty() && ascii * 100 / text.len() >= 99
}

pub fn han_count(s: &str) -> usize {
    s.chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count()
}

/// The throughput corpora: English and Japanese article bodies from the
/// shared set, the Chinese articles of `tests/data/zh-articles.txt`, all
/// the shared set's article bodies (mixed), and the
/// `.txt` files of `$NEARCRAWL_ZH_DIR` when set.
pub fn throughput_corpora() -> Vec<(&'static str, Vec<String>)> {
    let bodies: Vec<String> = article_bodies().into_iter().map(|(_, b)| b).collect();
    let zh = include_str!("../../tests/data/zh-articles.txt")
        .split("\n=== ")
        .skip(1)
        .map(str::to_string)
        .collect();
    let mut out = vec![
        (
            "english",
            bodies
                .iter()
                .filter(|b| b.len() > 500 && is_english(b))
                .cloned()
                .collect(),
        ),
        (
            "japanese",
            bodies
                .iter()
                .filter(|b| b.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c)))
                .cloned()
                .collect(),
        ),
        ("chinese", zh),
        // Every article body of the shared set, whatever its language: what
        // a crawl of news sites meets.
        (
            "mixed",
            bodies.iter().filter(|b| !b.is_empty()).cloned().collect(),
        ),
    ];
    if let Ok(dir) = std::env::var("NEARCRAWL_ZH_DIR") {
        let docs = text_files(dir.as_ref())
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        out.push(("chinese-manpages", docs));
    }
    out
}

/// The settings the throughput figures are given for.
pub fn throughput_settings() -> [(&'static str, nearcrawl_simhash::Options); 3] {
    use nearcrawl_simhash::{Options, Weighting};
    let tf = |shingle| Options {
        shingle,
        weighting: Weighting::Tf,
    };
    [
        ("default", Options::default()),
        ("1gram-tf", tf(1)),
        ("3gram-tf", tf(3)),
    ]
}

/// Every `.txt` file of a directory, sorted by name.
pub fn text_files(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "txt"))
        .map(|e| {
            let p = e.path();
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect();
    out.sort();
    out
}

/// splitmix64: a small seeded generator, so every run plants the same edits.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Edits a share `rate` of the words: each edit replaces the word with one
/// from `vocab`, deletes it, or inserts a vocab word after it, in equal parts.
pub fn edit_words(text: &str, rate: f64, vocab: &[&str], rng: &mut Rng) -> String {
    let mut out: Vec<&str> = Vec::new();
    for w in text.split_whitespace() {
        if rng.chance(rate) {
            match rng.below(3) {
                0 => out.push(vocab[rng.below(vocab.len())]),
                1 => {}
                _ => {
                    out.push(w);
                    out.push(vocab[rng.below(vocab.len())]);
                }
            }
        } else {
            out.push(w);
        }
    }
    out.join(" ")
}

/// The same at the character level, for text without spaces: each Han
/// character is, with probability `rate`, replaced, deleted or followed by
/// an inserted Han character from `vocab`.
pub fn edit_chars(text: &str, rate: f64, vocab: &[char], rng: &mut Rng) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if ('\u{4e00}'..='\u{9fff}').contains(&c) && rng.chance(rate) {
            match rng.below(3) {
                0 => out.push(vocab[rng.below(vocab.len())]),
                1 => {}
                _ => {
                    out.push(c);
                    out.push(vocab[rng.below(vocab.len())]);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Drops exact repeats (after whitespace folding): a corpus's own copies
/// are not unrelated pairs.
pub fn distinct(docs: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    docs.into_iter()
        .filter(|d| seen.insert(d.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect()
}

/// Share of distances at or below k.
pub fn share_within(d: &[u32], k: u32) -> f64 {
    if d.is_empty() {
        return f64::NAN;
    }
    d.iter().filter(|&&x| x <= k).count() as f64 / d.len() as f64
}

pub fn mean(d: &[u32]) -> f64 {
    d.iter().map(|&x| x as f64).sum::<f64>() / d.len().max(1) as f64
}

/// Distances between every pair of distinct documents.
pub fn pairwise(fps: &[Fingerprint]) -> Vec<u32> {
    let mut out = Vec::with_capacity(fps.len() * fps.len() / 2);
    for i in 0..fps.len() {
        for j in i + 1..fps.len() {
            out.push(fps[i].distance(fps[j]));
        }
    }
    out
}
