//! Page metadata from `<head>` and the document: title, description,
//! language, canonical URL, publication date, robots directives.

use scraper::{Html, Selector};
use url::Url;

/// Robots directives of a page (`<meta name=robots>` and X-Robots-Tag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Robots {
    /// Not to be indexed: the crawler may still follow its links.
    pub noindex: bool,
    /// Links not to be followed.
    pub nofollow: bool,
}

impl Robots {
    /// Adds the directives of X-Robots-Tag header lines (newline-separated),
    /// but for lines naming another bot.
    pub fn add_header(&mut self, header: &str) {
        // "otherbot: noindex" lines are for that bot only.
        let for_a_named_bot = |line: &str| {
            line.split_once(':')
                .is_some_and(|(bot, _)| !bot.trim().contains(' ') && !is_directive(bot))
        };
        for line in header.split('\n').filter(|l| !for_a_named_bot(l)) {
            self.add(line);
        }
    }

    /// Adds the directives of one `content` value or header line, e.g.
    /// `"noindex, nofollow"`, `"none"`, or `"googlebot: noindex"`.
    pub fn add(&mut self, directives: &str) {
        for d in directives.split([',', ' ']) {
            // "otherbot: noindex" names a bot: for us only if unnamed.
            let d = d.trim().to_ascii_lowercase();
            match d.as_str() {
                "noindex" => self.noindex = true,
                "nofollow" => self.nofollow = true,
                "none" => {
                    self.noindex = true;
                    self.nofollow = true;
                }
                _ => {}
            }
        }
    }
}

pub(crate) struct Meta {
    pub title: Option<String>,
    pub heading: Option<String>,
    pub description: Option<String>,
    pub lang: Option<String>,
    pub canonical: Option<Url>,
    pub published: Option<String>,
    pub robots: Robots,
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("static selector")
}

pub(crate) fn clean(s: &str) -> Option<String> {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

fn meta_content(doc: &Html, selector: &str) -> Option<String> {
    doc.select(&sel(selector))
        .find_map(|e| e.value().attr("content").and_then(clean))
}

pub(crate) fn read(doc: &Html, base: Option<&Url>, x_robots_tag: Option<&str>) -> Meta {
    let title = meta_content(doc, r#"meta[property="og:title"]"#)
        .or_else(|| {
            doc.select(&sel("title"))
                .find_map(|e| clean(&e.text().collect::<String>()))
        })
        .or_else(|| {
            doc.select(&sel("h1"))
                .find_map(|e| clean(&e.text().collect::<String>()))
        });
    // Generators that style the page heading rather than mark it up
    // (doxygen's `div.title`) name the class; a heading element wins.
    let heading = ["h1", "body .title"].iter().find_map(|s| {
        doc.select(&sel(s))
            .find_map(|e| clean(&e.text().collect::<String>()))
    });
    let description = meta_content(doc, r#"meta[name="description"]"#)
        .or_else(|| meta_content(doc, r#"meta[property="og:description"]"#));
    let lang = doc
        .select(&sel("html[lang]"))
        .find_map(|e| e.value().attr("lang").and_then(clean))
        .or_else(|| meta_content(doc, r#"meta[http-equiv="content-language"]"#))
        .map(|l| l.to_ascii_lowercase());
    let canonical = doc
        .select(&sel(r#"link[rel~="canonical"][href]"#))
        .find_map(|e| resolve(base, e.value().attr("href")?));
    let published = [
        r#"meta[property="article:published_time"]"#,
        r#"meta[itemprop="datePublished"]"#,
        r#"meta[name="pubdate"]"#,
        r#"meta[name="publishdate"]"#,
        r#"meta[name="date"]"#,
        r#"meta[name="dc.date"]"#,
        r#"meta[name="DC.date.issued"]"#,
    ]
    .iter()
    .find_map(|s| meta_content(doc, s))
    .or_else(|| {
        doc.select(&sel(r#"[itemprop="datePublished"][datetime], time[pubdate][datetime], article time[datetime]"#))
            .find_map(|e| e.value().attr("datetime").and_then(clean))
    });
    let mut robots = Robots::default();
    for e in doc.select(&sel(r#"meta[name][content]"#)) {
        let name = e.value().attr("name").unwrap_or("").to_ascii_lowercase();
        if name == "robots" {
            robots.add(e.value().attr("content").unwrap_or(""));
        }
    }
    if let Some(h) = x_robots_tag {
        robots.add_header(h);
    }
    Meta {
        title,
        heading,
        description,
        lang,
        canonical,
        published,
        robots,
    }
}

fn is_directive(s: &str) -> bool {
    matches!(
        s.trim().to_ascii_lowercase().as_str(),
        "noindex" | "nofollow" | "none" | "unavailable_after"
    )
}

/// `href` resolved against `base`, http(s) only, fragment dropped.
pub(crate) fn resolve(base: Option<&Url>, href: &str) -> Option<Url> {
    let href = href.trim();
    let lower = href.get(..11).unwrap_or(href).to_ascii_lowercase();
    if href.is_empty()
        || ["javascript:", "mailto:", "tel:", "data:"]
            .iter()
            .any(|p| lower.starts_with(p))
    {
        return None;
    }
    let mut url = match base {
        Some(b) => b.join(href).ok()?,
        None => Url::parse(href).ok()?,
    };
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}
