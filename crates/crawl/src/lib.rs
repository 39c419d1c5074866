//! The crawl that joins the stages: fetch -> extract -> exact/near
//! duplicate gate -> corpus, links of new pages to the frontier.
//!
//! Built so far: the config ([`config`], TOML with errors naming key and
//! line), seed lists ([`seeds`]), URL canonicalization with trap
//! detection ([`canonical`]), scope rules ([`scope`]) and the sled-backed
//! frontier with per-host queues ([`frontier`]). The frontier, the pipeline, the outputs and
//! resume are still to come.
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
pub mod frontier;
pub mod scope;
pub mod seeds;
