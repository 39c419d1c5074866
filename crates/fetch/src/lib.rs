//! Fetching for nearcrawl. So far: robots.txt per RFC 9309 ([`robots`]);
//! the HTTP client (politeness, redirects, limits, charsets, network
//! safety) is being built on top of it.
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

pub mod robots;
