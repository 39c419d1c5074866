//! What extraction counts in a text: its visible characters (those that
//! are not white space, as `char::is_whitespace` has it) and its commas.
//! Every length the rules compare is counted so.

/// Characters that are not white space; ASCII text, most of it, byte by
/// byte.
pub(crate) fn visible_chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len() - ascii_spaces(s.as_bytes())
    } else {
        s.chars().filter(|c| !c.is_whitespace()).count()
    }
}

/// An ASCII white space byte, as `char::is_whitespace` has it (with
/// U+000B, which `u8::is_ascii_whitespace` leaves out).
pub(crate) fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// The ASCII white space bytes of `bytes`.
fn ascii_spaces(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| is_ascii_space(b)).count()
}

pub(crate) fn is_comma(c: char) -> bool {
    matches!(c, ',' | '，' | '、' | '،' | '；' | ';')
}

/// A text's visible characters and its commas. Asked of every text node
/// once a page: ASCII text, most of it, is counted in two passes over its
/// bytes that the compiler turns into vector instructions (a loop testing
/// each byte once for both was 4% of extraction).
pub(crate) fn count_text(t: &str) -> (u32, u32) {
    if t.is_ascii() {
        let bytes = t.as_bytes();
        let commas = bytes.iter().filter(|&&b| b == b',' || b == b';').count();
        return ((bytes.len() - ascii_spaces(bytes)) as u32, commas as u32);
    }
    let (mut chars, mut commas) = (0u32, 0u32);
    for c in t.chars().filter(|c| !c.is_whitespace()) {
        chars += 1;
        commas += u32::from(is_comma(c));
    }
    (chars, commas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_counted_as_char_is_whitespace_and_is_comma_count_them() {
        let all_ascii: String = (0u8..128).map(char::from).collect();
        for t in [
            all_ascii.as_str(),
            "a b\tc\nd\u{b}e\u{c}f\rg",
            "a, b;\tc\u{b}d",
            "caf\u{e9} \u{a0}na\u{ef}ve\u{2003}\u{3000}\u{85}x",
            "caf\u{e9}\u{a0}x\u{3000}y\u{ff0c}z\u{3001}",
            "",
        ] {
            let chars = t.chars().filter(|c| !c.is_whitespace()).count();
            let commas = t.chars().filter(|c| is_comma(*c)).count() as u32;
            assert_eq!(visible_chars(t), chars, "{t:?}");
            assert_eq!(count_text(t), (chars as u32, commas), "{t:?}");
        }
    }
}
