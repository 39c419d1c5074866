//! The crawl that joins the stages: fetch -> extract -> exact/near
//! duplicate gate -> corpus, links of new pages to the frontier.
//!
//! - [`config`]: the TOML config, errors naming key and line; [`seeds`].
//! - [`canonical`]: one spelling per URL, trap detection; [`scope`].
//! - [`frontier`]: per-host queues and the seen set in sled.
//! - [`crawler`]: the loop: fetch (async), then extraction and the duplicate
//!   gate on blocking threads; new pages to the [`sink::Sink`] and their
//!   links to the frontier, duplicates recorded and their links dropped.
//!
//! Still to come: WARC and zstd outputs, sitemaps, progress display, and
//! crash consistency between the corpus, the index and the frontier.
//!
//! ```
//! use nearcrawl_crawl::canonical::Canonicalizer;
//! use url::Url;
//!
//! let c = Canonicalizer::default();
//! let u = Url::parse("HTTPS://Example.com:443/a/../b?utm_source=feed&id=7#top").unwrap();
//! assert_eq!(c.canonicalize(&u).unwrap().as_str(), "https://example.com/b?id=7");
//! ```

pub mod canonical;
pub mod config;
pub mod crawler;
pub mod frontier;
pub mod scope;
pub mod seeds;
pub mod sink;
