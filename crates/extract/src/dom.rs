//! The parsed page: a tree of our own, read by every pass of extraction.
//!
//! scraper's tree (ego_tree nodes holding scraper's elements) cost the
//! parse a conversion and a sort of every element's attributes, a vector
//! of them per element, and a node of about 140 bytes (issue 44). Here
//! the nodes are 64-byte records in one vector, in the order they were
//! made; the attributes of all elements sit in one vector, each element
//! holding a range of it; the text of all text nodes sits in one string,
//! each text node holding a span of it, and so do attribute values (a
//! tendril for each was an allocation, a copy and a free); comments are
//! the tokenizer's tendrils, moved in. The reading side is ego_tree's
//! (`NodeRef`, `traverse`, `descendants`, `ancestors`, ...), so the rules
//! read as they did;
//! values are small views ([`Node`], [`Element`]) into the vectors.
//!
//! [`crate::tree_builder`] fills it; the pages it leaves to html5ever's
//! builder are parsed into scraper's tree and copied ([`Dom::from_html`]).

use html5ever::tendril::StrTendril;
use html5ever::tree_builder::QuirksMode;
use html5ever::{LocalName, Namespace, QualName, ns};

/// A node's place in its tree: its index in the tree's vector.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub(crate) struct NodeId(u32);

impl NodeId {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// No node (a link that is not there).
const NONE: u32 = u32::MAX;

/// One node: its links to its neighbours and what it holds.
#[derive(Clone, Debug)]
struct Record {
    parent: u32,
    prev: u32,
    next: u32,
    first: u32,
    last: u32,
    data: Data,
}

// A node in 64 bytes (scraper's took about 140).
const _: () = assert!(std::mem::size_of::<Record>() <= 64);

/// Tagged with a byte of its own: a match is one compare (a niche in the
/// element's atoms made it several).
#[derive(Clone, Debug)]
#[repr(u8)]
enum Data {
    Document,
    /// Index into the tree's doctypes.
    Doctype(u32),
    Comment(StrTendril),
    Text(Span),
    Element {
        name: LocalName,
        ns: Namespace,
        /// Range of the tree's attributes.
        attrs: (u32, u32),
        /// The bits of its attributes' names ([`name_bit`]).
        names: u64,
    },
}

/// Where a text node's text lies in its tree's `text`, or an attribute's
/// value in its `values`.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// `s` pushed onto `to`, and where it lies there.
    fn push(to: &mut String, s: &str) -> Span {
        let start = to.len() as u32;
        to.push_str(s);
        Span {
            start,
            len: s.len() as u32,
        }
    }

    fn end(self) -> usize {
        (self.start + self.len) as usize
    }

    /// The text it spans in `of`.
    fn of(self, of: &str) -> &str {
        &of[self.start as usize..self.end()]
    }
}

/// An attribute name's bit in an element's `names`: an element lacks an
/// attribute whose bit it does not have. The rules ask every element
/// for attributes most elements lack (`hidden`, `role`, `style`,
/// `aria-hidden`, ...); the bit answers most of them without comparing
/// a name (comparing names was 6% of extraction on javadoc).
#[inline(always)]
fn name_bit(name: &str) -> u64 {
    let b = name.as_bytes();
    let (first, last) = (b.first().copied(), b.last().copied());
    let mix = b.len() * 31 + usize::from(first.unwrap_or(0)) * 7 + usize::from(last.unwrap_or(0));
    1 << (mix % 64)
}

fn names_of(attrs: &[Attr]) -> u64 {
    attrs
        .iter()
        .fold(0, |bits, a| bits | name_bit(&a.name.local))
}

/// An attribute: its qualified name, and where its value lies in its
/// tree's `values`.
#[derive(Clone, Debug)]
struct Attr {
    name: QualName,
    value: Span,
}

#[derive(Clone, Debug, Default)]
#[cfg_attr(not(test), expect(dead_code, reason = "read by the tests' dump"))]
pub(crate) struct DoctypeData {
    name: StrTendril,
    public_id: StrTendril,
    system_id: StrTendril,
}

/// A parsed document.
#[derive(Clone, Debug)]
pub(crate) struct Dom {
    nodes: Vec<Record>,
    attrs: Vec<Attr>,
    /// The text of every text node, each a [`Span`] of it.
    text: String,
    /// Every attribute's value, each a [`Span`] of it.
    values: String,
    /// Whether an element named `base` was ever made: most pages have
    /// none, and then no walk looks for one.
    has_base: bool,
    doctypes: Vec<DoctypeData>,
    pub(crate) quirks_mode: QuirksMode,
}

impl Default for Dom {
    fn default() -> Self {
        Dom::with_capacity(0, 0)
    }
}

impl Dom {
    /// An empty document with room for `nodes` nodes and `text` bytes of
    /// text.
    pub(crate) fn with_capacity(nodes: usize, text: usize) -> Dom {
        let mut all = Vec::with_capacity(nodes + 1);
        all.push(Record {
            parent: NONE,
            prev: NONE,
            next: NONE,
            first: NONE,
            last: NONE,
            data: Data::Document,
        });
        Dom {
            nodes: all,
            attrs: Vec::with_capacity(nodes / 2),
            text: String::with_capacity(text),
            values: String::new(),
            has_base: false,
            doctypes: Vec::new(),
            quirks_mode: QuirksMode::NoQuirks,
        }
    }

    /// Whether it may hold an element named `base` (it holds none if
    /// not).
    pub(crate) fn may_have_base(&self) -> bool {
        self.has_base
    }

    /// The document node.
    pub(crate) fn root(&self) -> NodeRef<'_> {
        self.link(0).expect("a document has its root")
    }

    pub(crate) fn get(&self, id: NodeId) -> Option<NodeRef<'_>> {
        self.link(id.0)
    }

    /// Every node in the order they were made (detached ones too).
    pub(crate) fn nodes(&self) -> impl ExactSizeIterator<Item = NodeRef<'_>> + '_ {
        (self.nodes.iter().enumerate()).map(move |(i, record)| NodeRef {
            dom: self,
            id: NodeId(i as u32),
            record,
        })
    }

    #[inline]
    fn link(&self, n: u32) -> Option<NodeRef<'_>> {
        let record = self.nodes.get(n as usize)?;
        Some(NodeRef {
            dom: self,
            id: NodeId(n),
            record,
        })
    }

    // ---- building ----

    fn append(&mut self, parent: NodeId, data: Data) -> NodeId {
        let id = self.nodes.len() as u32;
        let p = parent.0;
        let prev = self.nodes[p as usize].last;
        self.nodes.push(Record {
            parent: p,
            prev,
            next: NONE,
            first: NONE,
            last: NONE,
            data,
        });
        if prev == NONE {
            self.nodes[p as usize].first = id;
        } else {
            self.nodes[prev as usize].next = id;
        }
        self.nodes[p as usize].last = id;
        NodeId(id)
    }

    /// Appends an element named `name` in `ns` to `parent`'s children.
    pub(crate) fn append_element<'v>(
        &mut self,
        parent: NodeId,
        ns: Namespace,
        name: LocalName,
        attrs: impl IntoIterator<Item = (QualName, &'v str)>,
    ) -> NodeId {
        let from = self.attrs.len();
        self.add_attrs(attrs);
        let element = self.element_from(name, ns, from);
        self.append(parent, element)
    }

    fn add_attrs<'v>(&mut self, attrs: impl IntoIterator<Item = (QualName, &'v str)>) {
        for (name, value) in attrs {
            let value = Span::push(&mut self.values, value);
            self.attrs.push(Attr { name, value });
        }
    }

    /// An element whose attributes are those from `from` to the end.
    fn element_from(&mut self, name: LocalName, ns: Namespace, from: usize) -> Data {
        self.has_base |= name == html5ever::local_name!("base");
        Data::Element {
            name,
            ns,
            attrs: (from as u32, self.attrs.len() as u32),
            names: names_of(&self.attrs[from..]),
        }
    }

    /// Gives element `id` the attributes from `from` to `to`.
    fn set_attrs(&mut self, id: NodeId, from: usize, to: usize) {
        let bits = names_of(&self.attrs[from..to]);
        if let Data::Element { attrs, names, .. } = &mut self.nodes[id.index()].data {
            (*attrs, *names) = ((from as u32, to as u32), bits);
        }
    }

    /// Appends `text` to `parent`'s children, joined to a text node that
    /// is its last child (as scraper's sink joins them).
    pub(crate) fn append_text(&mut self, parent: NodeId, text: &str) {
        let last = self.nodes[parent.index()].last;
        if last != NONE
            && let Data::Text(span) = &mut self.nodes[last as usize].data
        {
            // Text is appended where it was last appended, but for what
            // the parser moves: then the node's text moves to the end.
            if span.end() != self.text.len() {
                let from = span.start as usize..span.end();
                span.start = self.text.len() as u32;
                self.text.extend_from_within(from);
            }
            self.text.push_str(text);
            span.len = self.text.len() as u32 - span.start;
            return;
        }
        let span = Span::push(&mut self.text, text);
        self.append(parent, Data::Text(span));
    }

    pub(crate) fn append_comment(&mut self, parent: NodeId, text: StrTendril) {
        self.append(parent, Data::Comment(text));
    }

    pub(crate) fn append_doctype(
        &mut self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.doctypes.push(DoctypeData {
            name,
            public_id,
            system_id,
        });
        let at = self.doctypes.len() as u32 - 1;
        self.append(NodeId(0), Data::Doctype(at));
    }

    /// Adds to element `id` those of `attrs` whose names it lacks (a
    /// second `<html>` or `<body>` tag's: "add the attributes that are
    /// missing").
    pub(crate) fn add_missing_attributes<'v>(
        &mut self,
        id: NodeId,
        attrs: impl IntoIterator<Item = (QualName, &'v str)>,
    ) {
        let Data::Element {
            attrs: (from, to), ..
        } = self.nodes[id.index()].data
        else {
            return;
        };
        let missing: Vec<(QualName, &str)> = attrs
            .into_iter()
            .filter(|(name, _)| {
                !self.attrs[from as usize..to as usize]
                    .iter()
                    .any(|b| b.name == *name)
            })
            .collect();
        if missing.is_empty() {
            return;
        }
        // Its range moves to the end, where it can grow.
        let start = self.attrs.len();
        self.attrs.extend_from_within(from as usize..to as usize);
        self.add_attrs(missing);
        self.set_attrs(id, start, self.attrs.len());
    }

    // ---- repairs ----

    /// Renames element `id` to `to` in the HTML namespace.
    pub(crate) fn rename(&mut self, id: NodeId, to: LocalName) {
        self.has_base |= to == html5ever::local_name!("base");
        if let Data::Element { name, ns, .. } = &mut self.nodes[id.index()].data {
            *name = to;
            *ns = ns!(html);
        }
    }

    /// Sets the value of element `id`'s attribute named `name` in no
    /// namespace, if it has one.
    pub(crate) fn set_attr(&mut self, id: NodeId, name: &str, value: &str) {
        let Data::Element {
            attrs: (from, to), ..
        } = self.nodes[id.index()].data
        else {
            return;
        };
        let found = self.attrs[from as usize..to as usize]
            .iter_mut()
            .find(|a| a.name.ns == ns!() && &*a.name.local == name);
        if let Some(attr) = found {
            // The old value stays where it was, unread.
            attr.value = Span::push(&mut self.values, value);
        }
    }

    /// Keeps those of element `id`'s attributes whose names `keep` says.
    pub(crate) fn retain_attrs(&mut self, id: NodeId, mut keep: impl FnMut(&QualName) -> bool) {
        let Data::Element {
            attrs: (from, to), ..
        } = self.nodes[id.index()].data
        else {
            return;
        };
        let mut kept = from;
        for i in from..to {
            if keep(&self.attrs[i as usize].name) {
                self.attrs.swap(kept as usize, i as usize);
                kept += 1;
            }
        }
        self.set_attrs(id, from as usize, kept as usize);
    }

    /// scraper's tree as one of ours, node for node in the same order.
    pub(crate) fn from_html(html: &scraper::Html) -> Dom {
        use scraper::Node as S;
        let len = html.tree.nodes().len();
        let mut dom = Dom::with_capacity(len, 0);
        dom.nodes.clear();
        dom.quirks_mode = html.quirks_mode;
        // ego_tree's ids are its arena indices, in order: `nodes()` walks
        // them so, and a node's links are read by id.
        let index: std::collections::HashMap<ego_tree::NodeId, u32> = html
            .tree
            .nodes()
            .enumerate()
            .map(|(i, n)| (n.id(), i as u32))
            .collect();
        let at = |n: Option<ego_tree::NodeRef<'_, S>>| n.map_or(NONE, |n| index[&n.id()]);
        for n in html.tree.nodes() {
            let data = match n.value() {
                S::Document | S::Fragment => Data::Document,
                S::Doctype(d) => {
                    dom.doctypes.push(DoctypeData {
                        name: d.name.clone(),
                        public_id: d.public_id.clone(),
                        system_id: d.system_id.clone(),
                    });
                    Data::Doctype(dom.doctypes.len() as u32 - 1)
                }
                S::Comment(c) => Data::Comment(c.comment.clone()),
                S::Text(t) => Data::Text(Span::push(&mut dom.text, &t.text)),
                S::Element(e) => {
                    let from = dom.attrs.len();
                    dom.add_attrs(e.attrs.iter().map(|(name, value)| (name.clone(), &**value)));
                    dom.element_from(e.name.local.clone(), e.name.ns.clone(), from)
                }
                S::ProcessingInstruction(p) => Data::Comment(p.data.clone()),
            };
            dom.nodes.push(Record {
                parent: at(n.parent()),
                prev: at(n.prev_sibling()),
                next: at(n.next_sibling()),
                first: at(n.first_child()),
                last: at(n.last_child()),
                data,
            });
        }
        dom
    }
}

// ---- reading ----

/// A node of a tree, to walk from (ego_tree's `NodeRef`).
#[derive(Clone, Copy)]
pub(crate) struct NodeRef<'a> {
    dom: &'a Dom,
    id: NodeId,
    /// Its record, looked up once.
    record: &'a Record,
}

impl PartialEq for NodeRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && std::ptr::eq(self.dom, other.dom)
    }
}

impl Eq for NodeRef<'_> {}

impl std::fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeRef({:?}, {:?})", self.id, self.value())
    }
}

impl<'a> NodeRef<'a> {
    #[inline]
    pub(crate) fn id(self) -> NodeId {
        self.id
    }

    pub(crate) fn tree(self) -> &'a Dom {
        self.dom
    }

    #[inline]
    fn record(self) -> &'a Record {
        self.record
    }

    #[inline]
    pub(crate) fn value(self) -> Node<'a> {
        let dom = self.dom;
        match &self.record().data {
            Data::Document => Node::Document,
            Data::Doctype(i) => Node::Doctype(&dom.doctypes[*i as usize]),
            Data::Comment(t) => Node::Comment(t),
            Data::Text(span) => Node::Text(Text {
                text: &dom.text,
                span: *span,
            }),
            Data::Element {
                name,
                ns,
                attrs,
                names,
            } => Node::Element(Element {
                name,
                ns,
                attrs: *attrs,
                names: *names,
                dom,
            }),
        }
    }

    #[inline]
    pub(crate) fn parent(self) -> Option<NodeRef<'a>> {
        self.dom.link(self.record().parent)
    }

    #[inline]
    pub(crate) fn prev_sibling(self) -> Option<NodeRef<'a>> {
        self.dom.link(self.record().prev)
    }

    #[inline]
    pub(crate) fn next_sibling(self) -> Option<NodeRef<'a>> {
        self.dom.link(self.record().next)
    }

    #[inline]
    pub(crate) fn first_child(self) -> Option<NodeRef<'a>> {
        self.dom.link(self.record().first)
    }

    #[inline]
    pub(crate) fn last_child(self) -> Option<NodeRef<'a>> {
        self.dom.link(self.record().last)
    }

    pub(crate) fn children(self) -> Siblings<'a> {
        Siblings {
            front: self.first_child(),
            back: self.last_child(),
        }
    }

    /// The siblings before this node, nearest first.
    pub(crate) fn prev_siblings(self) -> impl Iterator<Item = NodeRef<'a>> {
        std::iter::successors(self.prev_sibling(), |n| n.prev_sibling())
    }

    /// The parent, its parent, and so on up.
    pub(crate) fn ancestors(self) -> impl Iterator<Item = NodeRef<'a>> {
        std::iter::successors(self.parent(), |n| n.parent())
    }

    /// Opening and closing every node of the subtree, this one first and
    /// last, in document order.
    pub(crate) fn traverse(self) -> Traverse<'a> {
        Traverse {
            root: self,
            next: Some(Edge::Open(self)),
        }
    }

    /// This node and every node under it, in document order.
    pub(crate) fn descendants(self) -> impl Iterator<Item = NodeRef<'a>> {
        self.traverse().filter_map(|e| match e {
            Edge::Open(n) => Some(n),
            Edge::Close(_) => None,
        })
    }

    /// The text nodes under this node, in order (scraper's
    /// `ElementRef::text`).
    pub(crate) fn text(self) -> impl Iterator<Item = &'a str> {
        self.descendants().filter_map(|n| match n.value() {
            Node::Text(t) => Some(t.as_str()),
            _ => None,
        })
    }
}

/// A node that is an element, with its element at hand (scraper's
/// `ElementRef`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElementRef<'a> {
    node: NodeRef<'a>,
    element: Element<'a>,
}

impl<'a> ElementRef<'a> {
    pub(crate) fn wrap(node: NodeRef<'a>) -> Option<ElementRef<'a>> {
        match node.value() {
            Node::Element(element) => Some(ElementRef { node, element }),
            _ => None,
        }
    }

    pub(crate) fn value(&self) -> Element<'a> {
        self.element
    }
}

impl<'a> std::ops::Deref for ElementRef<'a> {
    type Target = NodeRef<'a>;

    fn deref(&self) -> &NodeRef<'a> {
        &self.node
    }
}

/// A node's children, from either end.
pub(crate) struct Siblings<'a> {
    front: Option<NodeRef<'a>>,
    back: Option<NodeRef<'a>>,
}

impl<'a> Iterator for Siblings<'a> {
    type Item = NodeRef<'a>;

    fn next(&mut self) -> Option<NodeRef<'a>> {
        let n = self.front?;
        if Some(n) == self.back {
            (self.front, self.back) = (None, None);
        } else {
            self.front = n.next_sibling();
        }
        Some(n)
    }
}

impl DoubleEndedIterator for Siblings<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let n = self.back?;
        if Some(n) == self.front {
            (self.front, self.back) = (None, None);
        } else {
            self.back = n.prev_sibling();
        }
        Some(n)
    }
}

/// An edge of a walk: a node opened (before its children) or closed
/// (after them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge<'a> {
    Open(NodeRef<'a>),
    Close(NodeRef<'a>),
}

/// ego_tree's `Traverse`.
pub(crate) struct Traverse<'a> {
    root: NodeRef<'a>,
    next: Option<Edge<'a>>,
}

impl<'a> Iterator for Traverse<'a> {
    type Item = Edge<'a>;

    #[inline]
    fn next(&mut self) -> Option<Edge<'a>> {
        let edge = self.next?;
        self.next = match edge {
            Edge::Open(n) => Some(match n.first_child() {
                Some(child) => Edge::Open(child),
                None => Edge::Close(n),
            }),
            Edge::Close(n) if n == self.root => None,
            Edge::Close(n) => match n.next_sibling() {
                Some(sib) => Some(Edge::Open(sib)),
                None => n.parent().map(Edge::Close),
            },
        };
        Some(edge)
    }
}

/// What a node holds, as a view into its tree.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "doctypes and comments are read by the tests' dump"
    )
)]
pub(crate) enum Node<'a> {
    Document,
    Doctype(&'a DoctypeData),
    Comment(&'a str),
    Text(Text<'a>),
    Element(Element<'a>),
}

/// A text node's text, sliced from the tree's text only when read: most
/// reads of a node ask only what kind it is, and a slice of a `str`
/// reads the bytes at its ends (the UTF-8 boundary checks).
#[derive(Clone, Copy)]
pub(crate) struct Text<'a> {
    text: &'a str,
    span: Span,
}

impl<'a> Text<'a> {
    pub(crate) fn as_str(self) -> &'a str {
        self.span.of(self.text)
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl<'a> Node<'a> {
    pub(crate) fn is_element(&self) -> bool {
        matches!(self, Node::Element(_))
    }
}

/// An element's name and attributes.
#[derive(Clone, Copy)]
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "the namespace is read by the tests' dump")
)]
pub(crate) struct Element<'a> {
    name: &'a LocalName,
    ns: &'a Namespace,
    /// Its range of the tree's attributes, sliced when asked (most reads
    /// ask only the name).
    attrs: (u32, u32),
    names: u64,
    /// Its tree, which holds its attributes.
    dom: &'a Dom,
}

impl std::fmt::Debug for Element<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let attrs: Vec<(&str, &str)> = self.qual_attrs().map(|(n, v)| (&*n.local, v)).collect();
        write!(f, "<{} {:?}>", self.name(), attrs)
    }
}

impl<'a> Element<'a> {
    /// Its local name.
    #[inline]
    pub(crate) fn name(&self) -> &'a str {
        self.name
    }

    #[cfg(test)]
    pub(crate) fn ns(&self) -> &'a Namespace {
        self.ns
    }

    /// The value of its attribute `name` in no namespace (what the
    /// selector `[name]` matches; `xlink:href` is not `href`).
    #[inline(always)]
    pub(crate) fn attr(&self, name: &str) -> Option<&'a str> {
        if !self.may_have(name) {
            return None;
        }
        self.find_attr(name)
    }

    #[inline(never)]
    fn find_attr(&self, name: &str) -> Option<&'a str> {
        (self.listed().iter())
            .find(|a| a.name.ns == ns!() && &*a.name.local == name)
            .map(|a| self.value(a))
    }

    /// Its `id` attribute (scraper's `Element::id`).
    pub(crate) fn id(&self) -> Option<&'a str> {
        self.any_attr("id")
    }

    /// The value of its attribute named `name` in any namespace (the
    /// first, if several).
    #[inline(always)]
    pub(crate) fn any_attr(&self, name: &str) -> Option<&'a str> {
        if !self.may_have(name) {
            return None;
        }
        self.find_any_attr(name)
    }

    #[inline(never)]
    fn find_any_attr(&self, name: &str) -> Option<&'a str> {
        (self.listed().iter())
            .find(|a| &*a.name.local == name)
            .map(|a| self.value(a))
    }

    /// Whether it may have an attribute named `name` (it has not if not).
    /// Inlined where the name is a constant, its bit is one too.
    #[inline(always)]
    fn may_have(&self, name: &str) -> bool {
        self.names & name_bit(name) != 0
    }

    /// Its attributes with their qualified names.
    pub(crate) fn qual_attrs(self) -> impl Iterator<Item = (&'a QualName, &'a str)> + 'a {
        self.listed().iter().map(move |a| (&a.name, self.value(a)))
    }

    fn listed(&self) -> &'a [Attr] {
        (self
            .dom
            .attrs
            .get(self.attrs.0 as usize..self.attrs.1 as usize))
        .unwrap_or_default()
    }

    /// An attribute's value, sliced only when read: a slice of a `str`
    /// reads the bytes at its ends.
    fn value(&self, a: &Attr) -> &'a str {
        a.value.of(&self.dom.values)
    }
}

#[cfg(test)]
impl DoctypeData {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn public_id(&self) -> &str {
        &self.public_id
    }

    pub(crate) fn system_id(&self) -> &str {
        &self.system_id
    }
}

/// Every node of `dom` opened in document order, one line each, indented
/// by depth: for tests that compare two trees.
#[cfg(test)]
pub(crate) fn dump(dom: &Dom) -> String {
    use std::fmt::Write;
    let mut out = format!("{:?}\n", dom.quirks_mode);
    for node in dom.root().descendants() {
        let depth = node.ancestors().count();
        let _ = write!(out, "{:indent$}", "", indent = depth * 2);
        let _ = match node.value() {
            Node::Element(e) => {
                let mut attrs: Vec<_> = e.qual_attrs().collect();
                attrs.sort();
                writeln!(out, "<{:?}:{} {:?}>", e.ns(), e.name(), attrs)
            }
            Node::Text(t) => writeln!(out, "{t:?}"),
            Node::Comment(c) => writeln!(out, "<!--{c:?}-->"),
            Node::Doctype(d) => writeln!(
                out,
                "<!DOCTYPE {:?} {:?} {:?}>",
                d.name(),
                d.public_id(),
                d.system_id()
            ),
            Node::Document => writeln!(out, "#document"),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(markup: &str) -> (scraper::Html, Dom) {
        let html = scraper::Html::parse_document(markup);
        let dom = Dom::from_html(&html);
        (html, dom)
    }

    #[test]
    fn walks_as_ego_tree_walks() {
        let (html, dom) = parsed(
            "<!doctype html><p>a<b>b</b><i>c<!--x--></i></p><table><td>d</table><div>e<br>f</div>",
        );
        let theirs: Vec<String> = html
            .tree
            .root()
            .traverse()
            .map(|e| match e {
                ego_tree::iter::Edge::Open(n) => format!("+{:?}", n.id()),
                ego_tree::iter::Edge::Close(n) => format!("-{:?}", n.id()),
            })
            .collect();
        let ids: Vec<ego_tree::NodeId> = html.tree.nodes().map(|n| n.id()).collect();
        let ours: Vec<String> = dom
            .root()
            .traverse()
            .map(|e| match e {
                Edge::Open(n) => format!("+{:?}", ids[n.id().index()]),
                Edge::Close(n) => format!("-{:?}", ids[n.id().index()]),
            })
            .collect();
        assert_eq!(ours, theirs);
        for (n, m) in dom.nodes().zip(html.tree.nodes()) {
            let at = |x: Option<NodeRef<'_>>| x.map(|x| ids[x.id().index()]);
            assert_eq!(at(n.parent()), m.parent().map(|p| p.id()));
            assert_eq!(
                n.children()
                    .rev()
                    .map(|c| ids[c.id().index()])
                    .collect::<Vec<_>>(),
                m.children().rev().map(|c| c.id()).collect::<Vec<_>>()
            );
            assert_eq!(
                n.prev_siblings()
                    .map(|c| ids[c.id().index()])
                    .collect::<Vec<_>>(),
                m.prev_siblings().map(|c| c.id()).collect::<Vec<_>>()
            );
            assert_eq!(
                n.ancestors()
                    .map(|c| ids[c.id().index()])
                    .collect::<Vec<_>>(),
                m.ancestors().map(|c| c.id()).collect::<Vec<_>>()
            );
        }
        let texts: Vec<&str> = dom.root().text().collect();
        assert_eq!(texts, ["a", "b", "c", "d", "e", "f"]);
    }

    #[test]
    fn text_joins_a_text_node_before_it_only() {
        let mut dom = Dom::default();
        let html = dom.append_element(NodeId(0), ns!(html), html5ever::local_name!("html"), []);
        let head = dom.append_element(html, ns!(html), html5ever::local_name!("head"), []);
        dom.append_text(html, " ");
        dom.append_text(head, "x");
        // Joined to " ", which no longer ends the tree's text: it moves.
        dom.append_text(html, "\n");
        let texts: Vec<&str> = dom.root().text().collect();
        assert_eq!(texts, ["x", " \n"]);
    }

    #[test]
    fn attributes_are_changed_in_place() {
        let (_, mut dom) = parsed("<p class=a id=b hidden>x</p>");
        let p = dom
            .nodes()
            .find(|n| matches!(n.value(), Node::Element(e) if e.name() == "p"))
            .unwrap()
            .id();
        dom.retain_attrs(p, |name| &*name.local != "hidden");
        dom.set_attr(p, "class", "c");
        dom.rename(p, html5ever::local_name!("div"));
        let Node::Element(e) = dom.get(p).unwrap().value() else {
            panic!()
        };
        assert_eq!(e.name(), "div");
        assert_eq!(e.attr("hidden"), None);
        assert_eq!(e.attr("id"), Some("b"));
        assert_eq!(e.attr("class"), Some("c"));
        assert_eq!(e.qual_attrs().count(), 2);
    }
}
