//! webrecorder's `cdxj-indexer` (on warcio), the indexer pywb's users run
//! on WARC files: a crawl's CDXJ index must be the lines it makes of the
//! same WARC file. Installed by `tests/run` (from PyPI, into
//! `target/warcio-venv`, where `bench/warc_check.py` finds it too).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `cdxj-indexer` of `target/warcio-venv`.
pub fn cdxj_indexer() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/warcio-venv/bin/cdxj-indexer");
    assert!(
        bin.exists(),
        "{} is missing: tests/run installs it (python3 -m venv, pip install cdxj-indexer)",
        bin.display()
    );
    bin
}

/// The WARC files of crawl output `out` whose `.cdxj` is not what
/// `cdxj-indexer --sort` makes of them, with the first differing lines;
/// and the lines compared.
pub fn index_differences(out: &Path) -> (Vec<String>, usize) {
    let indexer = cdxj_indexer();
    let mut warcs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    warcs.sort();
    assert!(!warcs.is_empty(), "no WARC file in {}", out.display());
    let (mut differ, mut lines) = (Vec::new(), 0);
    for warc in warcs {
        let done = Command::new(&indexer)
            .arg("--sort")
            .arg(&warc)
            .output()
            .unwrap();
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let theirs = String::from_utf8(done.stdout).unwrap();
        let name = warc.to_string_lossy().replace(".warc.gz", ".cdxj");
        let ours = std::fs::read_to_string(&name).unwrap_or_default();
        lines += theirs.lines().count();
        let first_difference = (ours.lines().zip(theirs.lines())).find(|(a, b)| a != b);
        if ours != theirs {
            differ.push(format!("{name}: {first_difference:?}"));
        }
    }
    (differ, lines)
}
