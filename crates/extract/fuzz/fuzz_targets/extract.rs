#![no_main]
//! Any bytes, with or without a declared charset and page URL: extraction
//! must return, without panicking.

use libfuzzer_sys::fuzz_target;
use nearcrawl_extract::{Input, extract};

fuzz_target!(|data: &[u8]| {
    let url = url::Url::parse("https://example.com/a/b.html").unwrap();
    let (charset, html) = match data.split_first() {
        Some((0, rest)) => (Some("windows-1251"), rest),
        Some((1, rest)) => (Some("gbk"), rest),
        _ => (None, data),
    };
    let page = extract(html, &Input { url: Some(&url), charset, ..Input::default() });
    for link in &page.links {
        assert!(matches!(link.url.scheme(), "http" | "https"));
    }
});
