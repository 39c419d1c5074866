//! Duplicates predicted from URLs on the generated DUST site (see
//! `nearcrawl_tests::dust_site`): the same site crawled with `dedup.predict`
//! off and on, alternating, ROUNDS times; per crawl the requests the server
//! saw, the duplicate fetches (a page asked for under a second URL), the
//! share of them prediction avoided, pages lost and predictions naming
//! another page, and the crawl's own pages/s.
//!
//!     cargo build --release -p nearcrawl-cli
//!     NEARCRAWL_BIN=target/release/nearcrawl \
//!         cargo run --release -p nearcrawl-tests --example dust_site -- [SCALE] [ROUNDS]
//!
//! `KEEP=1` keeps the crawls' output folders (`$TMPDIR/nearcrawl-dust-bench-*`).
//! Scale 1 is 150 stories, 60 threads of three pages and 40 categories of
//! five products, with their other URLs (3,222 URLs, 1,021 pages).

use nearcrawl_tests::dust_site::{crawl, figures, serve_dust_site};
use nearcrawl_tests::fresh_dir;

fn main() {
    let mut args = std::env::args().skip(1);
    let scale: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let (site, log) = serve_dust_site(scale);
    println!("scale {scale}: {} distinct pages", site.distinct_pages());
    let mut baseline = None;
    for round in 0..rounds {
        for predict in [false, true] {
            log.lock().unwrap().clear();
            let dir = fresh_dir(&format!("dust-bench-{predict}"));
            let t = std::time::Instant::now();
            let stats = crawl(&dir, &site, predict, None);
            let wall = t.elapsed().as_secs_f64();
            let f = figures(&site, &dir, &log);
            let pages_per_sec = stats["this_run"]["pages_per_sec"].as_f64().unwrap_or(0.0);
            let (avoided, lost) = match &baseline {
                Some((dups, written)) if predict => {
                    let avoided = 1.0 - f.duplicate_fetches as f64 / *dups as f64;
                    let written: &std::collections::BTreeSet<String> = written;
                    (
                        format!("{:.1}%", 100.0 * avoided),
                        written.difference(&f.written).count(),
                    )
                }
                _ => ("-".into(), site.distinct_pages() - f.written.len()),
            };
            if !predict {
                baseline = Some((f.duplicate_fetches, f.written.clone()));
            }
            println!(
                "round {round} predict={predict:<5} requests {:>5} duplicate fetches {:>5} avoided {avoided:>6} \
                 predicted {:>5} false {} lost {lost} | {pages_per_sec:.0} pages/s, {wall:.1} s wall",
                f.requests,
                f.duplicate_fetches,
                f.predicted,
                f.false_predictions.len(),
            );
            if std::env::var_os("KEEP").is_none() {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
}
