//! The crawl that joins the stages: fetch -> extract -> exact/near
//! duplicate gate -> corpus, links of new pages to the frontier.
//!
//! One crawl, two stores. [`run`] is the one loop: it takes URLs whose
//! turn has come from a [`run::CrawlStore`], fetches and judges each in
//! its own task through the one page pipeline ([`page`]), and commits the
//! finished ones back to the store in groups; [`run::Crawl`] is that loop
//! over one store. The stores differ only in where the state lives:
//! - [`embedded`]: sled and files under the output directory (the
//!   default), with its frontier, state and the outbox that makes resume
//!   after a crash exact; [`embedded::Crawler`] is the crawl over it. No
//!   other module here uses it;
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
mod doc_urls;
pub mod embedded;
pub mod languages;
pub mod latency;
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
pub mod stats;
pub mod traps;
