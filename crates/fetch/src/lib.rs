//! Fetching for nearcrawl: one shared HTTP client (reqwest on tokio,
//! rustls, HTTP/1.1 and 2, gzip/brotli/deflate/zstd), polite per host
//! (governor rate, one request in flight, robots.txt Crawl-delay,
//! Retry-After, backoff, parking of failing hosts), robots.txt per RFC 9309
//! ([`robots`]), redirects followed by hand (hop limit, loops, every hop
//! checked against robots.txt and the caller's scope; a prompt meta
//! refresh is one: [`refresh`]), bodies capped while
//! streaming, and refusal of non-public addresses on every hop. Every
//! outcome is a [`Fetched`] page or a typed [`FetchError`].
//!
//! ```
//! use nearcrawl_fetch::robots::Robots;
//!
//! let robots = Robots::parse(b"User-agent: *\nDisallow: /private/\nAllow: /private/ok$\nCrawl-delay: 2\n\
//!                              Sitemap: https://example.com/sitemap.xml\n");
//! let rules = robots.for_agent("nearcrawl");
//! assert!(rules.is_allowed("/public/page"));
//! assert!(!rules.is_allowed("/private/page"));
//! assert!(rules.is_allowed("/private/ok"));
//! assert_eq!(rules.crawl_delay(), Some(std::time::Duration::from_secs(2)));
//! assert_eq!(robots.sitemaps(), ["https://example.com/sitemap.xml"]);
//! ```

mod body_memory;
mod config;
mod error;
mod fetcher;
pub mod refresh;
pub mod robots;
pub mod safety;

pub use config::{FetchConfig, PolitenessKey};
pub use error::FetchError;
pub use fetcher::{
    Ask, Fetched, Fetcher, HopCheck, PDF, RetryNote, RobotsStore, Validators, host_of_key,
    politeness_key,
};
