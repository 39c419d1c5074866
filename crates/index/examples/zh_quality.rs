//! The duplicate gate on Chinese text, with its default settings: recall
//! of edited copies (characters replaced, a line added or removed), short
//! texts included, and precision against distinct pages of one kind.
//!
//! ```text
//! apt-get install -y manpages-zh
//! bash crates/simhash/examples/make-zh-corpus.sh /tmp/zh-corpus
//! cargo run --release -p nearcrawl-index --example zh_quality -- /tmp/zh-corpus
//! ```
//!
//! `ZH_K=N` in the environment sets k (default 8) to see what it costs.
//!
//! Originals: the Simplified Chinese manual pages (long texts, up to 3,000
//! characters each), and one passage of 40 to 90 characters from each
//! (short texts: under the gate's 100 tokens, a CJK character being a
//! token). Manual pages share their section headings and phrasing, so the
//! originals are also negatives: those judged duplicates of another are
//! counted and listed (some pages exist under several names, some
//! passages in several pages) and their variants left out. Each other
//! original is recorded, then its variant judged: a duplicate of its own
//! original is a true positive, of anything else a false positive.

use std::path::PathBuf;

use nearcrawl_index::{DedupConfig, Deduper, Verdict};

mod common;
use common::Rng;

fn is_han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// `count` Han characters of `text` replaced by others from `pool`.
fn replace_chars(text: &str, count: usize, pool: &[char], rng: &mut Rng) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let han: Vec<usize> = (0..chars.len()).filter(|&i| is_han(chars[i])).collect();
    for _ in 0..count.min(han.len()) {
        chars[han[rng.below(han.len())]] = pool[rng.below(pool.len())];
    }
    chars.into_iter().collect()
}

fn share(text: &str, rate: f64) -> usize {
    ((text.chars().filter(|&c| is_han(c)).count() as f64 * rate).round() as usize).max(1)
}

/// A passage of 40 to 90 characters from the middle of a page, cut at
/// line ends, with at least 30 Han characters; none if the page has none.
fn passage(text: &str, rng: &mut Rng) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let start = lines.len() / 3 + rng.below(lines.len() / 3 + 1);
    let mut out = String::new();
    for l in lines.iter().skip(start) {
        if out.chars().count() + l.chars().count() > 90 {
            break;
        }
        out.push_str(l);
        out.push('\n');
    }
    let han = out.chars().filter(|&c| is_han(c)).count();
    (han >= 30 && out.chars().count() >= 40).then_some(out)
}

#[derive(Default)]
struct Tally {
    tp: usize,
    fp: usize,
    n: usize,
}

/// Records `originals` in a fresh gate, then judges each variant; returns
/// the tally and the originals judged duplicates of others.
fn run(originals: &[String], variants: &[Option<String>]) -> (Tally, Vec<(usize, usize)>) {
    let dir = std::env::temp_dir().join(format!("nearcrawl-zh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = DedupConfig::default();
    if let Some(k) = std::env::var("ZH_K").ok().and_then(|k| k.parse().ok()) {
        config.index.k = k;
    }
    let mut gate = Deduper::open(&dir, config).expect("open");
    let mut joined = Vec::new();
    for (i, o) in originals.iter().enumerate() {
        if let Some((of, ..)) = gate
            .check_insert(i as u64, o.as_str())
            .unwrap()
            .verdict
            .duplicate_of()
        {
            joined.push((i, of as usize));
        }
    }
    let mut t = Tally::default();
    for (i, v) in variants.iter().enumerate() {
        // An original judged a duplicate is not recorded: its variants have
        // no page of their own to be found as.
        let Some(v) = v.as_ref().filter(|_| !joined.iter().any(|&(j, _)| j == i)) else {
            continue;
        };
        t.n += 1;
        let verdict = gate.judge(v.as_str(), |_| true).unwrap().decision.verdict;
        match verdict {
            Verdict::New => {}
            _ if verdict.duplicate_of().map(|d| d.0) == Some(i as u64) => t.tp += 1,
            _ => t.fp += 1,
        }
    }
    drop(gate);
    let _ = std::fs::remove_dir_all(&dir);
    (t, joined)
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: zh_quality CORPUS_DIR"),
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let pages: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .map(|t| t.chars().take(3000).collect())
        .collect();
    let pool: Vec<char> = pages.concat().chars().filter(|&c| is_han(c)).collect();
    let mut rng = Rng(2026);
    let short: Vec<String> = pages.iter().filter_map(|p| passage(p, &mut rng)).collect();
    println!(
        "{} pages ({} files), {} short passages; gate defaults",
        pages.len(),
        files.len(),
        short.len()
    );
    println!(
        "{:<34} {:>6} {:>7} {:>9}",
        "variant", "n", "recall", "precision"
    );

    let line = "本页面由镜像站点自动生成，最后更新于今天。\n";
    type Variant<'a> = (&'a str, Box<dyn Fn(&str, &mut Rng) -> String + 'a>);
    let long_kinds: Vec<Variant> = vec![
        (
            "long: 1% of characters replaced",
            Box::new(|t: &str, r: &mut Rng| replace_chars(t, share(t, 0.01), &pool, r)),
        ),
        (
            "long: 2% replaced",
            Box::new(|t: &str, r: &mut Rng| replace_chars(t, share(t, 0.02), &pool, r)),
        ),
        (
            "long: 5% replaced",
            Box::new(|t: &str, r: &mut Rng| replace_chars(t, share(t, 0.05), &pool, r)),
        ),
        (
            "long: a line added",
            Box::new(|t: &str, _: &mut Rng| format!("{line}{t}")),
        ),
        (
            "long: a line removed",
            Box::new(|t: &str, r: &mut Rng| {
                let lines: Vec<&str> = t.lines().collect();
                let cut = r.below(lines.len().max(1));
                lines
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != cut)
                    .map(|(_, l)| *l)
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        ),
    ];
    let short_kinds: Vec<Variant> = vec![
        (
            "short: 1 character replaced",
            Box::new(|t: &str, r: &mut Rng| replace_chars(t, 1, &pool, r)),
        ),
        (
            "short: 3 replaced",
            Box::new(|t: &str, r: &mut Rng| replace_chars(t, 3, &pool, r)),
        ),
        (
            "short: 5 replaced",
            Box::new(|t: &str, r: &mut Rng| replace_chars(t, 5, &pool, r)),
        ),
        (
            "short: a phrase added",
            Box::new(|t: &str, _: &mut Rng| format!("镜像：{t}")),
        ),
    ];
    let (mut all_tp, mut all_fp, mut all_n) = (0, 0, 0);
    for (originals, kinds) in [(&pages, &long_kinds), (&short, &short_kinds)] {
        let mut joined_shown = false;
        for (name, make) in kinds {
            let variants: Vec<Option<String>> = originals
                .iter()
                .map(|o| {
                    let v = make(o, &mut rng);
                    (v != *o).then_some(v)
                })
                .collect();
            let (t, joined) = run(originals, &variants);
            let p = t.tp as f64 / (t.tp + t.fp).max(1) as f64;
            println!(
                "{name:<34} {:>6} {:>7.3} {:>9.3}",
                t.n,
                t.tp as f64 / t.n as f64,
                p
            );
            (all_tp, all_fp, all_n) = (all_tp + t.tp, all_fp + t.fp, all_n + t.n);
            if !joined_shown {
                joined_shown = true;
                println!("  originals judged duplicates of another: {}", joined.len());
                for &(a, b) in joined.iter().take(5) {
                    let head = |s: &str| {
                        s.chars()
                            .filter(|c| !c.is_whitespace())
                            .take(24)
                            .collect::<String>()
                    };
                    println!("    {} ~ {}", head(&originals[a]), head(&originals[b]));
                }
            }
        }
    }
    println!(
        "all variants: recall {:.3}, precision {:.3} ({all_n} variants)",
        all_tp as f64 / all_n as f64,
        all_tp as f64 / (all_tp + all_fp).max(1) as f64
    );
}
