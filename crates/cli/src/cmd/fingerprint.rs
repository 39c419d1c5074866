use std::borrow::Cow;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use nearcrawl_simhash::{MAX_SHINGLE, Options, Simhasher, Weighting};

use nearcrawl_extract::{Input, extract};

use super::input::read_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Treat inputs as HTML and fingerprint their main text (as the crawler
    /// does).
    #[arg(long)]
    html: bool,
    /// Tokens per feature (1 = word unigrams; default measured best).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=MAX_SHINGLE as i64))]
    shingle: Option<u8>,
    /// Feature weight: `tf` or `sublinear` (1 + ln tf, the default).
    #[arg(long, value_name = "W", value_parser = parse_weighting)]
    weighting: Option<Weighting>,
    /// Files to fingerprint; standard input when none, or for `-`.
    files: Vec<PathBuf>,
}

fn parse_weighting(s: &str) -> Result<Weighting, String> {
    match s {
        "tf" => Ok(Weighting::Tf),
        "sublinear" => Ok(Weighting::SublinearTf),
        _ => Err(format!("unknown weighting {s:?}: want tf or sublinear")),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut options = Options::default();
    if let Some(n) = args.shingle {
        options.shingle = usize::from(n);
    }
    if let Some(w) = args.weighting {
        options.weighting = w;
    }
    let mut hasher = Simhasher::new(options)?;
    let inputs = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed = 0usize;
    for path in &inputs {
        // One unreadable input is reported and skipped; the others go on.
        let bytes = match read_input(path) {
            Ok(b) => b,
            Err(err) => {
                eprintln!("nearcrawl: {}: {err:#}", path.display());
                failed += 1;
                continue;
            }
        };
        // Text that is UTF-8 already is fingerprinted where it lies.
        let text: Cow<str> = if args.html {
            Cow::Owned(extract(&bytes, &Input::default()).text)
        } else {
            String::from_utf8_lossy(&bytes)
        };
        let h = hasher.hash(&text);
        writeln!(out, "{}  {}  {}", h.fingerprint, h.features, path.display())?;
    }
    out.flush()?;
    if failed > 0 {
        eprintln!(
            "nearcrawl: {failed} of {} inputs could not be read",
            inputs.len()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
