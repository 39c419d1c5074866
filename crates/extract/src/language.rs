//! The language a page is written in, as an ISO 639-1 code.
//!
//! A page's declaration (`<html lang>`, Content-Language) says which
//! language its author meant, and is the rule; but it is sometimes a site
//! template's default rather than the text's language (an English theme
//! on a German blog). A detector reading the text catches that, but a
//! few hundred characters of a page that mixes languages (a translation
//! in progress, with paragraphs still in English) mislead it. So the
//! declaration stands unless the text holds next to none of it: when the
//! detector is sure of another language, the text's lines are read, and
//! the declared language must hold a tenth of what they say in languages
//! the detector is sure of. A page that declares nothing is in the
//! language the detector is sure of, if any.
//!
//! The detector reads words only: identifiers and code (`java.lang.Object`,
//! `getValue`, `std::vector`, `x_1`, numbers) are no language's words, and
//! on an API reference they misled it (into Catalan, French, German) or
//! left it unsure of plain English pages.

/// Characters of text given to language detection. A few hundred decide
/// a language about as well as a whole page, and whatlang's cost grows
/// with the text: it was a seventh of the crawl's CPU time on whole pages.
const SAMPLE_CHARS: usize = 600;

/// Bytes of text read line by line when the declaration is in doubt.
const CHECKED_BYTES: usize = 16 << 10;

/// A declaration is overruled by a couple of sentences at least: on a
/// page with less text the detector is sure of, it stands (a search page
/// whose only sentence is an untranslated message).
const OVERRULING_BYTES: usize = 200;

/// The language of a page whose text is `text` and which declares
/// `declared` (a BCP 47 tag, an ISO 639 code), by the rule above; none
/// when neither the declaration nor the detector names one, or the
/// language has no ISO 639-1 code.
pub fn page_language(declared: Option<&str>, text: &str) -> Option<&'static str> {
    decide(declared, text).language
}

/// What [`decide`] found.
pub(crate) struct Decided {
    /// See [`page_language`].
    pub language: Option<&'static str>,
    /// The ISO 639-3 code detected in the first characters, if the
    /// detector was sure.
    pub detected: Option<&'static str>,
    /// The language was detected, not declared, in a text whose tokens
    /// are more code than words (see [`crate::Page::language_from_code`]).
    pub from_code: bool,
}

/// The page's language (see [`page_language`]), what was detected, and
/// whether the detection read more code than words.
pub(crate) fn decide(declared: Option<&str>, text: &str) -> Decided {
    let declared = declared.and_then(iso_639_1);
    if declared.is_some() && text.len() < OVERRULING_BYTES {
        // Too little text to overrule the declaration: nothing to detect.
        return Decided {
            language: declared,
            detected: None,
            from_code: false,
        };
    }
    let (detected, mostly_code) = detect(text);
    let language = match (declared, detected.and_then(iso_639_1)) {
        (Some(d), Some(t)) if d != t && !holds(text, d) => Some(t),
        (Some(d), _) => Some(d),
        (None, t) => t,
    };
    Decided {
        language,
        detected,
        from_code: mostly_code && language.is_some() && language != declared,
    }
}

/// Whether `language` holds a tenth of what `text` says in languages the
/// detector is sure of, line by line, counted in UTF-8 bytes (a Chinese
/// or Japanese character, three bytes, says about as much as three Latin
/// letters). Also true when the detector is sure of too little of it to
/// overrule a declaration.
fn holds(text: &str, language: &str) -> bool {
    let (mut in_it, mut sure) = (0, 0);
    let mut read = 0;
    for line in text.lines() {
        read += line.len() + 1;
        if read > CHECKED_BYTES {
            break;
        }
        let (words, _) = words_of(line, line.len());
        let Some(info) = whatlang::detect(&words).filter(|i| i.is_reliable()) else {
            continue;
        };
        sure += words.len();
        if iso_639_1(info.lang().code()) == Some(language) {
            in_it += words.len();
        }
    }
    sure < OVERRULING_BYTES || in_it * 10 >= sure
}

/// The ISO 639-3 code of `text`'s language, when whatlang is sure of it,
/// read from its first words (about [`SAMPLE_CHARS`] bytes of them); and
/// whether the tokens read to find them were more code than words.
fn detect(text: &str) -> (Option<&'static str>, bool) {
    let (words, mostly_code) = words_of(text, SAMPLE_CHARS);
    let detected = whatlang::detect(&words)
        .filter(|i| i.is_reliable())
        .map(|i| i.lang().code());
    (detected, mostly_code)
}

/// The words of `text` (see [`is_code`]), joined by spaces, up to about
/// `max` bytes of them, from its first [`CHECKED_BYTES`]; and whether
/// more of the tokens read were code than words.
fn words_of(text: &str, max: usize) -> (String, bool) {
    let mut words = String::with_capacity(max.min(text.len()) + 32);
    let (mut code, mut read) = (0usize, 0usize);
    for token in text.split_whitespace() {
        let at = token.as_ptr() as usize - text.as_ptr() as usize;
        if words.len() >= max || at > CHECKED_BYTES {
            break;
        }
        read += 1;
        if is_code(token) {
            code += 1;
            continue;
        }
        if !words.is_empty() {
            words.push(' ');
        }
        words.push_str(token);
    }
    (words, code * 2 > read)
}

/// The ASCII bytes that make a token code, as a set of bits: a test per
/// byte of every token read, where a search of the list was a call to
/// memchr.
const CODE_MARKS: u128 = {
    let marks = b"_.:/\\#@$=<>()[]{}0123456789";
    let mut set = 0u128;
    let mut i = 0;
    while i < marks.len() {
        set |= 1 << marks[i];
        i += 1;
    }
    set
};

/// Whether a whitespace-separated token is an identifier, code or a number
/// rather than a word: past its outer punctuation it holds a digit, one of
/// `_ . : / \ # @ $ = < > ( ) [ ] { }`, or a lower-case ASCII letter
/// followed by an upper-case one (`getValue`, `ArrayList`). Punctuation
/// alone is no word either. Words of every script pass (CJK text, without
/// spaces, is a long token of its own characters and full-width marks).
fn is_code(token: &str) -> bool {
    let core = token.trim_matches(|c: char| !c.is_alphanumeric());
    if core.is_empty() {
        return true;
    }
    let b = core.as_bytes();
    let marks = |&c: &u8| c < 128 && (CODE_MARKS >> c) & 1 == 1;
    b.iter().any(marks)
        || b.windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// The ISO 639-1 code of a language tag: its primary subtag, as a
/// two-letter code (`de-AT`, `EN_us`), a three-letter ISO 639-3 or 639-2/T
/// one (`deu`), or a deprecated two-letter one (`iw` for Hebrew). None for
/// anything else, or a language without a two-letter code.
pub fn iso_639_1(tag: &str) -> Option<&'static str> {
    let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
    let primary = match primary.as_str() {
        "iw" => "he",
        "in" => "id",
        "ji" => "yi",
        "jw" => "jv",
        // Individual languages whatlang names, in their macrolanguage.
        "cmn" => "zh",
        "pes" => "fa",
        other => other,
    };
    let language = match primary.len() {
        2 => isolang::Language::from_639_1(primary),
        3 => isolang::Language::from_639_3(primary),
        _ => None,
    }?;
    language.to_639_1()
}

/// A list of wanted languages, as a user writes them, checked and
/// normalized: each an ISO 639-1 code (or a tag that maps to one).
pub fn parse_languages<'a>(
    wanted: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<&'static str>, String> {
    let mut codes = Vec::new();
    for tag in wanted {
        let code =
            iso_639_1(tag).ok_or_else(|| format!("{tag:?} is not an ISO 639-1 language code"))?;
        if !codes.contains(&code) {
            codes.push(code);
        }
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_map_to_two_letter_codes() {
        for (tag, want) in [
            ("en", Some("en")),
            ("de-AT", Some("de")),
            ("EN_us", Some("en")),
            ("deu", Some("de")),
            ("eng", Some("en")),
            ("iw", Some("he")),
            ("zh-Hant-TW", Some("zh")),
            (" fr ", Some("fr")),
            ("xx", None),
            ("english", None),
            ("", None),
            ("gha", None),
            ("cmn", Some("zh")),
        ] {
            assert_eq!(iso_639_1(tag), want, "{tag:?}");
        }
    }

    #[test]
    fn the_text_decides_when_the_detector_is_sure() {
        let german = "Die Katze sitzt auf der Matte und schaut aus dem Fenster, \
            während draußen der Regen fällt und die Kinder im Haus spielen.\n\
            Am Abend kommen die Eltern nach Hause, kochen gemeinsam das Essen und erzählen \
            einander, was sie während des langen Tages erlebt haben.";
        assert_eq!(page_language(Some("en"), german), Some("de"));
        let partly = format!(
            "{german}\nThe cat sits on the mat and looks out of the window, \
            while the rain falls outside and the children play in the house.\nIn the evening \
            the parents come home, cook dinner together and tell each other about their day."
        );
        assert_eq!(page_language(Some("de"), &partly), Some("de"));
        assert_eq!(page_language(Some("it"), &partly), Some("de"));
        assert_eq!(page_language(Some("en-GB"), "OK"), Some("en"));
        // One sentence does not overrule a declaration.
        let one = "Die Katze sitzt auf der Matte und schaut aus dem Fenster hinaus.";
        assert_eq!(page_language(Some("en"), one), Some("en"));
        assert_eq!(page_language(None, "OK"), None);
        assert_eq!(page_language(None, german), Some("de"));
    }

    #[test]
    fn identifiers_and_code_are_no_words() {
        for code in [
            "java.lang.Object",
            "getValue()",
            "ArrayList<E>",
            "std::vector",
            "x_1",
            "2023",
            "--",
            "https://example.org/",
        ] {
            assert!(is_code(code), "{code}");
        }
        for word in [
            "Object",
            "implements",
            "(see",
            "word,",
            "don't",
            "NOTE:",
            "naïve",
            "中文网页，好的。",
        ] {
            assert!(!is_code(word), "{word}");
        }
        // Each mark inside a word makes it code; other punctuation does
        // not (the bit set against the list it was made from; letters
        // are words, or code by their case).
        for b in (0u8..128).filter(|b| !b.is_ascii_alphabetic()) {
            let token = format!("a{}b", b as char);
            let mark = b"_.:/\\#@$=<>()[]{}".contains(&b) || b.is_ascii_digit();
            assert_eq!(is_code(&token), mark, "{token:?}");
        }
        assert_eq!(
            words_of("Class java.lang.Object extends getValue() the end", 100),
            ("Class extends the end".to_string(), false)
        );
        // An API page: its identifiers do not make it another language.
        let api = "Class Hierarchy\njava.lang.Object\njava.lang.Boolean (implements \
            java.io.Serializable, java.lang.Comparable<T>, java.lang.constant.Constable)\n"
            .repeat(20)
            + "This class provides the methods that all objects share, and every other class \
            extends it. The methods are described below, with the exceptions they throw.";
        assert_eq!(page_language(None, &api), Some("en"));
        // Its tokens are more code than words: the language it was given
        // is weak evidence, unless the page declared it.
        assert!(decide(None, &api).from_code);
        assert!(!decide(Some("en"), &api).from_code);
        let prose = "This class provides the methods that all objects share, and every \
            other class extends it. The methods are described below, with the exceptions \
            they throw, and java.lang.Object is their root.";
        let decided = decide(None, prose);
        assert_eq!(decided.language, Some("en"));
        assert!(!decided.from_code);
    }

    #[test]
    fn wanted_languages_are_checked() {
        assert_eq!(
            parse_languages(["en", "de-DE", "deu"]),
            Ok(vec!["en", "de"])
        );
        assert!(parse_languages(["en", "klingon"]).is_err());
    }
}
