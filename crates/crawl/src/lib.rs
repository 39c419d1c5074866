//! The crawl that joins the stages: fetch -> extract -> exact/near
//! duplicate gate -> corpus, links of new pages to the frontier.
//!
//! - [`config`]: the TOML config, errors naming key and line; [`seeds`].
//! - [`canonical`]: one spelling per URL, trap detection; [`scope`].
//! - [`frontier`]: per-host queues, in-flight URLs and the seen set.
//! - [`crawler`]: the loop: fetch (async), then extraction and the duplicate
//!   gate on blocking threads; new pages to the [`sink::Sink`] and their
//!   links to the frontier, duplicates recorded and their links dropped.
//! - [`state`]: everything a URL changes as one atomic batch, checkpoints,
//!   and the outbox that makes resume after a crash exact; kept in a
//!   [`store::Store`] (sled under the output directory by default), as the
//!   frontier is.
//! - [`sink`]: the [`sink::Sink`] trait the crawl pushes its outcomes into;
//!   the outputs that implement it (JSONL, WARC) are the `nearcrawl-output`
//!   crate.
//!
//! ```
//! use nearcrawl_crawl::canonical::Canonicalizer;
//! use url::Url;
//!
//! let c = Canonicalizer::default();
//! let u = Url::parse("HTTPS://Example.com:443/a/../b?utm_source=feed&id=7#top").unwrap();
//! assert_eq!(c.canonicalize(&u).unwrap().as_str(), "https://example.com/b?id=7");
//! ```

mod append_file;
pub mod canonical;
pub mod config;
pub mod crawler;
mod doc_urls;
pub mod frontier;
pub mod latency;
mod outbox;
pub mod page;
mod phases;
pub mod scope;
pub mod seeds;
pub mod sink;
pub mod sitemap;
pub mod slots;
pub mod state;
pub mod stats;
pub mod store;
pub mod traps;
