//! PDF text extraction crates against `pdftotext` (poppler), one candidate
//! per run (so that its peak RSS is its own):
//!
//! ```text
//! cargo run --release --manifest-path bench/pdf-peers/Cargo.toml -- CANDIDATE DIR
//! ```
//!
//! CANDIDATE: `oxide` (pdf_oxide), `extract` (pdf-extract on lopdf), or
//! `nearcrawl` (the crawler's own `nearcrawl-extract` PDF path, through
//! `nearcrawl extract --json` on each file: give its binary as
//! `NEARCRAWL=path`). DIR holds `NNNNN.pdf` and `ref/NNNNN.txt`, the text
//! `pdftotext -enc UTF-8` gave (pages split by form feeds). Per document:
//! word-level F1 against the reference (bags of `\w+` tokens, lowercased),
//! seconds, and whether it failed, panicked or took over 30 s. Prints the
//! median and 10th-percentile F1 over the documents pdftotext read, pages
//! per second, and the failures; `--each` lists every document.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let candidate = args.first().expect("CANDIDATE DIR").clone();
    let dir = PathBuf::from(args.get(1).expect("CANDIDATE DIR"));
    let each = args.iter().any(|a| a == "--each");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pdf"))
        .collect();
    files.sort();
    let (mut f1s, mut pages, mut secs) = (Vec::new(), 0usize, 0.0f64);
    let mut failures: HashMap<String, usize> = HashMap::new();
    for path in &files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let Ok(reference) = std::fs::read_to_string(dir.join("ref").join(format!("{stem}.txt")))
        else {
            continue;
        };
        let ref_words = words(&reference);
        if ref_words.len() < 50 {
            continue; // scanned or empty for pdftotext too: nothing to score
        }
        let t = Instant::now();
        let got = run(&candidate, path);
        let took = t.elapsed().as_secs_f64();
        secs += took;
        pages += reference.matches('\x0c').count().max(1);
        match got {
            Ok(text) => {
                let f1 = f1(&ref_words, &words(&text));
                if each {
                    println!("{stem}\t{f1:.3}\t{took:.3}\t{}", path.display());
                }
                f1s.push(f1);
            }
            Err(kind) => {
                if each {
                    println!("{stem}\t{kind}\t{took:.3}\t{}", path.display());
                }
                *failures.entry(kind).or_default() += 1;
                f1s.push(0.0);
            }
        }
    }
    f1s.sort_by(f64::total_cmp);
    let at = |q: f64| f1s[((f1s.len() as f64 - 1.0) * q) as usize];
    println!(
        "{candidate}: {} documents, {pages} pages in {secs:.1} s ({:.0} pages/s); word F1 median {:.3}, p10 {:.3}, mean {:.3}; failures {failures:?}",
        f1s.len(),
        pages as f64 / secs,
        at(0.5),
        at(0.1),
        f1s.iter().sum::<f64>() / f1s.len() as f64
    );
}

/// The candidate's text of `path`, on a thread of its own (a panic or a
/// hang is a failure of that document, not of the run).
fn run(candidate: &str, path: &Path) -> Result<String, String> {
    let (tx, rx) = mpsc::channel();
    let (candidate, path) = (candidate.to_string(), path.to_path_buf());
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| extract(&candidate, &path));
        let _ = tx.send(result.unwrap_or_else(|_| Err("panic".into())));
    });
    rx.recv_timeout(TIMEOUT)
        .unwrap_or_else(|_| Err("timeout".into()))
}

fn extract(candidate: &str, path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    match candidate {
        "oxide" => {
            let doc = pdf_oxide::document::PdfDocument::from_bytes(bytes)
                .map_err(|_| "open".to_string())?;
            doc.extract_all_text().map_err(|_| "text".to_string())
        }
        "extract" => pdf_extract::extract_text_from_mem(&bytes).map_err(|_| "text".to_string()),
        "nearcrawl" => {
            let bin = std::env::var("NEARCRAWL").expect("NEARCRAWL=path to the nearcrawl binary");
            let out = std::process::Command::new(bin)
                .args(["extract", "--json"])
                .arg(path)
                .output()
                .map_err(|e| e.to_string())?;
            let row: serde_json::Value =
                serde_json::from_slice(&out.stdout).map_err(|_| "failed".to_string())?;
            row["text"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| "failed".to_string())
        }
        _ => panic!("unknown candidate {candidate}"),
    }
}

fn words(text: &str) -> HashMap<String, usize> {
    let mut bag = HashMap::new();
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if !w.is_empty() {
            *bag.entry(w.to_lowercase()).or_default() += 1;
        }
    }
    bag
}

fn f1(truth: &HashMap<String, usize>, got: &HashMap<String, usize>) -> f64 {
    let total = |b: &HashMap<String, usize>| b.values().sum::<usize>();
    let common: usize = truth
        .iter()
        .map(|(w, n)| (*n).min(got.get(w).copied().unwrap_or(0)))
        .sum();
    let (t, g) = (total(truth), total(got));
    if common == 0 || t == 0 || g == 0 {
        return 0.0;
    }
    let (p, r) = (common as f64 / g as f64, common as f64 / t as f64);
    2.0 * p * r / (p + r)
}
