//! Metadata and links.

use nearcrawl_extract::{EncodingSource, Input, LinkKind, extract};
use url::Url;

const PAGE: &str = r##"<!doctype html>
<html lang="de-AT"><head>
<meta charset="utf-8">
<title>  Page   title </title>
<meta property="og:title" content="OG title">
<meta name="description" content="A description.">
<meta name="ROBOTS" content="NOINDEX">
<meta property="article:published_time" content="2019-11-20T10:00:00Z">
<link rel="canonical" href="/canonical/path?x=1#frag">
<link rel="next" href="page/2">
<link rel="stylesheet" href="/style.css">
<base href="https://cdn.example.org/base/">
</head><body>
<a href="rel/link">Relative</a>
<a href="https://other.example.com/abs#section" rel="nofollow noopener">  Absolute
  link </a>
<a href="javascript:void(0)">JS</a> <a href="mailto:a@b.c">Mail</a> <a href="tel:123">Tel</a>
<a href="data:text/html,hi">Data</a> <a href="ftp://files.example.com/x">FTP</a> <a href="">Empty (a link to itself: skipped)</a>
<a href="#top">Top</a>
<map><area href="/area" alt="Area text"></map>
<a href="/ugc" rel="ugc">UGC</a>
</body></html>"##;

#[test]
fn metadata_and_links() {
    let url = Url::parse("https://www.example.com/dir/page.html").unwrap();
    let page = extract(
        PAGE.as_bytes(),
        &Input {
            url: Some(&url),
            charset: None,
            ..Input::default()
        },
    );
    assert_eq!(page.title.as_deref(), Some("OG title"));
    assert_eq!(page.description.as_deref(), Some("A description."));
    assert_eq!(page.lang.as_deref(), Some("de-at"));
    assert_eq!(page.published.as_deref(), Some("2019-11-20T10:00:00Z"));
    // <base href> applies to every relative URL in the document.
    assert_eq!(
        page.canonical.as_ref().map(Url::as_str),
        Some("https://cdn.example.org/canonical/path?x=1")
    );
    assert!(page.robots.noindex && !page.robots.nofollow);
    assert_eq!(page.encoding_source, EncodingSource::Meta);

    let links: Vec<(&str, &str, bool, LinkKind)> = page
        .links
        .iter()
        .map(|l| (l.url.as_str(), l.text.as_str(), l.nofollow, l.kind))
        .collect();
    assert_eq!(
        links,
        vec![
            (
                "https://cdn.example.org/base/page/2",
                "",
                false,
                LinkKind::Pagination
            ),
            (
                "https://cdn.example.org/base/rel/link",
                "Relative",
                false,
                LinkKind::Anchor
            ),
            (
                "https://other.example.com/abs",
                "Absolute link",
                true,
                LinkKind::Anchor
            ),
            (
                "https://cdn.example.org/base/",
                "Top",
                false,
                LinkKind::Anchor
            ),
            (
                "https://cdn.example.org/area",
                "Area text",
                false,
                LinkKind::Area
            ),
            ("https://cdn.example.org/ugc", "UGC", true, LinkKind::Anchor),
        ]
    );
}

#[test]
fn x_robots_tag_and_title_fallbacks() {
    let html = b"<html><head><title>Plain</title></head><body><p>x</p></body></html>";
    let page = extract(
        html,
        &Input {
            x_robots_tag: Some("otherbot: noindex\nnofollow"),
            ..Input::default()
        },
    );
    assert!(!page.robots.noindex && page.robots.nofollow);
    assert_eq!(page.title.as_deref(), Some("Plain"));
    let page = extract(
        b"<h1> Heading  one </h1>",
        &Input {
            x_robots_tag: Some("none"),
            ..Input::default()
        },
    );
    assert_eq!(page.title.as_deref(), Some("Heading one"));
    assert!(page.robots.noindex && page.robots.nofollow);
    // Without a page URL only absolute links are kept.
    let page = extract(
        b"<a href='/x'>a</a><a href='http://h.example/y'>b</a>",
        &Input::default(),
    );
    assert_eq!(page.links.len(), 1);
}

/// One text per script whatlang tells languages apart in by trigrams. In a
/// debug build (`cargo test`) the vendored whatlang also recomputes every
/// profile's distance the upstream way and asserts it equals the inverted
/// index's (vendor/whatlang/NEARCRAWL.md), so this test checks the patch too.
#[test]
fn language_is_detected_without_a_lang_attribute() {
    let cases = [
        (
            "rus",
            "Это достаточно длинный русский текст, чтобы определить язык страницы без атрибута lang. \
             Он состоит из нескольких предложений, и в нём много обычных слов.",
        ),
        (
            "deu",
            "Berlin ist die Hauptstadt und ein Land der Bundesrepublik Deutschland. Die Stadt ist mit \
             rund 3,7 Millionen Einwohnern die bevölkerungsreichste Gemeinde Deutschlands.",
        ),
        (
            "eng",
            "The quick brown fox jumps over the lazy dog while the farmer watches from the porch \
             and wonders whether the weather will hold until the harvest is in.",
        ),
        (
            "ara",
            "القاهرة هي عاصمة جمهورية مصر العربية، وأكبر مدنها، وتعد أكبر مدينة عربية من حيث تعداد \
             السكان والمساحة، وتحتل المركز الثاني أفريقيا.",
        ),
        (
            "hin",
            "नई दिल्ली भारत की राजधानी है। यह भारत सरकार के तीनों अंगों, कार्यपालिका, संसद और \
             न्यायपालिका का केन्द्र है। दिल्ली का इतिहास बहुत पुराना है और यहाँ अनेक ऐतिहासिक इमारतें हैं, \
             जिन्हें देखने के लिए हर साल लाखों लोग आते हैं।",
        ),
        (
            "heb",
            "ירושלים היא עיר הבירה של מדינת ישראל והעיר הגדולה ביותר בה, עם אוכלוסייה של כמעט \
             מיליון תושבים.",
        ),
    ];
    for (code, text) in cases {
        let page = extract(
            format!("<html><body><p>{text}</p></body></html>").as_bytes(),
            &Input::default(),
        );
        assert_eq!(page.lang.as_deref(), Some(code), "{text}");
        let two_letters = nearcrawl_extract::iso_639_1(code);
        assert_eq!(page.language, two_letters, "{text}");
    }
}

const GERMAN: &str = "<p>Berlin ist die Hauptstadt und ein Land der Bundesrepublik \
    Deutschland. Die Stadt ist mit rund 3,7 Millionen Einwohnern die bevölkerungsreichste \
    Gemeinde Deutschlands.</p><p>Sie liegt an der Spree und der Havel, und ihre Museen, \
    Theater und Parks ziehen jedes Jahr viele Besucher an.</p>";
const ENGLISH: &str = "<p>The quick brown fox jumps over the lazy dog while the farmer \
    watches from the porch and wonders whether the weather will hold until the harvest is \
    in, as it did last year.</p>";

/// The language the filter goes by: the declaration (markup first, then
/// the Content-Language header), unless the text holds next to none of it.
#[test]
fn the_page_language_is_declared_unless_the_text_says_otherwise() {
    let language = |html: String, header: Option<&str>| {
        let input = Input {
            content_language: header,
            ..Input::default()
        };
        extract(html.as_bytes(), &input).language
    };
    // A template's default over a German text: the text decides.
    let german_in_english_template = format!("<html lang=en><body>{GERMAN}</body></html>");
    assert_eq!(language(german_in_english_template, None), Some("de"));
    // A translation in progress: the declaration stands.
    let partly = format!("<html lang=de-DE><body>{ENGLISH}{GERMAN}{ENGLISH}</body></html>");
    assert_eq!(language(partly, None), Some("de"));
    // The header declares when the markup does not; the markup comes first.
    let short = "<html><body><p>Impressum</p></body></html>".to_string();
    assert_eq!(language(short.clone(), Some("fr-CH, de")), Some("fr"));
    assert_eq!(
        language(short.replace("<html>", "<html lang=it>"), Some("fr")),
        Some("it")
    );
    assert_eq!(language(short, None), None);
}

#[test]
fn charsets_come_out_as_utf8() {
    let text = "这是一个用GBK编码的中文网页，里面有足够多的汉字来检测编码。".repeat(5);
    let (gbk, _, _) = encoding_rs::GBK.encode(&text);
    let mut html = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=gbk\"></head><body><p>".to_vec();
    html.extend_from_slice(&gbk);
    html.extend_from_slice(b"</p></body></html>");
    let page = extract(&html, &Input::default());
    assert_eq!(page.encoding, "GBK");
    assert!(page.text.contains("用GBK编码的中文网页"), "{}", page.text);
    let (sjis, _, _) =
        encoding_rs::SHIFT_JIS.encode("日本語のページです。文字コードはシフトJISです。");
    let page = extract(
        &sjis,
        &Input {
            charset: Some("Shift_JIS"),
            ..Input::default()
        },
    );
    assert!(page.text.contains("日本語のページです"));
}
