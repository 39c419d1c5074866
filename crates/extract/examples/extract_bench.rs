//! Extraction speed over a directory of HTML pages, as a crawl sees them.
//!
//! ```text
//! cargo run --release -p nearcrawl-extract --example extract_bench -- DIR [--rounds N] [--digest FILE] [--markdown]
//! ```
//!
//! Reads every `*.html` (and `*.html.gz`) under DIR into memory, then
//! extracts each page (with its `file://` path as URL, so links resolve),
//! N rounds (default 3). Prints per round: pages, MB of HTML, total
//! seconds, pages/s, MB/s and the median ms/page. `--digest FILE` writes
//! one line per page with a hash of everything the extractor returned, so
//! a change meant to be faster only can be checked to change no output
//! (`diff` two digests); `--markdown` asks for Markdown too (with links),
//! so the digest covers it. Each round also prints ms a page by stage
//! ([`extract_timed`]'s laps), on jemalloc as the crawl runs. With `EXTRACT_BENCH_EACH=1` set, each page's
//! milliseconds, bytes and path go to stderr (first round), to see which
//! pages the time goes to. DIR can be the Java SE API docs
//! (`/usr/share/doc/openjdk-17-jre-headless/api`, apt-get install -y
//! openjdk-17-doc) or `../shared/bench/wcxb-dev/html`.

use std::hash::Hasher;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use nearcrawl_extract::{Input, MarkdownOptions, Stage, extract_timed};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const STAGES: [Stage; 4] = [Stage::Parse, Stage::Extract, Stage::Links, Stage::Language];

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir = None;
    let (mut rounds, mut digest, mut markdown) = (3usize, None, None);
    // Each page's ms, bytes and path on stderr (first round).
    let slowest = std::env::var_os("EXTRACT_BENCH_EACH").is_some();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            "--digest" => digest = Some(PathBuf::from(args.next().expect("--digest FILE"))),
            "--markdown" => markdown = Some(MarkdownOptions { links: true }),
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let dir = dir.expect("usage: extract_bench DIR [--rounds N] [--digest FILE] [--markdown]");
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    let pages: Vec<(PathBuf, Vec<u8>)> = files.into_iter().map(|p| (p.clone(), read(&p))).collect();
    let bytes: usize = pages.iter().map(|(_, b)| b.len()).sum();
    println!(
        "{} pages, {:.1} MB of HTML under {}",
        pages.len(),
        bytes as f64 / 1e6,
        dir.display()
    );
    println!("round  total s  pages/s    MB/s  median ms");
    for round in 1..=rounds {
        let mut ms = Vec::with_capacity(pages.len());
        let mut lines = String::new();
        let mut by_stage = [0f64; STAGES.len()];
        let start = Instant::now();
        for (path, html) in &pages {
            let url = url::Url::from_file_path(path).ok();
            let input = Input {
                url: url.as_ref(),
                markdown,
                ..Input::default()
            };
            let t = Instant::now();
            let mut lap = t;
            let page = extract_timed(html, &input, &mut |stage| {
                let now = Instant::now();
                let slot = STAGES.iter().position(|s| *s == stage).unwrap_or(0);
                by_stage[slot] += (now - lap).as_secs_f64() * 1e3;
                lap = now;
            });
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            if slowest && round == 1 {
                eprintln!("{:.3} {} {}", ms[ms.len() - 1], html.len(), path.display());
            }
            if digest.is_some() && round == 1 {
                let mut h = fnv::FnvHasher::default();
                h.write(format!("{page:?}").as_bytes());
                lines.push_str(&format!("{:016x} {}\n", h.finish(), path.display()));
            }
        }
        let secs = start.elapsed().as_secs_f64();
        ms.sort_by(f64::total_cmp);
        println!(
            "{round:5} {secs:8.2} {:8.0} {:7.1} {:10.3}",
            pages.len() as f64 / secs,
            bytes as f64 / 1e6 / secs,
            ms[ms.len() / 2]
        );
        let stages: Vec<String> = STAGES
            .iter()
            .zip(by_stage)
            .map(|(s, ms)| format!("{s:?} {:.4}", ms / pages.len() as f64))
            .collect();
        println!("      ms a page by stage: {}", stages.join(", "));
        if let (Some(file), 1) = (&digest, round) {
            std::fs::File::create(file)
                .and_then(|mut f| f.write_all(lines.as_bytes()))
                .expect("digest file");
        }
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("a readable directory")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.to_string_lossy().ends_with(".html")
            || path.to_string_lossy().ends_with(".html.gz")
        {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).expect("a readable file");
    if !path.to_string_lossy().ends_with(".gz") {
        return raw;
    }
    let mut html = Vec::new();
    flate2::read::GzDecoder::new(&raw[..])
        .read_to_end(&mut html)
        .expect("gzip");
    html
}
