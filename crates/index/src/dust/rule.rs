//! One URL rewrite rule: mined from a pair of URLs with one text, applied
//! to a URL to name the page it would duplicate.
//!
//! A URL is read as its host, its path segments and its query. A pair
//! differs in one of three ways, each a kind of rule:
//! - **hosts** whose paths and queries are the same (`m.example.com` and
//!   `example.com`): [`Change::Host`];
//! - **query parameters** one URL has and the other lacks, the rest the
//!   same (`sort=price`, `sid=…`, `utm_source=…`): [`Change::Drop`], of
//!   those values only, or of any value (see `DropAny` in the table);
//! - **path segments** (and the query with them, when it differs other
//!   than by parameters dropped): the segments after the common head and
//!   before the common tail swap (`std` ↔ `core`, `index.html` ↔ `` at the
//!   end, `print` ↔ nothing at the end, `story` `?id=7` ↔ `story_7.html`,
//!   a number moving between the query and the path): [`Change::Swap`].
//!
//! A rule reads both ways: what one URL has, the other has instead. It is
//! scoped by the *kind* of the page its pairs name, the leading letters of
//! the file name they share (rustdoc's `fn` and `constant`, a site's
//! `story` or `thread`): a site renders kinds of pages by different
//! templates, and a rule proven on one kind says little of another. Every
//! pair also supports the same rule unscoped, for every kind.

use std::fmt;

use url::Url;

/// The digits a swap carries from one side to the other.
const NUMBER: &str = "{n}";
/// A rule swaps at most this many path segments in all (both sides):
/// longer differences are one pair's accident, not a site's rule.
const MAX_SWAPPED: usize = 4;

/// What a rule changes in a URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Change {
    /// One host for the other, the rest alike.
    Host { a: String, b: String },
    /// These parameters go (with these values, or with any if `values` is
    /// empty).
    Drop {
        names: Vec<String>,
        values: Vec<String>,
    },
    /// Segments `a` for segments `b` (a query segment starts with `?`; a
    /// segment may hold one `{n}`, a number), where the pair's common head
    /// ended (`at_start`: at the path's start) and its common tail began
    /// (`at_end`: at the end).
    Swap {
        a: Vec<String>,
        b: Vec<String>,
        at_start: bool,
        at_end: bool,
    },
}

/// A change, for pages of one kind (or every kind: `kind` empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rule {
    pub change: Change,
    pub kind: String,
}

/// A URL taken apart as rules read it.
struct Parts {
    segments: Vec<String>,
    query: Option<String>,
}

impl Parts {
    fn of(url: &Url) -> Parts {
        Parts {
            segments: url.path().split('/').skip(1).map(str::to_string).collect(),
            query: url.query().map(str::to_string),
        }
    }

    /// The path's segments, and the query as one more segment.
    fn with_query(&self) -> Vec<String> {
        let mut all = self.segments.clone();
        all.extend(self.query.as_ref().map(|q| format!("?{q}")));
        all
    }
}

/// The page kind a file name says: its leading ASCII letters.
pub fn kind_of(segment: &str) -> &str {
    let end = segment
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(segment.len());
    &segment[..end]
}

/// The kind of the page at `url`: its file name's.
fn url_kind(url: &Url) -> &str {
    kind_of(url.path().rsplit('/').next().unwrap_or(""))
}

/// The key a rule's segment is found by in the table (see
/// [`Rule::keys`]): a segment as it is; one that holds a number pattern by
/// the letters it starts with (`story_{n}.html`: `story`); a query segment
/// by `?` and its first name. Keyed by its letters only, a plain segment
/// made every rule between two numbered pages (`/p/33` and `/p/34`, a
/// coincidence of one site) a candidate for every numbered URL: on a site
/// of 20,000 numbered pages, 4,000 such rules were tried on each page.
pub fn segment_key(segment: &str) -> String {
    match segment.strip_prefix('?') {
        Some(query) => format!("?{}", query.split(['=', '&']).next().unwrap_or("")),
        None if segment.contains(NUMBER) => kind_of(segment).to_string(),
        None => format!("={segment}"),
    }
}

/// The rules a duplicate `dup` of `original` supports: each change both
/// unscoped and for the pair's kind; none when the two differ in more than
/// one of host, parameters and path, or on another scheme or port.
pub fn mine(dup: &Url, original: &Url) -> Vec<Rule> {
    let Some((change, kind)) = change_between(dup, original) else {
        return Vec::new();
    };
    let mut rules = vec![Rule {
        change: change.clone(),
        kind: String::new(),
    }];
    if !kind.is_empty() {
        rules.push(Rule { change, kind });
    }
    rules
}

/// The one change between two URLs, and the kind it holds for.
fn change_between(u: &Url, o: &Url) -> Option<(Change, String)> {
    if u.scheme() != o.scheme() || u.port_or_known_default() != o.port_or_known_default() {
        return None;
    }
    let (hu, ho) = (u.host_str()?, o.host_str()?);
    let kind = url_kind(u).to_string();
    if hu != ho {
        let same_rest = u.path() == o.path() && u.query() == o.query();
        return same_rest.then(|| {
            let change = Change::Host {
                a: hu.to_string(),
                b: ho.to_string(),
            };
            (change, kind)
        });
    }
    if u.path() == o.path() {
        return dropped_params(u, o).map(|change| (change, kind));
    }
    if numbered_alike(u, o) {
        return None;
    }
    swap(&Parts::of(u), &Parts::of(o))
}

/// Whether two URLs are two items of a numbered series: their file names
/// differ only in their numbers (`/p/33` and `/p/34`, `story_7.html` and
/// `story_8.html`), all else the same. Two such pages found alike are a
/// fact about those two pages, not a rule of the site (it would map the
/// one URL it came from, and a site of numbered pages gave thousands of
/// them); a directory that differs by a number (`/v1/…`, `/v2/…`) may be
/// a version of a whole tree, and is left to learn.
fn numbered_alike(u: &Url, o: &Url) -> bool {
    fn split(path: &str) -> (&str, &str) {
        path.split_at(path.rfind('/').map_or(0, |i| i + 1))
    }
    fn letters(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes().filter(|b| !b.is_ascii_digit())
    }
    let ((dir_u, file_u), (dir_o, file_o)) = (split(u.path()), split(o.path()));
    dir_u == dir_o
        && u.query() == o.query()
        && file_u != file_o
        && letters(file_u).eq(letters(file_o))
}

/// The parameters one of two URLs of one path has beyond the other's, which
/// it has all of; their values kept.
fn dropped_params(u: &Url, o: &Url) -> Option<Change> {
    let pu: Vec<(String, String)> = u.query_pairs().into_owned().collect();
    let po: Vec<(String, String)> = o.query_pairs().into_owned().collect();
    let (big, small) = if pu.len() >= po.len() {
        (pu, po)
    } else {
        (po, pu)
    };
    if !small.iter().all(|p| big.contains(p)) {
        return None;
    }
    let mut extra: Vec<(String, String)> = big.into_iter().filter(|p| !small.contains(p)).collect();
    if extra.is_empty() || extra.iter().any(|(n, _)| small.iter().any(|(m, _)| m == n)) {
        return None;
    }
    extra.sort();
    let (names, values) = extra.into_iter().unzip();
    Some(Change::Drop { names, values })
}

/// The segments two paths (with their queries, when those differ) swap,
/// and the kind of their common file name (none when it changes).
fn swap(u: &Parts, o: &Parts) -> Option<(Change, String)> {
    let (su, so) = if u.query == o.query {
        (u.segments.clone(), o.segments.clone())
    } else {
        (u.with_query(), o.with_query())
    };
    let head = su.iter().zip(&so).take_while(|(x, y)| x == y).count();
    let room = su.len().min(so.len()) - head;
    let tail_len = (su.iter().rev().zip(so.iter().rev()))
        .take_while(|(x, y)| x == y)
        .count()
        .min(room);
    // An insertion in the middle is placed by the segment before it.
    let one_side_empty = su.len() == head + tail_len || so.len() == head + tail_len;
    let head = if one_side_empty && head > 0 && tail_len > 0 {
        head - 1
    } else {
        head
    };
    let mut a = su[head..su.len() - tail_len].to_vec();
    let mut b = so[head..so.len() - tail_len].to_vec();
    if a.len() + b.len() > MAX_SWAPPED || (a.is_empty() && b.is_empty()) {
        return None;
    }
    if a.iter().chain(&b).any(|s| s.starts_with('?')) {
        carry_number(&mut a, &mut b);
    }
    let kind = match tail_len {
        0 => String::new(),
        _ => kind_of(&su[su.len() - 1]).to_string(),
    };
    let change = Change::Swap {
        a,
        b,
        at_start: head == 0,
        at_end: tail_len == 0,
    };
    Some((change, kind))
}

/// A number both sides hold (a story's id in its query on one side, in
/// its file name on the other) becomes [`NUMBER`] on both.
fn carry_number(a: &mut [String], b: &mut [String]) {
    let joined_b = b.join("/");
    let found = a
        .iter()
        .flat_map(|s| digit_runs(s))
        .find(|d| digit_runs(&joined_b).any(|e| e == *d));
    let Some(number) = found.map(str::to_string) else {
        return;
    };
    for side in [a, b] {
        if let Some(s) = side.iter_mut().find(|s| digit_runs(s).any(|d| d == number)) {
            *s = replace_run(s, &number);
        }
    }
}

fn digit_runs(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|r| !r.is_empty())
}

/// `s` with its first whole run of digits `number` as [`NUMBER`].
fn replace_run(s: &str, number: &str) -> String {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = s[from..].find(number).map(|i| i + from) {
        let end = i + number.len();
        let before = i == 0 || !bytes[i - 1].is_ascii_digit();
        let after = end == s.len() || !bytes[end].is_ascii_digit();
        if before && after {
            return format!("{}{NUMBER}{}", &s[..i], &s[end..]);
        }
        from = i + 1;
    }
    s.to_string()
}

impl Rule {
    /// The URL this rule names for `url`, if it applies (either way).
    pub fn apply(&self, url: &Url) -> Option<Url> {
        if !self.kind.is_empty() && url_kind(url) != self.kind {
            return None;
        }
        match &self.change {
            Change::Host { a, b } => {
                let to = match url.host_str()? {
                    h if h == a => b,
                    h if h == b => a,
                    _ => return None,
                };
                let mut target = url.clone();
                target.set_host(Some(to)).ok()?;
                Some(target)
            }
            Change::Drop { names, values } => drop_params(url, names, values),
            Change::Swap {
                a,
                b,
                at_start,
                at_end,
            } => {
                let (start, end) = (*at_start, *at_end);
                swap_segments(url, a, b, start, end)
                    .or_else(|| swap_segments(url, b, a, start, end))
            }
        }
    }

    /// The keys a URL this rule may apply to has among its
    /// [`url_keys`]: it is looked for under each.
    pub fn keys(&self) -> Vec<String> {
        match &self.change {
            Change::Host { a, b } => vec![format!("host:{a}"), format!("host:{b}")],
            Change::Drop { names, .. } => vec![format!("param:{}", names[0])],
            Change::Swap {
                a,
                b,
                at_start,
                at_end,
            } => [a, b]
                .iter()
                .map(|side| match side.first() {
                    Some(s) => segment_key(s),
                    None if *at_start => "^".to_string(),
                    None if *at_end => "$".to_string(),
                    None => String::new(),
                })
                .collect(),
        }
    }
}

/// The keys of `url` that rules are found by (see [`Rule::keys`]).
pub fn url_keys(url: &Url) -> Vec<String> {
    // Each segment as it is, and its letters (a pattern's key).
    let mut keys: Vec<String> = url
        .path()
        .split('/')
        .skip(1)
        .flat_map(|s| [format!("={s}"), kind_of(s).to_string()])
        .collect();
    if let Some(q) = url.query() {
        keys.push(segment_key(&format!("?{q}")));
        keys.extend(url.query_pairs().map(|(n, _)| format!("param:{n}")));
    }
    keys.extend(url.host_str().map(|h| format!("host:{h}")));
    keys.push("^".to_string());
    keys.push("$".to_string());
    keys.sort();
    keys.dedup();
    keys
}

fn drop_params(url: &Url, names: &[String], values: &[String]) -> Option<Url> {
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let dropped = |(n, v): &(String, String)| match names.iter().position(|m| m == n) {
        Some(i) => values.is_empty() || values[i] == *v,
        None => false,
    };
    let all_there = names.iter().enumerate().all(|(i, name)| {
        pairs
            .iter()
            .any(|(n, v)| n == name && (values.is_empty() || values[i] == *v))
    });
    if !all_there {
        return None;
    }
    let kept: Vec<&(String, String)> = pairs.iter().filter(|p| !dropped(p)).collect();
    let mut target = url.clone();
    if kept.is_empty() {
        target.set_query(None);
    } else {
        target.query_pairs_mut().clear().extend_pairs(kept);
    }
    Some(target)
}

/// `url` with segments `from` swapped for `to` at the first place they
/// match (at the start or end as the rule says), if any.
fn swap_segments(url: &Url, from: &[String], to: &[String], start: bool, end: bool) -> Option<Url> {
    let with_query = from.iter().chain(to).any(|s| s.starts_with('?'));
    let parts = Parts::of(url);
    let segments = if with_query {
        parts.with_query()
    } else {
        parts.segments.clone()
    };
    if segments.len() < from.len() {
        return None;
    }
    let last = segments.len() - from.len();
    let places: Vec<usize> = match (start, end) {
        (true, true) if last == 0 => vec![0],
        (true, true) => vec![],
        (true, false) => vec![0],
        (false, true) => vec![last],
        (false, false) => (0..=last).collect(),
    };
    for at in places {
        let Some(number) = matches(&segments[at..at + from.len()], from) else {
            continue;
        };
        let mut out = segments[..at].to_vec();
        out.extend(to.iter().map(|s| s.replace(NUMBER, number.unwrap_or(""))));
        out.extend_from_slice(&segments[at + from.len()..]);
        return Some(rebuild(url, out, with_query, parts.query.as_deref()));
    }
    None
}

/// Whether `segments` match the pattern `from`; the number its
/// [`NUMBER`] stood for.
fn matches<'s>(segments: &'s [String], from: &[String]) -> Option<Option<&'s str>> {
    let mut number = None;
    for (s, p) in segments.iter().zip(from) {
        match p.split_once(NUMBER) {
            None if s == p => {}
            None => return None,
            Some((before, after)) => {
                let digits = s.strip_prefix(before)?.strip_suffix(after)?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                if number.is_some_and(|n| n != digits) {
                    return None;
                }
                number = Some(digits);
            }
        }
    }
    Some(number)
}

/// `url` with the path (and query, when the rule held it) of `segments`.
fn rebuild(url: &Url, mut segments: Vec<String>, with_query: bool, query: Option<&str>) -> Url {
    let mut target = url.clone();
    let mut new_query = query.map(str::to_string);
    if with_query {
        new_query = match segments.last() {
            Some(s) if s.starts_with('?') => segments.pop().map(|q| q[1..].to_string()),
            _ => None,
        };
    }
    target.set_path(&format!("/{}", segments.join("/")));
    target.set_query(new_query.as_deref());
    target
}

impl fmt::Display for Rule {
    /// As the report shows it: `/std/… ↔ /core/… (fn pages)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.change {
            Change::Host { a, b } => write!(f, "host {a} ↔ {b}")?,
            Change::Drop { names, values } if values.is_empty() => {
                write!(f, "without {} (any value)", names.join(", "))?;
            }
            Change::Drop { names, values } => {
                let pairs: Vec<String> = names
                    .iter()
                    .zip(values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                write!(f, "without {}", pairs.join("&"))?;
            }
            Change::Swap {
                a,
                b,
                at_start,
                at_end,
            } => {
                // `…` stands for the rest of the URL, kept.
                let side = |s: &[String]| {
                    let joined = s.join("/").replace("/?", "?");
                    let head = if *at_start { "/" } else { "…/" };
                    let tail = if *at_end || s.is_empty() { "" } else { "/…" };
                    match (s.is_empty(), *at_start) {
                        (true, true) => "/…".to_string(),
                        (true, false) => "…".to_string(),
                        _ => format!("{head}{joined}{tail}"),
                    }
                };
                write!(f, "{} ↔ {}", side(a), side(b))?;
            }
        }
        if !self.kind.is_empty() {
            write!(f, " ({} pages)", self.kind)?;
        }
        Ok(())
    }
}

/// Field and list separators of [`Rule::encode`] (no URL part holds them
/// unescaped).
const FIELD: char = '\u{1f}';
const ITEM: char = '\u{1e}';

impl Rule {
    /// One line that [`decode`](Rule::decode) reads back.
    pub fn encode(&self) -> String {
        // Each item after a separator: `[]` and `[""]` differ.
        let list = |l: &[String]| l.iter().map(|i| format!("{ITEM}{i}")).collect::<String>();
        let fields = match &self.change {
            Change::Host { a, b } => vec!["h".into(), a.clone(), b.clone()],
            Change::Drop { names, values } => vec!["d".into(), list(names), list(values)],
            Change::Swap {
                a,
                b,
                at_start,
                at_end,
            } => vec![
                "s".into(),
                list(a),
                list(b),
                u8::from(*at_start).to_string(),
                u8::from(*at_end).to_string(),
            ],
        };
        let mut line = self.kind.clone();
        for f in fields {
            line.push(FIELD);
            line.push_str(&f);
        }
        line
    }

    pub fn decode(line: &str) -> Option<Rule> {
        let mut fields = line.split(FIELD);
        let kind = fields.next()?.to_string();
        let list = |s: &str| -> Vec<String> { s.split(ITEM).skip(1).map(str::to_string).collect() };
        let change = match fields.next()? {
            "h" => Change::Host {
                a: fields.next()?.into(),
                b: fields.next()?.into(),
            },
            "d" => Change::Drop {
                names: list(fields.next()?),
                values: list(fields.next()?),
            },
            "s" => Change::Swap {
                a: list(fields.next()?),
                b: list(fields.next()?),
                at_start: fields.next()? == "1",
                at_end: fields.next()? == "1",
            },
            _ => return None,
        };
        Some(Rule { change, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// The rules a pair mines, each applied to `other`.
    fn applied(dup: &str, original: &str, other: &str) -> Vec<Option<String>> {
        mine(&u(dup), &u(original))
            .iter()
            .map(|r| r.apply(&u(other)).map(|t| t.to_string()))
            .collect()
    }

    #[test]
    fn a_swapped_segment_reads_both_ways_for_the_pairs_kind() {
        let rules = mine(
            &u("http://h/core/option/enum.Option.html"),
            &u("http://h/std/option/enum.Option.html"),
        );
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[1].kind, "enum");
        let other = u("http://h/std/result/enum.Result.html");
        assert_eq!(
            rules[1].apply(&other).unwrap().as_str(),
            "http://h/core/result/enum.Result.html"
        );
        // A function page is another kind: only the unscoped rule applies.
        let f = u("http://h/core/mem/fn.swap.html");
        assert!(rules[1].apply(&f).is_none());
        assert_eq!(
            rules[0].apply(&f).unwrap().as_str(),
            "http://h/std/mem/fn.swap.html"
        );
        // A segment that only holds `std` is not it.
        assert!(rules[0].apply(&u("http://h/stdx/a/enum.A.html")).is_none());
    }

    #[test]
    fn an_index_file_and_its_directory() {
        let got = applied("http://h/a/b/index.html", "http://h/a/b/", "http://h/x/");
        assert_eq!(got[0].as_deref(), Some("http://h/x/index.html"));
        let got = applied(
            "http://h/a/b/index.html",
            "http://h/a/b/",
            "http://h/x/index.html",
        );
        assert_eq!(got[0].as_deref(), Some("http://h/x/"));
        // Only at the end.
        let got = applied(
            "http://h/a/index.html",
            "http://h/a/",
            "http://h/index.html/y",
        );
        assert_eq!(got[0], None);
    }

    #[test]
    fn a_print_view_and_an_insertion_in_the_middle() {
        let got = applied(
            "http://h/story/5/print",
            "http://h/story/5",
            "http://h/story/9/print",
        );
        assert_eq!(got[0].as_deref(), Some("http://h/story/9"));
        // `/mirror/` at the start, both ways.
        let got = applied(
            "http://h/mirror/std/a.html",
            "http://h/std/a.html",
            "http://h/b/c.html",
        );
        assert_eq!(got[0].as_deref(), Some("http://h/mirror/b/c.html"));
        // An insertion in the middle is placed by the segment before it.
        let r = mine(&u("http://h/a/amp/x.html"), &u("http://h/a/x.html"));
        let got = r[0].apply(&u("http://h/a/amp/y.html"));
        assert_eq!(got.unwrap().as_str(), "http://h/a/y.html");
        assert!(r[0].apply(&u("http://h/b/amp/y.html")).is_none());
    }

    #[test]
    fn a_number_moves_between_query_and_path() {
        let got = applied(
            "http://h/news/story?id=5",
            "http://h/news/story_5.html",
            "http://h/news/story?id=77",
        );
        assert_eq!(got[0].as_deref(), Some("http://h/news/story_77.html"));
        let got = applied(
            "http://h/news/story?id=5",
            "http://h/news/story_5.html",
            "http://h/news/story_8.html",
        );
        assert_eq!(got[0].as_deref(), Some("http://h/news/story?id=8"));
        let got = applied(
            "http://h/news/story?id=5",
            "http://h/news/story_5.html",
            "http://h/news/story?id=x",
        );
        assert_eq!(got[0], None);
    }

    #[test]
    fn parameters_dropped_with_their_values() {
        let r = mine(&u("http://h/t/5?sid=ab12&x=1"), &u("http://h/t/5?x=1"));
        assert_eq!(r.len(), 1, "no kind: the file name is a number");
        assert_eq!(
            r[0].change,
            Change::Drop {
                names: vec!["sid".into()],
                values: vec!["ab12".into()]
            }
        );
        assert!(
            r[0].apply(&u("http://h/t/6?x=1&sid=zz")).is_none(),
            "another value"
        );
        assert_eq!(
            r[0].apply(&u("http://h/t/6?x=1&sid=ab12"))
                .unwrap()
                .as_str(),
            "http://h/t/6?x=1"
        );
        let any = Rule {
            change: Change::Drop {
                names: vec!["sid".into()],
                values: vec![],
            },
            kind: String::new(),
        };
        assert_eq!(
            any.apply(&u("http://h/t/6?sid=zz")).unwrap().as_str(),
            "http://h/t/6"
        );
        // Values that differ are not a parameter dropped.
        assert!(mine(&u("http://h/t?page=2"), &u("http://h/t?page=1")).is_empty());
    }

    #[test]
    fn hosts_alike_but_for_their_name() {
        let got = applied(
            "http://m.h/a/b.html",
            "http://h/a/b.html",
            "http://h/c/d.html",
        );
        assert_eq!(got[0].as_deref(), Some("http://m.h/c/d.html"));
        assert!(mine(&u("http://m.h/a"), &u("http://h/b")).is_empty());
        assert!(mine(&u("http://h:81/a"), &u("http://h:82/a")).is_empty());
    }

    #[test]
    fn rules_read_as_what_they_swap() {
        let shown = |d: &str, o: &str| mine(&u(d), &u(o)).last().unwrap().to_string();
        assert_eq!(
            shown("http://h/a/x86_64/fn.f.html", "http://h/a/x86/fn.f.html"),
            "…/x86_64/… ↔ …/x86/… (fn pages)"
        );
        assert_eq!(shown("http://h/s/5/print", "http://h/s/5"), "…/print ↔ …");
        assert_eq!(
            shown("http://h/a/index.html", "http://h/a/"),
            "…/index.html ↔ …/"
        );
        assert_eq!(
            shown("http://h/mirror/a/b.html", "http://h/a/b.html"),
            "/mirror/… ↔ /… (b pages)"
        );
        assert_eq!(
            shown("http://h/n/story?id=5", "http://h/n/story_5.html"),
            "…/story?id={n} ↔ …/story_{n}.html"
        );
    }

    #[test]
    fn rules_encode_and_decode() {
        for (d, o) in [
            ("http://h/a/b/index.html", "http://h/a/b/"),
            ("http://h/news/story?id=5", "http://h/news/story_5.html"),
            ("http://h/t?sid=1&a=2", "http://h/t?a=2"),
            ("http://m.h/a", "http://h/a"),
        ] {
            for r in mine(&u(d), &u(o)) {
                assert_eq!(Rule::decode(&r.encode()), Some(r.clone()), "{r}");
                assert!(
                    r.keys()
                        .iter()
                        .all(|k| url_keys(&u(d)).contains(k) || url_keys(&u(o)).contains(k)),
                    "{r}"
                );
            }
        }
    }
}
