//! Sitemaps (sitemaps.org): a `<urlset>` lists pages, a `<sitemapindex>`
//! lists more sitemaps; a plain-text sitemap lists one URL per line. The
//! crawler reads the ones a host's robots.txt names and queues their URLs
//! beside the links it finds.

use std::time::{Duration, Instant};

use nearcrawl_fetch::{Ask, Fetcher};
use quick_xml::Reader;
use quick_xml::events::Event;
use url::Url;

/// The most URLs taken from one sitemap file (the protocol's limit).
pub const MAX_URLS: usize = 50_000;

/// What a sitemap file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// Page URLs, as written.
    Urls(Vec<String>),
    /// Other sitemaps' URLs.
    Index(Vec<String>),
}

/// Sitemap index levels followed below the sitemaps robots.txt names.
pub const MAX_LEVELS: u32 = 3;

/// A sitemap that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("sitemap: {0}")]
pub struct SitemapError(String);

/// Fetches and parses the sitemap at `url`, as both engines read one. A
/// failure comes as its kind (the fetch's, or `sitemap`) and what went
/// wrong. With the time its requests took (zero when none was answered).
/// `start_by`: as in [`Ask`].
pub async fn fetch(
    fetcher: &Fetcher,
    url: &Url,
    start_by: Option<Instant>,
) -> (Result<Sitemap, (&'static str, String)>, Duration) {
    let ask = Ask {
        start_by,
        ..Ask::new(&|_| true)
    };
    match fetcher.fetch_sitemap(url, ask).await {
        Err(e) => (Err((e.kind(), format!("sitemap: {e}"))), Duration::ZERO),
        Ok(f) => (
            parse(&f.body).map_err(|e| ("sitemap", e.to_string())),
            f.elapsed,
        ),
    }
}

/// Parses a sitemap: XML (`urlset` or `sitemapindex`, any namespace
/// prefix), or plain text. Gzip is the fetcher's business.
pub fn parse(body: &[u8]) -> Result<Sitemap, SitemapError> {
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let trimmed = body[start..]
        .strip_prefix(b"\xef\xbb\xbf")
        .unwrap_or(&body[start..]);
    if !trimmed.starts_with(b"<") {
        let text = String::from_utf8_lossy(trimmed);
        let urls = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("http://") || l.starts_with("https://"))
            .take(MAX_URLS)
            .map(str::to_string)
            .collect();
        return Ok(Sitemap::Urls(urls));
    }
    let text = std::str::from_utf8(trimmed).map_err(|e| SitemapError(format!("not UTF-8: {e}")))?;
    let mut reader = Reader::from_str(text);
    let mut index = None;
    let mut locs = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => match e.local_name().as_ref() {
                b"sitemapindex" => index = Some(true),
                b"urlset" => index = Some(false),
                b"loc" => {
                    let raw = match reader.read_text(e.name()) {
                        Ok(raw) => raw,
                        // Cut short (the size limit): keep what was read.
                        Err(_) if !locs.is_empty() => break,
                        Err(e) => return Err(SitemapError(e.to_string())),
                    };
                    let raw = raw.trim();
                    let loc = match raw
                        .strip_prefix("<![CDATA[")
                        .and_then(|r| r.strip_suffix("]]>"))
                    {
                        Some(cdata) => cdata.trim().to_string(),
                        None => quick_xml::escape::unescape(raw)
                            .map_err(|e| SitemapError(e.to_string()))?
                            .into_owned(),
                    };
                    if !loc.is_empty() && locs.len() < MAX_URLS {
                        locs.push(loc);
                    }
                }
                _ => {}
            },
            Ok(Event::Eof) => break,
            Ok(_) => {}
            // A sitemap cut short (size limit) keeps what was read.
            Err(e) if !locs.is_empty() => {
                let _ = e;
                break;
            }
            Err(e) => return Err(SitemapError(e.to_string())),
        }
    }
    match index {
        Some(true) => Ok(Sitemap::Index(locs)),
        Some(false) => Ok(Sitemap::Urls(locs)),
        None => Err(SitemapError("neither <urlset> nor <sitemapindex>".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlset_index_text_and_junk() {
        let urlset = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://a.example/1?x=1&amp;y=2</loc><lastmod>2026-01-01</lastmod></url>
  <url><loc> <![CDATA[https://a.example/2]]> </loc></url>
</urlset>"#;
        assert_eq!(
            parse(urlset).unwrap(),
            Sitemap::Urls(vec![
                "https://a.example/1?x=1&y=2".into(),
                "https://a.example/2".into()
            ])
        );
        let index = b"\xef\xbb\xbf<sm:sitemapindex xmlns:sm='http://www.sitemaps.org/schemas/sitemap/0.9'>\
            <sm:sitemap><sm:loc>https://a.example/s1.xml.gz</sm:loc></sm:sitemap></sm:sitemapindex>";
        assert_eq!(
            parse(index).unwrap(),
            Sitemap::Index(vec!["https://a.example/s1.xml.gz".into()])
        );
        assert_eq!(
            parse(b"https://a.example/x\n# note\n\nhttps://a.example/y\r\n").unwrap(),
            Sitemap::Urls(vec![
                "https://a.example/x".into(),
                "https://a.example/y".into()
            ])
        );
        assert!(parse(b"<html><body>not a sitemap</body></html>").is_err());
        assert!(parse(b"<urlset><url><loc>https://a.example/&bogus;</loc>").is_err());
        // Cut off mid-file: the URLs before the cut survive.
        let cut = b"<urlset><url><loc>https://a.example/1</loc></url><url><loc>https://a.exa";
        assert_eq!(
            parse(cut).unwrap(),
            Sitemap::Urls(vec!["https://a.example/1".into()])
        );
    }
}
