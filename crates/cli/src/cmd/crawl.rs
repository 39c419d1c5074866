use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The crawl config (TOML), e.g. config/example.toml.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
}

/// Not built yet: the crawl lands with the fetcher, extractor and index.
/// Until then it checks the config is readable and says what it will do.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    std::fs::read_to_string(&args.config)
        .with_context(|| format!("cannot read config {}", args.config.display()))?;
    eprintln!(
        "nearcrawl crawl: not available yet in this version.\n\
         It will read {} and its seed list, fetch pages politely (robots.txt, \
         per-host rate limits), extract each page's main text, drop near-duplicates \
         of earlier pages (and never follow their links), and write the corpus \
         as JSONL shards under the config's output directory.\n\
         Available now: `nearcrawl fingerprint` and `nearcrawl distance`.",
        args.config.display()
    );
    Ok(ExitCode::from(2))
}
