//! A `<meta http-equiv="refresh">` that sends the reader on at once: a
//! redirect written in HTML (rustdoc writes one for every item at its
//! private path). A browser follows it; so does the crawler, as it does a
//! `Location`, and the stub is never a page.

use url::Url;

/// Longest refresh delay followed as a redirect. A page that shows itself
/// for longer (or reloads itself, with no URL) is a page.
pub const MAX_REFRESH_SECS: f64 = 5.0;
/// Bytes of a body searched for the tag: it stands in the head.
const HEAD_BYTES: usize = 16 * 1024;

/// The target of a meta refresh of at most [`MAX_REFRESH_SECS`] in the
/// head of an HTML `body`, resolved against `base`.
pub fn refresh_target(body: &[u8], base: &Url) -> Option<Url> {
    let head = &body[..body.len().min(HEAD_BYTES)];
    // Tags found by their `<` (no copy of the page, which every page
    // fetched goes through).
    for start in memchr::memchr_iter(b'<', head) {
        let rest = &head[start + 1..];
        if !rest
            .get(..4)
            .is_some_and(|t| t.eq_ignore_ascii_case(b"meta"))
        {
            continue;
        }
        let end = memchr::memchr(b'>', rest)?;
        let tag = String::from_utf8_lossy(&rest[..end]);
        let equiv = attribute(&tag, "http-equiv");
        if !equiv.is_some_and(|e| e.trim().eq_ignore_ascii_case("refresh")) {
            continue;
        }
        let target = attribute(&tag, "content").and_then(|c| parse_content(&c))?;
        let next = base.join(&target).ok()?;
        return (next != *base && matches!(next.scheme(), "http" | "https")).then_some(next);
    }
    None
}

/// `5; URL='next.html'` → `next.html`, if the delay is short.
fn parse_content(content: &str) -> Option<String> {
    let (delay, rest) = content.split_once([';', ','])?;
    let delay: f64 = delay.trim().parse().ok()?;
    if !(0.0..=MAX_REFRESH_SECS).contains(&delay) {
        return None;
    }
    let rest = rest.trim_start();
    let rest = match rest.get(..3) {
        Some(p) if p.eq_ignore_ascii_case("url") => rest[3..].trim_start().strip_prefix('=')?,
        _ => rest,
    };
    let url = rest.trim().trim_matches(['"', '\'']).trim();
    (!url.is_empty()).then(|| url.replace("&amp;", "&"))
}

/// The value of attribute `name` in a tag's text, quoted or not.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before = lower[..at].chars().next_back();
        if !before.is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let rest = tag[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        return Some(match rest.chars().next()? {
            q @ ('"' | '\'') => rest[1..].split(q).next()?.to_string(),
            _ => rest
                .split(|c: char| c.is_ascii_whitespace() || c == '/')
                .next()?
                .to_string(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(html: &str) -> Option<String> {
        let base = Url::parse("http://h.example/a/b/stub.html").unwrap();
        refresh_target(html.as_bytes(), &base).map(|u| u.to_string())
    }

    #[test]
    fn a_prompt_refresh_is_a_redirect() {
        // rustdoc's stub.
        let stub = r#"<!DOCTYPE html><html lang="en"><head><meta http-equiv="refresh" content="0;URL=../../../core/ops/trait.Drop.html"><title>Redirection</title></head><body><p>Redirecting to <a href="../../../core/ops/trait.Drop.html">../../../core/ops/trait.Drop.html</a>...</p></body></html>"#;
        assert_eq!(
            target(stub).as_deref(),
            Some("http://h.example/core/ops/trait.Drop.html")
        );
        for (html, want) in [
            (
                r#"<META HTTP-EQUIV=Refresh CONTENT="3; url='/next?a=1&amp;b=2'">"#,
                "http://h.example/next?a=1&b=2",
            ),
            (
                r#"<meta content="0, https://o.example/x" http-equiv="refresh" />"#,
                "https://o.example/x",
            ),
            (
                r#"<meta http-equiv='refresh' content='1;next.html'>"#,
                "http://h.example/a/b/next.html",
            ),
        ] {
            assert_eq!(target(html).as_deref(), Some(want), "{html}");
        }
    }

    #[test]
    fn a_slow_or_self_refresh_is_a_page() {
        for html in [
            r#"<meta http-equiv="refresh" content="300">"#,
            r#"<meta http-equiv="refresh" content="30;URL=/later">"#,
            r#"<meta http-equiv="refresh" content="0;URL=stub.html">"#,
            r#"<meta http-equiv="refresh" content="0;URL=javascript:go()">"#,
            r#"<meta name="description" content="0;URL=/x">"#,
            r#"<meta data-http-equiv="refresh" content="0;URL=/x">"#,
            "<html><body>no tag",
        ] {
            assert_eq!(target(html), None, "{html}");
        }
    }
}
