//! Stand-in for the extractor: the visible text of an HTML document by plain
//! tag stripping. To be replaced by the extractor crate (main-content
//! extraction on `scraper`) when it lands; it keeps boilerplate and knows
//! only a few entities.

/// Text of `html` outside tags, comments, `<script>` and `<style>`, with the
/// common entities decoded. Invalid UTF-8 is replaced, never an error.
pub fn visible_text(html: &[u8]) -> String {
    let html = String::from_utf8_lossy(html);
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        decode_entities(&html[i..i + off], &mut out);
        out.push(' ');
        let tag = i + off;
        let skip_to = if lower[tag..].starts_with("<!--") {
            lower[tag..].find("-->").map(|e| tag + e + 3)
        } else if let Some(name) = ["script", "style", "noscript", "template"]
            .into_iter()
            .find(|n| lower[tag + 1..].starts_with(n))
        {
            lower[tag..]
                .find(&format!("</{name}"))
                .and_then(|e| lower[tag + e..].find('>').map(|g| tag + e + g + 1))
        } else {
            lower[tag..].find('>').map(|e| tag + e + 1)
        };
        match skip_to {
            Some(next) => i = next,
            None => return out, // unterminated tag: the rest is markup
        }
    }
    decode_entities(&html[i..], &mut out);
    out
}

fn decode_entities(s: &str, out: &mut String) {
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[..rest.len().min(12)].find(';');
        let decoded = end.and_then(|e| entity(&rest[1..e]).map(|c| (c, e + 1)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
}

fn entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some('\u{a0}'),
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(html: &str) -> String {
        visible_text(html.as_bytes())
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn strips_tags_scripts_styles_comments() {
        let html = "<html><head><title>T</title><style>p{color:red}</style>\
                    <script>var a = '<p>';</script></head><body><!-- c <b> -->\
                    <p>Hello <b>world</b> &amp; friends&#33; &#x4e2d;</p></body></html>";
        assert_eq!(words(html), "T Hello world & friends! 中");
    }

    #[test]
    fn survives_broken_markup() {
        assert_eq!(words("a < b"), "a");
        assert_eq!(words("<p>x</p><script>never closed"), "x");
        assert_eq!(words("&bogus; &#xZZ; &"), "&bogus; &#xZZ; &");
        assert_eq!(words(""), "");
        let _ = visible_text(&[0xff, 0xfe, b'<', 0x80]);
    }
}
