//! Seed lists: one URL per line, `#` comments, blank lines ignored. A bad
//! line is reported with its number and skipped; the rest are kept.

use url::Url;

/// A seed line that is not an http(s) URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSeed {
    pub line: usize,
    pub text: String,
    pub reason: String,
}

impl std::fmt::Display for BadSeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed line {}: {:?}: {}",
            self.line, self.text, self.reason
        )
    }
}

/// The URLs of a seed list, and the lines that were not URLs.
pub fn parse_seeds(text: &str) -> (Vec<Url>, Vec<BadSeed>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fail = |reason: String| BadSeed {
            line: i + 1,
            text: line.to_string(),
            reason,
        };
        match Url::parse(line) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => {
                good.push(u)
            }
            Ok(u) => bad.push(fail(format!(
                "scheme {:?} is not http or https",
                u.scheme()
            ))),
            Err(e) => bad.push(fail(e.to_string())),
        }
    }
    (good, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_bad_and_comments() {
        let (good, bad) = parse_seeds(
            "# seeds\nhttps://example.com/\n\n  http://example.org/a # trailing comment\nnot a url\nftp://x.y/\nhttps://例子.测试/路径\n",
        );
        assert_eq!(good.len(), 3);
        assert_eq!(good[1].as_str(), "http://example.org/a");
        assert_eq!(good[2].host_str(), Some("xn--fsqu00a.xn--0zwm56d"));
        assert_eq!(bad.len(), 2);
        assert_eq!((bad[0].line, bad[1].line), (5, 6));
        assert!(bad[1].to_string().contains("ftp"));
    }
}
