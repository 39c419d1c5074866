//! A [`Page`] as one JSON object, and back: what `nearcrawl extract
//! --json` prints, and what the crawl reads from its PDF readers (child
//! processes running that command). One format, written and read here.

use serde_json::{Value, json};
use url::Url;

use crate::{ContentPath, EncodingSource, Link, LinkKind, Page, Robots, iso_639_1};

/// The page as JSON: title, lang, language (`language_from_code` when
/// so), canonical, published,
/// description, robots, path, encoding, text, links, and markdown and
/// `app_shell` when the page has them.
pub fn page_to_json(page: &Page) -> Value {
    let links: Vec<Value> = (page.links.iter())
        .map(|l| json!({"url": l.url.as_str(), "text": l.text, "nofollow": l.nofollow}))
        .collect();
    let path = match page.path {
        ContentPath::MainContent => "main",
        ContentPath::FullText => "full",
        ContentPath::Description => "description",
    };
    let mut record = json!({
        "title": page.title,
        "lang": page.lang,
        "language": page.language,
        "canonical": page.canonical.as_ref().map(Url::as_str),
        "published": page.published,
        "description": page.description,
        "robots": {"noindex": page.robots.noindex, "nofollow": page.robots.nofollow},
        "path": path,
        "encoding": page.encoding,
        "text": page.text,
        "links": links,
    });
    if let Some(markdown) = &page.markdown {
        record["markdown"] = json!(markdown);
    }
    if page.language_from_code {
        record["language_from_code"] = json!(true);
    }
    if page.app_shell {
        record["app_shell"] = json!(true);
    }
    record
}

/// The page [`page_to_json`] wrote; none if `row` is not one (no text).
/// Links that are not URLs are left out; the encoding, which JSON does
/// not carry as a static name, is given by the caller.
pub fn page_from_json(row: &Value, encoding: &'static str) -> Option<Page> {
    let text = |key: &str| row[key].as_str().map(str::to_string);
    let links = (row["links"].as_array().into_iter().flatten())
        .filter_map(|l| {
            Some(Link {
                url: Url::parse(l["url"].as_str()?).ok()?,
                text: l["text"].as_str().unwrap_or("").to_string(),
                nofollow: l["nofollow"].as_bool().unwrap_or(false),
                kind: LinkKind::Anchor,
            })
        })
        .collect();
    let path = match row["path"].as_str() {
        Some("main") => ContentPath::MainContent,
        Some("description") => ContentPath::Description,
        _ => ContentPath::FullText,
    };
    let flag = |key: &str| row["robots"][key].as_bool().unwrap_or(false);
    Some(Page {
        title: text("title"),
        heading: None,
        site_name: None,
        description: text("description"),
        lang: text("lang"),
        language: row["language"].as_str().and_then(iso_639_1),
        language_from_code: row["language_from_code"].as_bool().unwrap_or(false),
        canonical: row["canonical"].as_str().and_then(|u| Url::parse(u).ok()),
        published: text("published"),
        robots: Robots {
            noindex: flag("noindex"),
            nofollow: flag("nofollow"),
        },
        text: text("text")?,
        markdown: text("markdown"),
        path,
        links,
        app_shell: row["app_shell"].as_bool().unwrap_or(false),
        encoding,
        encoding_source: EncodingSource::Declared,
    })
}
