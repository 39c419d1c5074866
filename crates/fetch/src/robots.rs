//! robots.txt parsing and matching per RFC 9309.
//!
//! - Groups start with one or more `user-agent` lines; the crawler's
//!   product token is matched case-insensitively, and all groups naming it
//!   are combined; with none, the `*` groups apply; with no `*` group either,
//!   everything is allowed.
//! - The most specific rule wins: the longest matching pattern, in octets;
//!   on equal length `allow` beats `disallow`. `*` matches any sequence and
//!   a final `$` anchors the end. Percent-escapes are compared normalized.
//! - `/robots.txt` itself is always allowed.
//! - Unknown lines, and rules before any `user-agent`, are ignored; parsing
//!   never fails. Content past [`MAX_BYTES`] is ignored, as the RFC allows.
//!
//! `crawl-delay` and `sitemap` lines are not in the RFC but widely used:
//! the delay is read per group, sitemaps for the whole file.

use std::time::Duration;

/// How much of a robots.txt is read (RFC 9309 requires at least 500 KiB).
pub const MAX_BYTES: usize = 500 * 1024;

/// A parsed robots.txt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Robots {
    groups: Vec<Group>,
    sitemaps: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Group {
    /// Lowercased product tokens (`*` for any).
    agents: Vec<String>,
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    allow: bool,
    /// Normalized pattern.
    pattern: String,
}

/// The rules that apply to one crawler.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRules {
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

impl Robots {
    /// Everything allowed (robots.txt missing, or a 4xx).
    pub fn allow_all() -> Robots {
        Robots::default()
    }

    /// Nothing allowed (robots.txt unreachable or a 5xx: the RFC says to
    /// assume a complete disallow until it can be fetched).
    pub fn disallow_all() -> Robots {
        Robots {
            groups: vec![Group {
                agents: vec!["*".into()],
                rules: vec![Rule {
                    allow: false,
                    pattern: "/".into(),
                }],
                crawl_delay: None,
            }],
            sitemaps: Vec::new(),
        }
    }

    /// Parses a robots.txt body: UTF-8 (invalid sequences replaced), any
    /// line ending, `#` comments.
    pub fn parse(body: &[u8]) -> Robots {
        let body = &body[..body.len().min(MAX_BYTES)];
        let text = String::from_utf8_lossy(body);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut robots = Robots::default();
        // The group being built, and whether its user-agent lines are over.
        let mut current: Option<Group> = None;
        let mut in_rules = false;
        for line in text.split(['\n', '\r']) {
            let line = line.split('#').next().unwrap_or("");
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" | "useragent" | "user agent" => {
                    if in_rules || current.is_none() {
                        if let Some(g) = current.take() {
                            robots.groups.push(g);
                        }
                        current = Some(Group::default());
                        in_rules = false;
                    }
                    let token = product_token(value);
                    if !token.is_empty() {
                        current.as_mut().unwrap().agents.push(token);
                    }
                }
                "allow" | "disallow" | "dissallow" | "disalow" => {
                    let Some(group) = current.as_mut() else {
                        continue;
                    };
                    in_rules = true;
                    // An empty disallow allows everything: no rule needed.
                    if value.is_empty() {
                        continue;
                    }
                    group.rules.push(Rule {
                        allow: key == "allow",
                        pattern: normalize(value),
                    });
                }
                "crawl-delay" => {
                    let Some(group) = current.as_mut() else {
                        continue;
                    };
                    in_rules = true;
                    if let Ok(secs) = value.parse::<f64>() {
                        if secs.is_finite() && secs >= 0.0 {
                            group.crawl_delay = Some(Duration::from_secs_f64(secs.min(86_400.0)));
                        }
                    }
                }
                "sitemap" | "site-map" if !value.is_empty() => {
                    robots.sitemaps.push(value.to_string());
                }
                _ => {}
            }
        }
        if let Some(g) = current {
            robots.groups.push(g);
        }
        robots
    }

    /// Sitemap URLs listed anywhere in the file, as written.
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// The rules for the crawler whose product token is `agent` (e.g.
    /// `nearcrawl`): its own groups combined, else the `*` groups, else
    /// none (all allowed).
    pub fn for_agent(&self, agent: &str) -> AgentRules {
        let agent = product_token(agent);
        let mine: Vec<&Group> = self
            .groups
            .iter()
            .filter(|g| g.agents.contains(&agent))
            .collect();
        let chosen = if mine.is_empty() {
            self.groups
                .iter()
                .filter(|g| g.agents.iter().any(|a| a == "*"))
                .collect()
        } else {
            mine
        };
        AgentRules {
            rules: chosen
                .iter()
                .flat_map(|g| g.rules.iter().cloned())
                .collect(),
            crawl_delay: chosen.iter().filter_map(|g| g.crawl_delay).max(),
        }
    }
}

impl AgentRules {
    /// May the crawler fetch this path (with query), e.g. `/a/b?c=d`?
    pub fn is_allowed(&self, path_and_query: &str) -> bool {
        let path = if path_and_query.is_empty() {
            "/".to_string()
        } else {
            normalize(path_and_query)
        };
        if path == "/robots.txt" {
            return true;
        }
        let mut best: Option<(usize, bool)> = None;
        for rule in &self.rules {
            if matches(&rule.pattern, &path) {
                let len = rule.pattern.len();
                let better = match best {
                    None => true,
                    Some((l, allow)) => len > l || (len == l && rule.allow && !allow),
                };
                if better {
                    best = Some((len, rule.allow));
                }
            }
        }
        best.is_none_or(|(_, allow)| allow)
    }

    /// The `crawl-delay` of the groups that apply, if any.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }
}

/// The product token of a user-agent value: its leading run of letters,
/// `-` and `_`, lowercased (`Googlebot/2.1` -> `googlebot`); `*` stays `*`.
fn product_token(value: &str) -> String {
    let v = value.trim();
    if v.starts_with('*') {
        return "*".into();
    }
    v.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Percent-encodes non-ASCII and control octets, uppercases escapes and
/// decodes escapes of unreserved characters, so that equal URLs compare
/// equal however they were written.
fn normalize(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' && i + 2 < bytes.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                let v = (h * 16 + l) as u8;
                if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') {
                    out.push(v as char);
                } else {
                    out.push_str(&format!("%{v:02X}"));
                }
                i += 3;
                continue;
            }
        }
        if b.is_ascii() && !b.is_ascii_control() && b != b' ' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
    out
}

/// Does `pattern` (with `*` and a final `$`) match a prefix of `path` (or
/// all of it, with `$`)? Iterative: no recursion, linear backtracking on
/// the last `*` only.
fn matches(pattern: &str, path: &str) -> bool {
    let (pat, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p.as_bytes(), true),
        None => (pattern.as_bytes(), false),
    };
    let text = path.as_bytes();
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p == pat.len() {
            if !anchored || t == text.len() {
                return true;
            }
        } else if pat[p] == b'*' {
            star = Some((p, t));
            p += 1;
            continue;
        } else if t < text.len() && pat[p] == text[t] {
            p += 1;
            t += 1;
            continue;
        }
        // Mismatch (or anchored end not reached): let the last star eat
        // one more byte.
        match star {
            Some((sp, st)) if st < text.len() => {
                star = Some((sp, st + 1));
                p = sp + 1;
                t = st + 1;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(robots: &str, agent: &str, path: &str) -> bool {
        Robots::parse(robots.as_bytes())
            .for_agent(agent)
            .is_allowed(path)
    }

    #[test]
    fn longest_match_wins_and_allow_wins_ties() {
        let r =
            "user-agent: *\ndisallow: /a\nallow: /a/b\ndisallow: /a/b/c\nallow: /x\ndisallow: /x\n";
        assert!(!allowed(r, "bot", "/a"));
        assert!(allowed(r, "bot", "/a/b"));
        assert!(!allowed(r, "bot", "/a/b/c/d"));
        assert!(allowed(r, "bot", "/x/y"), "equal length: allow wins");
        assert!(allowed(r, "bot", "/other"));
    }

    #[test]
    fn wildcards_and_end_anchor() {
        let r = "User-Agent: *\nDisallow: /*.gif$\nDisallow: /private*/\nAllow: /$\nDisallow: /\n";
        assert!(allowed(r, "bot", "/"));
        assert!(!allowed(r, "bot", "/page"));
        let r = "User-Agent: *\nDisallow: /*.gif$\nDisallow: /p*/x\n";
        assert!(!allowed(r, "bot", "/img/a.gif"));
        assert!(allowed(r, "bot", "/img/a.gif?size=2"));
        assert!(allowed(r, "bot", "/img/a.gifs"));
        assert!(!allowed(r, "bot", "/pa/b/x"));
        assert!(allowed(r, "bot", "/a/p/x"));
        assert!(matches("/*a*b*c$", "/xxaxxbxxc"));
        assert!(!matches("/*a*b*c$", "/xxaxxbxxcx"));
        assert!(matches("*", ""));
    }

    #[test]
    fn groups_by_product_token_combined_else_star() {
        let r = "User-agent: Googlebot\nDisallow: /g\n\nUser-agent: NearCrawl\nUser-agent: other\nDisallow: /n\n\
                 \nuser-agent: *\nDisallow: /all\n\nUser-agent: nearcrawl/2.0\nDisallow: /n2\n";
        assert!(!allowed(r, "nearcrawl", "/n"));
        assert!(
            !allowed(r, "nearcrawl", "/n2"),
            "both nearcrawl groups apply"
        );
        assert!(
            allowed(r, "nearcrawl", "/all"),
            "the * group does not when a named one does"
        );
        assert!(!allowed(r, "somebot", "/all"));
        assert!(allowed(r, "somebot", "/n"));
        assert!(
            allowed("User-agent: googlebot\nDisallow: /\n", "nearcrawl", "/x"),
            "no group: all allowed"
        );
    }

    #[test]
    fn robots_txt_itself_is_always_allowed() {
        assert!(allowed(
            "User-agent: *\nDisallow: /\n",
            "bot",
            "/robots.txt"
        ));
        assert!(!Robots::disallow_all().for_agent("bot").is_allowed("/a"));
        assert!(
            Robots::disallow_all()
                .for_agent("bot")
                .is_allowed("/robots.txt")
        );
        assert!(Robots::allow_all().for_agent("bot").is_allowed("/a"));
    }

    #[test]
    fn empty_disallow_comments_junk_and_line_endings() {
        let r = "\u{feff}# comment\r\nUser-agent: * # all\r\nDisallow:\r\nnonsense line\r\nFoo: bar\r\n";
        assert!(allowed(r, "bot", "/anything"));
        let r = "Disallow: /before-any-group\nUser-agent: *\nDisalow: /typo\n";
        assert!(allowed(r, "bot", "/before-any-group"));
        assert!(!allowed(r, "bot", "/typo"));
        let _ = Robots::parse(&[0xff, 0xfe, 0x00, b'\n', b':']);
    }

    #[test]
    fn percent_encoding_compares_normalized() {
        let r = "User-agent: *\nDisallow: /%7Ejoe/\nDisallow: /caf%c3%a9\nDisallow: /über\n";
        assert!(!allowed(r, "bot", "/~joe/index.html"));
        assert!(!allowed(r, "bot", "/caf%C3%A9/menu"));
        assert!(!allowed(r, "bot", "/%C3%BCber/x"));
        assert!(allowed(r, "bot", "/joe/"));
    }

    #[test]
    fn crawl_delay_and_sitemaps() {
        let r = "User-agent: *\nCrawl-delay: 1.5\nDisallow: /x\n\nUser-agent: slowbot\nCrawl-delay: 30\n\
                 Sitemap: https://e.com/s1.xml\nsitemap:https://e.com/s2.xml.gz\n";
        let robots = Robots::parse(r.as_bytes());
        assert_eq!(
            robots.for_agent("bot").crawl_delay(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            robots.for_agent("slowbot").crawl_delay(),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            robots.sitemaps(),
            ["https://e.com/s1.xml", "https://e.com/s2.xml.gz"]
        );
        assert_eq!(
            Robots::parse(b"User-agent: *\nCrawl-delay: soon\n")
                .for_agent("b")
                .crawl_delay(),
            None
        );
    }

    /// The plain recursive definition, for the property test.
    fn reference(p: &[u8], t: &[u8], anchored: bool) -> bool {
        match p.split_first() {
            None => !anchored || t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|i| reference(rest, &t[i..], anchored)),
            Some((c, rest)) => t.first() == Some(c) && reference(rest, &t[1..], anchored),
        }
    }

    proptest::proptest! {
        #[test]
        fn matcher_agrees_with_the_definition(pat in "[ab*/]{0,8}[$]?", text in "[ab/]{0,12}") {
            let (p, anchored) = match pat.strip_suffix('$') {
                Some(p) => (p, true),
                None => (pat.as_str(), false),
            };
            proptest::prop_assert_eq!(matches(&pat, &text), reference(p.as_bytes(), text.as_bytes(), anchored));
        }

        #[test]
        fn parse_never_panics(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let r = Robots::parse(&body);
            let _ = r.for_agent("nearcrawl").is_allowed("/a");
        }
    }

    #[test]
    fn huge_files_are_cut_at_the_limit() {
        let mut r = String::from("User-agent: *\n");
        while r.len() < MAX_BYTES {
            r.push_str("Disallow: /spam/filler/path\n");
        }
        r.push_str("Disallow: /beyond\n");
        assert!(allowed(&r, "bot", "/beyond"));
        assert!(!allowed(&r, "bot", "/spam/filler/path"));
    }
}
