//! Markup to html5ever's tokens, read a run of bytes at a time.
//!
//! html5ever's tokenizer reads its input a character at a time through a
//! buffer queue and builds every name, value and text run by pushing
//! characters onto tendrils: on javadoc that was two thirds of the parse
//! and a third of the extractor's CPU. This tokenizer follows the same
//! WHATWG states, but over the whole page in memory: it finds the next
//! byte that matters with `memchr` and hands the tree builder slices of
//! the page. The tree builder stays html5ever's, so the tree is the one
//! the spec gives; a test parses generated markup both ways and compares
//! the trees.
//!
//! One simplification, the one [`crate::prestrip`] already makes: a
//! script's body ends at the first `</script` followed by white space,
//! `/` or `>`, without the spec's escaped-comment states (the parser only
//! ever sees script bodies that prestrip has emptied). One addition: tags
//! nested deeper than [`crate::nesting::MAX_DEPTH`] are dropped.

use std::borrow::Cow;
use std::ops::Range;

use html5ever::LocalName;
use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Doctype, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::tree_builder::{TreeBuilder, TreeSink};
use scraper::{Html, HtmlTreeSink};

use crate::nesting::Nesting;
use crate::tag::{AttrsBuf, Tag};

/// `markup` parsed by html5ever's tree builder into `empty` (a tree made
/// with room for the nodes expected): what [`crate::tree_builder`] leaves
/// to it.
pub(crate) fn parse_document(markup: &str, empty: Html) -> Html {
    let builder = TreeBuilder::new(HtmlTreeSink::new(empty), Default::default());
    tokenize(markup, &Html5ever(&builder));
    builder.sink.finish()
}

/// Where the tokenizer hands its tokens. Text comes apart from the other
/// tokens, as a slice of the tokenizer's buffer: our tree builder copies
/// it into its tree's text, so no text run is given a tendril (an
/// allocation and a copy of its own); html5ever's builder takes tendrils
/// ([`Html5ever`]).
pub(crate) trait Sink {
    /// A run of text, never empty.
    fn text(&self, text: &str);
    /// A start or end tag; after a start tag, says what to read next.
    fn tag(&self, tag: Tag<'_>) -> TokenSinkResult<()>;
    /// Any other token: a comment, a DOCTYPE, a NUL, the end.
    fn token(&self, token: Token);
    /// Whether the current node is foreign: there `<![CDATA[` starts a
    /// CDATA section, elsewhere a bogus comment.
    fn in_foreign_content(&self) -> bool {
        false
    }
    /// The input has ended.
    fn end(&self) {}
}

/// html5ever's tree builder (or any of its `TokenSink`s) as a [`Sink`].
pub(crate) struct Html5ever<'a, S>(pub(crate) &'a S);

impl<S: TokenSink> Sink for Html5ever<'_, S> {
    fn text(&self, text: &str) {
        let _ = self
            .0
            .process_token(Token::CharacterTokens(StrTendril::from_slice(text)), 1);
    }

    fn tag(&self, tag: Tag<'_>) -> TokenSinkResult<()> {
        match self.0.process_token(Token::TagToken(tag.to_html5ever()), 1) {
            TokenSinkResult::RawData(kind) => TokenSinkResult::RawData(kind),
            TokenSinkResult::Plaintext => TokenSinkResult::Plaintext,
            _ => TokenSinkResult::Continue,
        }
    }

    fn token(&self, token: Token) {
        let _ = self.0.process_token(token, 1);
    }

    fn in_foreign_content(&self) -> bool {
        self.0
            .adjusted_current_node_present_but_not_in_html_namespace()
    }

    fn end(&self) {
        self.0.end();
    }
}

/// Feeds every token of `markup` to `sink`, then the end of the input.
pub(crate) fn tokenize<S: Sink>(markup: &str, sink: &S) {
    let markup = markup.strip_prefix('\u{feff}').unwrap_or(markup);
    let markup = newlines_normalized(markup);
    let mut t = Tokenizer {
        src: &markup,
        pos: 0,
        sink,
        text: String::new(),
        attrs: AttrsBuf::default(),
        nesting: Nesting::default(),
        last_start: None,
    };
    t.run();
    sink.token(Token::EOFToken);
    sink.end();
}

/// The input stream's preprocessing: CR LF and lone CR become LF.
fn newlines_normalized(markup: &str) -> Cow<'_, str> {
    if memchr::memchr(b'\r', markup.as_bytes()).is_none() {
        return Cow::Borrowed(markup);
    }
    Cow::Owned(markup.replace("\r\n", "\n").replace('\r', "\n"))
}

/// What the tokenizer reads after a start tag, as the tree builder said.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Data,
    Raw(RawKind),
    Plaintext,
}

struct Tokenizer<'a, S> {
    src: &'a str,
    pos: usize,
    sink: &'a S,
    /// Characters read and not yet handed over (one token per run).
    text: String,
    /// The attributes of the tag being read.
    attrs: AttrsBuf,
    nesting: Nesting,
    /// The last start tag's name: the end tag a raw text body waits for.
    last_start: Option<LocalName>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b' ')
}

impl<'a, S: Sink> Tokenizer<'a, S> {
    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.bytes().get(i).copied()
    }

    fn run(&mut self) {
        let mut mode = Mode::Data;
        while self.pos < self.src.len() {
            mode = match mode {
                Mode::Data => self.data(),
                Mode::Raw(kind) => self.raw(kind),
                Mode::Plaintext => {
                    let rest = &self.src[self.pos..];
                    push_replacing_nul(&mut self.text, rest);
                    self.pos = self.src.len();
                    Mode::Plaintext
                }
            };
        }
        self.flush();
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            self.sink.text(&self.text);
            self.text.clear();
        }
    }

    fn emit(&self, token: Token) {
        self.sink.token(token);
    }

    /// The data state, up to the next start tag that changes the mode.
    fn data(&mut self) -> Mode {
        while self.pos < self.src.len() {
            let rest = &self.bytes()[self.pos..];
            let Some(off) = memchr::memchr3(b'<', b'&', 0, rest) else {
                self.text.push_str(&self.src[self.pos..]);
                self.pos = self.src.len();
                break;
            };
            self.text.push_str(&self.src[self.pos..self.pos + off]);
            self.pos += off;
            match self.bytes()[self.pos] {
                b'&' => {
                    let mut text = std::mem::take(&mut self.text);
                    self.pos = self.char_ref(self.pos + 1, false, &mut text);
                    self.text = text;
                }
                0 => {
                    self.flush();
                    self.emit(Token::NullCharacterToken);
                    self.pos += 1;
                }
                _ => {
                    let mode = self.tag_open();
                    if mode != Mode::Data {
                        return mode;
                    }
                }
            }
        }
        Mode::Data
    }

    /// After a `<` in the data state.
    fn tag_open(&mut self) -> Mode {
        let lt = self.pos;
        match self.at(lt + 1) {
            Some(b'!') => {
                self.flush();
                self.markup_declaration(lt + 2);
            }
            Some(b'/') => match self.at(lt + 2) {
                Some(b) if b.is_ascii_alphabetic() => {
                    self.flush();
                    return self.tag(TagKind::EndTag, lt + 2);
                }
                Some(b'>') => self.pos = lt + 3,
                None => {
                    self.text.push_str("</");
                    self.pos = lt + 2;
                }
                Some(_) => {
                    self.flush();
                    self.bogus_comment(lt + 2);
                }
            },
            Some(b) if b.is_ascii_alphabetic() => {
                self.flush();
                return self.tag(TagKind::StartTag, lt + 1);
            }
            Some(b'?') => {
                self.flush();
                self.bogus_comment(lt + 1);
            }
            _ => {
                self.text.push('<');
                self.pos = lt + 1;
            }
        }
        Mode::Data
    }

    /// A tag whose name starts at `start`; emits it and says what to read
    /// next. A tag the input ends in is dropped, as the spec drops it.
    fn tag(&mut self, kind: TagKind, start: usize) -> Mode {
        self.attrs.clear();
        let Some((name, self_closing)) = self.read_tag(start) else {
            self.pos = self.src.len();
            return Mode::Data;
        };
        if !self.nesting.admits(kind, &name, self_closing) {
            return Mode::Data;
        }
        let start_name = (kind == TagKind::StartTag).then(|| name.clone());
        let result = self.sink.tag(Tag {
            kind,
            name,
            self_closing,
            attrs: self.attrs.view(),
        });
        let Some(name) = start_name else {
            return Mode::Data;
        };
        self.last_start = Some(name);
        match result {
            TokenSinkResult::RawData(kind) => Mode::Raw(kind),
            TokenSinkResult::Plaintext => Mode::Plaintext,
            _ => Mode::Data,
        }
    }

    /// The tag name and attribute states: the name, and whether the tag
    /// closes itself; the attributes go to `self.attrs`. `None` at the
    /// end of the input.
    fn read_tag(&mut self, start: usize) -> Option<(LocalName, bool)> {
        let b = self.bytes();
        let mut i = start;
        while i < b.len() && !matches!(b[i], b'\t' | b'\n' | b'\x0c' | b' ' | b'/' | b'>') {
            i += 1;
        }
        if i == b.len() {
            return None;
        }
        let name = local_name(&self.src[start..i]);
        // Before attribute name.
        loop {
            while i < b.len() && is_space(b[i]) {
                i += 1;
            }
            match b.get(i)? {
                b'>' => {
                    self.pos = i + 1;
                    return Some((name, false));
                }
                b'/' => {
                    // Self-closing start tag state.
                    match b.get(i + 1)? {
                        b'>' => {
                            self.pos = i + 2;
                            return Some((name, true));
                        }
                        _ => i += 1,
                    }
                }
                _ => i = self.attribute(i)?,
            }
        }
    }

    /// One attribute from its name at `i` (after white space); returns
    /// where the before-attribute-name state goes on.
    fn attribute(&mut self, start: usize) -> Option<usize> {
        let b = self.bytes();
        // A name may start with `=`; it ends at white space, `/`, `>`, `=`.
        let mut i = start + 1;
        while i < b.len() && !matches!(b[i], b'\t' | b'\n' | b'\x0c' | b' ' | b'/' | b'>' | b'=') {
            i += 1;
        }
        let name = &self.src[start..i];
        let mut j = i;
        while j < b.len() && is_space(b[j]) {
            j += 1;
        }
        let (value, next) = if b.get(j) == Some(&b'=') {
            j += 1;
            while j < b.len() && is_space(b[j]) {
                j += 1;
            }
            self.attribute_value(j)?
        } else {
            // After attribute name: the next attribute (or `/`, `>`)
            // starts here.
            if j == b.len() {
                return None;
            }
            (j..j, j)
        };
        let local = local_name(name);
        // A repeated name is dropped.
        if !self.attrs.has(&local) {
            let mut attrs = std::mem::take(&mut self.attrs);
            attrs.push(local, |out| self.decode_value(value, out));
            self.attrs = attrs;
        }
        Some(next)
    }

    /// Where an attribute's value from `i` (after `=` and white space)
    /// lies in the markup, and where the tag goes on.
    fn attribute_value(&self, i: usize) -> Option<(Range<usize>, usize)> {
        let b = self.bytes();
        match *b.get(i)? {
            q @ (b'"' | b'\'') => {
                let end = i + 1 + memchr::memchr(q, &b[i + 1..])?;
                // After attribute value (quoted): anything but white space,
                // `/` or `>` starts the next attribute (a parse error).
                Some((i + 1..end, end + 1))
            }
            b'>' => Some((i..i, i)),
            _ => {
                let mut end = i;
                while end < b.len() && !matches!(b[end], b'\t' | b'\n' | b'\x0c' | b' ' | b'>') {
                    end += 1;
                }
                if end == b.len() {
                    return None;
                }
                Some((i..end, end))
            }
        }
    }

    /// Pushes the markup in `raw` onto `out` as an attribute value:
    /// character references decoded, NUL replaced.
    fn decode_value(&self, raw: Range<usize>, out: &mut String) {
        let (from, to) = (raw.start, raw.end);
        let text = &self.src[from..to];
        if memchr::memchr2(b'&', 0, text.as_bytes()).is_none() {
            out.push_str(text);
            return;
        }
        let mut i = from;
        while i < to {
            let rest = &self.bytes()[i..to];
            let Some(off) = memchr::memchr2(b'&', 0, rest) else {
                out.push_str(&self.src[i..to]);
                break;
            };
            out.push_str(&self.src[i..i + off]);
            i += off;
            if self.bytes()[i] == 0 {
                out.push('\u{fffd}');
                i += 1;
            } else {
                i = self.char_ref_within(i + 1, to, true, out);
            }
        }
    }

    fn char_ref(&self, at: usize, in_attribute: bool, out: &mut String) -> usize {
        self.char_ref_within(at, self.src.len(), in_attribute, out)
    }

    /// The character reference after an `&` at `at - 1`, read no further
    /// than `end`: pushes what it stands for (or the `&` itself) onto `out`
    /// and returns where reading goes on.
    fn char_ref_within(
        &self,
        at: usize,
        end: usize,
        in_attribute: bool,
        out: &mut String,
    ) -> usize {
        let b = &self.bytes()[..end];
        match b.get(at) {
            Some(b'#') => self.numeric_ref(at + 1, end, out),
            Some(c) if c.is_ascii_alphanumeric() => {
                if let Some((len, c)) = common_entity(&b[at..]) {
                    out.push(c);
                    return at + len;
                }
                // The longest name in the table that the input starts with;
                // the table holds every prefix of every name.
                let mut matched = None;
                let mut i = at;
                while i < b.len() && b[i].is_ascii() {
                    match NAMED_ENTITIES.get(&self.src[at..=i]) {
                        Some(&(c1, c2)) => {
                            if c1 != 0 {
                                matched = Some((i + 1, c1, c2));
                            }
                            i += 1;
                        }
                        None => break,
                    }
                }
                let Some((after, c1, c2)) = matched else {
                    out.push('&');
                    return at;
                };
                let semicolon = b[after - 1] == b';';
                if in_attribute
                    && !semicolon
                    && b.get(after)
                        .is_some_and(|&n| n == b'=' || n.is_ascii_alphanumeric())
                {
                    out.push('&');
                    return at;
                }
                out.extend(char::from_u32(c1));
                if c2 != 0 {
                    out.extend(char::from_u32(c2));
                }
                after
            }
            _ => {
                out.push('&');
                at
            }
        }
    }

    /// After `&#`: a decimal or (after `x`) hexadecimal code point.
    fn numeric_ref(&self, at: usize, end: usize, out: &mut String) -> usize {
        let b = &self.bytes()[..end];
        let hex = matches!(b.get(at), Some(b'x' | b'X'));
        let (base, digits_from) = if hex { (16, at + 1) } else { (10, at) };
        let mut i = digits_from;
        let mut n: u32 = 0;
        let mut too_big = false;
        while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(base)) {
            n = n.wrapping_mul(base);
            if n > 0x10ffff {
                too_big = true;
            }
            n = n.wrapping_add(d);
            i += 1;
        }
        if i == digits_from {
            // No digits: the `&` is text, and so is what follows.
            out.push('&');
            return at - 1;
        }
        if b.get(i) == Some(&b';') {
            i += 1;
        }
        out.push(code_point(n, too_big));
        i
    }

    /// After `<!`.
    fn markup_declaration(&mut self, at: usize) {
        let rest = &self.bytes()[at..];
        if rest.starts_with(b"--") {
            self.comment(at + 2);
        } else if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"doctype") {
            self.doctype(at + 7);
        } else if rest.starts_with(b"[CDATA[") && self.sink.in_foreign_content() {
            let from = at + 7;
            let (body_end, next) = match memchr::memmem::find(&self.bytes()[from..], b"]]>") {
                Some(e) => (from + e, from + e + 3),
                None => (self.src.len(), self.src.len()),
            };
            // Characters as they are, but a NUL is a token of its own.
            for (n, run) in self.src[from..body_end].split('\0').enumerate() {
                if n > 0 {
                    self.emit(Token::NullCharacterToken);
                }
                if !run.is_empty() {
                    self.sink.text(run);
                }
            }
            self.pos = next;
        } else {
            self.bogus_comment(at);
        }
    }

    /// A comment whose body starts at `at` (after `<!--`).
    fn comment(&mut self, at: usize) {
        let b = self.bytes();
        let rest = &b[at..];
        // `<!-->` and `<!--->` are whole (empty) comments.
        for (open, len) in [(&b">"[..], 1), (b"->", 2)] {
            if rest.starts_with(open) {
                self.emit_comment("");
                self.pos = at + len;
                return;
            }
        }
        let ends = [
            memchr::memmem::find(rest, b"-->").map(|e| (e, 3)),
            memchr::memmem::find(rest, b"--!>").map(|e| (e, 4)),
        ];
        match ends.into_iter().flatten().min() {
            Some((e, len)) => {
                self.emit_comment(&self.src[at..at + e]);
                self.pos = at + e + len;
            }
            None => {
                // At the end of the input the comment ends, less the
                // dashes (and `!`) that had begun to close it.
                let mut body = &self.src[at..];
                for tail in ["--!", "--", "-"] {
                    if let Some(cut) = body.strip_suffix(tail) {
                        body = cut;
                        break;
                    }
                }
                self.emit_comment(body);
                self.pos = self.src.len();
            }
        }
    }

    /// A bogus comment: from `at` to the next `>`.
    fn bogus_comment(&mut self, at: usize) {
        let (end, next) = match memchr::memchr(b'>', &self.bytes()[at..]) {
            Some(e) => (at + e, at + e + 1),
            None => (self.src.len(), self.src.len()),
        };
        self.emit_comment(&self.src[at..end]);
        self.pos = next;
    }

    fn emit_comment(&self, body: &str) {
        let mut text = String::with_capacity(body.len());
        push_replacing_nul(&mut text, body);
        self.emit(Token::CommentToken(StrTendril::from_slice(&text)));
    }

    /// After `<!DOCTYPE`.
    fn doctype(&mut self, at: usize) {
        let (doctype, next) = read_doctype(self.src, at);
        self.emit(Token::DoctypeToken(doctype));
        self.pos = next;
    }

    /// RCDATA, RAWTEXT and script data: text up to the end tag of the
    /// element that opened them.
    fn raw(&mut self, kind: RawKind) -> Mode {
        let name = self.last_start.clone().unwrap_or_default();
        let b = self.bytes();
        let mut search = self.pos;
        let end = loop {
            let Some(off) = memchr::memmem::find(&b[search..], b"</") else {
                break None;
            };
            let lt = search + off;
            let after = lt + 2 + name.len();
            if b.len() > after
                && b[lt + 2..after].eq_ignore_ascii_case(name.as_bytes())
                && matches!(b[after], b'\t' | b'\n' | b'\x0c' | b' ' | b'/' | b'>')
            {
                break Some(lt);
            }
            search = lt + 2;
        };
        let body_end = end.unwrap_or(self.src.len());
        let body = &self.src[self.pos..body_end];
        if kind == RawKind::Rcdata {
            let mut i = self.pos;
            while i < body_end {
                let Some(off) = memchr::memchr2(b'&', 0, &self.bytes()[i..body_end]) else {
                    self.text.push_str(&self.src[i..body_end]);
                    break;
                };
                self.text.push_str(&self.src[i..i + off]);
                i += off;
                if self.bytes()[i] == 0 {
                    self.text.push('\u{fffd}');
                    i += 1;
                } else {
                    let mut text = std::mem::take(&mut self.text);
                    i = self.char_ref_within(i + 1, body_end, false, &mut text);
                    self.text = text;
                }
            }
        } else {
            push_replacing_nul(&mut self.text, body);
        }
        self.flush();
        match end {
            Some(lt) => self.tag(TagKind::EndTag, lt + 2),
            None => {
                self.pos = self.src.len();
                Mode::Raw(kind)
            }
        }
    }
}

/// The doctype token from `at` (after `<!DOCTYPE`) and where data goes on.
fn read_doctype(src: &str, at: usize) -> (Doctype, usize) {
    let b = src.as_bytes();
    let mut d = Doctype::default();
    let mut i = at;
    let skip_space = |i: &mut usize| {
        while *i < b.len() && is_space(b[*i]) {
            *i += 1;
        }
    };
    let quirks = |mut d: Doctype, next: usize| {
        d.force_quirks = true;
        (d, next)
    };
    skip_space(&mut i);
    // Before DOCTYPE name.
    match b.get(i) {
        None => return quirks(d, b.len()),
        Some(b'>') => return quirks(d, i + 1),
        Some(_) => {}
    }
    let start = i;
    while i < b.len() && !is_space(b[i]) && b[i] != b'>' {
        i += 1;
    }
    d.name = Some(StrTendril::from_slice(&lowered(&src[start..i])));
    skip_space(&mut i);
    match b.get(i) {
        None => return quirks(d, b.len()),
        Some(b'>') => return (d, i + 1),
        Some(_) => {}
    }
    let keyword = b.get(i..i + 6).map(|k| k.to_ascii_lowercase());
    let public = match keyword.as_deref() {
        Some(b"public") => true,
        Some(b"system") => false,
        _ => return bogus_doctype(quirks(d, i).0, b, i),
    };
    i += 6;
    // After the keyword: an identifier, public then system, or only system.
    let mut want_public = public;
    let mut first = true;
    loop {
        skip_space(&mut i);
        match b.get(i) {
            None => return quirks(d, b.len()),
            Some(b'>') => {
                // Nothing more, or after the keyword with no identifier.
                return if first || (want_public && d.public_id.is_none()) {
                    quirks(d, i + 1)
                } else {
                    (d, i + 1)
                };
            }
            Some(&q @ (b'"' | b'\'')) => {
                let from = i + 1;
                let close = memchr::memchr2(q, b'>', &b[from..]).map(|e| from + e);
                let end = close.unwrap_or(b.len());
                let mut id = String::new();
                push_replacing_nul(&mut id, &src[from..end]);
                let id = Some(StrTendril::from_slice(&id));
                if want_public {
                    d.public_id = id;
                } else {
                    d.system_id = id;
                }
                match close {
                    None => return quirks(d, b.len()),
                    Some(c) if b[c] == b'>' => return quirks(d, c + 1),
                    Some(c) => i = c + 1,
                }
                if !want_public {
                    // After the system identifier: only `>` is expected;
                    // anything else is a bogus doctype, not quirky.
                    skip_space(&mut i);
                    return match b.get(i) {
                        None => quirks(d, b.len()),
                        Some(b'>') => (d, i + 1),
                        Some(_) => bogus_doctype(d, b, i),
                    };
                }
                want_public = false;
                first = false;
            }
            Some(_) => return bogus_doctype(quirks(d, i).0, b, i),
        }
    }
}

/// The bogus doctype state: the rest of the doctype up to `>` is ignored.
fn bogus_doctype(d: Doctype, b: &[u8], at: usize) -> (Doctype, usize) {
    match memchr::memchr(b'>', &b[at..]) {
        Some(e) => (d, at + e + 1),
        None => (d, b.len()),
    }
}

/// A numeric character reference's character, as the spec maps it.
fn code_point(n: u32, too_big: bool) -> char {
    match n {
        _ if too_big || n > 0x10ffff => '\u{fffd}',
        0 | 0xd800..=0xdfff => '\u{fffd}',
        0x80..=0x9f => C1_REPLACEMENTS[(n - 0x80) as usize]
            .or_else(|| char::from_u32(n))
            .unwrap_or('\u{fffd}'),
        n => char::from_u32(n).unwrap_or('\u{fffd}'),
    }
}

/// The references most pages are made of, ended by `;`, and what they
/// stand for. The table lookup hashes each prefix of a name (1,300
/// instructions a reference; javadoc's `&lt;T&gt;` has two); a name with
/// its `;` is the longest match, as `;` ends every name that has one.
fn common_entity(rest: &[u8]) -> Option<(usize, char)> {
    Some(match rest {
        [b'l', b't', b';', ..] => (3, '<'),
        [b'g', b't', b';', ..] => (3, '>'),
        [b'a', b'm', b'p', b';', ..] => (4, '&'),
        [b'q', b'u', b'o', b't', b';', ..] => (5, '"'),
        [b'a', b'p', b'o', b's', b';', ..] => (5, '\''),
        [b'n', b'b', b's', b'p', b';', ..] => (5, '\u{a0}'),
        _ => return None,
    })
}

/// A tag or attribute name as an atom, ASCII-lowercased. The names most
/// pages are made of are matched to their static atoms byte for byte:
/// interning hashed each name (2% of the extractor's instructions on
/// javadoc), and these are nine in ten of the names on the benchmark
/// pages.
fn local_name(name: &str) -> LocalName {
    macro_rules! known {
        ($($n:tt $b:literal)*) => {
            match name.as_bytes() {
                $($b => html5ever::local_name!($n),)*
                _ => LocalName::from(&*lowered(name)),
            }
        };
    }
    known! {
        "div" b"div" "a" b"a" "span" b"span" "li" b"li" "code" b"code" "p" b"p" "dd" b"dd"
        "ul" b"ul" "script" b"script" "dt" b"dt" "svg" b"svg" "path" b"path" "h3" b"h3"
        "button" b"button" "meta" b"meta" "section" b"section" "img" b"img" "strong" b"strong"
        "link" b"link" "option" b"option" "i" b"i" "td" b"td" "input" b"input" "dl" b"dl"
        "h2" b"h2" "label" b"label" "wbr" b"wbr" "br" b"br" "use" b"use" "em" b"em"
        "style" b"style" "source" b"source" "h4" b"h4" "tr" b"tr" "picture" b"picture"
        "noscript" b"noscript" "nav" b"nav" "g" b"g" "figure" b"figure" "article" b"article"
        "title" b"title" "header" b"header" "b" b"b" "form" b"form" "symbol" b"symbol" "h1" b"h1"
        "footer" b"footer" "pre" b"pre" "th" b"th" "h5" b"h5" "html" b"html" "body" b"body"
        "head" b"head" "small" b"small" "rect" b"rect" "hr" b"hr" "time" b"time" "main" b"main"
        "aside" b"aside" "figcaption" b"figcaption" "sup" b"sup" "sub" b"sub" "stop" b"stop"
        "mask" b"mask" "details" b"details" "blockquote" b"blockquote" "h6" b"h6"
        "summary" b"summary" "ol" b"ol" "polygon" b"polygon" "circle" b"circle" "table" b"table"
        "tbody" b"tbody" "thead" b"thead" "caption" b"caption" "iframe" b"iframe"
        "select" b"select" "textarea" b"textarea" "template" b"template" "u" b"u" "s" b"s"
        "cite" b"cite" "abbr" b"abbr" "kbd" b"kbd" "var" b"var" "samp" b"samp" "q" b"q"
        "class" b"class" "href" b"href" "id" b"id" "type" b"type" "src" b"src" "rel" b"rel"
        "name" b"name" "role" b"role" "content" b"content" "alt" b"alt" "width" b"width" "d" b"d"
        "height" b"height" "value" b"value" "aria-label" b"aria-label" "fill" b"fill"
        "target" b"target" "aria-hidden" b"aria-hidden" "tabindex" b"tabindex" "viewbox" b"viewbox"
        "xmlns" b"xmlns" "loading" b"loading" "srcset" b"srcset" "media" b"media"
        "itemprop" b"itemprop" "property" b"property" "sizes" b"sizes" "for" b"for"
        "fill-rule" b"fill-rule" "xlink:href" b"xlink:href" "decoding" b"decoding"
        "aria-expanded" b"aria-expanded" "aria-controls" b"aria-controls"
        "stroke-width" b"stroke-width" "defer" b"defer" "onclick" b"onclick" "itemtype" b"itemtype"
        "itemscope" b"itemscope" "clip-rule" b"clip-rule" "lang" b"lang" "charset" b"charset"
        "colspan" b"colspan" "rowspan" b"rowspan" "hidden" b"hidden" "dir" b"dir" "async" b"async"
        "action" b"action" "method" b"method" "placeholder" b"placeholder" "stroke" b"stroke"
    }
}

/// Names and keywords are ASCII-lowercased (and NUL replaced).
fn lowered(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase() || b == 0) {
        Cow::Owned(
            s.chars()
                .map(|c| match c {
                    '\0' => '\u{fffd}',
                    c => c.to_ascii_lowercase(),
                })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

fn push_replacing_nul(out: &mut String, s: &str) {
    if memchr::memchr(0, s.as_bytes()).is_none() {
        out.push_str(s);
    } else {
        out.extend(s.chars().map(|c| if c == '\0' { '\u{fffd}' } else { c }));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The tree html5ever's own tokenizer gives, serialized, and ours.
    fn both(markup: &str) -> (String, String) {
        let theirs = Html::parse_document(markup);
        let ours = parse_document(markup, Html::new_document());
        assert_eq!(ours.quirks_mode, theirs.quirks_mode, "quirks of {markup:?}");
        (ours.html(), theirs.html())
    }

    fn same_tree(markup: &str) {
        let (ours, theirs) = both(markup);
        assert_eq!(ours, theirs, "tree of {markup:?}");
    }

    #[test]
    fn tags_attributes_and_text() {
        for markup in [
            "<p class=a id='b' data-x=c>one &amp; two</p>",
            "<A HREF=\"/X\" Title=T>link</a><br/><img src=a.png alt>",
            "<div a b = c d='e'f=g/ h>x</div>",
            "<p a=1 a=2 A=3>dup</p>",
            "text < more <3 and a<b and </ and </> end",
            "<p =x \"y 'z <w>q</p>",
            "<a href=x/>self</a><a href='y'/>z",
            "<p>open <b>bold <i>both</b> italic</i> after",
            "<table><tr><td>1<td>2</table><p>x",
            "<ul><li>a<li>b</ul><dl><dt>t<dd>d</dl>",
            "<select><option>a<option>b</select>",
        ] {
            same_tree(markup);
        }
    }

    #[test]
    fn character_references() {
        for markup in [
            "&amp; &amp &AMP; &lt;&gt &notit; &notin; &not &copy2 &;x &#65; &#x41; &#X41 &#x; &# &#;",
            "&#0; &#128; &#x9f; &#xd800; &#1114112; &#99999999999; &#x110000;",
            "<a href='?a=1&amp;b=2&copy=3&copy;&not=4&notin'>q</a>",
            "<a title=&amp;x&lt y=&#65z>q</a>",
            "&zwnj;&NotNestedGreaterGreater;&bogus; &xx",
            "&lt;T&gt;&lt &gt&ltx; &ltcc; &ampx &quot;&apos;&nbsp;&nbspx &QUOT; &Lt;",
            "<a title='&lt;&gt;&amp;&quot;&apos;&nbsp;&ltx=&lt=&nbsp=1'>q</a>",
            "<title>a &amp; b &lt;/title> c</title><textarea>&lt;x&gt;</textarea>",
        ] {
            same_tree(markup);
        }
    }

    #[test]
    fn comments_doctypes_and_bogus_markup() {
        for markup in [
            "<!--c--><!----><!---><!--->x<!-- a -- b --><!--x--!>y<!--z---><!--a-->",
            "<!--<!-- nested -->x<!-- -> -->",
            "<?xml version='1.0'?><p>x</p><!x><!-x></3x>",
            "<!DOCTYPE html><p>x",
            "<!doctype HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\"><table><p>q",
            "<!DOCTYPE html PUBLIC '-//W3C//DTD XHTML 1.0 Strict//EN' 'http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd'>x",
            "<!DOCTYPE html SYSTEM 'about:legacy-compat'>x",
            "<!DOCTYPE html PUBLIC>x",
            "<!DOCTYPE html bogus>x",
            "<!DOCTYPE>x",
            "<!DOCTYPE html PUBLIC \"x>y",
            "<!DOCTYPE html PUBLIC \"x\"\"y\">z",
            "<!DOCTYPE html SYSTEM \"x\" junk>z",
            "<!DOCTYPE",
            "<!--unclosed --",
            "<!--unclosed --!",
            "<!--unclosed -",
        ] {
            same_tree(markup);
        }
    }

    #[test]
    fn raw_text_foreign_content_and_the_end_of_input() {
        for markup in [
            "<style>p < q { x: '</styl' }</STYLE >after",
            "<title>a<b>c</title x>d",
            "<xmp><b>x</b></xmp><iframe>&amp;<p></iframe><noscript><p>n</p></noscript>",
            "<svg><![CDATA[a<b]]><rect/></svg><![CDATA[x]]>",
            "<math><mi>x</mi></math><plaintext><p>all & text</p>",
            "<p>crlf\r\nand\rcr\r</p>",
            "\u{feff}<p>bom</p>",
            "nul\0in<p\0a b\0=c\0>text\0</p><!--\0-->",
            "<div",
            "<div class='open",
            "<div class=open",
            "<a b",
            "</",
            "<",
            "<title>never closed",
            "<textarea>\nfirst line</textarea><pre>\n\nx</pre>",
        ] {
            same_tree(markup);
        }
    }

    /// Pieces of markup, valid and broken, that generated pages are made of
    /// (no scripts: see the module's doc).
    pub(crate) const PIECES: &[&str] = &[
        "<p>",
        "</p>",
        "<div class=\"c\">",
        "</div>",
        "<b>",
        "</b>",
        "<i>",
        "</i>",
        "<a href=x>",
        "</a>",
        "<table>",
        "<tr>",
        "<td>",
        "</td>",
        "</table>",
        "<li>",
        "<ul>",
        "</ul>",
        "<br>",
        "<img src=a alt='b'>",
        "<title>",
        "</title>",
        "<textarea>",
        "</textarea>",
        "<style>",
        "</style>",
        "<svg>",
        "</svg>",
        "<![CDATA[",
        "]]>",
        "<!--",
        "-->",
        "--!>",
        "<!DOCTYPE html>",
        "<!doctype x public 'y'>",
        "&amp;",
        "&lt;",
        "&gt",
        "&nbsp;",
        "&quot;",
        "&apos;",
        "&notin",
        "&#x41;",
        "&#150;",
        "&",
        "<",
        ">",
        "</",
        "/",
        "=",
        "\"",
        "'",
        " ",
        "\n",
        "\r",
        "\0",
        "text",
        "é",
        "中文",
        "<h1>",
        "</h1>",
        "<select>",
        "<option>",
        "<form>",
        "</form>",
        "<noscript>",
        "</noscript>",
        "<frameset>",
        "<head>",
        "<body>",
        "</body>",
        "<html>",
        "<P CLASS=X>",
        "<a b c=d e='f' g=\"h\">",
        "<br/>",
        "<?x>",
        "<template>",
        "</template>",
        "<math>",
        "<mi>",
        "<plaintext>",
        "<!",
        "<!-",
        "-",
        "--",
        "</title",
        "</style",
        "</textarea ",
        "<xmp>",
        "</xmp>",
        "&#",
        "&#x",
        "x",
        "9",
        ";",
        "\t",
        "<a href=\"",
        "<DIV",
        "<iframe>",
        "</iframe>",
        "<pre>",
        "<listing>",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn generated_markup_parses_as_html5ever_parses_it(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..40)
        ) {
            let markup = pieces.concat();
            let (ours, theirs) = both(&markup);
            prop_assert_eq!(ours, theirs, "markup {:?}", markup);
        }
    }
}
