//! Cleans raw HTML before parsing: drops the bodies of `<script>`,
//! `<style>`, inline `<svg>` images and comments.
//!
//! Their content is never page text, and on many pages it is most of the
//! bytes: tokenizing it was the largest single cost of extraction. The
//! tags themselves stay, so the document's structure is unchanged. A
//! script body ends at the first `</script` (any case), as browsers end it
//! in all but contrived escaped-comment cases.

use std::borrow::Cow;

/// A page's markup stripped ([`strip`]), and the number of `<` in it.
pub(crate) struct Stripped<'a> {
    /// The markup without script, style and SVG bodies or comments.
    pub(crate) markup: Cow<'a, str>,
    /// Each a tag, or text that reads like one: what the tree is sized
    /// by. Counted by the scan that finds them anyway.
    pub(crate) lts: usize,
}

/// `html` without script, style and SVG bodies or comments, and the
/// number of `<` left.
pub(crate) fn strip(html: &str) -> Stripped<'_> {
    let mut out: Option<String> = None;
    let (tail, lts) = kept_pieces(html, |piece| {
        // Room for all of it: what is left is never longer, and a page of
        // few scripts (most) keeps most of its bytes, so half grew once,
        // a copy of the page's markup.
        out.get_or_insert_with(|| String::with_capacity(html.len()))
            .push_str(piece);
    });
    let markup = match out {
        None => Cow::Borrowed(html),
        Some(mut o) => {
            o.push_str(&html[tail..]);
            Cow::Owned(o)
        }
    };
    Stripped { markup, lts }
}

/// The length of [`strip`]'s markup, without making it: a page
/// too large for a tree is read as it streams, and a copy of it would be
/// the largest thing in memory.
pub(crate) fn stripped_len(html: &str) -> usize {
    let mut len = 0;
    let (tail, _) = kept_pieces(html, |piece| len += piece.len());
    len + (html.len() - tail)
}

/// Calls `keep` with each piece of `html` kept before a cut, in order;
/// returns where the piece kept after the last cut starts (the end of
/// `html` when it is cut to the end), and the number of `<` kept.
fn kept_pieces<'a>(html: &'a str, mut keep: impl FnMut(&'a str)) -> (usize, usize) {
    let bytes = html.as_bytes();
    let mut copied = 0; // bytes of `html` already handled
    let mut i = 0;
    // SVG images opening before this are left to the parser.
    let mut svg_left_until = 0;
    let mut lts = 0;
    while let Some(off) = memchr_lt(&bytes[i..]) {
        let lt = i + off;
        lts += 1;
        if !bytes.get(lt + 1).is_some_and(|&b| may_open_a_cut(b)) {
            i = lt + 1;
            continue;
        }
        let rest = &bytes[lt..];
        let svg = if lt >= svg_left_until {
            svg_body(rest)
        } else {
            Err(0)
        };
        if let Err(scanned) = svg {
            svg_left_until = svg_left_until.max(lt + scanned);
        }
        let (keep_until, resume) = if rest.starts_with(b"<!--") {
            // The whole comment goes.
            lts -= 1;
            match find(&rest[4..], b"-->") {
                Some(e) => (lt, lt + 4 + e + 3),
                None => (lt, bytes.len()),
            }
        } else if let Ok(body) = svg {
            // Keep the start and end tags, drop what is between.
            (lt + body.start, lt + body.end)
        } else if let Some(name) = raw_text_tag(rest) {
            // Keep the start tag, drop the body up to the end tag.
            let Some(gt) = rest.iter().position(|&b| b == b'>') else {
                // Kept to the end as it is.
                lts += memchr::memchr_iter(b'<', &rest[1..]).count();
                break;
            };
            let body = lt + gt + 1;
            match find_ci(&bytes[body..], name) {
                Some(e) => (body, body + e),
                None => (body, bytes.len()),
            }
        } else {
            i = lt + 1;
            continue;
        };
        // A start tag kept before a cut may hold more `<`.
        lts += memchr::memchr_iter(b'<', &bytes[(lt + 1).min(keep_until)..keep_until]).count();
        keep(&html[copied..keep_until]);
        copied = resume;
        i = resume;
        if i >= bytes.len() {
            break;
        }
    }
    (copied.min(html.len()), lts)
}

/// Where the body of the inline SVG image `rest` opens lies, when it can go
/// unparsed: its closing `</svg>` is found (nested images counted) and no
/// tag inside would end the image early. Icons and charts drawn inline are
/// never page text (the tree drops them whole), and were an eighth of
/// real pages' markup once scripts and styles were gone. HTML's parser
/// leaves an image at a tag such as `<p>` or `<div>`
/// ([`breaks_out_of_svg`]), and what follows is page text: such an image
/// is left to the parser, as is one never closed. Then the error says how
/// far the image was read: images opening before that are left too, as
/// each would be read over the same bytes (a page of unclosed `<svg>` tags
/// took time quadratic in its length).
fn svg_body(rest: &[u8]) -> Result<std::ops::Range<usize>, usize> {
    if !starts_tag(rest, b"<svg") {
        return Err(0);
    }
    let start = start_tag_end(rest).ok_or(rest.len())?;
    if rest[..start].ends_with(b"/>") {
        return Err(start);
    }
    let mut depth = 0u32;
    let mut at = start;
    while let Some(off) = memchr_lt(&rest[at..]) {
        let lt = at + off;
        let tag = &rest[lt..];
        if starts_tag(tag, b"</svg") {
            if depth == 0 {
                return Ok(start..lt);
            }
            depth -= 1;
        } else if starts_tag(tag, b"<svg") {
            let end = start_tag_end(tag).ok_or(rest.len())?;
            depth += u32::from(!tag[..end].ends_with(b"/>"));
        } else if breaks_out_of_svg(&tag[1..])
            || starts_tag(tag, b"</p")
            || starts_tag(tag, b"</br")
        {
            return Err(lt);
        }
        at = lt + 1;
    }
    Err(rest.len())
}

/// `rest` starts with the tag `open` (`<name` or `</name`, any case).
fn starts_tag(rest: &[u8], open: &[u8]) -> bool {
    rest.len() > open.len()
        && rest[..open.len()].eq_ignore_ascii_case(open)
        && matches!(
            rest[open.len()],
            b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/' | b'\x0c'
        )
}

/// Past the `>` of the tag `rest` starts with; none when no `>` follows
/// (then no later tag ends either).
fn start_tag_end(rest: &[u8]) -> Option<usize> {
    memchr::memchr(b'>', rest).map(|gt| gt + 1)
}

/// A start tag (after its `<`) that makes HTML's parser leave an SVG
/// image: the "breakout" tags of the parsing rules for foreign content
/// (`<font>` counts whatever its attributes). The end tags `</p>` and
/// `</br>` leave it too.
fn breaks_out_of_svg(tag: &[u8]) -> bool {
    const LONGEST: usize = 10;
    let name_len = tag
        .iter()
        .position(|b| !b.is_ascii_alphanumeric())
        .unwrap_or(tag.len());
    if name_len == 0 || name_len > LONGEST {
        return false;
    }
    let mut lower = [0u8; LONGEST];
    for (l, b) in lower.iter_mut().zip(tag) {
        *l = b.to_ascii_lowercase();
    }
    matches!(
        &lower[..name_len],
        b"b" | b"big"
            | b"blockquote"
            | b"body"
            | b"br"
            | b"center"
            | b"code"
            | b"dd"
            | b"div"
            | b"dl"
            | b"dt"
            | b"em"
            | b"embed"
            | b"font"
            | b"h1"
            | b"h2"
            | b"h3"
            | b"h4"
            | b"h5"
            | b"h6"
            | b"head"
            | b"hr"
            | b"i"
            | b"img"
            | b"li"
            | b"listing"
            | b"menu"
            | b"meta"
            | b"nobr"
            | b"ol"
            | b"p"
            | b"pre"
            | b"ruby"
            | b"s"
            | b"small"
            | b"span"
            | b"strong"
            | b"strike"
            | b"sub"
            | b"sup"
            | b"table"
            | b"tt"
            | b"u"
            | b"ul"
            | b"var"
    )
}

/// Whether `b`, the byte after a `<`, may start what is cut: a comment
/// (`<!--`), an SVG image (`<svg`), a script or a style. Most tags are
/// told apart by this byte alone, before any of the longer looks.
fn may_open_a_cut(b: u8) -> bool {
    matches!(b, b'!' | b's' | b'S')
}

/// The end-tag prefix to look for if `rest` opens a script or style.
fn raw_text_tag(rest: &[u8]) -> Option<&'static [u8]> {
    for (open, close) in [(&b"<script"[..], &b"</script"[..]), (b"<style", b"</style")] {
        if rest.len() > open.len()
            && rest[..open.len()].eq_ignore_ascii_case(open)
            && matches!(
                rest[open.len()],
                b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'/' | b'\x0c'
            )
        {
            return Some(close);
        }
    }
    None
}

fn memchr_lt(b: &[u8]) -> Option<usize> {
    memchr::memchr(b'<', b)
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, n)
}

/// Case-insensitive search for an ASCII needle starting with `</`.
fn find_ci(h: &[u8], n: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(off) = memchr::memmem::find(&h[i..], b"</") {
        let at = i + off;
        if h.len() - at >= n.len() && h[at..at + n.len()].eq_ignore_ascii_case(n) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opening_that_is_cut_passes_the_first_byte_look() {
        for open in [
            "<!--", "<svg>", "<SVG ", "<script>", "<Script ", "<style>", "<STYLE/",
        ] {
            let b = open.as_bytes();
            let cut = b.starts_with(b"<!--") || starts_tag(b, b"<svg") || raw_text_tag(b).is_some();
            assert!(cut, "{open} opens a cut");
            assert!(may_open_a_cut(b[1]), "{open}");
        }
        assert!(!may_open_a_cut(b'd') && !may_open_a_cut(b'/'));
    }

    fn strip_raw_text(html: &str) -> Cow<'_, str> {
        strip(html).markup
    }

    #[test]
    fn strips_bodies_keeps_tags_and_text() {
        let html = "<p>a<!-- x <p>hidden</p> -->b</p><SCRIPT type=x>if (a<b) { s = '</p>'; }</SCRIPT>\
                    <style>p{}</style><scripts>kept</scripts><p>c</p>";
        assert_eq!(
            strip_raw_text(html),
            "<p>ab</p><SCRIPT type=x></SCRIPT><style></style><scripts>kept</scripts><p>c</p>"
        );
    }

    #[test]
    fn svg_bodies_go_unless_the_parser_would_leave_the_image() {
        let cases = [
            // Nested images, a self-closed one inside, any case.
            (
                "<a href=/x><SVG viewBox='0 0 9 9'><svg><path d=M0/></svg><svg/><title>X</title></SVG>Go</a>",
                "<a href=/x><SVG viewBox='0 0 9 9'></SVG>Go</a>",
            ),
            // A self-closed image has no body.
            (
                "<svg/><p>text</p><svg>x</svg>",
                "<svg/><p>text</p><svg></svg>",
            ),
            // A `<p>` ends the image: what follows is page text. So does
            // a stray `</p>`.
            (
                "<svg><text>a</text><p>shown</svg>",
                "<svg><text>a</text><p>shown</svg>",
            ),
            ("<svg><g></P>shown</g></svg>", "<svg><g></P>shown</g></svg>"),
            ("<svg><g></path>gone</g></svg>", "<svg></svg>"),
            // Never closed: left as it is.
            ("<svg><path/>text", "<svg><path/>text"),
            // Not an svg tag.
            ("<svgx>kept</svgx>", "<svgx>kept</svgx>"),
        ];
        for (html, want) in cases {
            assert_eq!(strip_raw_text(html), want, "{html}");
        }
        // Images never closed, one inside the other: each is left, and the
        // page is read once (it was read again from every `<svg>`).
        let hostile = "<svg>".repeat(200_000);
        assert!(matches!(strip_raw_text(&hostile), Cow::Borrowed(_)));
        let unended = format!("<svg>x{}", "<svg ".repeat(200_000));
        assert!(matches!(strip_raw_text(&unended), Cow::Borrowed(_)));
    }

    #[test]
    fn unterminated_and_untouched() {
        assert_eq!(
            strip_raw_text("<p>x</p><script>never closed"),
            "<p>x</p><script>"
        );
        assert_eq!(strip_raw_text("<p>x<!-- open"), "<p>x");
        assert!(matches!(strip_raw_text("<p>plain</p>"), Cow::Borrowed(_)));
        assert_eq!(strip_raw_text("<script"), "<script");
        assert_eq!(strip_raw_text("<"), "<");
        assert_eq!(strip_raw_text("é<!---->ü"), "éü");
    }

    #[test]
    fn the_stripped_length_and_lts_are_those_of_the_stripped_page() {
        let long = format!(
            "<p>{}</p><script>{}</script>",
            "a".repeat(5000),
            "b".repeat(9000)
        );
        for html in [
            "<p>a<!-- x -->b</p><SCRIPT type=x>if (a<b) {}</SCRIPT><style>p{}</style><p>c</p>",
            "<a><svg><path d=M0/></svg>Go</a><svg/><p>t</p>",
            "<p>x</p><script>never closed",
            "<p>x<!-- open",
            "<p>plain</p>",
            "<script",
            "<p>a</p><script <b>c<i>",
            "a < b <svg><g></svg> <!-- <p> --> </p",
            "é<!---->ü",
            "",
            long.as_str(),
        ] {
            assert_eq!(stripped_len(html), strip_raw_text(html).len(), "{html}");
            let stripped = strip(html);
            assert_eq!(stripped.lts, stripped.markup.matches('<').count(), "{html}");
        }
    }
}
