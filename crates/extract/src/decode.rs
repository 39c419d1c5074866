//! Bytes to text: which encoding a page is in, and decoding it.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};

/// How far into the document to look for a `<meta charset>`. The HTML spec
/// says 1024 bytes and many crawlers use 2 KB; pages with long heads (inline
/// styles, scripts, tracking tags) put it later, and misreading them gives
/// mojibake, so look further.
const META_WINDOW: usize = 64 * 1024;
/// How much text chardetng sees when nothing declares an encoding.
const DETECT_WINDOW: usize = 256 * 1024;

/// Where the encoding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingSource {
    ByteOrderMark,
    /// The charset the fetcher passed in (Content-Type).
    Declared,
    Meta,
    /// The bytes are valid UTF-8 with non-ASCII text: taken as UTF-8 even
    /// if a legacy charset was declared, as such text is almost never valid
    /// UTF-8 by accident.
    ValidUtf8,
    Detected,
}

/// Decodes `bytes` as HTML: byte-order mark, then valid UTF-8 (see
/// [`EncodingSource::ValidUtf8`]), then the declared charset, then a
/// `<meta>` prescan, then statistical detection. Malformed sequences become
/// U+FFFD; decoding never fails. Valid UTF-8 is borrowed, not copied.
pub fn decode_html<'a>(
    bytes: &'a [u8],
    declared: Option<&str>,
) -> (Cow<'a, str>, &'static Encoding, EncodingSource) {
    if let Some((enc, bom)) = Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom..]);
        return (text, enc, EncodingSource::ByteOrderMark);
    }
    let declared = declared
        .and_then(|l| Encoding::for_label(l.trim().as_bytes()))
        .map(html_encoding);
    let meta = || prescan_meta(&bytes[..bytes.len().min(META_WINDOW)]);
    let (enc, source) = if !bytes.is_ascii() && std::str::from_utf8(bytes).is_ok() {
        (UTF_8, EncodingSource::ValidUtf8)
    } else if let Some(enc) = declared {
        (enc, EncodingSource::Declared)
    } else if let Some(enc) = meta() {
        (enc, EncodingSource::Meta)
    } else {
        let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        det.feed(&bytes[..bytes.len().min(DETECT_WINDOW)], true);
        (
            det.guess(None, chardetng::Utf8Detection::Allow),
            EncodingSource::Detected,
        )
    };
    let (text, _) = enc.decode_without_bom_handling(bytes);
    (text, enc, source)
}

/// A `<meta>` can't declare UTF-16 (the spec reads it as UTF-8), and
/// x-user-defined is windows-1252.
fn html_encoding(enc: &'static Encoding) -> &'static Encoding {
    if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
        UTF_8
    } else if enc == encoding_rs::X_USER_DEFINED {
        encoding_rs::WINDOWS_1252
    } else {
        enc
    }
}

/// Finds `<meta charset=X>` or `<meta http-equiv=content-type content="...;
/// charset=X">` in the first bytes, ASCII case-insensitively.
fn prescan_meta(window: &[u8]) -> Option<&'static Encoding> {
    // Only the `<meta` tags are lowercased, not the window: an ASCII page
    // that declares no charset in its Content-Type (nginx's default) comes
    // here, and a lowercased copy of its first 64 KiB was most of its
    // decoding.
    let mut from = 0;
    while let Some(pos) = find_meta(&window[from..]) {
        let start = from + pos + 5;
        let end = memchr::memchr(b'>', &window[start..]).map_or(window.len(), |e| start + e);
        let tag = window[start..end].to_ascii_lowercase();
        if let Some(enc) = charset_in(&tag) {
            return Some(html_encoding(enc));
        }
        from = end;
    }
    None
}

/// Where the first `<meta` in `hay` starts, in any case.
fn find_meta(hay: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'<', hay)
        .find(|&at| (hay.get(at..at + 5)).is_some_and(|w| w.eq_ignore_ascii_case(b"<meta")))
}

/// The encoding named by the first `charset` in a tag's attributes.
fn charset_in(tag: &[u8]) -> Option<&'static Encoding> {
    let mut from = 0;
    while let Some(pos) = find(&tag[from..], b"charset") {
        let mut i = from + pos + 7;
        while tag.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if tag.get(i) == Some(&b'=') {
            i += 1;
            while tag
                .get(i)
                .is_some_and(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'\'')
            {
                i += 1;
            }
            let value_end = tag[i..]
                .iter()
                .position(|b| {
                    b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b';' | b'/' | b'>')
                })
                .map_or(tag.len(), |e| i + e);
            if let Some(enc) = Encoding::for_label(&tag[i..value_end]) {
                return Some(enc);
            }
        }
        from += pos + 7;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_wins() {
        let mut b = vec![0xEF, 0xBB, 0xBF];
        b.extend_from_slice("héllo".as_bytes());
        let (t, enc, src) = decode_html(&b, Some("windows-1252"));
        assert_eq!(
            (&*t, enc, src),
            ("héllo", UTF_8, EncodingSource::ByteOrderMark)
        );
        let (t, _, _) = decode_html(&[0xFF, 0xFE, b'h', 0, b'i', 0], None);
        assert_eq!(t, "hi");
    }

    #[test]
    fn declared_and_meta_charsets() {
        let (gbk, _, _) = encoding_rs::GBK.encode("中文网页");
        let (t, enc, src) = decode_html(&gbk, Some("gbk"));
        assert_eq!(
            (&*t, enc.name(), src),
            ("中文网页", "GBK", EncodingSource::Declared)
        );
        let mut page = b"<html><head><META http-equiv='Content-Type' content='text/html; charset=GB2312'></head><body>".to_vec();
        page.extend_from_slice(&gbk);
        let (t, enc, src) = decode_html(&page, None);
        assert!(t.ends_with("中文网页"), "{t}");
        assert_eq!((enc.name(), src), ("GBK", EncodingSource::Meta));
        // A charset far down a long head is still found.
        // Any case; a `<meta` without a charset, and a `<` that opens no
        // meta, are passed over.
        let page = b"<html><Meta name=x><p>a<b<METAX CharSet = 'KOI8-R'>".to_vec();
        let (_, enc, src) = decode_html(&page, None);
        assert_eq!((enc.name(), src), ("KOI8-R", EncodingSource::Meta));
        let mut late = b"<head>".to_vec();
        late.extend(std::iter::repeat_n(b' ', 20_000));
        late.extend_from_slice(b"<meta charset=\"shift_jis\">");
        late.extend_from_slice(&encoding_rs::SHIFT_JIS.encode("日本語").0);
        assert!(decode_html(&late, None).0.ends_with("日本語"));
    }

    #[test]
    fn valid_utf8_beats_a_wrong_legacy_declaration() {
        let (t, enc, src) = decode_html("naïve café".as_bytes(), Some("iso-8859-1"));
        assert_eq!(
            (&*t, enc, src),
            ("naïve café", UTF_8, EncodingSource::ValidUtf8)
        );
    }

    #[test]
    fn undeclared_legacy_text_is_detected() {
        let text = "Съешь же ещё этих мягких французских булок, да выпей чаю. ".repeat(20);
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(&text);
        let (t, enc, src) = decode_html(&bytes, None);
        assert_eq!(
            (enc.name(), src),
            ("windows-1251", EncodingSource::Detected)
        );
        assert_eq!(t, text);
        let text = "這是一個繁體中文的網頁，用來測試編碼偵測是否正確。".repeat(10);
        let big5 = encoding_rs::BIG5.encode(&text).0;
        assert_eq!(decode_html(&big5, None).1.name(), "Big5");
    }

    #[test]
    fn garbage_never_fails() {
        let junk: Vec<u8> = (0..=255).cycle().take(5000).collect();
        let (t, _, _) = decode_html(&junk, Some("no-such-charset"));
        assert!(!t.is_empty());
    }
}
