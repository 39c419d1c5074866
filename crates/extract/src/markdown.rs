//! The kept part of a page as Markdown (CommonMark, with GitHub's tables):
//! headings `#`, paragraphs, lists (nested, numbered from `<ol start>`),
//! quotes, code blocks fenced with the language the page declares
//! (`language-rust`, `lang-js`, Sphinx's `highlight-python`), inline code,
//! and tables of data as pipe tables. Links (`[text](url)`, absolute) and
//! emphasis are written when asked for.
//!
//! The walk is the plain text's ([`crate::render`]): the same elements and
//! text are kept, only written otherwise. Text that Markdown would read as
//! markup is escaped, so that the Markdown parses back to the same words.
//!
//! A table whose cells hold blocks (paragraphs, lists, headings, code,
//! other tables) lays a page out and is read as blocks; a pipe table
//! holds a line per cell.

use url::Url;

use crate::classify::is_block;
use crate::dom::{Element, Node, NodeRef};
use crate::render::Writer;

/// How Markdown is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// Links as `[text](url)`, and emphasis (`*em*`, `**strong**`).
    pub links: bool,
}

/// What a container adds to the start of each of its lines.
enum Container {
    Quote,
    /// A list item: its marker on its first line, as many spaces on the
    /// others.
    Item {
        width: usize,
    },
}

/// An inline span whose opening is owed or written.
struct Span {
    id: crate::dom::NodeId,
    /// Written when it closes: `*`, `**`, or `](url)`.
    closing: String,
    opening: &'static str,
    /// Where its opening was written, once text came.
    at: Option<usize>,
    /// Lines started when the opening was written: a span that crosses a
    /// line is dropped.
    lines_at: usize,
    /// It goes on from the span of the same kind closed right before it
    /// (whose closing is now its).
    reopened: bool,
}

/// A pipe table being read: its rows of cells, each cell read by a
/// writer of its own.
struct Table {
    id: crate::dom::NodeId,
    rows: Vec<Vec<String>>,
    /// The cell (or caption) being read, and its element.
    cell: Option<(crate::dom::NodeId, Box<MarkdownWriter>)>,
    caption: Option<String>,
}

/// A code block being read.
struct Code {
    id: crate::dom::NodeId,
    language: Option<String>,
    text: String,
}

impl Code {
    /// Ends the line of code being read, if it has text.
    fn end_line(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }
}

/// Writes Markdown.
pub(crate) struct MarkdownWriter {
    out: String,
    options: MarkdownOptions,
    base: Option<Url>,
    /// Inline only (a table cell): blocks are spaces.
    inline: bool,
    containers: Vec<Container>,
    /// Open lists: the next item's number, none for bullets.
    lists: Vec<Option<u64>>,
    /// The next line's item marker, written in place of that item's
    /// indentation.
    marker: Option<String>,
    /// The next line is a heading: its `#`s.
    heading: Option<usize>,
    /// Headings open (a block inside one is a space).
    in_heading: u32,
    /// Line breaks owed before the next text: 1 a line, 2 a paragraph.
    breaks: u8,
    /// The containers' prefix of the last line written: a blank line
    /// between two paragraphs has the part both lines share (`>` inside a
    /// quote, nothing as it opens or closes).
    last_prefix: String,
    /// A `<br>`: the line ends with a hard break if the block goes on.
    hard_break: bool,
    line_has_text: bool,
    pending_space: bool,
    lines: usize,
    spans: Vec<Span>,
    /// Where the last emphasis closed, and its marker.
    last_closing: Option<(usize, &'static str)>,
    code: Option<Code>,
    inline_code: Option<(crate::dom::NodeId, String)>,
    table: Option<Table>,
    /// Tables read as blocks, by their elements.
    layout_tables: Vec<crate::dom::NodeId>,
}

impl MarkdownWriter {
    pub(crate) fn new(options: MarkdownOptions, base: Option<&Url>) -> MarkdownWriter {
        MarkdownWriter {
            out: String::new(),
            options,
            base: base.cloned(),
            inline: false,
            containers: Vec::new(),
            lists: Vec::new(),
            marker: None,
            heading: None,
            in_heading: 0,
            breaks: 0,
            last_prefix: String::new(),
            hard_break: false,
            line_has_text: false,
            pending_space: false,
            lines: 0,
            spans: Vec::new(),
            last_closing: None,
            code: None,
            inline_code: None,
            table: None,
            layout_tables: Vec::new(),
        }
    }

    fn cell_writer(&self) -> MarkdownWriter {
        MarkdownWriter {
            inline: true,
            ..MarkdownWriter::new(self.options, self.base.as_ref())
        }
    }

    pub(crate) fn finish(mut self) -> String {
        while self.out.ends_with(['\n', ' ']) {
            self.out.pop();
        }
        self.out
    }

    /// Text that stands as it is, escaped as a paragraph of its own per
    /// line (a description, a page read without a tree).
    pub(crate) fn paragraphs(text: &str) -> String {
        let mut w = MarkdownWriter::new(MarkdownOptions::default(), None);
        for line in text.lines() {
            w.block();
            w.words(line);
        }
        w.finish()
    }

    /// Ends the current block: the next text starts a paragraph.
    fn block(&mut self) {
        if self.inline || self.in_heading > 0 {
            self.pending_space = true;
        } else {
            self.breaks = 2;
            self.hard_break = false;
            self.line_has_text = false;
        }
    }

    /// Ends the current line; the next text starts one in the same block.
    fn line(&mut self) {
        if self.inline || self.in_heading > 0 {
            self.pending_space = true;
        } else {
            self.breaks = self.breaks.max(1);
            self.line_has_text = false;
        }
    }

    /// Inside a list item: a list opening or closing there is a line of
    /// the item, not a paragraph apart.
    fn in_item(&self) -> bool {
        matches!(self.containers.last(), Some(Container::Item { .. }))
    }

    /// Starts a line if none is started: the breaks owed, then the
    /// containers' prefixes, an item's marker and a heading's `#`s. True
    /// when it wrote a heading's `#`s.
    fn start_line(&mut self) -> bool {
        if self.line_has_text {
            return false;
        }
        if !self.out.is_empty() {
            if self.hard_break && self.breaks == 1 {
                self.out.push('\\');
            }
            self.out.push('\n');
            if self.breaks >= 2 {
                let now = self.prefix(false);
                let shared = (self.last_prefix.bytes().zip(now.bytes()))
                    .take_while(|(a, b)| a == b)
                    .count();
                self.out.push_str(now[..shared].trim_end());
                self.out.push('\n');
            }
        }
        self.breaks = 0;
        self.hard_break = false;
        self.last_prefix = self.prefix(false);
        let prefix = self.prefix(true);
        self.out.push_str(&prefix);
        let heading = self.heading.take();
        if let Some(level) = heading {
            self.out.push_str(&"#".repeat(level));
            self.out.push(' ');
        }
        self.line_has_text = true;
        self.pending_space = false;
        self.lines += 1;
        heading.is_some()
    }

    /// The containers' prefix of a line: the first of a new item has its
    /// marker (`first`, taking it).
    fn prefix(&mut self, first: bool) -> String {
        let mut prefix = String::new();
        let item = (self.containers.iter()).rposition(|c| matches!(c, Container::Item { .. }));
        for (i, c) in self.containers.iter().enumerate() {
            match c {
                Container::Quote => prefix.push_str("> "),
                Container::Item { width } => match &self.marker {
                    Some(m) if first && Some(i) == item => prefix.push_str(m),
                    _ => prefix.extend(std::iter::repeat_n(' ', *width)),
                },
            }
        }
        if first {
            self.marker = None;
        }
        prefix
    }

    /// Text with its white space collapsed, escaped.
    fn words(&mut self, t: &str) {
        for (i, word) in t.split(char::is_whitespace).enumerate() {
            if i > 0 {
                self.pending_space = true;
            }
            if word.is_empty() {
                continue;
            }
            let starts_line = self.start_word();
            escape(word, starts_line, &mut self.out);
        }
        if t.ends_with(char::is_whitespace) {
            self.pending_space = true;
        }
    }

    /// Starts a word: its line if none is started, else the space owed
    /// before it; then the spans waiting for text. True when the word
    /// starts the line's text, where a word that reads as a block marker
    /// is escaped (after a heading's `#`s nothing opens a block).
    fn start_word(&mut self) -> bool {
        let line_start = !self.line_has_text;
        let heading = self.start_line();
        if self.pending_space && !line_start {
            self.out.push(' ');
        }
        self.pending_space = false;
        self.open_spans();
        line_start && !heading
    }

    /// Emphasis closed right before opens again as one run (`**a****b**`
    /// would not parse as strong): the closing is taken back.
    fn open_spans(&mut self) {
        for span in self.spans.iter_mut().filter(|s| s.at.is_none()) {
            let reopened =
                span.opening != "[" && self.last_closing == Some((self.out.len(), span.opening));
            if reopened {
                self.out.truncate(self.out.len() - span.opening.len());
                span.at = Some(self.out.len());
                span.reopened = true;
            } else {
                span.at = Some(self.out.len());
                self.out.push_str(span.opening);
            }
            span.lines_at = self.lines;
        }
    }

    fn open_span(&mut self, node: NodeRef<'_>, el: Element<'_>) -> bool {
        if !self.options.links {
            return false;
        }
        let (opening, closing) = match el.name() {
            "em" | "i" => ("*", "*".to_string()),
            "strong" | "b" => ("**", "**".to_string()),
            "a" => {
                let Some(url) = el.attr("href").and_then(|h| self.resolve(h)) else {
                    return false;
                };
                // Parentheses escaped: an unbalanced one would end the link.
                let url = url.as_str().replace('(', "\\(").replace(')', "\\)");
                ("[", format!("]({url})"))
            }
            _ => return false,
        };
        self.spans.push(Span {
            id: node.id(),
            closing,
            opening,
            at: None,
            lines_at: 0,
            reopened: false,
        });
        true
    }

    fn resolve(&self, href: &str) -> Option<Url> {
        let url = match &self.base {
            Some(base) => base.join(href.trim()).ok()?,
            None => Url::parse(href.trim()).ok()?,
        };
        matches!(url.scheme(), "http" | "https").then_some(url)
    }

    /// Closes the span of `node`: its closing after its text, or its
    /// opening taken back when it holds none or crosses a line.
    fn close_span(&mut self, node: NodeRef<'_>) {
        let Some(i) = self.spans.iter().rposition(|s| s.id == node.id()) else {
            return;
        };
        let span = self.spans.remove(i);
        let Some(at) = span.at else {
            return;
        };
        let ends_in_text = !self.out.ends_with(char::is_whitespace);
        if span.lines_at == self.lines && self.line_has_text && ends_in_text {
            self.out.push_str(&span.closing);
            self.last_closing = Some((self.out.len(), span.opening));
        } else if !span.reopened {
            self.out.replace_range(at..at + span.opening.len(), "");
        }
    }

    fn open_code(&mut self, node: NodeRef<'_>) {
        self.block();
        self.code = Some(Code {
            id: node.id(),
            language: code_language(node),
            text: String::new(),
        });
    }

    fn close_code(&mut self) {
        let Some(code) = self.code.take() else {
            return;
        };
        let text = code.text.trim_matches('\n');
        if text.trim().is_empty() {
            return;
        }
        if self.inline {
            // A table cell: inline code on one line.
            self.inline_code_text(&text.replace('\n', " "));
            return;
        }
        let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
        self.start_line();
        self.out.push_str(&fence);
        if let Some(language) = &code.language {
            self.out.push_str(language);
        }
        for line in text.split('\n') {
            self.out.push('\n');
            let prefix = self.prefix(false);
            self.out.push_str(&prefix);
            self.out.push_str(line.trim_end_matches('\r'));
        }
        self.out.push('\n');
        let prefix = self.prefix(false);
        self.out.push_str(&prefix);
        self.out.push_str(&fence);
        self.block();
    }

    /// `text` as inline code: backticks one more than its longest run.
    /// White space at its ends is outside the code, as around a word.
    fn inline_code_text(&mut self, raw: &str) {
        let text = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if raw.starts_with(char::is_whitespace) {
            self.pending_space = true;
        }
        if text.is_empty() {
            return;
        }
        self.start_word();
        // In a table cell, a pipe ends the cell even in code.
        let text = if self.inline {
            text.replace('|', "\\|")
        } else {
            text
        };
        let ticks = "`".repeat(longest_run(&text, '`') + 1);
        let pad = if text.starts_with('`') || text.ends_with('`') {
            " "
        } else {
            ""
        };
        self.out.push_str(&ticks);
        self.out.push_str(pad);
        self.out.push_str(&text);
        self.out.push_str(pad);
        self.out.push_str(&ticks);
        if raw.ends_with(char::is_whitespace) {
            self.pending_space = true;
        }
    }

    fn open_table(&mut self, node: NodeRef<'_>) {
        if self.inline || lays_out(node) {
            self.layout_tables.push(node.id());
            self.block();
            return;
        }
        self.block();
        self.table = Some(Table {
            id: node.id(),
            rows: Vec::new(),
            cell: None,
            caption: None,
        });
    }

    /// Writes a pipe table: the first row heads it, rows padded to the
    /// widest.
    fn close_table(&mut self, table: Table) {
        if let Some(caption) = table.caption.filter(|c| !c.is_empty()) {
            self.block();
            self.start_line();
            self.out.push_str(&caption);
            self.block();
        }
        let rows: Vec<Vec<String>> = table.rows.into_iter().filter(|r| !r.is_empty()).collect();
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        if width == 0 || rows.iter().all(|r| r.iter().all(String::is_empty)) {
            return;
        }
        for (i, row) in rows.iter().enumerate() {
            self.line();
            self.start_line();
            self.out.push('|');
            for c in 0..width {
                let cell = row.get(c).map_or("", String::as_str);
                self.out.push(' ');
                self.out.push_str(cell);
                self.out.push_str(if cell.is_empty() { "|" } else { " |" });
            }
            if i == 0 {
                self.line();
                self.start_line();
                self.out.push('|');
                for _ in 0..width {
                    self.out.push_str(" --- |");
                }
            }
        }
        self.block();
    }

    /// An event inside a pipe table, outside any cell: rows and cells
    /// start and end, other text is dropped (white space between rows).
    fn table_open(&mut self, node: NodeRef<'_>, el: Element<'_>) {
        let opens_cell = matches!(el.name(), "td" | "th" | "caption");
        let cell = opens_cell.then(|| Box::new(self.cell_writer()));
        let Some(table) = &mut self.table else {
            return;
        };
        match cell {
            Some(cell) => table.cell = Some((node.id(), cell)),
            None if el.name() == "tr" => table.rows.push(Vec::new()),
            None => {}
        }
    }

    fn table_close(&mut self, node: NodeRef<'_>, el: Element<'_>) {
        let Some(table) = &mut self.table else {
            return;
        };
        if node.id() == table.id {
            let table = self.table.take().expect("a table");
            self.close_table(table);
            return;
        }
        let Some((id, _)) = &table.cell else {
            return;
        };
        if *id != node.id() {
            return;
        }
        let (_, writer) = table.cell.take().expect("a cell");
        let text = writer.finish().replace('\n', " ");
        if el.name() == "caption" {
            table.caption = Some(text);
            return;
        }
        if table.rows.is_empty() {
            table.rows.push(Vec::new());
        }
        table.rows.last_mut().expect("a row").push(text);
    }
}

impl Writer for MarkdownWriter {
    fn open(&mut self, node: NodeRef<'_>, el: Element<'_>) {
        if let Some(table) = &mut self.table {
            match &mut table.cell {
                Some((_, cell)) => cell.open(node, el),
                None => self.table_open(node, el),
            }
            return;
        }
        if let Some(code) = &mut self.code {
            match el.name() {
                "br" => code.text.push('\n'),
                tag if is_block(tag) => code.end_line(),
                _ => {}
            }
            return;
        }
        if self.inline_code.is_some() {
            return;
        }
        let tag = el.name();
        if self.open_span(node, el) {
            return;
        }
        match tag {
            "br" => {
                let ends_text = self.line_has_text;
                self.line();
                self.hard_break = ends_text;
            }
            "pre" => self.open_code(node),
            "code" | "kbd" | "samp" | "tt" => {
                self.inline_code = Some((node.id(), String::new()));
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if self.in_heading == 0 => {
                self.block();
                if !self.inline {
                    self.heading = Some(usize::from(tag.as_bytes()[1] - b'0'));
                }
                self.in_heading += 1;
            }
            "table" => self.open_table(node),
            "blockquote" if !self.inline => {
                self.block();
                self.containers.push(Container::Quote);
            }
            "ul" | "ol" | "menu" => {
                if self.in_item() {
                    self.line();
                } else {
                    self.block();
                }
                let start = el.attr("start").and_then(|s| s.trim().parse().ok());
                self.lists.push((tag == "ol").then(|| start.unwrap_or(1)));
            }
            "li" if !self.inline => {
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "- ".to_string(),
                };
                self.line();
                self.containers.push(Container::Item {
                    width: marker.len(),
                });
                self.marker = Some(marker);
            }
            _ if is_block(tag) => self.block(),
            _ => {}
        }
    }

    fn close(&mut self, node: NodeRef<'_>, el: Element<'_>) {
        if let Some(table) = &mut self.table {
            match &mut table.cell {
                Some((id, cell)) if *id != node.id() => cell.close(node, el),
                _ => self.table_close(node, el),
            }
            return;
        }
        if let Some(code) = &mut self.code {
            if code.id == node.id() {
                self.close_code();
            } else if is_block(el.name()) {
                // A highlighter's line of code (`div.line`).
                code.end_line();
            }
            return;
        }
        if let Some((id, _)) = &self.inline_code {
            if *id == node.id() {
                let (_, text) = self.inline_code.take().expect("inline code");
                self.inline_code_text(&text);
            }
            return;
        }
        if self.spans.iter().any(|s| s.id == node.id()) {
            self.close_span(node);
            return;
        }
        let tag = el.name();
        match tag {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if self.in_heading > 0 => {
                self.in_heading -= 1;
                if self.in_heading == 0 {
                    self.heading = None;
                    self.block();
                }
            }
            "table" if self.layout_tables.last() == Some(&node.id()) => {
                self.layout_tables.pop();
                self.block();
            }
            "blockquote" if !self.inline => {
                self.containers.pop();
                self.block();
            }
            "ul" | "ol" | "menu" => {
                self.lists.pop();
                if self.in_item() {
                    self.line();
                } else {
                    self.block();
                }
            }
            "li" if !self.inline => {
                if matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.containers.pop();
                }
                self.marker = None;
                self.line();
            }
            _ if is_block(tag) => self.block(),
            _ => {}
        }
    }

    fn text(&mut self, t: &str) {
        if let Some(table) = &mut self.table {
            if let Some((_, cell)) = &mut table.cell {
                cell.text(t);
            }
            return;
        }
        if let Some(code) = &mut self.code {
            code.text.push_str(t);
            return;
        }
        if let Some((_, code)) = &mut self.inline_code {
            code.push_str(t);
            return;
        }
        self.words(t);
    }
}

/// The language a code block declares by its class, or its `<code>`'s, or
/// a wrapper's (Sphinx's `div.highlight-python`): `language-X`, `lang-X`,
/// `highlight-source-X` (GitHub), `highlight-X`, `sourceCode X` (pandoc),
/// `brush: X` (SyntaxHighlighter).
fn code_language(pre: NodeRef<'_>) -> Option<String> {
    let code_child = pre
        .children()
        .find(|c| matches!(c.value(), Node::Element(e) if e.name() == "code"));
    let candidates = std::iter::once(pre)
        .chain(code_child)
        .chain(pre.ancestors().take(2));
    for node in candidates {
        let Node::Element(el) = node.value() else {
            continue;
        };
        let Some(class) = el.attr("class") else {
            continue;
        };
        if let Some(language) = language_of_class(class) {
            return Some(language);
        }
    }
    None
}

fn language_of_class(class: &str) -> Option<String> {
    let words: Vec<&str> = class.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        let named = ["language-", "lang-", "highlight-source-", "highlight-"]
            .iter()
            .find_map(|p| word.strip_prefix(p))
            .or_else(|| {
                (*word == "sourceCode")
                    .then(|| words.get(i + 1).copied())
                    .flatten()
            })
            .or_else(|| {
                (*word == "brush:")
                    .then(|| words.get(i + 1).copied())
                    .flatten()
            });
        let Some(name) = named else {
            continue;
        };
        let name = name.trim_end_matches(';').to_ascii_lowercase();
        let plain = [
            "default",
            "none",
            "text",
            "plain",
            "sourcecode",
            "nohighlight",
        ];
        if !name.is_empty()
            && !plain.contains(&name.as_str())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-#_.".contains(c))
        {
            return Some(name);
        }
    }
    None
}

/// A table that lays out a page rather than holding data: a cell of it
/// (not of a table inside it) holds a table, a heading, or two blocks or
/// more (paragraphs, lists, code, quotes). A cell with one paragraph or
/// one list is data (a comparison table's list of features); a caption
/// says nothing either way.
fn lays_out(table: NodeRef<'_>) -> bool {
    let mut stack: Vec<NodeRef<'_>> = table.children().collect();
    while let Some(node) = stack.pop() {
        let Node::Element(el) = node.value() else {
            continue;
        };
        match el.name() {
            "td" | "th" if cell_lays_out(node) => return true,
            "caption" | "td" | "th" | "table" => {}
            _ => stack.extend(node.children()),
        }
    }
    false
}

fn cell_lays_out(cell: NodeRef<'_>) -> bool {
    let mut blocks = 0;
    for node in cell.descendants().skip(1) {
        let Node::Element(el) = node.value() else {
            continue;
        };
        match el.name() {
            "table" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => return true,
            "p" | "ul" | "ol" | "pre" | "blockquote" | "dl" => blocks += 1,
            _ => {}
        }
        if blocks >= 2 {
            return true;
        }
    }
    false
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Appends `word` with what Markdown would read as markup escaped:
/// inline markup characters anywhere, and at a line's start what would
/// open a block (`#`, `>`, a list marker, a rule).
fn escape(word: &str, starts_line: bool, out: &mut String) {
    if starts_line && opens_block(word) {
        out.push('\\');
    }
    let bytes = word.as_bytes();
    for (i, c) in word.char_indices() {
        let escaped = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '|' | '~' => true,
            // `_` inside a word is no emphasis (snake_case stays as is).
            '_' => {
                let before = i > 0 && bytes[i - 1].is_ascii_alphanumeric();
                let after = bytes.get(i + 1).is_some_and(u8::is_ascii_alphanumeric);
                !(before && after)
            }
            // An entity reference would be decoded.
            '&' => looks_like_entity(&word[i + 1..]),
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
}

/// A word that opens a block at a line's start: `#`s, `>`, a bullet, an
/// ordered item's number (`1.`, `2)`), a rule or setext underline.
fn opens_block(word: &str) -> bool {
    let first = word.as_bytes()[0];
    match first {
        b'#' | b'>' | b'=' => true,
        b'-' | b'+' => word.len() == 1 || word.bytes().all(|b| b == first),
        b'0'..=b'9' => {
            let digits = word.bytes().take_while(u8::is_ascii_digit).count();
            digits <= 9
                && matches!(word.as_bytes().get(digits), Some(b'.' | b')'))
                && word.len() == digits + 1
        }
        _ => false,
    }
}

fn looks_like_entity(rest: &str) -> bool {
    let name = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'#')
        .count();
    name > 0 && rest.as_bytes().get(name) == Some(&b';')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str, links: bool) -> String {
        let doc = crate::tree_builder::parse_document(html, 0);
        let base = Url::parse("https://example.com/dir/page").unwrap();
        let mut w = MarkdownWriter::new(MarkdownOptions { links }, Some(&base));
        crate::render::render(doc.root(), crate::render::Cleaning::None, &mut w);
        w.finish()
    }

    #[test]
    fn blocks_come_out_as_markdown() {
        let html = "<h1>Title</h1><p>One <b>two</b> three.</p><h2>Part</h2>\
            <ul><li>a</li><li>b<ul><li>c</li></ul></li></ul>\
            <ol start=3><li>x</li><li>y</li></ol>\
            <blockquote><p>said</p><p>twice</p></blockquote>\
            <pre class=\"language-rust\"><code>fn main() {\n    let a = 1;\n}</code></pre>\
            <p>Call <code>run()</code> now.</p>";
        let want = "# Title\n\nOne two three.\n\n## Part\n\n- a\n- b\n  - c\n\n3. x\n4. y\n\n\
            > said\n>\n> twice\n\n```rust\nfn main() {\n    let a = 1;\n}\n```\n\nCall `run()` now.";
        assert_eq!(md(html, false), want);
    }

    #[test]
    fn data_tables_are_pipe_tables_and_layout_tables_blocks() {
        let html = "<table><caption>Sizes</caption><tr><th>name</th><th>size</th></tr>\
            <tr><td>a|b</td><td>1</td></tr><tr><td>c</td></tr></table>\
            <table><tr><td><p>Laid out</p><p>page</p></td></tr></table>\
            <table><tr><td><p>one</p></td><td><ul><li>x</li><li>y</li></ul></td></tr></table>";
        let want = "Sizes\n\n| name | size |\n| --- | --- |\n| a\\|b | 1 |\n| c | |\n\n\
            Laid out\n\npage\n\n| one | x y |\n| --- | --- |";
        assert_eq!(md(html, false), want);
    }

    #[test]
    fn links_and_emphasis_when_asked() {
        let html = "<p>See <a href=\"../x\">the <em>other</em> page</a> and <a href=\"#\"> </a>\
            <a href=\"mailto:a@b\">mail</a>, <b>trend</b><b>s</b>.</p>";
        assert_eq!(
            md(html, true),
            "See [the *other* page](https://example.com/x) and mail, **trends**."
        );
        assert_eq!(md(html, false), "See the other page and mail, trends.");
    }

    #[test]
    fn text_that_reads_as_markup_is_escaped() {
        let html = "<p># not a heading</p><p>1. not a list</p><p>- nor this</p>\
            <p>a*b [c] &lt;tag&gt; snake_case _x_ AT&amp;T &amp;amp;</p>";
        let want = "\\# not a heading\n\n\\1. not a list\n\n\\- nor this\n\n\
            a\\*b \\[c\\] \\<tag> snake_case \\_x\\_ AT&T \\&amp;";
        assert_eq!(md(html, false), want);
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        let html = "<pre>a ``` b</pre><p>x <code>a`b</code></p>\
            <pre><div class=line>cargo install</div><div class=line>cargo run</div></pre>";
        let want = "````\na ``` b\n````\n\nx ``a`b``\n\n```\ncargo install\ncargo run\n```";
        assert_eq!(md(html, false), want);
    }

    #[test]
    fn languages_of_code_classes() {
        for (class, want) in [
            ("language-python", Some("python")),
            ("highlight-source-rust", Some("rust")),
            ("sourceCode cpp", Some("cpp")),
            ("brush: js;", Some("js")),
            ("highlight-default", None),
            ("notranslate", None),
        ] {
            assert_eq!(language_of_class(class).as_deref(), want, "{class}");
        }
    }
}
