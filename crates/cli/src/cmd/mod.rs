//! One module per subcommand: `Args` (clap) and `run`.

pub mod crawl;
pub mod distance;
pub mod fingerprint;
