//! Prints the layout the index chooses for each k and capacity, and the
//! candidates a query scans (every fingerprint in its probed buckets).
//!
//! ```text
//! cargo run -p nearcrawl-index --example layouts
//! ```

use nearcrawl_index::Layout;

fn main() {
    println!("| k | N | layout | candidates per query | table bytes per fingerprint |");
    println!("|---|---|---|---|---|");
    for k in [3, 6, 8] {
        for n in [
            100_000u64,
            1_000_000,
            10_000_000,
            100_000_000,
            1_000_000_000,
        ] {
            let l = Layout::choose(k, n);
            println!(
                "| {k} | {n} | {} blocks, {} tables | {:.1} | {} |",
                l.blocks(),
                l.tables(),
                l.expected_candidates(n),
                l.tables() * 8 + 8
            );
        }
    }
}
