//! `nearcrawl` binary.
//!
//! The binary is the one of this build (`target/<profile>/nearcrawl`).
//! Before the first test uses it, it is brought up to date with `cargo
//! build` (a no-op under `cargo test --workspace`, which has built it), so
//! `cargo test -p nearcrawl-tests` never runs a stale binary.
//! `NEARCRAWL_BIN` overrides the path and skips the build.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The `nearcrawl` binary of this build: beside the `deps/` folder that holds
/// this test executable.
pub fn nearcrawl_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("NEARCRAWL_BIN") {
            return PathBuf::from(p);
        }
        let exe = std::env::current_exe().expect("test executable path");
        let dir = exe
            .parent()
            .and_then(|d| d.parent())
            .expect("target/<profile>/ folder");
        let release = dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "--quiet",
            "--package",
            "nearcrawl-cli",
            "--bin",
            "nearcrawl",
        ]);
        if release {
            build.arg("--release");
        }
        let status = build
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build for the nearcrawl binary");
        assert!(
            status.success(),
            "cargo build of the nearcrawl binary failed"
        );
        let bin = dir.join(format!("nearcrawl{}", std::env::consts::EXE_SUFFIX));
        assert!(
            bin.exists(),
            "{} not found after building it",
            bin.display()
        );
        bin
    })
    .clone()
}

/// Runs `nearcrawl ARGS` with `stdin` as standard input.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(nearcrawl_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nearcrawl");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait for nearcrawl")
}

/// The shared benchmark data beside the checkout.
pub fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// Article bodies of the shared extraction benchmark with more than
/// `min_words` words (ASCII-only ones if `ascii`), sorted and deduplicated:
/// real text for the tests.
pub fn article_bodies(min_words: usize, ascii: bool) -> Vec<String> {
    let path = shared_dir().join("bench/extraction/ground-truth.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let gt: serde_json::Value = serde_json::from_str(&text).expect("ground truth is JSON");
    let mut out: Vec<String> = gt
        .as_object()
        .expect("ground truth is an object")
        .values()
        .map(|v| v["articleBody"].as_str().unwrap_or("").to_string())
        .filter(|b| (!ascii || b.is_ascii()) && b.split_whitespace().count() > min_words)
        .collect();
    out.sort();
    out.dedup();
    out
}
