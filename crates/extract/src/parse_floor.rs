//! Where the parse's time goes, step by step (issue 44): how much of it a
//! tree of our own could save, measured before writing one.
//!
//! ```text
//! PARSE_FLOOR_DIR=/usr/share/doc/openjdk-17-jre-headless/api \
//!   cargo test --release -p nearcrawl-extract parse_floor -- --ignored --nocapture
//! ```
//!
//! Over every `*.html` under the directory (at most `PARSE_FLOOR_PAGES`,
//! default 12,000), decoded and stripped as the extractor does, it times:
//!
//! 1. our tokenizer alone, into a sink that drops the tokens;
//! 2. the tokenizer and html5ever's tree builder, into a compact tree:
//!    nodes of five `u32` links and a kind in one vector, text in one
//!    string, attributes in one vector, nothing freed node by node;
//! 3. the same into scraper's tree, and the tree dropped;
//! 4. today's parse (`parse_stripped`): our tree builder into scraper's
//!    tree, html5ever's where ours gives up.
//!
//! The step from 2 to 3 is what a tree of our own filled by the same tree
//! builder would save; 2 minus 1 is html5ever's tree builder's own cost,
//! and 3 minus 4 what ours saves of it. Prints the best of 3 rounds.
//!
//! `tree_check` (below) builds the same pages both ways and compares the
//! trees.

use std::cell::{Ref, RefCell};
use std::path::{Path, PathBuf};
use std::time::Instant;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{Token, TokenSink, TokenSinkResult};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeSink};
use html5ever::{Attribute, QualName, expanded_name, local_name, ns};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Drops every token.
struct NullSink;

impl TokenSink for NullSink {
    type Handle = ();
    fn process_token(&self, _token: Token, _line: u64) -> TokenSinkResult<()> {
        TokenSinkResult::Continue
    }
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[expect(
    dead_code,
    reason = "built as a tree would keep them: the measure is of building it"
)]
enum Kind {
    Document,
    Element { name: u32, attrs: (u32, u32) },
    Text { start: u32, len: u32 },
    Other,
}

#[derive(Clone, Copy)]
struct Node {
    parent: u32,
    first: u32,
    last: u32,
    prev: u32,
    next: u32,
    kind: Kind,
}

#[derive(Default)]
struct Compact {
    nodes: Vec<Node>,
    names: Vec<QualName>,
    attrs: Vec<Attribute>,
    text: String,
    templates: Vec<(u32, u32)>,
}

impl Compact {
    fn push(&mut self, kind: Kind) -> u32 {
        self.nodes.push(Node {
            parent: NONE,
            first: NONE,
            last: NONE,
            prev: NONE,
            next: NONE,
            kind,
        });
        (self.nodes.len() - 1) as u32
    }

    fn detach(&mut self, id: u32) {
        let n = self.nodes[id as usize];
        if n.parent == NONE {
            return;
        }
        match n.prev {
            NONE => self.nodes[n.parent as usize].first = n.next,
            p => self.nodes[p as usize].next = n.next,
        }
        match n.next {
            NONE => self.nodes[n.parent as usize].last = n.prev,
            x => self.nodes[x as usize].prev = n.prev,
        }
        let node = &mut self.nodes[id as usize];
        (node.parent, node.prev, node.next) = (NONE, NONE, NONE);
    }

    fn append(&mut self, parent: u32, id: u32) {
        self.detach(id);
        let last = self.nodes[parent as usize].last;
        let node = &mut self.nodes[id as usize];
        (node.parent, node.prev) = (parent, last);
        match last {
            NONE => self.nodes[parent as usize].first = id,
            l => self.nodes[l as usize].next = id,
        }
        self.nodes[parent as usize].last = id;
    }

    fn insert_before(&mut self, sibling: u32, id: u32) {
        self.detach(id);
        let s = self.nodes[sibling as usize];
        let node = &mut self.nodes[id as usize];
        (node.parent, node.prev, node.next) = (s.parent, s.prev, sibling);
        match s.prev {
            NONE => self.nodes[s.parent as usize].first = id,
            p => self.nodes[p as usize].next = id,
        }
        self.nodes[sibling as usize].prev = id;
    }

    /// Text after `at` (a node, or `NONE`): joined to it when it is text
    /// (none returned), else a new text node.
    fn text_node(&mut self, at: u32, text: &str) -> Option<u32> {
        let joined = match self.nodes.get(at as usize).map(|n| n.kind) {
            Some(Kind::Text { start, len }) => Some((start as usize, len as usize)),
            _ => None,
        };
        let start = match joined {
            // The arena's last text grows in place; another moves to its end.
            Some((start, len)) if start + len == self.text.len() => start,
            Some((start, len)) => {
                let old = self.text[start..start + len].to_string();
                let moved = self.text.len();
                self.text.push_str(&old);
                moved
            }
            None => self.text.len(),
        };
        self.text.push_str(text);
        let kind = Kind::Text {
            start: start as u32,
            len: (self.text.len() - start) as u32,
        };
        match joined {
            Some(_) => {
                self.nodes[at as usize].kind = kind;
                None
            }
            None => Some(self.push(kind)),
        }
    }

    /// The node `child` places after `at`; none when its text joined `at`.
    fn placed(&mut self, at: u32, child: NodeOrText<u32>) -> Option<u32> {
        match child {
            NodeOrText::AppendNode(id) => Some(id),
            NodeOrText::AppendText(text) => self.text_node(at, &text),
        }
    }
}

struct CompactSink(RefCell<Compact>);

static NO_NAME: std::sync::LazyLock<QualName> =
    std::sync::LazyLock::new(|| QualName::new(None, ns!(), local_name!("")));

impl TreeSink for CompactSink {
    type Handle = u32;
    type Output = Compact;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Compact {
        self.0.into_inner()
    }
    fn parse_error(&self, _msg: std::borrow::Cow<'static, str>) {}
    fn get_document(&self) -> u32 {
        0
    }
    fn elem_name<'a>(&'a self, target: &'a u32) -> Ref<'a, QualName> {
        Ref::map(self.0.borrow(), |c| match c.nodes[*target as usize].kind {
            Kind::Element { name, .. } => &c.names[name as usize],
            _ => &NO_NAME,
        })
    }
    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _: ElementFlags) -> u32 {
        let template = name.expanded() == expanded_name!(html "template");
        let mut c = self.0.borrow_mut();
        let from = c.attrs.len() as u32;
        c.attrs.extend(attrs);
        let to = c.attrs.len() as u32;
        c.names.push(name);
        let name = (c.names.len() - 1) as u32;
        let id = c.push(Kind::Element {
            name,
            attrs: (from, to),
        });
        if template {
            let contents = c.push(Kind::Other);
            c.templates.push((id, contents));
        }
        id
    }
    fn create_comment(&self, _text: StrTendril) -> u32 {
        self.0.borrow_mut().push(Kind::Other)
    }
    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> u32 {
        self.0.borrow_mut().push(Kind::Other)
    }
    fn append(&self, parent: &u32, child: NodeOrText<u32>) {
        let mut c = self.0.borrow_mut();
        let last = c.nodes[*parent as usize].last;
        if let Some(id) = c.placed(last, child) {
            c.append(*parent, id);
        }
    }
    fn append_based_on_parent_node(&self, element: &u32, prev: &u32, child: NodeOrText<u32>) {
        if self.0.borrow().nodes[*element as usize].parent != NONE {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev, child);
        }
    }
    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {
        let mut c = self.0.borrow_mut();
        let id = c.push(Kind::Other);
        c.append(0, id);
    }
    fn get_template_contents(&self, target: &u32) -> u32 {
        let c = self.0.borrow();
        c.templates
            .iter()
            .find(|t| t.0 == *target)
            .map_or(*target, |t| t.1)
    }
    fn same_node(&self, x: &u32, y: &u32) -> bool {
        x == y
    }
    fn set_quirks_mode(&self, _mode: QuirksMode) {}
    fn append_before_sibling(&self, sibling: &u32, new_node: NodeOrText<u32>) {
        let mut c = self.0.borrow_mut();
        if c.nodes[*sibling as usize].parent == NONE {
            return;
        }
        let prev = c.nodes[*sibling as usize].prev;
        if let Some(id) = c.placed(prev, new_node) {
            c.insert_before(*sibling, id);
        }
    }
    fn add_attrs_if_missing(&self, _target: &u32, _attrs: Vec<Attribute>) {}
    fn remove_from_parent(&self, target: &u32) {
        self.0.borrow_mut().detach(*target);
    }
    fn reparent_children(&self, node: &u32, new_parent: &u32) {
        let mut c = self.0.borrow_mut();
        loop {
            let first = c.nodes[*node as usize].first;
            if first == NONE {
                break;
            }
            c.append(*new_parent, first);
        }
    }
}

fn pages(dir: &Path, most: usize) -> Vec<String> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "html") {
                files.push(p);
            }
        }
    }
    files.sort();
    // Every n-th file, so a sample spans the whole site.
    let step = files.len().div_ceil(most).max(1);
    files
        .iter()
        .step_by(step)
        .filter_map(|f| std::fs::read(f).ok())
        .map(|bytes| {
            let (html, ..) = crate::decode::decode_html(&bytes, None);
            let stripped = crate::prestrip::strip_raw_text(&html);
            crate::prestrip::cap_nesting(&stripped).into_owned()
        })
        .filter(|m| m.len() <= crate::stream::STREAM_ABOVE)
        .collect()
}

/// Best of 3 rounds of `step` over `pages`, in ms a page.
fn best(pages: &[String], mut step: impl FnMut(&str) -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut sum = 0;
    for _ in 0..3 {
        let t = Instant::now();
        sum = pages.iter().map(|p| step(p)).sum();
        best = best.min(t.elapsed().as_secs_f64() * 1000.0 / pages.len() as f64);
    }
    (best, sum)
}

#[test]
#[ignore = "prints where the parse's time goes; run in release with PARSE_FLOOR_DIR"]
fn parse_floor() {
    let Some(dir) = std::env::var_os("PARSE_FLOOR_DIR") else {
        eprintln!("PARSE_FLOOR_DIR is not set");
        return;
    };
    let most = std::env::var("PARSE_FLOOR_PAGES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(12_000);
    let pages = pages(Path::new(&dir), most);
    let bytes: usize = pages.iter().map(String::len).sum();
    println!(
        "{} pages, {:.1} KB a page (stripped)",
        pages.len(),
        bytes as f64 / 1e3 / pages.len() as f64
    );
    let (tokens, _) = best(&pages, |p| {
        crate::tokenize::tokenize(p, &NullSink);
        0
    });
    let (compact, nodes) = best(&pages, |p| {
        // Room for the nodes expected, as `parse_stripped` gives scraper's.
        let tags = memchr::memchr_iter(b'<', p.as_bytes()).count();
        let mut tree = Compact {
            nodes: Vec::with_capacity(tags + tags / 2 + 1),
            names: Vec::with_capacity(tags),
            text: String::with_capacity(p.len() / 2),
            ..Compact::default()
        };
        tree.push(Kind::Document);
        let sink = CompactSink(RefCell::new(tree));
        let builder = TreeBuilder::new(sink, Default::default());
        crate::tokenize::tokenize(p, &builder);
        builder.sink.finish().nodes.len()
    });
    let (html5ever, _) = best(&pages, |p| {
        crate::tokenize::parse_document(p, scraper::Html::new_document())
            .tree
            .nodes()
            .count()
    });
    let (scraper, scraper_nodes) = best(&pages, |p| crate::parse_stripped(p).tree.nodes().count());
    println!(
        "ms a page: tokenizer alone {tokens:.4}, html5ever's builder into a compact tree {compact:.4}, \
         into scraper's tree {html5ever:.4}, our builder into scraper's tree (today) {scraper:.4}"
    );
    println!(
        "nodes: compact {nodes}, scraper {scraper_nodes}; node bytes: compact {}, scraper's value {}",
        std::mem::size_of::<Node>(),
        std::mem::size_of::<scraper::Node>() + 5 * std::mem::size_of::<usize>()
    );
}

/// Every page under `TREE_CHECK_DIR` (decoded and stripped as the
/// extractor does) built both ways: the trees must be the same; prints
/// how many pages this builder left to html5ever's.
///
/// ```text
/// TREE_CHECK_DIR=/usr/share/doc/rust-doc/html \
///   cargo test --release -p nearcrawl-extract --lib tree_check -- --ignored --nocapture
/// ```
#[test]
#[ignore = "reads a site from TREE_CHECK_DIR"]
fn tree_check() {
    let Some(dir) = std::env::var_os("TREE_CHECK_DIR") else {
        eprintln!("TREE_CHECK_DIR is not set");
        return;
    };
    let pages = pages(Path::new(&dir), usize::MAX);
    let built = pages
        .iter()
        .filter(|p| crate::tree_builder::tests::same_or_gave_up(p))
        .count();
    println!(
        "{} pages: {built} built here, {} left to html5ever's, every tree the same",
        pages.len(),
        pages.len() - built
    );
}
