//! Where a crawl's state bytes go: live keys and values per tree and per
//! record kind (the key's first byte), and the files beside the trees (the
//! gate's records, the outbox, the documents' URLs, the frontier's queue
//! and seen set), against the size on disk.
//!
//! ```text
//! cargo run --release -p nearcrawl-crawl --example state_bytes -- OUT_DIR
//! ```
//!
//! Run it on a finished crawl's output directory (it opens `OUT_DIR/state`).

mod common;

use std::collections::BTreeMap;

fn main() {
    let out = std::env::args().nth(1).expect("usage: state_bytes OUT_DIR");
    let dir = std::path::Path::new(&out).join("state");
    let on_disk: u64 = common::dir_bytes(&dir);
    let db = sled::Config::new()
        .path(&dir)
        .open()
        .expect("opens the state");
    let mut total = 0u64;
    for name in db.tree_names() {
        let tree = db.open_tree(&name).expect("tree");
        let mut kinds: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
        for kv in tree.iter() {
            let (k, v) = kv.expect("readable");
            let e = kinds.entry(k.first().copied().unwrap_or(0)).or_default();
            e.0 += 1;
            e.1 += (k.len() + v.len()) as u64;
        }
        let bytes: u64 = kinds.values().map(|e| e.1).sum();
        total += bytes;
        println!(
            "tree {:?}: {} records, {} bytes",
            String::from_utf8_lossy(&name),
            kinds.values().map(|e| e.0).sum::<u64>(),
            bytes
        );
        // Tagged keys (the crawl tree) by kind; hashed ones only in total.
        if kinds.len() > 32 {
            continue;
        }
        for (kind, (n, b)) in kinds {
            let shown = if kind.is_ascii_graphic() {
                (kind as char).to_string()
            } else {
                format!("0x{kind:02x}")
            };
            println!(
                "  {shown}: {n} records, {b} bytes ({:.0} B each)",
                b as f64 / n.max(1) as f64
            );
        }
    }
    // Files beside sled's: all live (the queue file holds records of done
    // URLs too, until a checkpoint rewrites it).
    let mut files: Vec<String> = ["gate.records", "outbox", "docs", "seen"]
        .map(String::from)
        .to_vec();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("queue.") {
            files.push(name);
        }
    }
    for file in files {
        let len = std::fs::metadata(dir.join(&file)).map_or(0, |m| m.len());
        println!("file {file}: {len} bytes");
        total += len;
    }
    println!("live keys, values and files: {total} bytes; on disk: {on_disk} bytes");
}
