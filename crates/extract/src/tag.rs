//! A tag as the tokenizer hands it to its [`crate::tokenize::Sink`]: its
//! kind, its name, and attributes whose values are slices of one buffer
//! the tokenizer keeps for the page. html5ever's `Tag` gives each tag a
//! vector and each value a tendril of its own: an allocation, a copy and
//! a free for most of the ~540 attributes of a javadoc page (issue 44).

use html5ever::tokenizer::TagKind;
use html5ever::{Attribute, LocalName, QualName, ns};

/// An attribute: its name, and where its value lies in the values.
#[derive(Clone, Debug)]
pub(crate) struct Attr {
    name: LocalName,
    start: u32,
    end: u32,
}

impl Attr {
    fn value<'v>(&self, values: &'v str) -> &'v str {
        &values[self.start as usize..self.end as usize]
    }
}

/// A tag's attributes, each name once (the tokenizer drops a repeated
/// name, as the spec does).
#[derive(Clone, Copy)]
pub(crate) struct Attrs<'a> {
    list: &'a [Attr],
    values: &'a str,
}

impl<'a> Attrs<'a> {
    /// No attributes (an element the tree builder implies).
    pub(crate) const NONE: Attrs<'static> = Attrs {
        list: &[],
        values: "",
    };

    pub(crate) fn len(self) -> usize {
        self.list.len()
    }

    /// Names and values, in the order the markup gives them.
    pub(crate) fn iter(self) -> impl Iterator<Item = (&'a LocalName, &'a str)> {
        let values = self.values;
        (self.list.iter()).map(move |a| (&a.name, a.value(values)))
    }

    /// The value of the attribute named `name`.
    pub(crate) fn get(self, name: &str) -> Option<&'a str> {
        self.iter().find(|(n, _)| &***n == name).map(|(_, v)| v)
    }

    /// With their names qualified, as a tree holds them: an HTML
    /// element's attributes are in no namespace.
    pub(crate) fn qualified(self) -> Qualified<'a> {
        Qualified {
            list: self.list.iter(),
            values: self.values,
        }
    }
}

impl<'a> IntoIterator for Attrs<'a> {
    type Item = (QualName, &'a str);
    type IntoIter = Qualified<'a>;

    fn into_iter(self) -> Qualified<'a> {
        self.qualified()
    }
}

/// [`Attrs::qualified`].
pub(crate) struct Qualified<'a> {
    list: std::slice::Iter<'a, Attr>,
    values: &'a str,
}

impl<'a> Iterator for Qualified<'a> {
    type Item = (QualName, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let a = self.list.next()?;
        let name = QualName::new(None, ns!(), a.name.clone());
        Some((name, a.value(self.values)))
    }
}

/// A start or end tag.
pub(crate) struct Tag<'a> {
    pub(crate) kind: TagKind,
    pub(crate) name: LocalName,
    pub(crate) self_closing: bool,
    pub(crate) attrs: Attrs<'a>,
}

impl Tag<'_> {
    /// The tag as html5ever's tokenizer makes it, for html5ever's tree
    /// builder.
    pub(crate) fn to_html5ever(&self) -> html5ever::tokenizer::Tag {
        html5ever::tokenizer::Tag {
            kind: self.kind,
            name: self.name.clone(),
            self_closing: self.self_closing,
            attrs: (self.attrs.qualified())
                .map(|(name, value)| Attribute {
                    name,
                    value: value.into(),
                })
                .collect(),
            had_duplicate_attributes: false,
        }
    }
}

/// Where the tokenizer gathers a tag's attributes: kept for the page and
/// cleared for each tag, so a tag costs no allocation.
#[derive(Default)]
pub(crate) struct AttrsBuf {
    list: Vec<Attr>,
    values: String,
}

impl AttrsBuf {
    pub(crate) fn clear(&mut self) {
        self.list.clear();
        self.values.clear();
    }

    pub(crate) fn has(&self, name: &LocalName) -> bool {
        self.list.iter().any(|a| a.name == *name)
    }

    /// Adds an attribute named `name`, whose value `write` pushes onto
    /// the values.
    pub(crate) fn push(&mut self, name: LocalName, write: impl FnOnce(&mut String)) {
        let start = self.values.len() as u32;
        write(&mut self.values);
        let end = self.values.len() as u32;
        self.list.push(Attr { name, start, end });
    }

    pub(crate) fn view(&self) -> Attrs<'_> {
        Attrs {
            list: &self.list,
            values: &self.values,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_back_by_name_and_in_order() {
        let mut buf = AttrsBuf::default();
        buf.push(html5ever::local_name!("class"), |v| v.push_str("a b"));
        buf.push(html5ever::local_name!("id"), |_| {});
        buf.push(html5ever::local_name!("href"), |v| v.push_str("/x"));
        let attrs = buf.view();
        assert_eq!(attrs.len(), 3);
        assert_eq!(attrs.get("class"), Some("a b"));
        assert_eq!(attrs.get("id"), Some(""));
        assert_eq!(attrs.get("title"), None);
        let values: Vec<&str> = attrs.iter().map(|(_, v)| v).collect();
        assert_eq!(values, ["a b", "", "/x"]);
        assert!(buf.has(&html5ever::local_name!("href")));
        buf.clear();
        assert_eq!(buf.view().len(), 0);
    }
}
