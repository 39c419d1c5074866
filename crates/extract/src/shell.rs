//! Pages built by script: an "app shell" serves next to no text and the
//! script that builds the page in the browser (React, Vue, Svelte and
//! Angular apps, pages that fetch their content from a JSON API).
//!
//! The rule, asked only of a page where no main text stood out: the page
//! loads a script, and either it leaves empty the element a script
//! framework builds the page in (`<div id="root">`, `#app`, `#__next`,
//! `[ng-app]`, `<app-root>`, ...), or its body holds fewer than
//! [`MIN_SHOWN_CHARS`] characters of text in all (menus and footers
//! included, `<noscript>` not), no `<h1>` and no `<pre>`. A short page
//! that carries its text has its site's menus around it (a javadoc "No
//! usage of" page), or at least a heading that names it (a rustdoc
//! constant, whose menus are built by script: 3.5% of rustdoc's pages
//! without the heading clause) or a block of code (rustdoc's view of a
//! short source file); a page without script has nothing more to show.

use crate::dom::{Dom, Node};

/// A body with less text than this, menus and all (the least main text
/// trusted over a page's full text), shows nothing of substance.
const MIN_SHOWN_CHARS: usize = 200;

/// The ids frameworks mount on by default (create-react-app and Vite's
/// `root`, Vue's `app`, Next's `__next`, Nuxt's `__nuxt`, Gatsby's
/// `___gatsby`, SvelteKit's `svelte`, Quasar's `q-app`).
const MOUNT_IDS: &[&str] = &[
    "root",
    "app",
    "__next",
    "__nuxt",
    "___gatsby",
    "svelte",
    "q-app",
];
/// Elements frameworks build in (Angular's `app-root`).
const MOUNT_ELEMENTS: &[&str] = &["app-root"];
/// Attributes that mark where Angular, React or Vue builds the page.
const MOUNT_ATTRIBUTES: &[&str] = &["ng-app", "ng-version", "data-reactroot", "data-v-app"];
/// A mount element holding fewer characters than this is empty (a
/// "Loading..." is not the page).
const EMPTY_MOUNT_CHARS: usize = 40;

/// Whether a page where no main text stood out is an app shell.
pub(crate) fn is_app_shell(doc: &Dom) -> bool {
    let root = doc.root();
    let (mut has_script, mut empty_mount, mut names_itself) = (false, false, false);
    let mut body = None;
    for node in root.descendants() {
        let Node::Element(e) = node.value() else {
            continue;
        };
        if e.name() == "body" {
            body = Some(node);
        } else if e.name() == "script" && runs(e.attr("type")) {
            has_script = true;
        } else if matches!(e.name(), "h1" | "pre") {
            names_itself = true;
        } else if is_mount(e) && !empty_mount {
            empty_mount = text_chars(node, EMPTY_MOUNT_CHARS) < EMPTY_MOUNT_CHARS;
        }
    }
    let shown = || body.map_or(0, |b| text_chars(b, MIN_SHOWN_CHARS));
    has_script && (empty_mount || (!names_itself && shown() < MIN_SHOWN_CHARS))
}

/// A script of this `type` runs (JSON and templates do not).
fn runs(kind: Option<&str>) -> bool {
    let kind = kind.map(str::trim).unwrap_or("");
    kind.is_empty()
        || kind.eq_ignore_ascii_case("module")
        || kind.eq_ignore_ascii_case("text/javascript")
        || kind.eq_ignore_ascii_case("application/javascript")
}

fn is_mount(e: crate::dom::Element<'_>) -> bool {
    e.id().is_some_and(|id| MOUNT_IDS.contains(&id))
        || MOUNT_ELEMENTS.contains(&e.name())
        || MOUNT_ATTRIBUTES.iter().any(|a| e.attr(a).is_some())
}

/// Non-whitespace characters of text under `node`, counted up to `cap`;
/// what `<noscript>` says (parsed as text) is not shown, nor are
/// templates.
fn text_chars(node: crate::dom::NodeRef<'_>, cap: usize) -> usize {
    let mut n = 0;
    for d in node.descendants() {
        if let Node::Text(t) = d.value() {
            let hidden = d.ancestors().any(|a| {
                matches!(a.value(), Node::Element(e) if matches!(e.name(), "noscript" | "template" | "script" | "style"))
            });
            if !hidden {
                n += crate::chars::visible_chars(t.as_str());
            }
            if n >= cap {
                break;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use crate::{Input, extract};

    fn shell(html: &str) -> bool {
        extract(html.as_bytes(), &Input::default()).app_shell
    }

    #[test]
    fn an_empty_root_and_a_bundle_is_a_shell() {
        assert!(shell(
            r#"<html><head><title>App</title><script type="module" src="/assets/index.js"></script></head>
            <body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>"#
        ));
    }

    #[test]
    fn a_loading_placeholder_in_a_mount_with_a_menu_around_it_is_a_shell() {
        let menu = "<li><a href=/a>Products and services</a></li>".repeat(12);
        assert!(shell(&format!(
            r#"<body><nav><ul>{menu}</ul></nav><div id="app">Loading...</div>
            <footer>Copyright 2026 Example Corporation, all rights reserved.</footer><script src="/app.js"></script></body>"#
        )));
    }

    #[test]
    fn a_page_with_its_text_is_not_a_shell_though_it_loads_scripts() {
        let text = "<p>A paragraph of the article, long enough to be read as the main text of the page.</p>".repeat(6);
        assert!(!shell(&format!(
            r#"<body><div id="root"><article>{text}</article></div><script src="/app.js"></script></body>"#
        )));
    }

    #[test]
    fn a_short_page_without_script_or_with_only_data_is_not_a_shell() {
        assert!(!shell("<body><p>Moved to a new address.</p></body>"));
        assert!(!shell(
            r#"<body><div id="root"></div><script type="application/ld+json">{"@type": "Thing"}</script></body>"#
        ));
    }

    #[test]
    fn a_short_page_that_shows_its_text_and_names_no_mount_is_a_shell_only_when_nearly_empty() {
        let nav = "Overview Package Class Use Tree Deprecated Index Help ".repeat(4);
        assert!(!shell(&format!(
            r#"<body><header>{nav}</header><h1>Uses of Class Foo</h1><p>No usage of Foo</p><script src="/script.js"></script></body>"#
        )));
        assert!(!shell(
            r#"<body><h1>Constant E</h1><p>Euler's number</p><script src="/sidebar.js"></script></body>"#
        ));
        assert!(shell(
            r#"<body><p>Loading...</p><script src="/app.js"></script></body>"#
        ));
        assert!(shell(
            r#"<body><app-root></app-root><script src="/main.js"></script></body>"#
        ));
    }
}
