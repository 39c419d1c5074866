//! The extraction benchmark's scoring, as its `score.py` does: 4-gram
//! shingles of `\w+` tokens, per-page normalised, precision and recall
//! macro-averaged. Shared by the benchmark and the Markdown report.

use std::collections::HashMap;

pub fn tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect()
}

pub fn shingles<'a>(toks: &[&'a str]) -> HashMap<Vec<&'a str>, i64> {
    let mut out = HashMap::new();
    if toks.is_empty() {
        return out;
    }
    if toks.len() <= 4 {
        out.insert(toks.to_vec(), 1);
        return out;
    }
    for w in toks.windows(4) {
        *out.entry(w.to_vec()).or_insert(0) += 1;
    }
    out
}

/// Normalised (tp, fp, fn) of one page.
pub fn score_page(truth: &str, pred: &str) -> (f64, f64, f64) {
    let t = shingles(&tokens(truth));
    let p = shingles(&tokens(pred));
    let (mut tp, mut fp, mut fn_) = (0i64, 0i64, 0i64);
    for key in t.keys().chain(p.keys().filter(|k| !t.contains_key(*k))) {
        let (a, b) = (
            t.get(key).copied().unwrap_or(0),
            p.get(key).copied().unwrap_or(0),
        );
        tp += a.min(b);
        if b > a { fp += b - a } else { fn_ += a - b }
    }
    let total = (tp + fp + fn_) as f64;
    if total == 0.0 {
        (0.0, 0.0, 0.0)
    } else {
        (tp as f64 / total, fp as f64 / total, fn_ as f64 / total)
    }
}

/// A page's precision and recall against `truth` (none where undefined):
/// an exact match scores 1.
pub fn page_precision_recall(truth: &str, pred: &str) -> (Option<f64>, Option<f64>) {
    let (tp, fp, fn_) = score_page(truth, pred);
    let exact = fp == 0.0 && fn_ == 0.0;
    let p = (tp + fp > 0.0).then(|| if exact { 1.0 } else { tp / (tp + fp) });
    let r = (tp + fn_ > 0.0).then(|| if exact { 1.0 } else { tp / (tp + fn_) });
    (p, r)
}

/// F1 of the mean precision and the mean recall.
pub fn macro_f1(ps: &[f64], rs: &[f64]) -> (f64, f64, f64) {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (p, r) = (mean(ps), mean(rs));
    (2.0 * p * r / (p + r), p, r)
}
