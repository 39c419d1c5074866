//! The crawl that joins the stages: fetch -> extract -> exact/near
//! duplicate gate -> corpus, links of new pages to the frontier.
//!
//! One crawl, two stores. [`run`] is the one loop: it takes URLs whose
//! turn has come from a [`run::CrawlStore`], fetches and judges each in
//! its own task through the one page pipeline ([`page`]), and commits the
//! finished ones back to the store in groups. The stores differ only in
//! where the state lives:
//! - [`embedded`]: sled and files under the output directory (the
//!   default), with [`frontier`], [`state`] and the outbox that makes
//!   resume after a crash exact; [`crawler::Crawler`] runs the loop over it;
//! - a Redis Cluster shared by many workers: the `nearcrawl-cluster` crate.
//!
//! Shared by both: [`config`] (the TOML config, errors naming key and
//! line), [`seeds`], [`canonical`] (one spelling per URL), [`scope`],
//! [`sitemap`], [`traps`], [`stats`] (counts, progress, metrics) and
//! [`sink::Sink`], the trait the outputs (the `nearcrawl-output` crate)
//! implement and the crawl pushes its outcomes into.
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
pub mod cpu;
pub mod crawler;
mod doc_urls;
pub mod embedded;
mod error;
pub mod frontier;
pub mod languages;
pub mod latency;
mod outbox;
pub mod page;
pub mod pdf;
mod phases;
pub mod recrawl;
pub mod remembered;
pub mod run;
pub mod scope;
pub mod seeds;
pub mod sink;
pub mod sitemap;
pub mod slots;
pub mod state;
pub mod stats;
pub mod store;
pub mod traps;
