//! `spider-peer URL OUT_DIR [CONCURRENCY] [transform]`: crawls URL with the
//! spider crate (robots off, same-site only) and appends every page to
//! OUT_DIR/pages.html (URL line, length line, body: one file, as a corpus
//! shard; a file per page cost ~0.8 ms of system time each here), then prints `pages=N lagged=L secs=S short=K bytes=B` (L: pages the
//! writer missed; a run with any exits 2, as it is not a fair one).
//!
//! The writer holds spider back through its subscription guard (each page
//! written is acknowledged with `inc`), so pages do not pile up in memory
//! and none are dropped, the way a crawl that must write its corpus runs.
//!
//! With `transform`, each page is written as spider_transformations makes
//! it for a corpus (readability and main content on, Markdown): the peer
//! doing nearcrawl's job, as spider's users do it, and counts the
//! pages whose Markdown kept under 200 bytes (`short=N`).
use spider::tokio;
use spider::website::Website;
use std::time::Instant;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (url, out) = (args[1].clone(), std::path::PathBuf::from(&args[2]));
    let concurrency: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(64);
    let transform = args.get(4).is_some_and(|m| m == "transform");
    let conf = spider_transformations::transformation::content::TransformConfig {
        readability: true,
        main_content: true,
        return_format: spider_transformations::transformation::content::ReturnFormat::Markdown,
        ..Default::default()
    };
    std::fs::create_dir_all(&out).expect("out dir");
    let mut website = Website::new(&url);
    website
        .with_respect_robots_txt(false)
        .with_concurrency_limit(Some(concurrency));
    // The transform is slower than the crawl: its queue holds more pages
    // before the writer lags (a lagged run is not a fair one).
    let mut rx = website.subscribe(if transform { 1 << 17 } else { 256 });
    let mut guard = website.subscribe_guard().expect("the sync feature");
    let mut file = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(out.join("pages.html")).expect("output file"),
    );
    let writer = tokio::spawn(async move {
        use std::io::Write;
        use tokio::sync::broadcast::error::RecvError;
        let (mut n, mut lagged, mut short, mut bytes) = (0u64, 0u64, 0u64, 0u64);
        loop {
            let page = match rx.recv().await {
                Ok(page) => page,
                Err(RecvError::Lagged(k)) => {
                    lagged += k;
                    continue;
                }
                Err(RecvError::Closed) => break,
            };
            // The bodies fetched, as nearcrawl's `bytes` counts them.
            bytes += page.get_html_bytes_u8().len() as u64;
            let markdown;
            let body = if transform {
                markdown = spider_transformations::transformation::content::transform_content(
                    &page, &conf, &None, &None, &None,
                );
                short += u64::from(markdown.len() < 200);
                markdown.as_bytes()
            } else {
                page.get_html_bytes_u8()
            };
            let written = writeln!(file, "{}\n{}", page.get_url(), body.len())
                .and_then(|()| file.write_all(body));
            if let Err(e) = written {
                eprintln!("pages.html: {e}");
            }
            guard.inc();
            n += 1;
        }
        if let Err(e) = file.flush() {
            eprintln!("pages.html: {e}");
        }
        (n, lagged, short, bytes)
    });
    let start = Instant::now();
    website.crawl().await;
    let secs = start.elapsed().as_secs_f64();
    website.unsubscribe();
    drop(website);
    let (pages, lagged, short, bytes) = writer.await.unwrap_or((0, 0, 0, 0));
    println!("pages={pages} lagged={lagged} secs={secs:.3} short={short} bytes={bytes}");
    if lagged > 0 {
        eprintln!("the writer missed {lagged} pages");
        std::process::exit(2);
    }
}
