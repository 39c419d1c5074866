//! Normalization and tokenization: text in, token hashes out.
//!
//! The [`Tokenizer`] trait is the pluggable part of fingerprinting: anything
//! that turns text into a sequence of 64-bit token hashes. The
//! [`StandardTokenizer`] is the default and what the crawler uses.

use std::hash::Hasher;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use crate::hash::FnvHasher;

/// Turns text into token hashes, in text order.
///
/// Implementations hash each token with any decent 64-bit hash (the
/// fingerprinter finalizes every feature, so a raw FNV-1a is enough) and must
/// be deterministic: the same text always gives the same hashes.
pub trait Tokenizer {
    /// Calls `emit` with the hash of every token of `text`, in order.
    fn tokenize<F: FnMut(u64)>(&mut self, text: &str, emit: F);

    /// [`tokenize`](Tokenizer::tokenize), with each token's length in
    /// characters: what a token weighs when short texts are compared by
    /// how much of them they share (a Chinese character is one, a Java
    /// class name twenty). Tokenizers that do not know weigh every token 1.
    fn tokenize_measured<F: FnMut(u64, u32)>(&mut self, text: &str, mut emit: F) {
        self.tokenize(text, |t| emit(t, 1));
    }
}

/// Words for space-separated scripts, single characters for Chinese and
/// Japanese.
///
/// Normalization, applied to every token:
/// - Unicode NFKC (fullwidth forms, ligatures and compatibility characters
///   fold to their plain forms), then lowercase;
/// - digits are kept as they are: `int8` and `int16`, model numbers, years
///   and versions are different words (pages that differ only in numbers,
///   such as calendars, are a matter for trap detection, not for the
///   duplicate gate);
/// - punctuation, symbols and whitespace separate tokens and are dropped;
///   combining marks stay in their word; soft hyphens and zero-width
///   (non-)joiners are ignored.
///
/// Han ideographs, Hiragana and Katakana, which are written without spaces,
/// give one token per character: chosen over character bigrams and jieba word
/// segmentation by measurement (crate docs, `examples/cjk_tokenizers.rs`).
/// Thai, Lao, Khmer and Myanmar, also written without spaces but with
/// alphabets, give one token per pair of adjacent letters (a lone letter gives
/// itself): one letter carries too little to be a feature. Any text with a
/// letter, digit or ideograph in it gives at least one token.
///
/// Pure-ASCII words take a byte-level fast path that hashes as it scans,
/// without decoding chars or allocating; so do Han characters in the Unicode
/// path. Everything else goes through full normalization, which gives the same
/// hashes for the same text.
#[derive(Debug, Default, Clone)]
pub struct StandardTokenizer {
    _private: (),
}

impl StandardTokenizer {
    /// A new tokenizer. It holds no state between calls.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Byte classes of the ASCII fast path.
const SEP: u8 = 0;
const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 3;
const NON_ASCII: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b >= 0x80 {
            NON_ASCII
        } else if b.is_ascii_uppercase() {
            UPPER
        } else if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii_digit() {
            DIGIT
        } else {
            SEP
        };
        i += 1;
    }
    t
};

impl Tokenizer for StandardTokenizer {
    fn tokenize<F: FnMut(u64)>(&mut self, text: &str, mut emit: F) {
        // The ASCII path's lengths are dead code here, compiled out; the
        // Unicode path's word counter is one add a character.
        self.tokenize_measured(text, |t, _| emit(t));
    }

    fn tokenize_measured<F: FnMut(u64, u32)>(&mut self, text: &str, mut emit: F) {
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        while i < n {
            // Skip separators: ASCII ones, and the dashes, quotes and
            // ellipses of typeset text.
            loop {
                if i < n && CLASS[bytes[i] as usize] == SEP {
                    i += 1;
                } else if typeset_punctuation(&bytes[i..]) {
                    i += 3;
                } else {
                    break;
                }
            }
            if i == n {
                break;
            }
            let start = i;
            // Raw FNV-1a state (as `FnvHasher` computes it; the tests check
            // the two agree), kept in a register for the branch-free steps.
            let mut h = FNV_OFFSET;
            let mut ascii_word = true;
            while i < n {
                // Runs of ASCII letters, eight bytes at a time. Always eight
                // FNV steps, and the state after the run's last letter picked
                // from them, rather than a loop exit that depends on the word
                // length (mispredicted loop exits, not the multiplies, were
                // the cost) or a select per step (which lengthened the chain
                // of multiplies by one instruction a step).
                while i + 8 <= n {
                    let chunk = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
                    let stop = non_letter_bytes(chunk);
                    let run = if stop == 0 {
                        8
                    } else {
                        (stop.trailing_zeros() / 8) as usize
                    };
                    let mut steps = [h; 9];
                    for j in 0..8 {
                        steps[j + 1] = fnv_step(steps[j], (chunk >> (8 * j)) as u8 | 0x20);
                    }
                    h = steps[run];
                    i += run;
                    if run < 8 {
                        break;
                    }
                }
                if i == n {
                    break;
                }
                let b = bytes[i];
                match CLASS[b as usize] {
                    UPPER | LOWER => h = fnv_step(h, b | 0x20),
                    DIGIT => h = fnv_step(h, b),
                    SEP => break,
                    _ if typeset_punctuation(&bytes[i..]) => break,
                    _ => {
                        ascii_word = false;
                        break;
                    }
                }
                i += 1;
            }
            if ascii_word {
                emit(h, (i - start) as u32);
                continue;
            }
            // The word holds non-ASCII text: redo it, up to the next ASCII
            // separator, on the Unicode path. Cutting at ASCII separators is
            // safe because NFKC never composes across them.
            let mut end = i;
            while end < n && CLASS[bytes[end] as usize] != SEP {
                end += 1;
            }
            // `start` and `end` sit on ASCII bytes or the ends, so both are
            // char boundaries.
            unicode_region(&text[start..end], &mut emit);
            i = end;
        }
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// One FNV-1a 64 step.
#[inline(always)]
fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
}

/// Whether `rest` starts with one of U+2010 to U+2027 (dashes, curly
/// quotes, bullets, ellipsis): separators, like all inert punctuation (see
/// `is_inert_punctuation`), and common enough in English text (`don’t`,
/// `“quoted”`, `a—b`) that the ASCII fast path takes them itself rather than
/// sending the word down the Unicode path. NFKC never composes them with a
/// neighbour, so splitting there gives what the Unicode path gives.
#[inline]
fn typeset_punctuation(rest: &[u8]) -> bool {
    matches!(rest, [0xE2, 0x80, 0x90..=0xA7, ..])
}

/// Marks (high bit of the byte) every byte of `x` that is not an ASCII letter.
#[inline]
fn non_letter_bytes(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Lowercase; clear the high bits so the adds below cannot carry between
    // bytes (non-ASCII bytes are caught by `x & HIGH`).
    let t = (x | 0x2020_2020_2020_2020) & !HIGH;
    let at_least_a = t.wrapping_add(0x1f1f_1f1f_1f1f_1f1f); // t >= 0x61
    let above_z = t.wrapping_add(0x0505_0505_0505_0505); // t >= 0x7b
    let letter = at_least_a & !above_z & !x & HIGH;
    !letter & HIGH
}

/// Tokenizes a region with no ASCII separator in it.
///
/// Han ideographs and punctuation that NFKC never composes with a neighbour
/// are handled on the spot; the pieces between them are checked with the
/// cheap NFKC quick check and normalized only when it fails. Chinese text is
/// thus tokenized in one pass with no normalization work.
fn unicode_region<F: FnMut(u64, u32)>(region: &str, emit: &mut F) {
    let mut state = TokenState::default();
    let mut piece_start = 0;
    for (pos, c) in region.char_indices() {
        let han = is_stable_han(c);
        if han || is_inert_punctuation(c) {
            if piece_start < pos {
                normalize_piece(&region[piece_start..pos], &mut state, emit);
            }
            let end = pos + c.len_utf8();
            if han {
                state.single(&region.as_bytes()[pos..end], emit);
            } else {
                state.separator(emit);
            }
            piece_start = end;
        }
    }
    if piece_start < region.len() {
        normalize_piece(&region[piece_start..], &mut state, emit);
    }
    state.separator(emit);
}

fn normalize_piece<F: FnMut(u64, u32)>(piece: &str, state: &mut TokenState, emit: &mut F) {
    if two_byte::all_stable(piece) || is_nfkc_quick(piece.chars()) == IsNormalized::Yes {
        for c in piece.chars() {
            state.push(c, emit);
        }
    } else {
        for c in piece.nfkc() {
            state.push(c, emit);
        }
    }
}

/// Builds tokens from normalized chars.
#[derive(Default)]
struct TokenState {
    word: Option<FnvHasher>,
    /// Characters of the current word.
    word_chars: u32,
    /// The previous letter of the current run of Thai-like letters.
    pair_prev: Option<char>,
    /// How many letters that run has had.
    pair_run: u32,
}

impl TokenState {
    #[inline]
    fn push<F: FnMut(u64, u32)>(&mut self, c: char, emit: &mut F) {
        if let Some(props) = two_byte::props(c) {
            // The alphabets of two-byte characters, from a table: what
            // `push_general` gives them, without its table searches.
            match (props.word, props.lower) {
                (true, Some(lc)) => self.word_char(std::iter::once(lc), emit),
                (true, None) => self.word_char(c.to_lowercase(), emit),
                (false, _) if is_ignorable(c) => {}
                (false, _) => self.separator(emit),
            }
        } else {
            self.push_general(c, emit);
        }
    }

    /// [`push`](Self::push) for any character.
    fn push_general<F: FnMut(u64, u32)>(&mut self, c: char, emit: &mut F) {
        if is_single_char_script(c) {
            self.single(c.encode_utf8(&mut [0u8; 4]).as_bytes(), emit);
        } else if is_pair_script(c) {
            self.end_word(emit);
            if let Some(p) = self.pair_prev {
                emit(hash_chars(&[p, c]), 2);
            }
            self.pair_prev = Some(c);
            self.pair_run += 1;
        } else if c.is_alphanumeric() || is_combining_mark(c) {
            if c.is_ascii() {
                self.word_char(std::iter::once(c.to_ascii_lowercase()), emit);
            } else {
                self.word_char(c.to_lowercase(), emit);
            }
        } else if is_ignorable(c) {
            // Invisible inside words: keep the word going.
        } else {
            self.separator(emit);
        }
    }

    /// A character of a word, given as its lowercase form.
    #[inline]
    fn word_char<F: FnMut(u64, u32)>(&mut self, lower: impl Iterator<Item = char>, emit: &mut F) {
        self.end_pair_run(emit);
        let h = self.word.get_or_insert_with(FnvHasher::default);
        self.word_chars += 1;
        let mut buf = [0u8; 4];
        for lc in lower {
            h.write(lc.encode_utf8(&mut buf).as_bytes());
        }
    }

    /// A character that is a token by itself, given as its UTF-8 bytes.
    #[inline]
    fn single<F: FnMut(u64, u32)>(&mut self, utf8: &[u8], emit: &mut F) {
        self.separator(emit);
        let mut h = FnvHasher::default();
        h.write(utf8);
        emit(h.finish(), 1);
    }

    #[inline]
    fn separator<F: FnMut(u64, u32)>(&mut self, emit: &mut F) {
        self.end_word(emit);
        self.end_pair_run(emit);
    }

    #[inline]
    fn end_word<F: FnMut(u64, u32)>(&mut self, emit: &mut F) {
        if let Some(h) = self.word.take() {
            emit(h.finish(), std::mem::take(&mut self.word_chars));
        }
    }

    #[inline]
    fn end_pair_run<F: FnMut(u64, u32)>(&mut self, emit: &mut F) {
        if self.pair_run == 1 {
            if let Some(p) = self.pair_prev {
                emit(hash_chars(&[p]), 1);
            }
        }
        self.pair_prev = None;
        self.pair_run = 0;
    }
}

#[inline]
fn hash_chars(chars: &[char]) -> u64 {
    let mut h = FnvHasher::default();
    let mut buf = [0u8; 4];
    for c in chars {
        h.write(c.encode_utf8(&mut buf).as_bytes());
    }
    h.finish()
}

/// What the tokenizer needs to know of the characters U+0080 to U+07FF (two
/// bytes in UTF-8: the Latin, Greek, Cyrillic, Armenian, Hebrew and Arabic
/// alphabets), computed once with the very functions the general path
/// calls: that path searches Unicode tables for every character (case,
/// alphabetic, NFKC quick check), which made Cyrillic text ten times slower
/// to fingerprint than ASCII.
mod two_byte {
    use std::sync::OnceLock;

    use unicode_normalization::char::{canonical_combining_class, is_combining_mark};
    use unicode_normalization::{IsNormalized, is_nfkc_quick};

    const FIRST: u32 = 0x80;
    const END: u32 = 0x800;

    #[derive(Debug, Clone, Copy, PartialEq)]
    pub(super) struct Props {
        /// Part of a word: alphanumeric or a combining mark.
        pub(super) word: bool,
        /// The lowercase form when it is one character.
        pub(super) lower: Option<char>,
        /// NFKC quick check says yes and the combining class is 0: a run of
        /// such characters is NFKC-normalized whatever surrounds it.
        pub(super) stable: bool,
    }

    impl Props {
        pub(super) fn of(c: char) -> Props {
            let mut lower = c.to_lowercase();
            let single = match (lower.next(), lower.next()) {
                (Some(l), None) => Some(l),
                _ => None,
            };
            Props {
                word: c.is_alphanumeric() || is_combining_mark(c),
                lower: single,
                stable: canonical_combining_class(c) == 0
                    && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes,
            }
        }
    }

    fn table() -> &'static [Props] {
        static TABLE: OnceLock<Vec<Props>> = OnceLock::new();
        TABLE.get_or_init(|| {
            (FIRST..END)
                .map(|u| Props::of(char::from_u32(u).expect("no surrogates below U+0800")))
                .collect()
        })
    }

    /// The properties of `c` if it is a two-byte character.
    #[inline]
    pub(super) fn props(c: char) -> Option<Props> {
        let u = c as u32;
        (FIRST..END)
            .contains(&u)
            .then(|| table()[(u - FIRST) as usize])
    }

    /// Whether every character of `piece` is ASCII or a stable two-byte
    /// character, so that NFKC leaves it as it is. False says nothing.
    pub(super) fn all_stable(piece: &str) -> bool {
        piece.chars().all(|c| match props(c) {
            Some(p) => p.stable,
            None => c.is_ascii(),
        })
    }
}

/// Han ideographs that are NFKC-stable and never compose with a neighbour,
/// so they can skip normalization.
#[inline]
fn is_stable_han(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF        // CJK Unified Ideographs
        | 0x3400..=0x4DBF      // CJK Extension A
        | 0x20000..=0x2A6DF    // CJK Extension B
        | 0x2A700..=0x2EBEF    // CJK Extensions C-F
        | 0x30000..=0x3134F    // CJK Extension G
    )
}

/// Scripts whose characters are tokens by themselves: Han ideographs (after
/// NFKC, compatibility ideographs are unified ones), kana.
#[inline]
fn is_single_char_script(c: char) -> bool {
    is_stable_han(c)
        || matches!(c as u32,
            0x3005..=0x3007        // 々 〆 〇
            | 0x3040..=0x309F      // Hiragana
            | 0x30A0..=0x30FA      // Katakana (without the middle dot)
            | 0x30FC..=0x30FF      // prolonged sound mark, iteration marks
            | 0x31F0..=0x31FF      // Katakana phonetic extensions
        )
}

/// Alphabetic scripts written without spaces between words.
#[inline]
fn is_pair_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F        // Thai
        | 0x0E80..=0x0EFF      // Lao
        | 0x1000..=0x109F      // Myanmar
        | 0x1780..=0x17FF      // Khmer
    )
}

/// Punctuation that NFKC never composes with a neighbour and that is a
/// separator before and after normalization.
#[inline]
fn is_inert_punctuation(c: char) -> bool {
    matches!(c as u32,
        0x2010..=0x2027        // dashes, quotes, bullets, ellipsis
        | 0x2030..=0x205E      // per mille, primes, reference marks
        | 0x3000..=0x3004      // ideographic space, comma, full stop, ditto
        | 0x3008..=0x3020      // CJK brackets
        | 0x30FB               // katakana middle dot
        | 0xFF01..=0xFF0F      // fullwidth ! " # $ % & ' ( ) * + , - . /
        | 0xFF1A..=0xFF20      // fullwidth : ; < = > ? @
        | 0xFF3B..=0xFF40      // fullwidth [ \ ] ^ _ `
        | 0xFF5B..=0xFF65      // fullwidth { | } ~ and halfwidth CJK punctuation
    )
}

/// Format characters that may sit inside a word without splitting it.
#[inline]
fn is_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::fnv1a;

    fn tokens(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        StandardTokenizer::new().tokenize(text, |h| out.push(h));
        out
    }

    fn hashes(words: &[&str]) -> Vec<u64> {
        words.iter().map(|w| fnv1a(w.as_bytes())).collect()
    }

    #[test]
    fn non_letter_bytes_marks_exactly_the_non_letters() {
        for b in 0..=255u8 {
            let x = u64::from_le_bytes([b'a', b, b'Z', b'z', b'A', b'm', b'q', b]);
            let m = non_letter_bytes(x);
            let want = if b.is_ascii_alphabetic() {
                0
            } else {
                0x80 << 8 | 0x80 << 56
            };
            assert_eq!(m, want, "byte {b:#x}");
        }
    }

    #[test]
    fn long_and_mixed_words_across_chunk_edges() {
        let text = "Internationalization ABCDEFGHIJKLMNOPQ x1y22z abcdefgh12345678 end";
        assert_eq!(
            tokens(text),
            hashes(&[
                "internationalization",
                "abcdefghijklmnopq",
                "x1y22z",
                "abcdefgh12345678",
                "end"
            ])
        );
        // The Unicode path gives the same hashes.
        let mut slow = String::from(text);
        slow.push_str(" \u{e9}");
        let t = tokens(&slow);
        assert_eq!(&t[..5], &tokens(text)[..]);
    }

    #[test]
    fn ascii_words_lowercased_punctuation_dropped() {
        assert_eq!(
            tokens("Hello, World! It's 2024."),
            hashes(&["hello", "world", "it", "s", "2024"])
        );
    }

    #[test]
    fn digits_are_content() {
        assert_eq!(
            tokens("covid19 v2.0.13 int16"),
            hashes(&["covid19", "v2", "0", "13", "int16"])
        );
        assert_ne!(tokens("Price 1999"), tokens("price 5"));
        assert_ne!(tokens("int8"), tokens("int16"));
        // Fullwidth digits fold to ASCII ones (NFKC), on either path.
        assert_eq!(tokens("ｉｎｔ１６"), tokens("int16"));
    }

    #[test]
    fn unicode_path_agrees_with_ascii_fast_path() {
        // The no-break space sends the text down the Unicode path.
        assert_eq!(tokens("ABC\u{00A0}def"), tokens("abc def"));
        // Typeset punctuation is split on by the fast path itself: the same
        // tokens as the Unicode path, which takes the whole text as one
        // region, gives.
        for text in [
            "Hello\u{2014}World 42",
            "\u{201C}Don\u{2019}t,\u{201D} she said\u{2026} \u{2018}x\u{2019}",
            "a\u{2013}b\u{2013}\u{2013}c \u{2022} \u{2014}",
            // Non-ASCII after the punctuation: a combining mark, a letter.
            "x\u{2019}\u{0301}y caf\u{2019}\u{00E9} \u{2019}\u{00C9}cole",
            "\u{2027}\u{2010}",
        ] {
            let mut unicode = Vec::new();
            unicode_region(text, &mut |t, _| unicode.push(t));
            assert_eq!(tokens(text), unicode, "{text:?}");
        }
        assert_eq!(
            tokens("\u{201C}Don\u{2019}t\u{201D}"),
            hashes(&["don", "t"])
        );
    }

    #[test]
    fn the_two_byte_table_agrees_with_the_general_path() {
        for u in 0x80..0x800u32 {
            let c = char::from_u32(u).unwrap();
            let p = two_byte::props(c).unwrap();
            assert_eq!(p, two_byte::Props::of(c));
            assert_eq!(p.word, c.is_alphanumeric() || is_combining_mark(c));
            let lower: String = c.to_lowercase().collect();
            if let Some(l) = p.lower {
                assert_eq!(lower, l.to_string(), "{c:?}");
            }
            if p.stable {
                // A run of stable characters (and ASCII) is NFKC already.
                let s = format!("a{c}{c}b");
                assert_eq!(is_nfkc_quick(s.chars()), IsNormalized::Yes, "{s:?}");
                assert_eq!(s.nfkc().collect::<String>(), s);
            }
        }
        assert_eq!(two_byte::props('a'), None);
        assert_eq!(two_byte::props('\u{0800}'), None);
        // Russian, Greek, a capital with a lowercase of two characters.
        for text in [
            "Москва — столица России. ЁЛКА ёлка",
            "Ελληνικά ΣΊΣΥΦΟΣ",
            "İstanbul \u{0130}I",
            "и\u{0306} й",
        ] {
            let mut general = Vec::new();
            let mut state = TokenState::default();
            for c in text.nfkc() {
                state.push_general(c, &mut |t, _| general.push(t));
            }
            state.separator(&mut |t, _| general.push(t));
            assert_eq!(tokens(text), general, "{text:?}");
        }
    }

    #[test]
    fn nfkc_folds_fullwidth_and_ligatures() {
        assert_eq!(
            tokens("ＨＥＬＬＯ，ｗｏｒｌｄ１２３"),
            tokens("hello, world123")
        );
        assert_eq!(tokens("ﬁnance"), tokens("finance"));
        // Decomposed and precomposed accents give the same word.
        assert_eq!(tokens("cafe\u{301} noir"), tokens("café noir"));
        assert_eq!(tokens("Ärger"), hashes(&["ärger"]));
    }

    #[test]
    fn non_latin_words_lowercase() {
        assert_eq!(tokens("ПРИВЕТ мир"), hashes(&["привет", "мир"]));
        assert_eq!(tokens("ΣΟΦΊΑ"), tokens("σοφία"));
    }

    #[test]
    fn han_and_kana_give_one_token_per_char() {
        assert_eq!(tokens("中文分词"), hashes(&["中", "文", "分", "词"]));
        assert_eq!(tokens("我，你。"), hashes(&["我", "你"]));
        assert_eq!(
            tokens("用iPhone拍照"),
            hashes(&["用", "iphone", "拍", "照"])
        );
        assert_eq!(tokens("ひらカナ"), hashes(&["ひ", "ら", "カ", "ナ"]));
        // Compatibility ideographs and halfwidth kana normalize first.
        assert_eq!(tokens("\u{F900}"), tokens("\u{8C48}"));
        assert_eq!(tokens("ｶﾅ"), tokens("カナ"));
        // A voiced mark composes with its kana.
        assert_eq!(tokens("か\u{3099}"), tokens("が"));
    }

    #[test]
    fn thai_gives_letter_pairs() {
        assert_eq!(tokens("กขค"), hashes(&["กข", "ขค"]));
        assert_eq!(tokens("ก ข"), hashes(&["ก", "ข"]));
    }

    #[test]
    fn korean_is_space_separated_words() {
        assert_eq!(tokens("한국어 텍스트"), hashes(&["한국어", "텍스트"]));
    }

    #[test]
    fn format_chars_do_not_split_words() {
        assert_eq!(tokens("infor\u{AD}mation"), hashes(&["information"]));
        assert_eq!(tokens("a\u{200B}b"), hashes(&["a", "b"]));
    }

    #[test]
    fn empty_and_symbol_only_give_nothing() {
        for t in ["", "   \n\t", "!!! ... ---", "→ ★ ©", "\u{3000}，。"] {
            assert!(tokens(t).is_empty(), "{t:?}");
        }
    }
}
