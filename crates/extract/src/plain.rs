//! Plain text: one line per block (paragraph, heading, list item, table
//! row), white space collapsed but in `<pre>`, table cells separated by
//! ` | `.

use crate::dom::{Element, NodeRef};

use crate::chars::is_ascii_space;
use crate::classify::is_block;
use crate::render::Writer;

/// Accumulates text lines.
#[derive(Default)]
pub(crate) struct TextBuilder {
    out: String,
    /// `<pre>` elements open around the text.
    pre_depth: u32,
    /// The current line has text.
    line_has_text: bool,
    /// A space is owed before the next word.
    pending_space: bool,
    /// Cells so far in the current table row.
    cells_in_row: u32,
}

impl TextBuilder {
    /// Text with its runs of white space (as `char::is_whitespace`) made
    /// one space, none at a line's start.
    pub(crate) fn add_text(&mut self, t: &str) {
        // Every text node of the content comes here: ASCII text, most of
        // it, goes in runs of words that single spaces part, each run
        // copied at once (word by word, this was 3% of extraction).
        if t.is_ascii() {
            let b = t.as_bytes();
            let mut i = 0;
            while i < b.len() {
                let space = i;
                while i < b.len() && is_ascii_space(b[i]) {
                    i += 1;
                }
                if i > space {
                    self.pending_space = true;
                }
                let start = i;
                while i < b.len() {
                    if !is_ascii_space(b[i]) {
                        i += 1;
                    } else if b[i] == b' ' && b.get(i + 1).is_some_and(|&n| !is_ascii_space(n)) {
                        i += 2;
                    } else {
                        break;
                    }
                }
                self.word(0, &t[start..i]);
            }
        } else {
            for (i, word) in t.split(char::is_whitespace).enumerate() {
                self.word(i, word);
            }
            if t.ends_with(char::is_whitespace) {
                self.pending_space = true;
            }
        }
    }

    /// The `i`th piece of a text split at each white space character (or
    /// a run of such pieces that single spaces part).
    fn word(&mut self, i: usize, word: &str) {
        if i > 0 {
            self.pending_space = true;
        }
        if word.is_empty() {
            return;
        }
        if self.pending_space && self.line_has_text {
            self.out.push(' ');
        }
        self.pending_space = false;
        self.out.push_str(word);
        self.line_has_text = true;
    }

    /// Preformatted text: kept as is, spaces between highlighted spans
    /// included.
    pub(crate) fn raw(&mut self, t: &str) {
        for (i, line) in t.split('\n').enumerate() {
            if i > 0 {
                self.hard_newline();
            }
            let line = line.trim_end_matches('\r');
            if !line.is_empty() {
                self.out.push_str(line);
                self.line_has_text = true;
            }
        }
    }

    /// A line break inside `<pre>`: empty lines count.
    fn hard_newline(&mut self) {
        self.trim_line_end();
        self.out.push('\n');
        self.line_has_text = false;
    }

    fn trim_line_end(&mut self) {
        while self.out.ends_with([' ', '\t']) {
            self.out.pop();
        }
    }

    pub(crate) fn newline(&mut self) {
        self.trim_line_end();
        if self.line_has_text {
            self.out.push('\n');
            self.line_has_text = false;
        }
        self.pending_space = false;
        self.cells_in_row = 0;
    }

    pub(crate) fn cell(&mut self) {
        if self.cells_in_row > 0 && self.line_has_text {
            self.out.push_str(" | ");
            self.pending_space = false;
        }
        self.cells_in_row += 1;
    }

    pub(crate) fn end_row(&mut self) {
        self.newline();
    }

    pub(crate) fn finish(mut self) -> String {
        while self.out.ends_with('\n') {
            self.out.pop();
        }
        self.out
    }
}

impl Writer for TextBuilder {
    fn open(&mut self, _: NodeRef<'_>, el: Element<'_>) {
        match el.name() {
            "br" => self.newline(),
            "pre" => {
                self.newline();
                self.pre_depth += 1;
            }
            "td" | "th" => self.cell(),
            tag if is_block(tag) => self.newline(),
            _ => {}
        }
    }

    fn close(&mut self, _: NodeRef<'_>, el: Element<'_>) {
        let tag = el.name();
        if tag == "pre" {
            self.pre_depth = self.pre_depth.saturating_sub(1);
        }
        if tag == "tr" {
            self.end_row();
        }
        if is_block(tag) && !matches!(tag, "td" | "th") {
            self.newline();
        }
    }

    fn text(&mut self, t: &str) {
        if self.pre_depth > 0 {
            self.raw(t);
        } else {
            self.add_text(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TextBuilder;

    /// Text split at `char::is_whitespace`, as before the byte-wise path.
    fn by_chars(pieces: &[&str]) -> String {
        let mut out = TextBuilder::default();
        for t in pieces {
            for (i, word) in t.split(char::is_whitespace).enumerate() {
                out.word(i, word);
            }
            if t.ends_with(char::is_whitespace) {
                out.pending_space = true;
            }
        }
        out.finish()
    }

    #[test]
    fn ascii_text_is_spaced_as_char_is_whitespace_spaces_it() {
        let all_ascii: String = (0u8..128).map(char::from).collect();
        for pieces in [
            &[all_ascii.as_str(), all_ascii.as_str()][..],
            &[" a  b\t", "c\u{b}d\u{c}e\r\n", "f"],
            &["caf\u{e9}\u{a0}x ", "y\u{2003}z", " plain "],
            &["", " ", "word"],
            &["one two three", " four five  six ", "seven\teight nine"],
            &["a b", "c ", " d e\u{b}f g", "h  "],
        ] {
            let mut out = TextBuilder::default();
            for t in pieces {
                out.add_text(t);
            }
            assert_eq!(out.finish(), by_chars(pieces), "{pieces:?}");
        }
    }
}
