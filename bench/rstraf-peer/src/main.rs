//! Extracts every page of a benchmark set (`DIR/ground-truth.json` and
//! `DIR/html/ID.html.gz`) with rs-trafilatura and writes one text file per
//! page, `OUT/ID.txt`, as the extraction bench's `WCXB_DUMP` does, so that
//! `bench/extract_peer.py` scores both alike. Prints the median ms/page.
//!
//! ```text
//! cargo run --release --manifest-path bench/rstraf-peer/Cargo.toml -- ../shared/bench/wcxb-dev /tmp/rstraf
//! ```

use std::io::Read;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: rstraf-peer SET_DIR OUT_DIR");
        std::process::exit(2);
    };
    let truth =
        std::fs::read_to_string(format!("{dir}/ground-truth.json")).expect("ground-truth.json");
    let truth: serde_json::Value = serde_json::from_str(&truth).expect("ground truth is JSON");
    std::fs::create_dir_all(&out).expect("output directory");
    let mut ms = Vec::new();
    for id in truth.as_object().expect("an object of pages").keys() {
        let gz = std::fs::read(format!("{dir}/html/{id}.html.gz")).expect("page file");
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut bytes)
            .expect("gzip");
        let html = String::from_utf8_lossy(&bytes);
        let t = Instant::now();
        let text = rs_trafilatura::extract(&html)
            .map(|r| r.content_text)
            .unwrap_or_default();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        std::fs::write(format!("{out}/{id}.txt"), text).expect("write text");
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "rs-trafilatura: {} pages, median {:.2} ms/page",
        ms.len(),
        ms[ms.len() / 2]
    );
}
