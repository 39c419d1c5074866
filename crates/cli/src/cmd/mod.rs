//! One module per subcommand: `Args` (clap) and `run`.

pub mod crawl;
pub mod dedup;
pub mod distance;
pub mod extract;
pub mod fingerprint;
mod input;
pub mod report;
pub mod status;
