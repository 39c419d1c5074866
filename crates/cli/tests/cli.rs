//! Argument handling of the `nearcrawl` binary. (Its presence also makes
//! `cargo test --workspace` build the binary for the end-to-end tests.)

use std::process::Command;

fn nearcrawl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn help_lists_the_subcommands() {
    let out = nearcrawl(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for cmd in ["crawl", "fingerprint", "distance"] {
        assert!(help.contains(cmd), "{help}");
    }
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["fingerprint", "--shingle", "0"][..],
        &["fingerprint", "--shingle", "9"],
        &["fingerprint", "--weighting", "idf"],
        &["no-such-command"],
        &["crawl"],
    ] {
        let out = nearcrawl(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn options_change_the_fingerprint() {
    let dir = std::env::temp_dir().join(format!("nearcrawl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("t.txt");
    std::fs::write(
        &f,
        "one two three four five six seven eight nine ten one two",
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let line = |args: &[&str]| String::from_utf8(nearcrawl(args).stdout).unwrap();
    let default = line(&["fingerprint", f]);
    let tf = line(&["fingerprint", "--weighting", "tf", f]);
    let tri = line(&["fingerprint", "--shingle", "3", "--weighting", "tf", f]);
    assert!(default.contains("  12  "), "{default}");
    assert!(tri.contains("  10  "), "{tri}");
    assert_ne!(default[..16], tri[..16]);
    assert_ne!(tf[..16], tri[..16]);
}
