//! Replays a crawl's verdicts (its `visits.jsonl` order, `duplicates.jsonl`
//! and `pages-*.jsonl`) through [`DustRules`] as if prediction had been on:
//! how many duplicate fetches a rule would have saved, and how many pages
//! the gate kept it would have skipped.
//!
//!     cargo run --release -p nearcrawl-index --example dust_replay -- CRAWL_DIR

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use nearcrawl_index::dust::{DustRules, Predicted, Standing};

fn lines(path: &std::path::Path) -> impl Iterator<Item = serde_json::Value> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("a crawl's output folder"));
    let mut original: HashMap<String, String> = HashMap::new();
    for d in lines(&dir.join("duplicates.jsonl")) {
        if let (Some(u), Some(o)) = (d["url"].as_str(), d["duplicate_of"].as_str()) {
            original.insert(u.into(), o.into());
        }
    }
    let mut written: HashSet<String> = HashSet::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("pages-") && name.ends_with(".jsonl") {
            for p in lines(&entry.path()) {
                if let Some(u) = p["url"].as_str() {
                    if !original.contains_key(u) {
                        written.insert(u.into());
                    }
                }
            }
        }
    }
    let mut rules = DustRules::default();
    let (mut saved, mut wrong, mut checks, mut dups) = (0, 0, 0, 0);
    let mut wrong_shown = 0;
    for v in lines(&dir.join("visits.jsonl")) {
        let Some(url) = v["url"].as_str() else {
            continue;
        };
        let is_dup = original.contains_key(url);
        dups += usize::from(is_dup);
        match rules.predict(url) {
            Predicted::Skip { rule, target } => {
                rules.note_skipped(rule);
                if is_dup {
                    saved += 1;
                } else if written.contains(url) {
                    wrong += 1;
                    if wrong_shown < 10 {
                        wrong_shown += 1;
                        println!(
                            "kept page skipped: {url} -> {target} by {}",
                            rules.rules()[rule].rule
                        );
                    }
                }
                continue;
            }
            Predicted::Check { .. } => checks += 1,
            Predicted::Fetch => {}
        }
        if let Some(o) = original.get(url) {
            rules.observe_duplicate(url, o);
        } else if written.contains(url) {
            rules.observe_new(url);
        }
        for id in rules.retired(false) {
            println!("retired: {}", rules.rules()[id].rule);
        }
    }
    println!(
        "duplicates {dups}, fetches saved {saved} ({:.1}%), kept pages skipped {wrong}, checks {checks}",
        100.0 * saved as f64 / dups.max(1) as f64
    );
    let mut proven: Vec<_> = rules
        .rules()
        .iter()
        .filter(|r| r.standing != Standing::Learning)
        .collect();
    proven.sort_by_key(|r| std::cmp::Reverse(r.skipped));
    println!(
        "{} rules, {} proven or retired",
        rules.rules().len(),
        proven.len()
    );
    for r in proven.iter().take(25) {
        println!(
            "  {:?} support {} counter {} skipped {}: {}",
            r.standing, r.support, r.counterexamples, r.skipped, r.rule
        );
    }
}
