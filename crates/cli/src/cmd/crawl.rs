use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use nearcrawl_crawl::config::Config;
use nearcrawl_crawl::seeds::parse_seeds;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The crawl config (TOML), e.g. config/example.toml.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Print the resolved config and seeds, and exit.
    #[arg(long)]
    dry_run: bool,
}

/// Reads and checks the config and seeds. The crawl itself (frontier,
/// pipeline, outputs, resume) is not built yet: without --dry-run this
/// says what it will do.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = Config::load(&args.config)?;
    let mut seeds = Vec::new();
    if let Some(file) = &config.seeds.file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read seed file {}", file.display()))?;
        let (good, bad) = parse_seeds(&text);
        for b in &bad {
            eprintln!("nearcrawl: {}: {b}; skipped", file.display());
        }
        seeds.extend(good);
    }
    let (inline, bad) = parse_seeds(&config.seeds.urls.join("\n"));
    for b in &bad {
        eprintln!("nearcrawl: seeds.urls: {b}; skipped");
    }
    seeds.extend(inline);
    if args.dry_run {
        println!("{config:#?}");
        println!("seeds ({}):", seeds.len());
        for s in &seeds {
            println!("  {s}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "nearcrawl crawl: not available yet in this version.\n\
         It will crawl the {} seeds of {} politely (robots.txt, per-host rate limits), \
         extract each page's main text, drop near-duplicates of earlier pages (and never \
         follow their links), and write the corpus as JSONL shards under {}.\n\
         Available now: `nearcrawl crawl --dry-run`, `extract`, `fingerprint`, `distance`, `dedup`.",
        seeds.len(),
        args.config.display(),
        config.output.dir.display()
    );
    Ok(ExitCode::from(2))
}
