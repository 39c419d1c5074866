//! `nearcrawl`: a web crawler with a built-in near-duplicate filter.
//!
//! This binary only parses arguments and hands off to one module per
//! subcommand; the work lives in the library crates under `crates/`.

mod cmd;
mod metrics;
mod series;

/// jemalloc, configured in `.cargo/config.toml` (one arena, freed pages
/// returned after 200 ms): with glibc's allocator the crawl's resident
/// memory was 1.8× its live heap (an arena per thread, freed pages kept),
/// 188 MB on javadoc; with this, 114 MB, at the same speed.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "nearcrawl", version, about, long_about = None)]
struct Cli {
    /// More log output: -v run events (resume, checkpoints, sitemaps),
    /// -vv every page, -vvv everything. `RUST_LOG` overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Crawl seed URLs (or a config's seeds) and write the corpus to disk.
    Crawl(cmd::crawl::Args),
    /// Print the main text (or, with --json, text, metadata and links) of HTML files.
    Extract(cmd::extract::Args),
    /// Print the simhash fingerprint of each input: `<hex>  <features>  <name>`.
    Fingerprint(cmd::fingerprint::Args),
    /// Print the Hamming distance between two fingerprints.
    Distance(cmd::distance::Args),
    /// Find exact and near duplicates in a JSONL stream of documents.
    Dedup(cmd::dedup::Args),
    /// What a crawl's output directory holds: totals, queue, hosts,
    /// duplicate clusters, last checkpoint, whether a run holds it.
    Status(cmd::status::Args),
    /// One self-contained HTML page about a crawl: totals, rates, duplicates
    /// and errors over time, hosts, sizes, depths, duplicate clusters.
    Report(cmd::report::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Crawl(args) => cmd::crawl::run(args, cli.verbose > 0),
        Command::Extract(args) => cmd::extract::run(args),
        Command::Fingerprint(args) => cmd::fingerprint::run(args),
        Command::Distance(args) => cmd::distance::run(args),
        Command::Dedup(args) => cmd::dedup::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Report(args) => cmd::report::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("nearcrawl: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr: warnings and errors by default, more with `-v`.
fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "warn,nearcrawl_crawl=info,nearcrawl=info",
        2 => "info,nearcrawl_crawl=debug,nearcrawl_fetch=debug",
        _ => "debug,nearcrawl_crawl=trace,nearcrawl_fetch=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}
