//! What a page is called, from what the page itself says: its title
//! without the site's own name, and its heading where that adds words.
//!
//! A site puts its name in every title (`TITLE | Site`, `Site - TITLE`,
//! `TITLE — Site`, `TITLE (The Site)`), and a copy of a story on another
//! host carries that host's. The gate's statistics learn a host's template
//! words only after [`MIN_TITLES`](crate::MIN_TITLES) of its titles, and
//! most hosts of an open crawl are small, so the site's name is taken out
//! here, from the first page on, where the page names its site: an edge
//! segment of the title (split at ` | `, ` - `, ` — `, ` · `, ` :: `, ...,
//! or a closing parenthesis) that is the declared site name
//! (`og:site_name`) or is spelled by the host name (`Example News` on
//! `news.example.com` or `examplenews.com`).
//!
//! ```
//! use nearcrawl_index::page_name;
//!
//! let a = page_name(Some("Storm hits the coast | The Daily Example"), None,
//!     Some("The Daily Example"), Some("www.dailyexample.com"));
//! let b = page_name(Some("Example Wire - Storm hits the coast"),
//!     Some("Storm hits the coast"), None, Some("examplewire.net"));
//! assert_eq!(a.as_deref(), Some("Storm hits the coast"));
//! assert_eq!(a, b);
//! ```

/// Separators between a title's segments (each with spaces around it).
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " · ", " • ", " :: ", " » ", " « ", " ~ ", " / ", ": ",
];

/// The name the gate compares: the title without the site's name, then
/// the heading on a line of its own when it holds words the title does
/// not (some generators put the item's name in one of the two only).
pub fn page_name(
    title: Option<&str>,
    heading: Option<&str>,
    site: Option<&str>,
    host: Option<&str>,
) -> Option<String> {
    let title = title.map(|t| headline(t, site, host));
    let heading = heading.map(str::trim).filter(|h| !h.is_empty());
    match (title, heading) {
        (Some(t), Some(h))
            if {
                let title_words = words_of(&t);
                !words_of(h).iter().all(|w| title_words.contains(w))
            } =>
        {
            Some(format!("{t}\n{h}"))
        }
        (Some(t), _) => Some(t),
        (None, h) => h.map(str::to_string),
    }
}

/// A title without the segments at its edges that name the site (never
/// all of it).
fn headline(title: &str, site: Option<&str>, host: Option<&str>) -> String {
    let title = title.trim();
    let names_site = |segment: &str| is_site_name(segment, site, host);
    let mut rest = title;
    loop {
        let trimmed = trim_site_edge(rest, &names_site);
        if trimmed == rest {
            return rest.to_string();
        }
        rest = trimmed;
    }
}

/// `title` without one site-naming segment at its start or end.
fn trim_site_edge<'a>(title: &'a str, names_site: &impl Fn(&str) -> bool) -> &'a str {
    // "TITLE (The Site)", "TITLE [Site]"
    for (open, close) in [(" (", ')'), (" [", ']')] {
        let Some(i) = title.strip_suffix(close).and_then(|t| t.rfind(open)) else {
            continue;
        };
        let inner = &title[i + open.len()..title.len() - 1];
        if names_site(inner) && !title[..i].trim().is_empty() {
            return title[..i].trim_end();
        }
    }
    for sep in SEPARATORS {
        if let Some(i) = title.rfind(sep) {
            let (head, tail) = (&title[..i], &title[i + sep.len()..]);
            if !head.trim().is_empty() && names_site(tail) {
                return head.trim_end();
            }
        }
        if let Some(i) = title.find(sep) {
            let (head, tail) = (&title[..i], &title[i + sep.len()..]);
            if !tail.trim().is_empty() && names_site(head) {
                return tail.trim_start();
            }
        }
    }
    title
}

/// Whether a title segment is the site's name: the declared one, or one
/// its host spells (the words are the host's labels, or run together
/// they are a label or two: `Example News` on `examplenews.com`).
fn is_site_name(segment: &str, site: Option<&str>, host: Option<&str>) -> bool {
    let words = words_of(segment);
    if words.is_empty() {
        return false;
    }
    if let Some(site) = site {
        let site = words_of(site);
        if !site.is_empty() && (words == site || words.concat() == site.concat()) {
            return true;
        }
    }
    let Some(host) = host else {
        return false;
    };
    let host = host.to_lowercase();
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return false;
    }
    let labels: Vec<&str> = host
        .split('.')
        .filter(|l| !l.is_empty() && *l != "www")
        .collect();
    // The label that names the site: the one before the top-level domain,
    // or before a two-label suffix of short labels (`co.uk`, `com.au`).
    let n = labels.len();
    let own = match n {
        0 => return false,
        1 | 2 => 0,
        _ if labels[n - 2].len() <= 3 => n - 3,
        _ => n - 2,
    };
    // Run together, the words are labels around that one (`Example News`
    // on `examplenews.com`, `ExampleWire.net`); apart, each word is a part
    // of a label and one is the site's (`Example News` on
    // `news.example.com`, but not `News` there: a common word).
    let joined = words.concat();
    let runs = (0..=own).any(|i| {
        (own + 1..=n).any(|j| {
            labels[i..j]
                .iter()
                .map(|l| l.replace('-', ""))
                .collect::<String>()
                == joined
        })
    });
    let parts: Vec<&str> = labels.iter().flat_map(|l| l.split('-')).collect();
    let own_parts: Vec<&str> = labels[own].split('-').collect();
    runs || (words.iter().all(|w| parts.contains(&w.as_str()))
        && words.iter().any(|w| own_parts.contains(&w.as_str())))
}

/// Lowercase runs of letters and digits.
fn words_of(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(title: &str, site: Option<&str>, host: &str) -> String {
        page_name(Some(title), None, site, Some(host)).unwrap()
    }

    #[test]
    fn the_site_name_goes_from_either_edge_in_any_style() {
        let story = "Storm closes the coast road";
        for (title, site, host) in [
            (
                "Storm closes the coast road | Example News",
                None,
                "news.example.com",
            ),
            (
                "Example News - Storm closes the coast road",
                None,
                "examplenews.com",
            ),
            (
                "Storm closes the coast road — The Courier",
                Some("The Courier"),
                "c.example",
            ),
            (
                "Storm closes the coast road (The Courier)",
                Some("The Courier"),
                "c.example",
            ),
            (
                "Storm closes the coast road · ExampleWire.net",
                None,
                "www.examplewire.net",
            ),
            (
                "Storm closes the coast road | Local | Example News",
                None,
                "examplenews.com",
            ),
            (
                "Storm closes the coast road",
                Some("Example News"),
                "examplenews.com",
            ),
        ] {
            let got = name(title, site, host);
            if title.contains("Local") {
                assert_eq!(got, format!("{story} | Local"), "{title}");
            } else {
                assert_eq!(got, story, "{title}");
            }
        }
    }

    #[test]
    fn words_that_are_not_the_sites_stay() {
        // A headline with a separator of its own, a common word that is
        // also a host label, a top-level domain, an address for a host.
        for (title, host) in [
            ("Rust - a language for everyone", "blog.example.org"),
            ("Vec in std::vec - Rust", "127.0.0.1"),
            ("Weather: News", "news.example.com"),
            ("Elections - Com", "vote.example.com"),
            ("Integer (Java SE 17 & JDK 17)", "docs.oracle.example"),
        ] {
            assert_eq!(name(title, None, host), title, "{title}");
        }
        // Never the whole title.
        assert_eq!(
            name("Example News", None, "examplenews.com"),
            "Example News"
        );
    }

    #[test]
    fn the_heading_joins_the_name_when_it_says_more() {
        let javadoc = page_name(
            Some("Integer (Java SE 17 & JDK 17)"),
            Some("Class Integer"),
            None,
            Some("127.0.0.1"),
        );
        assert_eq!(
            javadoc.as_deref(),
            Some("Integer (Java SE 17 & JDK 17)\nClass Integer")
        );
        let story = page_name(
            Some("Storm closes the coast road | Example News"),
            Some("Storm closes the coast road"),
            None,
            Some("examplenews.com"),
        );
        assert_eq!(story.as_deref(), Some("Storm closes the coast road"));
        assert_eq!(
            page_name(None, Some(" Heading "), None, None).as_deref(),
            Some("Heading")
        );
        assert_eq!(page_name(None, None, None, None), None);
    }
}
