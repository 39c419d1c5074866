//! Which URLs the crawl may visit: hosts and domains, include and exclude
//! patterns, depth, URL length and path-repetition traps.

use regex::RegexSet;
use url::Url;

use crate::canonical::max_repeated_segment;
use crate::config::Scope as ScopeConfig;

/// The page budgets (`max_pages_per_host`, `max_pages_per_domain`; 0: no
/// limit) count pages fetched, over every run: a page may be fetched when
/// its host has had fewer than its budget, and so has its registrable
/// domain; else the budget spent, named as `out_of_scope` counts it. Both
/// engines ask this, with the pages taken before this one.
pub fn page_budget_spent(
    host_pages: u64,
    domain_pages: u64,
    max_per_host: u64,
    max_per_domain: u64,
) -> Option<&'static str> {
    let spent = |taken: u64, max: u64| max > 0 && taken >= max;
    if spent(host_pages, max_per_host) {
        Some("host_page_limit")
    } else if spent(domain_pages, max_per_domain) {
        Some("domain_page_limit")
    } else {
        None
    }
}

/// The registrable domain of `host` by the public suffix list:
/// `example.co.uk` for `a.b.example.co.uk`, `user.github.io` for
/// `x.user.github.io`. An IP address, or a name under no known suffix, is
/// its own domain.
pub fn registrable_domain(host: &str) -> &str {
    if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
        return host;
    }
    psl::domain_str(host).unwrap_or(host)
}

/// Why a URL is out of scope (counted in the crawl's stats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfScope {
    Host,
    Excluded,
    NotIncluded,
    TooDeep,
    TooLong,
    Trap,
}

impl OutOfScope {
    pub fn name(self) -> &'static str {
        match self {
            OutOfScope::Host => "host",
            OutOfScope::Excluded => "excluded",
            OutOfScope::NotIncluded => "not_included",
            OutOfScope::TooDeep => "too_deep",
            OutOfScope::TooLong => "too_long",
            OutOfScope::Trap => "trap",
        }
    }
}

/// The compiled scope rules.
#[derive(Debug, Clone)]
pub struct Scope {
    /// `hosts = ["*"]`: any host.
    any_host: bool,
    hosts: Vec<String>,
    domains: Vec<String>,
    include: Option<RegexSet>,
    exclude: Option<RegexSet>,
    max_depth: u32,
    max_url_length: usize,
    max_repeated_segments: usize,
}

impl Scope {
    /// Rules from the config; with no hosts and no domains configured, the
    /// seeds' hosts. Patterns were checked when the config was read.
    pub fn new<'a>(
        config: &ScopeConfig,
        seeds: impl IntoIterator<Item = &'a Url>,
    ) -> Result<Scope, regex::Error> {
        let lower = |v: &[String]| {
            v.iter()
                .map(|h| h.trim().trim_start_matches('.').to_ascii_lowercase())
                .collect()
        };
        let mut hosts: Vec<String> = lower(&config.hosts);
        let domains: Vec<String> = lower(&config.domains);
        if hosts.is_empty() && domains.is_empty() {
            hosts = seeds
                .into_iter()
                .filter_map(|s| s.host_str().map(str::to_ascii_lowercase))
                .collect();
            hosts.sort();
            hosts.dedup();
        }
        let set = |v: &[String]| -> Result<Option<RegexSet>, regex::Error> {
            if v.is_empty() {
                Ok(None)
            } else {
                RegexSet::new(v).map(Some)
            }
        };
        Ok(Scope {
            any_host: hosts.iter().any(|h| h == "*"),
            hosts,
            domains,
            include: set(&config.include)?,
            exclude: set(&config.exclude)?,
            max_depth: config.max_depth,
            max_url_length: config.max_url_length,
            max_repeated_segments: config.max_repeated_segments,
        })
    }

    /// Whether `host` (any case) is one of the scope's hosts or under one
    /// of its domains: asked of every link, so with no allocation.
    pub fn allows_host(&self, host: &str) -> bool {
        let lower;
        let host = if host.bytes().any(|b| b.is_ascii_uppercase()) {
            lower = host.to_ascii_lowercase();
            lower.as_str()
        } else {
            host
        };
        self.any_host
            || self.hosts.iter().any(|h| h == host)
            || self.domains.iter().any(|d| {
                host.strip_suffix(d.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
            })
    }

    /// May `url`, found at `depth` links from a seed, be crawled?
    pub fn check(&self, url: &Url, depth: u32) -> Result<(), OutOfScope> {
        if !self.allows_host(url.host_str().unwrap_or("")) {
            return Err(OutOfScope::Host);
        }
        if depth > self.max_depth {
            return Err(OutOfScope::TooDeep);
        }
        if url.as_str().len() > self.max_url_length {
            return Err(OutOfScope::TooLong);
        }
        if max_repeated_segment(url) > self.max_repeated_segments {
            return Err(OutOfScope::Trap);
        }
        if self
            .exclude
            .as_ref()
            .is_some_and(|x| x.is_match(url.as_str()))
        {
            return Err(OutOfScope::Excluded);
        }
        if self
            .include
            .as_ref()
            .is_some_and(|i| !i.is_match(url.as_str()))
        {
            return Err(OutOfScope::NotIncluded);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn hosts_default_to_the_seeds() {
        let s = Scope::new(&ScopeConfig::default(), &[u("https://Site.example/start")]).unwrap();
        assert_eq!(s.check(&u("https://site.example/a"), 1), Ok(()));
        assert_eq!(
            s.check(&u("https://sub.site.example/a"), 1),
            Err(OutOfScope::Host)
        );
        assert_eq!(
            s.check(&u("https://other.example/a"), 1),
            Err(OutOfScope::Host)
        );
    }

    #[test]
    fn a_star_opens_the_scope_and_domains_follow_the_public_suffix_list() {
        let config = ScopeConfig {
            hosts: vec!["*".into()],
            max_depth: 2,
            ..ScopeConfig::default()
        };
        let s = Scope::new(&config, &[u("https://seed.example/")]).unwrap();
        assert_eq!(s.check(&u("https://anything.example.net/a"), 1), Ok(()));
        assert_eq!(s.check(&u("http://127.0.0.9:8080/"), 2), Ok(()));
        assert_eq!(
            s.check(&u("https://anything.example.net/a"), 3),
            Err(OutOfScope::TooDeep)
        );
        assert_eq!(registrable_domain("a.b.example.co.uk"), "example.co.uk");
        assert_eq!(registrable_domain("x.user.github.io"), "user.github.io");
        assert_eq!(registrable_domain("www.example.com"), "example.com");
        assert_eq!(registrable_domain("127.0.0.9"), "127.0.0.9");
        assert_eq!(registrable_domain("[::1]"), "[::1]");
        assert_eq!(registrable_domain("localhost"), "localhost");
    }

    #[test]
    fn domains_patterns_depth_length_traps() {
        let config = ScopeConfig {
            domains: vec!["example.org".into()],
            include: vec!["/docs/".into()],
            exclude: vec![r"\.pdf$".into(), "/private/".into()],
            max_depth: 3,
            max_url_length: 60,
            max_repeated_segments: 2,
            ..ScopeConfig::default()
        };
        let s = Scope::new(&config, &[] as &[Url]).unwrap();
        assert_eq!(s.check(&u("https://a.b.example.org/docs/x"), 3), Ok(()));
        assert_eq!(s.check(&u("https://example.org/docs/x"), 0), Ok(()));
        assert_eq!(
            s.check(&u("https://badexample.org/docs/x"), 0),
            Err(OutOfScope::Host)
        );
        assert_eq!(
            s.check(&u("https://example.org/docs/x"), 4),
            Err(OutOfScope::TooDeep)
        );
        assert_eq!(
            s.check(&u("https://example.org/blog/x"), 1),
            Err(OutOfScope::NotIncluded)
        );
        assert_eq!(
            s.check(&u("https://example.org/docs/a.pdf"), 1),
            Err(OutOfScope::Excluded)
        );
        assert_eq!(
            s.check(&u("https://example.org/docs/private/a"), 1),
            Err(OutOfScope::Excluded)
        );
        assert_eq!(
            s.check(&u("https://example.org/docs/a/docs/a/docs/a"), 1),
            Err(OutOfScope::Trap)
        );
        let long = format!("https://example.org/docs/{}", "x".repeat(60));
        assert_eq!(s.check(&u(&long), 1), Err(OutOfScope::TooLong));
    }
}
