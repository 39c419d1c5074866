//! `nearcrawl` binary.
//!
//! Run these tests with `cargo test --workspace`: that builds the binary
//! (the CLI crate has integration tests of its own, which makes cargo build
//! it) before any test runs. `NEARCRAWL_BIN` overrides the path.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `nearcrawl` binary of this build: beside the `deps/` folder that holds
/// this test executable.
pub fn nearcrawl_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("NEARCRAWL_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>/ folder");
    let bin = dir.join(format!("nearcrawl{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} not found: run the tests with `cargo test --workspace`, or set NEARCRAWL_BIN",
        bin.display()
    );
    bin
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
