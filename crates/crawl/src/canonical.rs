//! URL canonicalization: one spelling per page, so the seen-set and the
//! frontier do not hold the same page twice.

use url::Url;

/// Query parameters that only track clicks, always removed.
const TRACKING: &[&str] = &[
    "fbclid", "gclid", "dclid", "msclkid", "yclid", "mc_cid", "mc_eid", "_ga", "igshid",
];

/// How URLs are made canonical.
#[derive(Debug, Clone, Default)]
pub struct Canonicalizer {
    /// More query parameters to strip (exact names), besides `utm_*` and
    /// the usual click ids.
    pub strip_params: Vec<String>,
    /// Sort query parameters by name (then value).
    pub sort_query: bool,
}

impl Canonicalizer {
    /// The canonical form of `url`: scheme and host lowercased, default
    /// port and fragment dropped, dot segments resolved (all by `url`),
    /// tracking parameters removed, an empty query dropped, the query
    /// optionally sorted. `None` for anything but http(s) with a host.
    pub fn canonicalize(&self, url: &Url) -> Option<Url> {
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
            return None;
        }
        let mut u = url.clone();
        u.set_fragment(None);
        if u.query().is_some() {
            let mut pairs: Vec<(String, String)> = u
                .query_pairs()
                .filter(|(k, _)| !self.is_tracking(k))
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            if self.sort_query {
                pairs.sort();
            }
            if pairs.is_empty() {
                u.set_query(None);
            } else {
                u.query_pairs_mut().clear().extend_pairs(pairs);
            }
        }
        Some(u)
    }

    fn is_tracking(&self, key: &str) -> bool {
        let k = key.to_ascii_lowercase();
        k.starts_with("utm_")
            || TRACKING.contains(&k.as_str())
            || self.strip_params.iter().any(|p| p.eq_ignore_ascii_case(&k))
    }
}

/// How many times the most repeated path segment occurs: `/a/b/a/b/a`
/// gives 3. Crawler traps (calendars, session paths, relative-link loops)
/// grow such paths without end.
pub fn max_repeated_segment(url: &Url) -> usize {
    let mut segs: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|x| !x.is_empty()).collect())
        .unwrap_or_default();
    segs.sort_unstable();
    segs.chunk_by(|a, b| a == b)
        .map(<[&str]>::len)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(c: &Canonicalizer, s: &str) -> Option<String> {
        c.canonicalize(&Url::parse(s).unwrap()).map(String::from)
    }

    #[test]
    fn canonical_forms() {
        let c = Canonicalizer::default();
        assert_eq!(
            canon(&c, "HTTP://Example.COM:80/a/./b/../c#frag").as_deref(),
            Some("http://example.com/a/c")
        );
        assert_eq!(
            canon(&c, "https://e.com:443/?utm_source=x&utm_medium=y").as_deref(),
            Some("https://e.com/")
        );
        assert_eq!(
            canon(&c, "https://e.com/p?b=2&fbclid=z&a=1&GCLID=q").as_deref(),
            Some("https://e.com/p?b=2&a=1")
        );
        assert_eq!(
            canon(&c, "https://e.com:8443/x").as_deref(),
            Some("https://e.com:8443/x")
        );
        assert_eq!(canon(&c, "mailto:a@b.c"), None);
        assert_eq!(canon(&c, "ftp://e.com/x"), None);
        let sorted = Canonicalizer {
            strip_params: vec!["sessionid".into()],
            sort_query: true,
        };
        assert_eq!(
            canon(&sorted, "https://e.com/p?b=2&SessionId=9&a=1").as_deref(),
            Some("https://e.com/p?a=1&b=2")
        );
        // Same page, different spellings: one canonical URL.
        let a = canon(&sorted, "https://E.com/p?a=1&b=2&utm_campaign=z#top");
        let b = canon(&sorted, "https://e.com:443/q/../p?b=2&a=1");
        assert_eq!(a, b);
    }

    #[test]
    fn repeated_segments() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert_eq!(max_repeated_segment(&u("https://e.com/")), 0);
        assert_eq!(max_repeated_segment(&u("https://e.com/a/b/c")), 1);
        assert_eq!(max_repeated_segment(&u("https://e.com/a/b/a/b/a/x")), 3);
    }
}
