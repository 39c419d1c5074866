use std::process::ExitCode;

use anyhow::Context;
use nearcrawl_simhash::Fingerprint;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A fingerprint: 1 to 16 hex digits, as `nearcrawl fingerprint` prints.
    a: String,
    /// The other fingerprint.
    b: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let a: Fingerprint = args.a.parse().context("first fingerprint")?;
    let b: Fingerprint = args.b.parse().context("second fingerprint")?;
    println!("{}", a.distance(b));
    Ok(ExitCode::SUCCESS)
}
