//! Writes the site of pages built by script (`nearcrawl_tests::app_site`)
//! and its planted truth, for `bench/render_bench.py`:
//!
//! ```sh
//! cargo run --release -p nearcrawl-tests --example app_site -- DIR 50
//! ```
//!
//! DIR/site is the site (serve it as `Nginx::serve_app` does); DIR/truth.jsonl
//! holds each page's path, kind, title and text.

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(dir), Some(per_kind)) = (args.first(), args.get(1).and_then(|n| n.parse().ok()))
    else {
        eprintln!("usage: app_site DIR PAGES_PER_KIND");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(dir);
    let planted = nearcrawl_tests::app_site::write(&dir.join("site"), per_kind);
    let mut truth = std::fs::File::create(dir.join("truth.jsonl")).unwrap();
    for p in &planted {
        let row =
            serde_json::json!({"path": p.path, "kind": p.kind, "title": p.title, "text": p.text});
        writeln!(truth, "{row}").unwrap();
    }
    eprintln!(
        "{} pages under {}",
        planted.len(),
        dir.join("site").display()
    );
}
