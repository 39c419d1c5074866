//! Tokens to our tree ([`crate::dom`]) for the markup most pages send;
//! html5ever's tree builder (into scraper's tree, copied) for the rest.
//!
//! html5ever's tree builder was half of the parse (issue 44: 0.12-0.14 of
//! javadoc's 0.23 ms a page): every token goes through its insertion-mode
//! match, and every scope check asks the sink for a node's name through a
//! `RefCell`. This builder follows the same WHATWG rules, copied from
//! html5ever's `rules.rs`, for what well-formed and ordinarily broken pages
//! hold: the head, the body's elements with their implied end tags and
//! formatting elements (reconstructed, and closed when nothing special is
//! inside them), tables built of their own elements, select and option,
//! raw text. It keeps each open element's name beside its node.
//!
//! Anything else makes it give up: foreign content (SVG, MathML),
//! templates, framesets, text or elements a table would foster out,
//! formatting elements the adoption agency would have to rebuild, a second
//! `<html>` or `<body>` with attributes, NUL characters outside text. The
//! page is then parsed again by html5ever's builder, so every tree is the
//! one html5ever gives; the tests parse generated markup and every
//! benchmark page both ways and compare the trees.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{Doctype, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::tree_builder::{QuirksMode, TreeBuilder, TreeSink};
use html5ever::{LocalName, QualName, local_name, namespace_prefix, ns};
use scraper::{Html, HtmlTreeSink};

use crate::dom::{Dom, Element, Node, NodeId};
use crate::tag::{Attrs, Tag};
use crate::tokenize::Sink;

/// `markup` parsed as a document into a tree with room for `nodes` nodes:
/// by this builder when it can, else by html5ever's.
pub(crate) fn parse_document(markup: &str, nodes: usize) -> Dom {
    // Templates are html5ever's: no use building the page up to one.
    if memchr::memmem::find(markup.as_bytes(), b"<template").is_some() {
        return html5evers(markup, nodes);
    }
    // Room for the page's text: a quarter of the markup, the share of
    // text on a large documentation page; a text-heavy page grows it.
    let builder = Builder::new(Dom::with_capacity(nodes, markup.len() / 4));
    crate::tokenize::tokenize(markup, &builder);
    match builder.finish() {
        Some(dom) => dom,
        None => html5evers(markup, nodes),
    }
}

/// html5ever's tree of `markup`, as ours.
pub(crate) fn html5evers(markup: &str, nodes: usize) -> Dom {
    Dom::from_html(&crate::tokenize::parse_document(markup, presized(nodes)))
}

pub(crate) fn presized(nodes: usize) -> Html {
    let mut empty = Html::new_document();
    empty.tree = ego_tree::Tree::with_capacity(scraper::Node::Document, nodes + 1);
    empty
}

/// The insertion modes this builder knows (the spec's, less those of
/// templates, framesets and foreign content).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Initial,
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
    Text,
    InTable,
    InCaption,
    InColumnGroup,
    InTableBody,
    InRow,
    InCell,
    AfterBody,
    AfterAfterBody,
}

/// What this builder does not do: the page goes to html5ever's.
struct GiveUp;

type Step<'t> = Result<Flow<'t>, GiveUp>;

/// What a rule asks for next.
enum Flow<'t> {
    Done,
    Reprocess(Mode, Tok<'t>),
}

/// A token as the rules see it: text is the tokenizer's, borrowed until
/// it is copied into the tree.
enum Tok<'t> {
    Chars(&'t str),
    Comment(StrTendril),
    Tag(Tag<'t>),
    Eof,
}

/// An open element: its node, and its name (all are in the HTML
/// namespace: foreign content gives up).
struct Open {
    id: NodeId,
    name: LocalName,
}

/// An entry of the list of active formatting elements: an element's
/// node and name. Its attributes are read from the tree when asked (to
/// reconstruct it, or compare it with a new one): a copy of its tag was
/// an allocation and a copy of its attributes for every link.
enum Formatting {
    Marker,
    Element(NodeId, LocalName),
}

/// The scopes of "has an element in scope".
#[derive(Clone, Copy)]
enum Scope {
    Default,
    ListItem,
    Button,
    Table,
}

impl Scope {
    fn bounded_by(self, name: &LocalName) -> bool {
        let default = || {
            matches!(
                *name,
                local_name!("applet")
                    | local_name!("caption")
                    | local_name!("html")
                    | local_name!("table")
                    | local_name!("td")
                    | local_name!("th")
                    | local_name!("marquee")
                    | local_name!("object")
                    | local_name!("select")
                    | local_name!("template")
            )
        };
        match self {
            Scope::Default => default(),
            Scope::ListItem => default() || matches!(*name, local_name!("ol") | local_name!("ul")),
            Scope::Button => default() || *name == local_name!("button"),
            Scope::Table => matches!(
                *name,
                local_name!("html") | local_name!("table") | local_name!("template")
            ),
        }
    }
}

/// Elements whose end tags the parser implies ("generate implied end tags").
fn implied_end(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("dd")
            | local_name!("dt")
            | local_name!("li")
            | local_name!("option")
            | local_name!("optgroup")
            | local_name!("p")
            | local_name!("rb")
            | local_name!("rp")
            | local_name!("rt")
            | local_name!("rtc")
    )
}

/// html5ever's `special_tag` set.
fn special(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("address")
            | local_name!("applet")
            | local_name!("area")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("blockquote")
            | local_name!("body")
            | local_name!("br")
            | local_name!("button")
            | local_name!("caption")
            | local_name!("center")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("dd")
            | local_name!("details")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("embed")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("form")
            | local_name!("frame")
            | local_name!("frameset")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("head")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("hr")
            | local_name!("html")
            | local_name!("iframe")
            | local_name!("img")
            | local_name!("input")
            | local_name!("isindex")
            | local_name!("li")
            | local_name!("link")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("marquee")
            | local_name!("menu")
            | local_name!("meta")
            | local_name!("nav")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("object")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("param")
            | local_name!("plaintext")
            | local_name!("pre")
            | local_name!("script")
            | local_name!("section")
            | local_name!("select")
            | local_name!("source")
            | local_name!("style")
            | local_name!("summary")
            | local_name!("table")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("template")
            | local_name!("textarea")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("title")
            | local_name!("tr")
            | local_name!("track")
            | local_name!("ul")
            | local_name!("wbr")
            | local_name!("xmp")
    )
}

fn heading(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
    )
}

fn is_space(c: char) -> bool {
    c.is_ascii_whitespace()
}

/// The tree builder: a [`Sink`] our tokenizer feeds.
struct Builder {
    state: RefCell<State>,
}

struct State {
    dom: Dom,
    mode: Mode,
    /// The mode a raw text element returns to.
    text_return: Mode,
    open: Vec<Open>,
    formatting: Vec<Formatting>,
    head: Option<NodeId>,
    form: Option<NodeId>,
    /// Drop a newline that starts the next text (after `<pre>`,
    /// `<listing>`, `<textarea>`).
    ignore_lf: bool,
    /// What the tokenizer reads after the last start tag, if not data.
    raw: Option<RawKind>,
    gave_up: bool,
}

impl Builder {
    fn new(dom: Dom) -> Builder {
        Builder {
            state: RefCell::new(State {
                dom,
                mode: Mode::Initial,
                text_return: Mode::InBody,
                open: Vec::with_capacity(64),
                formatting: Vec::new(),
                head: None,
                form: None,
                ignore_lf: false,
                raw: None,
                gave_up: false,
            }),
        }
    }

    /// The tree, unless the builder gave up.
    fn finish(self) -> Option<Dom> {
        let state = self.state.into_inner();
        (!state.gave_up).then_some(state.dom)
    }
}

impl Sink for Builder {
    fn text(&self, text: &str) {
        let mut s = self.state.borrow_mut();
        if s.gave_up {
            return;
        }
        let text = match std::mem::take(&mut s.ignore_lf) {
            true => text.strip_prefix('\n').unwrap_or(text),
            false => text,
        };
        if !text.is_empty() && s.process(Tok::Chars(text)).is_err() {
            s.gave_up = true;
        }
    }

    fn tag(&self, tag: Tag<'_>) -> TokenSinkResult<()> {
        let mut s = self.state.borrow_mut();
        if s.gave_up {
            // The rest of the page as one run of text: the cheapest way
            // for the tokenizer to its end (the tree is thrown away).
            return TokenSinkResult::Plaintext;
        }
        s.ignore_lf = false;
        if s.process(Tok::Tag(tag)).is_err() {
            s.gave_up = true;
            return TokenSinkResult::Plaintext;
        }
        match s.raw.take() {
            Some(kind) => TokenSinkResult::RawData(kind),
            None => TokenSinkResult::Continue,
        }
    }

    fn token(&self, token: Token) {
        let mut s = self.state.borrow_mut();
        if s.gave_up {
            return;
        }
        s.ignore_lf = false;
        let token = match token {
            Token::DoctypeToken(d) => return s.doctype(d),
            Token::CommentToken(text) => Tok::Comment(text),
            Token::EOFToken => Tok::Eof,
            // In an `<svg>` (foreign content) it is text: U+FFFD.
            Token::NullCharacterToken if s.current_is(&local_name!("svg")) => {
                Tok::Chars("\u{fffd}")
            }
            Token::NullCharacterToken => {
                // Ignored in the body and its cells; elsewhere left to
                // html5ever.
                if !matches!(s.mode, Mode::InBody | Mode::InCell | Mode::InCaption) {
                    s.gave_up = true;
                }
                return;
            }
            // Tags come to `tag`, text to `text`.
            Token::TagToken(_) | Token::CharacterTokens(_) | Token::ParseError(_) => return,
        };
        if s.process(token).is_err() {
            s.gave_up = true;
        }
    }

    fn in_foreign_content(&self) -> bool {
        // The one foreign element ever open here is an `<svg>` (an HTML
        // `svg` start tag always makes one): inside it, `<![CDATA[` starts
        // a CDATA section, not a bogus comment.
        self.state.borrow().current_is(&local_name!("svg"))
    }
}

impl State {
    fn process(&mut self, mut token: Tok<'_>) -> Result<(), GiveUp> {
        // Only an `<svg>` is ever foreign: an HTML `svg` start tag always
        // makes one.
        if self.current_is(&local_name!("svg")) {
            return self.in_svg(token);
        }
        loop {
            match self.step(self.mode, token)? {
                Flow::Done => return Ok(()),
                Flow::Reprocess(mode, again) => {
                    self.mode = mode;
                    token = again;
                }
            }
        }
    }

    /// A DOCTYPE: in the initial mode it sets the quirks mode, which
    /// html5ever's builder is asked for (its tables of legacy public ids).
    fn doctype(&mut self, d: Doctype) {
        if self.mode != Mode::Initial {
            return;
        }
        let plain = d.name.as_deref() == Some("html")
            && d.public_id.is_none()
            && d.system_id.is_none()
            && !d.force_quirks;
        let quirks = if plain {
            QuirksMode::NoQuirks
        } else {
            quirks_of(&d)
        };
        let tendril = |t: Option<StrTendril>| t.unwrap_or_default();
        (self.dom).append_doctype(tendril(d.name), tendril(d.public_id), tendril(d.system_id));
        self.dom.quirks_mode = quirks;
        self.mode = Mode::BeforeHtml;
    }

    fn step<'t>(&mut self, mode: Mode, token: Tok<'t>) -> Step<'t> {
        match mode {
            Mode::Initial => self.initial(token),
            Mode::BeforeHtml => self.before_html(token),
            Mode::BeforeHead => self.before_head(token),
            Mode::InHead => self.in_head(token),
            Mode::AfterHead => self.after_head(token),
            Mode::InBody => self.in_body(token),
            Mode::Text => self.text(token),
            Mode::InTable => self.in_table(token),
            Mode::InCaption => self.in_caption(token),
            Mode::InColumnGroup => self.in_column_group(token),
            Mode::InTableBody => self.in_table_body(token),
            Mode::InRow => self.in_row(token),
            Mode::InCell => self.in_cell(token),
            Mode::AfterBody => self.after_body(token),
            Mode::AfterAfterBody => self.after_after_body(token),
        }
    }

    // ---- the modes before the body ----

    fn initial<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let token = match token {
            Tok::Chars(text) => match split_space(text).1 {
                None => return done(),
                Some(rest) => Tok::Chars(rest),
            },
            Tok::Comment(text) => {
                self.comment_to(self.dom.root().id(), text);
                return done();
            }
            token => token,
        };
        self.dom.quirks_mode = QuirksMode::Quirks;
        Ok(Flow::Reprocess(Mode::BeforeHtml, token))
    }

    fn before_html<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let token = match token {
            Tok::Chars(text) => match split_space(text).1 {
                None => return done(),
                Some(rest) => Tok::Chars(rest),
            },
            Tok::Comment(text) => {
                self.comment_to(self.dom.root().id(), text);
                return done();
            }
            Tok::Tag(tag) if is_start(&tag, &local_name!("html")) => {
                self.create_root(tag.attrs);
                self.mode = Mode::BeforeHead;
                return done();
            }
            Tok::Tag(tag) if tag.kind == TagKind::EndTag && !ends_before_body(&tag) => {
                return done();
            }
            token => token,
        };
        self.create_root(Attrs::NONE);
        Ok(Flow::Reprocess(Mode::BeforeHead, token))
    }

    fn before_head<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let token = match token {
            Tok::Chars(text) => match split_space(text).1 {
                None => return done(),
                Some(rest) => Tok::Chars(rest),
            },
            Tok::Comment(text) => {
                self.comment(text);
                return done();
            }
            Tok::Tag(tag) if is_start(&tag, &local_name!("html")) => {
                return self.in_body(Tok::Tag(tag));
            }
            Tok::Tag(tag) if is_start(&tag, &local_name!("head")) => {
                self.head = Some(self.insert(tag.name, tag.attrs));
                self.mode = Mode::InHead;
                return done();
            }
            Tok::Tag(tag) if tag.kind == TagKind::EndTag && !ends_before_body(&tag) => {
                return done();
            }
            token => token,
        };
        self.head = Some(self.insert(local_name!("head"), Vec::new()));
        Ok(Flow::Reprocess(Mode::InHead, token))
    }

    fn in_head<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let token = match token {
            Tok::Chars(text) => match self.space_here(text) {
                None => return done(),
                Some(rest) => Tok::Chars(rest),
            },
            Tok::Comment(text) => {
                self.comment(text);
                return done();
            }
            Tok::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("html")) => return self.in_body(Tok::Tag(tag)),
                (
                    TagKind::StartTag,
                    &local_name!("base")
                    | &local_name!("basefont")
                    | &local_name!("bgsound")
                    | &local_name!("link")
                    | &local_name!("meta"),
                ) => {
                    self.insert_void(tag);
                    return done();
                }
                (TagKind::StartTag, &local_name!("title")) => {
                    return self.raw_text(tag, RawKind::Rcdata);
                }
                (
                    TagKind::StartTag,
                    &local_name!("noframes") | &local_name!("style") | &local_name!("noscript"),
                ) => return self.raw_text(tag, RawKind::Rawtext),
                (TagKind::StartTag, &local_name!("script")) => {
                    return self.raw_text(tag, RawKind::ScriptData);
                }
                (TagKind::EndTag, &local_name!("head")) => {
                    self.open.pop();
                    self.mode = Mode::AfterHead;
                    return done();
                }
                (_, &local_name!("template")) => return Err(GiveUp),
                (TagKind::StartTag, &local_name!("head")) => return done(),
                (TagKind::EndTag, _) if !ends_before_body(&tag) => return done(),
                _ => Tok::Tag(tag),
            },
            token => token,
        };
        self.open.pop();
        Ok(Flow::Reprocess(Mode::AfterHead, token))
    }

    fn after_head<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let token = match token {
            Tok::Chars(text) => match self.space_here(text) {
                None => return done(),
                Some(rest) => Tok::Chars(rest),
            },
            Tok::Comment(text) => {
                self.comment(text);
                return done();
            }
            Tok::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("html")) => return self.in_body(Tok::Tag(tag)),
                (TagKind::StartTag, &local_name!("body")) => {
                    self.insert(tag.name, tag.attrs);
                    self.mode = Mode::InBody;
                    return done();
                }
                (TagKind::StartTag, &local_name!("frameset")) => return Err(GiveUp),
                (
                    TagKind::StartTag,
                    &local_name!("base")
                    | &local_name!("basefont")
                    | &local_name!("bgsound")
                    | &local_name!("link")
                    | &local_name!("meta")
                    | &local_name!("noframes")
                    | &local_name!("script")
                    | &local_name!("style")
                    | &local_name!("title"),
                ) => {
                    // Into the head, which is open again for the while.
                    let head = self.head.ok_or(GiveUp)?;
                    self.open.push(Open {
                        id: head,
                        name: local_name!("head"),
                    });
                    let flow = self.in_head(Tok::Tag(tag))?;
                    self.remove_from_open(head);
                    return Ok(flow);
                }
                (_, &local_name!("template")) => return Err(GiveUp),
                (TagKind::StartTag, &local_name!("head")) => return done(),
                (
                    TagKind::EndTag,
                    &local_name!("body") | &local_name!("html") | &local_name!("br"),
                ) => Tok::Tag(tag),
                (TagKind::EndTag, _) => return done(),
                _ => Tok::Tag(tag),
            },
            token => token,
        };
        self.insert(local_name!("body"), Attrs::NONE);
        Ok(Flow::Reprocess(Mode::InBody, token))
    }

    // ---- the body ----

    fn in_body<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        match token {
            Tok::Chars(text) => {
                self.reconstruct_formatting();
                self.text_here(text);
                done()
            }
            Tok::Comment(text) => {
                self.comment(text);
                done()
            }
            Tok::Eof => done(),
            Tok::Tag(tag) if tag.kind == TagKind::StartTag => self.start_in_body(tag),
            Tok::Tag(tag) => self.end_in_body(tag),
        }
    }

    fn start_in_body<'t>(&mut self, tag: Tag<'t>) -> Step<'t> {
        match tag.name {
            local_name!("html") => {
                // Its attributes go onto the open element, where missing.
                let html = self.open.first().ok_or(GiveUp)?.id;
                self.dom.add_missing_attributes(html, tag.attrs);
                done()
            }
            local_name!("body") => {
                if let Some(body) = self.open.get(1)
                    && body.name == local_name!("body")
                {
                    self.dom.add_missing_attributes(body.id, tag.attrs);
                }
                done()
            }
            local_name!("base")
            | local_name!("basefont")
            | local_name!("bgsound")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("noframes")
            | local_name!("script")
            | local_name!("style")
            | local_name!("title") => self.in_head(Tok::Tag(tag)),
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("main")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("p")
            | local_name!("search")
            | local_name!("section")
            | local_name!("summary")
            | local_name!("ul")
            | local_name!("menu") => {
                self.close_p_in_button_scope();
                self.insert(tag.name, tag.attrs);
                done()
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                self.close_p_in_button_scope();
                if self.open.last().is_some_and(|e| heading(&e.name)) {
                    self.open.pop();
                }
                self.insert(tag.name, tag.attrs);
                done()
            }
            local_name!("pre") | local_name!("listing") => {
                self.close_p_in_button_scope();
                self.insert(tag.name, tag.attrs);
                self.ignore_lf = true;
                done()
            }
            local_name!("form") => {
                if self.form.is_none() {
                    self.close_p_in_button_scope();
                    self.form = Some(self.insert(tag.name, tag.attrs));
                }
                done()
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                self.list_item(tag);
                done()
            }
            local_name!("button") => {
                if self.in_scope(Scope::Default, &local_name!("button")) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&local_name!("button"));
                }
                self.reconstruct_formatting();
                self.insert(tag.name, tag.attrs);
                done()
            }
            local_name!("a") => {
                let open_a = self
                    .formatting_to_marker()
                    .any(|(_, _, name)| *name == local_name!("a"));
                if open_a {
                    // The adoption agency's misnested `<a>`.
                    return Err(GiveUp);
                }
                self.reconstruct_formatting();
                self.insert_formatting(tag);
                done()
            }
            local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => {
                self.reconstruct_formatting();
                self.insert_formatting(tag);
                done()
            }
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                self.reconstruct_formatting();
                self.insert(tag.name, tag.attrs);
                self.formatting.push(Formatting::Marker);
                done()
            }
            local_name!("table") => {
                if self.dom.quirks_mode != QuirksMode::Quirks {
                    self.close_p_in_button_scope();
                }
                self.insert(tag.name, tag.attrs);
                self.mode = Mode::InTable;
                done()
            }
            local_name!("area")
            | local_name!("br")
            | local_name!("embed")
            | local_name!("img")
            | local_name!("keygen")
            | local_name!("wbr") => {
                self.reconstruct_formatting();
                self.insert_void(tag);
                done()
            }
            local_name!("input") => {
                if self.in_scope(Scope::Default, &local_name!("select")) {
                    self.pop_until_named(&local_name!("select"));
                }
                self.reconstruct_formatting();
                self.insert_void(tag);
                done()
            }
            local_name!("param") | local_name!("source") | local_name!("track") => {
                self.insert_void(tag);
                done()
            }
            local_name!("hr") => {
                self.close_p_in_button_scope();
                if self.in_scope(Scope::Default, &local_name!("select")) {
                    self.generate_implied_end(None);
                }
                self.insert_void(tag);
                done()
            }
            local_name!("textarea") => {
                self.ignore_lf = true;
                self.raw_text(tag, RawKind::Rcdata)
            }
            local_name!("xmp") => {
                self.close_p_in_button_scope();
                self.reconstruct_formatting();
                self.raw_text(tag, RawKind::Rawtext)
            }
            local_name!("iframe") | local_name!("noembed") | local_name!("noscript") => {
                self.raw_text(tag, RawKind::Rawtext)
            }
            local_name!("select") => {
                if self.in_scope(Scope::Default, &local_name!("select")) {
                    self.pop_until_named(&local_name!("select"));
                } else {
                    self.reconstruct_formatting();
                    self.insert(tag.name, tag.attrs);
                }
                done()
            }
            local_name!("option") | local_name!("optgroup") => {
                if self.in_scope(Scope::Default, &local_name!("select")) {
                    let except =
                        (tag.name == local_name!("option")).then_some(local_name!("optgroup"));
                    self.generate_implied_end(except.as_ref());
                } else if self.current_is(&local_name!("option")) {
                    self.open.pop();
                }
                self.reconstruct_formatting();
                self.insert(tag.name, tag.attrs);
                done()
            }
            local_name!("caption")
            | local_name!("col")
            | local_name!("colgroup")
            | local_name!("frame")
            | local_name!("head")
            | local_name!("tbody")
            | local_name!("td")
            | local_name!("tfoot")
            | local_name!("th")
            | local_name!("thead")
            | local_name!("tr") => done(),
            // Foreign content, templates, framesets, ruby, and the rest
            // html5ever treats apart.
            local_name!("svg") => {
                self.reconstruct_formatting();
                self.svg(tag);
                done()
            }
            local_name!("math")
            | local_name!("template")
            | local_name!("frameset")
            | local_name!("plaintext")
            | local_name!("nobr")
            | local_name!("image")
            | local_name!("rb")
            | local_name!("rtc")
            | local_name!("rp")
            | local_name!("rt") => Err(GiveUp),
            _ => {
                self.reconstruct_formatting();
                self.insert(tag.name, tag.attrs);
                done()
            }
        }
    }

    /// `<li>`, `<dd>`, `<dt>`: close the open item of their kind first.
    fn list_item(&mut self, tag: Tag<'_>) {
        let is_li = tag.name == local_name!("li");
        let mut to_close = None;
        for e in self.open.iter().rev() {
            let closes = if is_li {
                e.name == local_name!("li")
            } else {
                matches!(e.name, local_name!("dd") | local_name!("dt"))
            };
            if closes {
                to_close = Some(e.name.clone());
                break;
            }
            if special(&e.name)
                && !matches!(
                    e.name,
                    local_name!("address") | local_name!("div") | local_name!("p")
                )
            {
                break;
            }
        }
        if let Some(name) = to_close {
            self.generate_implied_end(Some(&name));
            self.pop_until_named(&name);
        }
        self.close_p_in_button_scope();
        self.insert(tag.name, tag.attrs);
    }

    fn end_in_body<'t>(&mut self, tag: Tag<'t>) -> Step<'t> {
        match tag.name {
            local_name!("body") => {
                if self.in_scope(Scope::Default, &local_name!("body")) {
                    self.mode = Mode::AfterBody;
                }
                done()
            }
            local_name!("html") => {
                if self.in_scope(Scope::Default, &local_name!("body")) {
                    Ok(Flow::Reprocess(Mode::AfterBody, Tok::Tag(tag)))
                } else {
                    done()
                }
            }
            local_name!("address")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("blockquote")
            | local_name!("button")
            | local_name!("center")
            | local_name!("details")
            | local_name!("dialog")
            | local_name!("dir")
            | local_name!("div")
            | local_name!("dl")
            | local_name!("fieldset")
            | local_name!("figcaption")
            | local_name!("figure")
            | local_name!("footer")
            | local_name!("header")
            | local_name!("hgroup")
            | local_name!("listing")
            | local_name!("main")
            | local_name!("menu")
            | local_name!("nav")
            | local_name!("ol")
            | local_name!("pre")
            | local_name!("search")
            | local_name!("section")
            | local_name!("select")
            | local_name!("summary")
            | local_name!("ul") => {
                if self.in_scope(Scope::Default, &tag.name) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&tag.name);
                }
                done()
            }
            local_name!("form") => {
                let Some(form) = self.form.take() else {
                    return done();
                };
                if self.in_scope_by(Scope::Default, |e| e.id == form) {
                    self.generate_implied_end(None);
                    self.remove_from_open(form);
                }
                done()
            }
            local_name!("p") => {
                if !self.in_scope(Scope::Button, &local_name!("p")) {
                    self.insert(local_name!("p"), Attrs::NONE);
                }
                self.close_p();
                done()
            }
            local_name!("li") | local_name!("dd") | local_name!("dt") => {
                let scope = if tag.name == local_name!("li") {
                    Scope::ListItem
                } else {
                    Scope::Default
                };
                if self.in_scope(scope, &tag.name) {
                    self.generate_implied_end(Some(&tag.name));
                    self.pop_until_named(&tag.name);
                }
                done()
            }
            local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => {
                if self.in_scope_by(Scope::Default, |e| heading(&e.name)) {
                    self.generate_implied_end(None);
                    while let Some(e) = self.open.pop() {
                        if heading(&e.name) {
                            break;
                        }
                    }
                }
                done()
            }
            local_name!("a")
            | local_name!("b")
            | local_name!("big")
            | local_name!("code")
            | local_name!("em")
            | local_name!("font")
            | local_name!("i")
            | local_name!("nobr")
            | local_name!("s")
            | local_name!("small")
            | local_name!("strike")
            | local_name!("strong")
            | local_name!("tt")
            | local_name!("u") => self.adoption_agency(&tag.name),
            local_name!("applet") | local_name!("marquee") | local_name!("object") => {
                if self.in_scope(Scope::Default, &tag.name) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&tag.name);
                    self.clear_formatting_to_marker();
                }
                done()
            }
            local_name!("br") => {
                // `</br>` is `<br>`, without attributes.
                self.reconstruct_formatting();
                self.element_in(self.here(), local_name!("br"), Attrs::NONE);
                done()
            }
            local_name!("template") => Err(GiveUp),
            _ => {
                self.any_other_end_tag(&tag.name);
                done()
            }
        }
    }

    /// The adoption agency algorithm where nothing special is open inside
    /// the formatting element (its steps 1-10); the rest gives up.
    fn adoption_agency<'t>(&mut self, subject: &LocalName) -> Step<'t> {
        if let Some(current) = self.open.last()
            && current.name == *subject
            && !self.formatting_has(current.id)
        {
            self.open.pop();
            return done();
        }
        let found = self
            .formatting_to_marker()
            .find(|(_, _, name)| *name == subject)
            .map(|(i, _, _)| i);
        let Some(index) = found else {
            self.any_other_end_tag(subject);
            return done();
        };
        let Formatting::Element(node, _) = self.formatting[index] else {
            unreachable!("formatting_to_marker yields elements");
        };
        let Some(at) = self.open.iter().rposition(|e| e.id == node) else {
            self.formatting.remove(index);
            return done();
        };
        if !self.in_scope_by(Scope::Default, |e| e.id == node) {
            return done();
        }
        if self.open[at..].iter().any(|e| special(&e.name)) {
            return Err(GiveUp);
        }
        self.open.truncate(at);
        self.formatting.remove(index);
        done()
    }

    /// "Any other end tag" in the body.
    fn any_other_end_tag(&mut self, name: &LocalName) {
        let mut found = None;
        for (i, e) in self.open.iter().enumerate().rev() {
            if e.name == *name {
                found = Some(i);
                break;
            }
            if special(&e.name) {
                return;
            }
        }
        if let Some(i) = found {
            self.generate_implied_end(Some(name));
            self.open.truncate(i);
        }
    }

    fn text<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        match token {
            Tok::Chars(text) => {
                self.text_here(text);
                done()
            }
            Tok::Eof => {
                self.open.pop();
                Ok(Flow::Reprocess(self.text_return, Tok::Eof))
            }
            Tok::Tag(tag) if tag.kind == TagKind::EndTag => {
                self.open.pop();
                self.mode = self.text_return;
                done()
            }
            // The tokenizer gives nothing else in raw text.
            _ => Err(GiveUp),
        }
    }

    /// An `<svg>` image: inserted with its attributes' names adjusted
    /// as html5ever adjusts them, and open unless self-closed. Its body
    /// is gone by the time the markup is parsed ([`crate::prestrip`]).
    fn svg(&mut self, tag: Tag<'_>) {
        let attrs = tag.attrs.qualified().map(svg_attribute);
        let here = self.here();
        let node = (self.dom).append_element(here, ns!(svg), local_name!("svg"), attrs);
        if !tag.self_closing {
            self.open.push(Open {
                id: node,
                name: local_name!("svg"),
            });
        }
    }

    /// Foreign content, while an `<svg>` is the current node: text and
    /// comments go in it, its end tag closes it; anything else (an image
    /// prestrip left whole) is html5ever's.
    fn in_svg(&mut self, token: Tok<'_>) -> Result<(), GiveUp> {
        match token {
            Tok::Chars(text) => self.text_here(text),
            Tok::Comment(text) => self.comment(text),
            Tok::Tag(tag) if tag.kind == TagKind::EndTag && tag.name == local_name!("svg") => {
                self.open.pop();
            }
            _ => return Err(GiveUp),
        }
        Ok(())
    }

    // ---- tables ----

    fn in_table<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        match token {
            Tok::Chars(text) => {
                let table_outer = self.open.last().is_some_and(|e| {
                    matches!(
                        e.name,
                        local_name!("table")
                            | local_name!("tbody")
                            | local_name!("tfoot")
                            | local_name!("thead")
                            | local_name!("tr")
                    )
                });
                // White space stays where it is; other text is fostered
                // out of the table.
                if table_outer && text.chars().all(is_space) {
                    self.text_here(text);
                    done()
                } else {
                    Err(GiveUp)
                }
            }
            Tok::Comment(text) => {
                self.comment(text);
                done()
            }
            Tok::Eof => done(),
            Tok::Tag(tag) => self.tag_in_table(tag),
        }
    }

    fn tag_in_table<'t>(&mut self, tag: Tag<'t>) -> Step<'t> {
        let start = tag.kind == TagKind::StartTag;
        match (start, &tag.name) {
            (true, &local_name!("caption")) => {
                self.clear_to_context(Scope::Table);
                self.formatting.push(Formatting::Marker);
                self.insert(tag.name, tag.attrs);
                self.mode = Mode::InCaption;
                done()
            }
            (true, &local_name!("colgroup")) => {
                self.clear_to_context(Scope::Table);
                self.insert(tag.name, tag.attrs);
                self.mode = Mode::InColumnGroup;
                done()
            }
            (true, &local_name!("col")) => {
                self.clear_to_context(Scope::Table);
                self.insert(local_name!("colgroup"), Attrs::NONE);
                Ok(Flow::Reprocess(Mode::InColumnGroup, Tok::Tag(tag)))
            }
            (true, &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead")) => {
                self.clear_to_context(Scope::Table);
                self.insert(tag.name, tag.attrs);
                self.mode = Mode::InTableBody;
                done()
            }
            (true, &local_name!("td") | &local_name!("th") | &local_name!("tr")) => {
                self.clear_to_context(Scope::Table);
                self.insert(local_name!("tbody"), Attrs::NONE);
                Ok(Flow::Reprocess(Mode::InTableBody, Tok::Tag(tag)))
            }
            (true, &local_name!("table")) => {
                if self.in_scope(Scope::Table, &local_name!("table")) {
                    self.pop_until_named(&local_name!("table"));
                    let mode = self.reset_mode()?;
                    Ok(Flow::Reprocess(mode, Tok::Tag(tag)))
                } else {
                    done()
                }
            }
            (false, &local_name!("table")) => {
                if self.in_scope(Scope::Table, &local_name!("table")) {
                    self.pop_until_named(&local_name!("table"));
                    self.mode = self.reset_mode()?;
                }
                done()
            }
            (
                false,
                &local_name!("body")
                | &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("html")
                | &local_name!("tbody")
                | &local_name!("td")
                | &local_name!("tfoot")
                | &local_name!("th")
                | &local_name!("thead")
                | &local_name!("tr"),
            ) => done(),
            (true, &local_name!("style") | &local_name!("script")) => self.in_head(Tok::Tag(tag)),
            (true, &local_name!("input")) if hidden_input(&tag) => {
                self.insert_void(tag);
                done()
            }
            (true, &local_name!("form")) => {
                if self.form.is_none() {
                    let form = self.insert(tag.name, tag.attrs);
                    self.open.pop();
                    self.form = Some(form);
                }
                done()
            }
            // Everything else is fostered out of the table.
            _ => Err(GiveUp),
        }
    }

    fn in_caption<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let Tok::Tag(tag) = token else {
            return self.in_body(token);
        };
        let start = tag.kind == TagKind::StartTag;
        match (start, &tag.name) {
            (
                true,
                &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("tbody")
                | &local_name!("td")
                | &local_name!("tfoot")
                | &local_name!("th")
                | &local_name!("thead")
                | &local_name!("tr"),
            )
            | (false, &local_name!("table") | &local_name!("caption")) => {
                if !self.in_scope(Scope::Table, &local_name!("caption")) {
                    return done();
                }
                self.generate_implied_end(None);
                self.pop_until_named(&local_name!("caption"));
                self.clear_formatting_to_marker();
                if !start && tag.name == local_name!("caption") {
                    self.mode = Mode::InTable;
                    done()
                } else {
                    Ok(Flow::Reprocess(Mode::InTable, Tok::Tag(tag)))
                }
            }
            (
                false,
                &local_name!("body")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("html")
                | &local_name!("tbody")
                | &local_name!("td")
                | &local_name!("tfoot")
                | &local_name!("th")
                | &local_name!("thead")
                | &local_name!("tr"),
            ) => done(),
            _ => self.in_body(Tok::Tag(tag)),
        }
    }

    fn in_column_group<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let token = match token {
            Tok::Chars(text) => match self.space_here(text) {
                None => return done(),
                Some(rest) => Tok::Chars(rest),
            },
            Tok::Comment(text) => {
                self.comment(text);
                return done();
            }
            Tok::Eof => return done(),
            Tok::Tag(tag) => match (tag.kind, &tag.name) {
                (TagKind::StartTag, &local_name!("html")) => return self.in_body(Tok::Tag(tag)),
                (TagKind::StartTag, &local_name!("col")) => {
                    self.insert_void(tag);
                    return done();
                }
                (TagKind::EndTag, &local_name!("colgroup")) => {
                    if self.current_is(&local_name!("colgroup")) {
                        self.open.pop();
                        self.mode = Mode::InTable;
                    }
                    return done();
                }
                (TagKind::EndTag, &local_name!("col")) => return done(),
                (_, &local_name!("template")) => return Err(GiveUp),
                _ => Tok::Tag(tag),
            },
        };
        if self.current_is(&local_name!("colgroup")) {
            self.open.pop();
            Ok(Flow::Reprocess(Mode::InTable, token))
        } else {
            done()
        }
    }

    fn in_table_body<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let Tok::Tag(tag) = token else {
            return self.in_table(token);
        };
        let start = tag.kind == TagKind::StartTag;
        match (start, &tag.name) {
            (true, &local_name!("tr")) => {
                self.clear_to_table_body();
                self.insert(tag.name, tag.attrs);
                self.mode = Mode::InRow;
                done()
            }
            (true, &local_name!("th") | &local_name!("td")) => {
                self.clear_to_table_body();
                self.insert(local_name!("tr"), Attrs::NONE);
                Ok(Flow::Reprocess(Mode::InRow, Tok::Tag(tag)))
            }
            (false, &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead")) => {
                if self.in_scope(Scope::Table, &tag.name) {
                    self.clear_to_table_body();
                    self.open.pop();
                    self.mode = Mode::InTable;
                }
                done()
            }
            (
                true,
                &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("tbody")
                | &local_name!("tfoot")
                | &local_name!("thead"),
            )
            | (false, &local_name!("table")) => {
                let open_body = self.in_scope_by(Scope::Table, |e| {
                    matches!(
                        e.name,
                        local_name!("table") | local_name!("tbody") | local_name!("tfoot")
                    )
                });
                if !open_body {
                    return done();
                }
                self.clear_to_table_body();
                self.open.pop();
                Ok(Flow::Reprocess(Mode::InTable, Tok::Tag(tag)))
            }
            (
                false,
                &local_name!("body")
                | &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("html")
                | &local_name!("td")
                | &local_name!("th")
                | &local_name!("tr"),
            ) => done(),
            _ => self.in_table(Tok::Tag(tag)),
        }
    }

    fn in_row<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let Tok::Tag(tag) = token else {
            return self.in_table(token);
        };
        let start = tag.kind == TagKind::StartTag;
        match (start, &tag.name) {
            (true, &local_name!("th") | &local_name!("td")) => {
                self.clear_to_row();
                self.insert(tag.name, tag.attrs);
                self.mode = Mode::InCell;
                self.formatting.push(Formatting::Marker);
                done()
            }
            (false, &local_name!("tr")) => {
                if self.in_scope(Scope::Table, &local_name!("tr")) {
                    self.clear_to_row();
                    self.open.pop();
                    self.mode = Mode::InTableBody;
                }
                done()
            }
            (
                true,
                &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("tbody")
                | &local_name!("tfoot")
                | &local_name!("thead")
                | &local_name!("tr"),
            )
            | (false, &local_name!("table")) => {
                if !self.in_scope(Scope::Table, &local_name!("tr")) {
                    return done();
                }
                self.clear_to_row();
                self.open.pop();
                Ok(Flow::Reprocess(Mode::InTableBody, Tok::Tag(tag)))
            }
            (false, &local_name!("tbody") | &local_name!("tfoot") | &local_name!("thead")) => {
                if !self.in_scope(Scope::Table, &tag.name)
                    || !self.in_scope(Scope::Table, &local_name!("tr"))
                {
                    return done();
                }
                self.clear_to_row();
                self.open.pop();
                Ok(Flow::Reprocess(Mode::InTableBody, Tok::Tag(tag)))
            }
            (
                false,
                &local_name!("body")
                | &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("html")
                | &local_name!("td")
                | &local_name!("th"),
            ) => done(),
            _ => self.in_table(Tok::Tag(tag)),
        }
    }

    fn in_cell<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        let Tok::Tag(tag) = token else {
            return self.in_body(token);
        };
        let start = tag.kind == TagKind::StartTag;
        match (start, &tag.name) {
            (false, &local_name!("td") | &local_name!("th")) => {
                if self.in_scope(Scope::Table, &tag.name) {
                    self.generate_implied_end(None);
                    self.pop_until_named(&tag.name);
                    self.clear_formatting_to_marker();
                    self.mode = Mode::InRow;
                }
                done()
            }
            (
                true,
                &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("tbody")
                | &local_name!("td")
                | &local_name!("tfoot")
                | &local_name!("th")
                | &local_name!("thead")
                | &local_name!("tr"),
            ) => {
                let cell = self.in_scope_by(Scope::Table, |e| {
                    matches!(e.name, local_name!("td") | local_name!("th"))
                });
                if !cell {
                    return done();
                }
                self.close_cell();
                Ok(Flow::Reprocess(Mode::InRow, Tok::Tag(tag)))
            }
            (
                false,
                &local_name!("body")
                | &local_name!("caption")
                | &local_name!("col")
                | &local_name!("colgroup")
                | &local_name!("html"),
            ) => done(),
            (
                false,
                &local_name!("table")
                | &local_name!("tbody")
                | &local_name!("tfoot")
                | &local_name!("thead")
                | &local_name!("tr"),
            ) => {
                if !self.in_scope(Scope::Table, &tag.name) {
                    return done();
                }
                self.close_cell();
                Ok(Flow::Reprocess(Mode::InRow, Tok::Tag(tag)))
            }
            _ => self.in_body(Tok::Tag(tag)),
        }
    }

    fn close_cell(&mut self) {
        self.generate_implied_end(None);
        while let Some(e) = self.open.pop() {
            if matches!(e.name, local_name!("td") | local_name!("th")) {
                break;
            }
        }
        self.clear_formatting_to_marker();
    }

    /// Pops until the current node bounds `scope` (the "table context").
    fn clear_to_context(&mut self, scope: Scope) {
        while self.open.last().is_some_and(|e| !scope.bounded_by(&e.name)) {
            self.open.pop();
        }
    }

    fn clear_to_table_body(&mut self) {
        while self.open.last().is_some_and(|e| {
            !matches!(
                e.name,
                local_name!("tbody")
                    | local_name!("tfoot")
                    | local_name!("thead")
                    | local_name!("template")
                    | local_name!("html")
            )
        }) {
            self.open.pop();
        }
    }

    fn clear_to_row(&mut self) {
        while self.open.last().is_some_and(|e| {
            !matches!(
                e.name,
                local_name!("tr") | local_name!("template") | local_name!("html")
            )
        }) {
            self.open.pop();
        }
    }

    /// "Reset the insertion mode appropriately".
    fn reset_mode(&self) -> Result<Mode, GiveUp> {
        for (i, e) in self.open.iter().enumerate().rev() {
            let last = i == 0;
            let mode = match e.name {
                local_name!("td") | local_name!("th") if !last => Mode::InCell,
                local_name!("tr") => Mode::InRow,
                local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => {
                    Mode::InTableBody
                }
                local_name!("caption") => Mode::InCaption,
                local_name!("colgroup") => Mode::InColumnGroup,
                local_name!("table") => Mode::InTable,
                local_name!("template") | local_name!("frameset") => return Err(GiveUp),
                local_name!("head") if !last => Mode::InHead,
                local_name!("body") => Mode::InBody,
                local_name!("html") if self.head.is_none() => Mode::BeforeHead,
                local_name!("html") => Mode::AfterHead,
                _ => continue,
            };
            return Ok(mode);
        }
        Ok(Mode::InBody)
    }

    // ---- after the body ----

    fn after_body<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        match token {
            Tok::Chars(text) => {
                let (space, rest) = split_space(text);
                if let Some(space) = space {
                    self.in_body(Tok::Chars(space))?;
                }
                match rest {
                    None => done(),
                    Some(rest) => Ok(Flow::Reprocess(Mode::InBody, Tok::Chars(rest))),
                }
            }
            Tok::Comment(text) => {
                let html = self.open.first().ok_or(GiveUp)?.id;
                self.comment_to(html, text);
                done()
            }
            Tok::Tag(tag) if is_start(&tag, &local_name!("html")) => self.in_body(Tok::Tag(tag)),
            Tok::Tag(tag) if tag.kind == TagKind::EndTag && tag.name == local_name!("html") => {
                self.mode = Mode::AfterAfterBody;
                done()
            }
            Tok::Eof => done(),
            token => Ok(Flow::Reprocess(Mode::InBody, token)),
        }
    }

    fn after_after_body<'t>(&mut self, token: Tok<'t>) -> Step<'t> {
        match token {
            // Text as after the body.
            Tok::Chars(_) => self.after_body(token),
            Tok::Comment(text) => {
                self.comment_to(self.dom.root().id(), text);
                done()
            }
            Tok::Tag(tag) if is_start(&tag, &local_name!("html")) => self.in_body(Tok::Tag(tag)),
            Tok::Eof => done(),
            token => Ok(Flow::Reprocess(Mode::InBody, token)),
        }
    }

    // ---- the stack of open elements ----

    fn current_is(&self, name: &LocalName) -> bool {
        self.open.last().is_some_and(|e| e.name == *name)
    }

    fn in_scope(&self, scope: Scope, name: &LocalName) -> bool {
        self.in_scope_by(scope, |e| e.name == *name)
    }

    fn in_scope_by(&self, scope: Scope, target: impl Fn(&Open) -> bool) -> bool {
        for e in self.open.iter().rev() {
            if target(e) {
                return true;
            }
            if scope.bounded_by(&e.name) {
                return false;
            }
        }
        false
    }

    /// Pops elements whose end tags are implied, but not `except`.
    fn generate_implied_end(&mut self, except: Option<&LocalName>) {
        while self
            .open
            .last()
            .is_some_and(|e| implied_end(&e.name) && Some(&e.name) != except)
        {
            self.open.pop();
        }
    }

    fn pop_until_named(&mut self, name: &LocalName) {
        while let Some(e) = self.open.pop() {
            if e.name == *name {
                break;
            }
        }
    }

    fn remove_from_open(&mut self, node: NodeId) {
        if let Some(at) = self.open.iter().rposition(|e| e.id == node) {
            self.open.remove(at);
        }
    }

    fn close_p(&mut self) {
        self.generate_implied_end(Some(&local_name!("p")));
        self.pop_until_named(&local_name!("p"));
    }

    fn close_p_in_button_scope(&mut self) {
        if self.in_scope(Scope::Button, &local_name!("p")) {
            self.close_p();
        }
    }

    // ---- the list of active formatting elements ----

    /// The entries after the last marker, last first, with their places.
    fn formatting_to_marker(&self) -> impl Iterator<Item = (usize, NodeId, &LocalName)> {
        self.formatting
            .iter()
            .enumerate()
            .rev()
            .map_while(|(i, f)| match f {
                Formatting::Marker => None,
                Formatting::Element(node, name) => Some((i, *node, name)),
            })
    }

    /// Element `node`, with the attributes it was made with.
    fn element(&self, node: NodeId) -> Option<Element<'_>> {
        match self.dom.get(node)?.value() {
            Node::Element(el) => Some(el),
            _ => None,
        }
    }

    fn formatting_has(&self, node: NodeId) -> bool {
        self.formatting
            .iter()
            .any(|f| matches!(f, Formatting::Element(id, _) if *id == node))
    }

    fn is_marker_or_open(&self, entry: &Formatting) -> bool {
        match entry {
            Formatting::Marker => true,
            Formatting::Element(node, _) => self.open.iter().rev().any(|e| e.id == *node),
        }
    }

    /// Inserts a formatting element; three alike after the last marker
    /// are the most the list keeps ("Noah's Ark").
    fn insert_formatting(&mut self, tag: Tag<'_>) {
        let mut first = None;
        let mut alike = 0;
        for (i, node, name) in self.formatting_to_marker() {
            if *name == tag.name
                && self
                    .element(node)
                    .is_some_and(|el| same_attributes(tag.attrs, el))
            {
                first = Some(i);
                alike += 1;
            }
        }
        if alike >= 3
            && let Some(i) = first
        {
            self.formatting.remove(i);
        }
        let node = self.insert(tag.name.clone(), tag.attrs);
        self.formatting.push(Formatting::Element(node, tag.name));
    }

    /// "Reconstruct the active formatting elements": formatting elements
    /// closed by a block they were open around are opened again in it.
    fn reconstruct_formatting(&mut self) {
        let Some(last) = self.formatting.last() else {
            return;
        };
        if self.is_marker_or_open(last) {
            return;
        }
        let mut index = self.formatting.len() - 1;
        while index > 0 {
            index -= 1;
            if self.is_marker_or_open(&self.formatting[index]) {
                index += 1;
                break;
            }
        }
        loop {
            let Formatting::Element(old, name) = &self.formatting[index] else {
                unreachable!("no marker after the first entry reconstructed");
            };
            let name = name.clone();
            // Copied: the tree that holds them grows by the copy.
            let attrs: Vec<(QualName, String)> = (self.element(*old).into_iter())
                .flat_map(|el| el.qual_attrs())
                .map(|(n, v)| (n.clone(), v.to_owned()))
                .collect();
            let node = self.insert(name.clone(), attrs.iter().map(|(n, v)| (n.clone(), &**v)));
            self.formatting[index] = Formatting::Element(node, name);
            if index == self.formatting.len() - 1 {
                break;
            }
            index += 1;
        }
    }

    fn clear_formatting_to_marker(&mut self) {
        while let Some(entry) = self.formatting.pop() {
            if matches!(entry, Formatting::Marker) {
                break;
            }
        }
    }

    // ---- inserting nodes ----

    /// The current node, where everything is inserted (no foster
    /// parenting: that gives up).
    fn here(&self) -> NodeId {
        self.open
            .last()
            .map_or_else(|| self.dom.root().id(), |e| e.id)
    }

    fn create_root<'v>(&mut self, attrs: impl IntoIterator<Item = (QualName, &'v str)>) {
        let root = self.dom.root().id();
        let node = self.element_in(root, local_name!("html"), attrs);
        self.open.push(Open {
            id: node,
            name: local_name!("html"),
        });
    }

    /// An element inserted at the current node and opened.
    fn insert<'v>(
        &mut self,
        name: LocalName,
        attrs: impl IntoIterator<Item = (QualName, &'v str)>,
    ) -> NodeId {
        let node = self.element_in(self.here(), name.clone(), attrs);
        self.open.push(Open { id: node, name });
        node
    }

    /// A void element: inserted, never opened.
    fn insert_void(&mut self, tag: Tag<'_>) {
        self.element_in(self.here(), tag.name, tag.attrs);
    }

    fn element_in<'v>(
        &mut self,
        parent: NodeId,
        name: LocalName,
        attrs: impl IntoIterator<Item = (QualName, &'v str)>,
    ) -> NodeId {
        self.dom.append_element(parent, ns!(html), name, attrs)
    }

    /// A raw text element (RCDATA, RAWTEXT, script data): opened, and the
    /// tokenizer told to read its body as text.
    fn raw_text<'t>(&mut self, tag: Tag<'t>, kind: RawKind) -> Step<'t> {
        self.insert(tag.name, tag.attrs);
        self.text_return = self.mode;
        self.mode = Mode::Text;
        self.raw = Some(kind);
        done()
    }

    /// Text at the current node, joined to a text node before it as
    /// scraper's sink joins them.
    fn text_here(&mut self, text: &str) {
        let here = self.here();
        self.dom.append_text(here, text);
    }

    /// Inserts `text`'s leading white space at the current node; returns
    /// the rest, if any.
    fn space_here<'t>(&mut self, text: &'t str) -> Option<&'t str> {
        let (space, rest) = split_space(text);
        if let Some(space) = space {
            self.text_here(space);
        }
        rest
    }

    fn comment(&mut self, text: StrTendril) {
        self.comment_to(self.here(), text);
    }

    fn comment_to(&mut self, parent: NodeId, comment: StrTendril) {
        self.dom.append_comment(parent, comment);
    }
}

fn done<'t>() -> Step<'t> {
    Ok(Flow::Done)
}

fn is_start(tag: &Tag<'_>, name: &LocalName) -> bool {
    tag.kind == TagKind::StartTag && tag.name == *name
}

/// The end tags that act before the body as its start would
/// (`</head>`, `</body>`, `</html>`, `</br>`); other end tags are ignored
/// there.
fn ends_before_body(tag: &Tag<'_>) -> bool {
    matches!(
        tag.name,
        local_name!("head") | local_name!("body") | local_name!("html") | local_name!("br")
    )
}

/// The same attributes in any order (html5ever's
/// `Tag::equiv_modulo_attr_order`, which sorts copies of both). A tag
/// holds each name once: the tokenizer drops repeats.
fn same_attributes(a: Attrs<'_>, b: Element<'_>) -> bool {
    a.len() == b.qual_attrs().count()
        && a.qualified()
            .all(|(n, v)| b.qual_attrs().any(|(m, w)| *m == n && w == v))
}

fn hidden_input(tag: &Tag<'_>) -> bool {
    (tag.attrs.get("type")).is_some_and(|v| v.eq_ignore_ascii_case("hidden"))
}

/// A run of text split at its first character that is not ASCII white
/// space, as html5ever's `SplitWhitespace`: the white space and the rest,
/// each if there is any.
fn split_space(text: &str) -> (Option<&str>, Option<&str>) {
    let n = text.len() - text.trim_start_matches(is_space).len();
    let (space, rest) = text.split_at(n);
    (
        (!space.is_empty()).then_some(space),
        (!rest.is_empty()).then_some(rest),
    )
}

/// An SVG attribute's name as html5ever adjusts it: camel case restored,
/// `xlink:`, `xml:` and `xmlns` names put in their namespaces.
fn svg_attribute((name, value): (QualName, &str)) -> (QualName, &str) {
    let plain = |local: LocalName| QualName::new(None, ns!(), local);
    let adjusted = match name.local {
        local_name!("attributename") => plain(local_name!("attributeName")),
        local_name!("attributetype") => plain(local_name!("attributeType")),
        local_name!("basefrequency") => plain(local_name!("baseFrequency")),
        local_name!("baseprofile") => plain(local_name!("baseProfile")),
        local_name!("calcmode") => plain(local_name!("calcMode")),
        local_name!("clippathunits") => plain(local_name!("clipPathUnits")),
        local_name!("diffuseconstant") => plain(local_name!("diffuseConstant")),
        local_name!("edgemode") => plain(local_name!("edgeMode")),
        local_name!("filterunits") => plain(local_name!("filterUnits")),
        local_name!("glyphref") => plain(local_name!("glyphRef")),
        local_name!("gradienttransform") => plain(local_name!("gradientTransform")),
        local_name!("gradientunits") => plain(local_name!("gradientUnits")),
        local_name!("kernelmatrix") => plain(local_name!("kernelMatrix")),
        local_name!("kernelunitlength") => plain(local_name!("kernelUnitLength")),
        local_name!("keypoints") => plain(local_name!("keyPoints")),
        local_name!("keysplines") => plain(local_name!("keySplines")),
        local_name!("keytimes") => plain(local_name!("keyTimes")),
        local_name!("lengthadjust") => plain(local_name!("lengthAdjust")),
        local_name!("limitingconeangle") => plain(local_name!("limitingConeAngle")),
        local_name!("markerheight") => plain(local_name!("markerHeight")),
        local_name!("markerunits") => plain(local_name!("markerUnits")),
        local_name!("markerwidth") => plain(local_name!("markerWidth")),
        local_name!("maskcontentunits") => plain(local_name!("maskContentUnits")),
        local_name!("maskunits") => plain(local_name!("maskUnits")),
        local_name!("numoctaves") => plain(local_name!("numOctaves")),
        local_name!("pathlength") => plain(local_name!("pathLength")),
        local_name!("patterncontentunits") => plain(local_name!("patternContentUnits")),
        local_name!("patterntransform") => plain(local_name!("patternTransform")),
        local_name!("patternunits") => plain(local_name!("patternUnits")),
        local_name!("pointsatx") => plain(local_name!("pointsAtX")),
        local_name!("pointsaty") => plain(local_name!("pointsAtY")),
        local_name!("pointsatz") => plain(local_name!("pointsAtZ")),
        local_name!("preservealpha") => plain(local_name!("preserveAlpha")),
        local_name!("preserveaspectratio") => plain(local_name!("preserveAspectRatio")),
        local_name!("primitiveunits") => plain(local_name!("primitiveUnits")),
        local_name!("refx") => plain(local_name!("refX")),
        local_name!("refy") => plain(local_name!("refY")),
        local_name!("repeatcount") => plain(local_name!("repeatCount")),
        local_name!("repeatdur") => plain(local_name!("repeatDur")),
        local_name!("requiredextensions") => plain(local_name!("requiredExtensions")),
        local_name!("requiredfeatures") => plain(local_name!("requiredFeatures")),
        local_name!("specularconstant") => plain(local_name!("specularConstant")),
        local_name!("specularexponent") => plain(local_name!("specularExponent")),
        local_name!("spreadmethod") => plain(local_name!("spreadMethod")),
        local_name!("startoffset") => plain(local_name!("startOffset")),
        local_name!("stddeviation") => plain(local_name!("stdDeviation")),
        local_name!("stitchtiles") => plain(local_name!("stitchTiles")),
        local_name!("surfacescale") => plain(local_name!("surfaceScale")),
        local_name!("systemlanguage") => plain(local_name!("systemLanguage")),
        local_name!("tablevalues") => plain(local_name!("tableValues")),
        local_name!("targetx") => plain(local_name!("targetX")),
        local_name!("targety") => plain(local_name!("targetY")),
        local_name!("textlength") => plain(local_name!("textLength")),
        local_name!("viewbox") => plain(local_name!("viewBox")),
        local_name!("viewtarget") => plain(local_name!("viewTarget")),
        local_name!("xchannelselector") => plain(local_name!("xChannelSelector")),
        local_name!("ychannelselector") => plain(local_name!("yChannelSelector")),
        local_name!("zoomandpan") => plain(local_name!("zoomAndPan")),
        local_name!("xlink:actuate") => xlink(local_name!("actuate")),
        local_name!("xlink:arcrole") => xlink(local_name!("arcrole")),
        local_name!("xlink:href") => xlink(local_name!("href")),
        local_name!("xlink:role") => xlink(local_name!("role")),
        local_name!("xlink:show") => xlink(local_name!("show")),
        local_name!("xlink:title") => xlink(local_name!("title")),
        local_name!("xlink:type") => xlink(local_name!("type")),
        local_name!("xml:lang") => QualName::new(
            Some(namespace_prefix!("xml")),
            ns!(xml),
            local_name!("lang"),
        ),
        local_name!("xml:space") => QualName::new(
            Some(namespace_prefix!("xml")),
            ns!(xml),
            local_name!("space"),
        ),
        local_name!("xmlns") => QualName::new(
            Some(namespace_prefix!("")),
            ns!(xmlns),
            local_name!("xmlns"),
        ),
        local_name!("xmlns:xlink") => QualName::new(
            Some(namespace_prefix!("xmlns")),
            ns!(xmlns),
            local_name!("xlink"),
        ),
        _ => return (name, value),
    };
    (adjusted, value)
}

fn xlink(local: LocalName) -> QualName {
    QualName::new(Some(namespace_prefix!("xlink")), ns!(xlink), local)
}

/// The quirks mode a DOCTYPE sets, as html5ever's builder decides it
/// (its tables of legacy public and system ids).
fn quirks_of(d: &Doctype) -> QuirksMode {
    let builder = TreeBuilder::new(HtmlTreeSink::new(Html::new_document()), Default::default());
    let _ = builder.process_token(Token::DoctypeToken(d.clone()), 1);
    builder.sink.finish().quirks_mode
}

#[cfg(test)]
pub(crate) mod tests;
