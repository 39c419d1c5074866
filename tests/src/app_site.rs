//! A site of pages built by script, with what a browser shows on each:
//! the planted truth the rendering tests and `bench/render_bench.py`
//! measure against. Served by nginx ([`crate::nginx::Nginx::serve_app`]).
//!
//! Kinds of page, `per_kind` of each, chained by links that only the
//! script writes (a crawl that does not render finds the first of each
//! chain only):
//! - `json`: an empty `#root`, filled from `/api/json/N.json` by `fetch()`;
//! - `blob`: an empty `#__next`, hydrated from an embedded
//!   `__NEXT_DATA__` JSON blob;
//! - `router`: a client-side router: `/app/N` is the same shell (nginx
//!   falls back to it), which reads the path, fetches the route's data and
//!   writes `pushState` links;
//! - `timer`: `#app` filled 800 ms after load;
//! - `static`: pages that carry their text, half of them with a script;
//! - `hostile`: a script that never ends, one that polls forever, dialogs,
//!   a popup, and a flood of 30 requests one after another.
//!
//! Every shell also asks for an image, a style sheet and a URL robots.txt
//! forbids (`/private/`): none may reach the server.

use std::path::Path;

use serde_json::json;

use crate::made_up_words;

/// Words a page's text has (its paragraphs).
const WORDS: usize = 120;

/// One page: its path and the text a browser shows (empty for a page
/// whose text is not planted: hostile ones).
#[derive(Debug, Clone)]
pub struct Planted {
    pub path: String,
    pub kind: &'static str,
    pub title: String,
    pub text: String,
}

/// Writes the site under `root`; the planted pages.
pub fn write(root: &Path, per_kind: usize) -> Vec<Planted> {
    let file = |path: &str, body: &str| {
        let p = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    file("/robots.txt", "User-agent: *\nDisallow: /private/\n");
    file("/private/secret.json", r#"{"secret": true}"#);
    file("/assets/app.css", "body { font-family: serif }");
    file("/assets/logo.png", "not really a png");
    for (name, script) in [
        ("json", JSON_JS),
        ("blob", BLOB_JS),
        ("router", ROUTER_JS),
        ("timer", TIMER_JS),
    ] {
        file(&format!("/assets/{name}.js"), &format!("{DRAW}{script}"));
    }
    file("/assets/analytics.js", "window.dataLayer = [];");
    file(
        "/app/shell.html",
        &shell("root", "App", "/assets/router.js", ""),
    );
    let mut planted = Vec::new();
    for n in 0..per_kind {
        for kind in ["json", "blob", "router", "timer", "static"] {
            let page = Planted::new(kind, n);
            let next = (n + 1 < per_kind).then(|| Planted::new(kind, n + 1).path);
            let data =
                json!({"title": page.title, "paragraphs": paragraphs(&page.text), "next": next});
            match kind {
                // The data endpoint holds the text and the next link.
                "json" => file(&format!("/api/json/{n}.json"), &data.to_string()),
                // One shell for every route (nginx falls back to it).
                "router" => file(&format!("/api/routes/{n}.json"), &data.to_string()),
                _ => {}
            }
            let body = match kind {
                "json" => shell("root", &page.title, "/assets/json.js", ""),
                "blob" => {
                    let data = json!({"props": {"pageProps": data}});
                    let blob = format!(
                        r#"<script id="__NEXT_DATA__" type="application/json">{data}</script>"#
                    );
                    shell("__next", &page.title, "/assets/blob.js", &blob)
                }
                "timer" => {
                    let inline = format!("<script>window.PAGE = {data};</script>");
                    shell("app", "Loading", "/assets/timer.js", &inline)
                }
                "static" => static_page(&page, n, next.as_deref()),
                _ => String::new(),
            };
            if !body.is_empty() {
                file(&page.path, &body);
            }
            planted.push(page);
        }
    }
    let mut links = Vec::new();
    for (name, script) in HOSTILE {
        let body = format!(
            r#"<!doctype html><html><head><title>Hostile {name}</title></head><body><div id="root"></div><script>{script}</script></body></html>"#
        );
        let path = format!("/hostile/{name}.html");
        file(&path, &body);
        links.push(path.clone());
        planted.push(Planted {
            path,
            kind: "hostile",
            title: String::new(),
            text: String::new(),
        });
    }
    file(
        "/hostile/popup-target.html",
        "<p>a popup's page: never asked for</p>",
    );
    links.extend(["json", "blob", "router", "timer", "static"].map(|k| Planted::new(k, 0).path));
    let index: String = links
        .iter()
        .map(|l| format!(r#"<li><a href="{l}">{l}</a></li>"#))
        .collect();
    file(
        "/index.html",
        &format!(
            "<!doctype html><html><head><title>Index</title></head><body><h1>Index</h1><ul>{index}</ul></body></html>"
        ),
    );
    planted
}

impl Planted {
    /// Page `n` of `kind`, with its text.
    fn new(kind: &'static str, n: usize) -> Planted {
        let seed = kind.bytes().map(u64::from).sum::<u64>() * 1_000 + n as u64;
        let path = match kind {
            "router" => format!("/app/{n}"),
            _ => format!("/{kind}/{n}.html"),
        };
        Planted {
            path,
            kind,
            title: format!("{kind} page {n}"),
            text: made_up_words(seed, WORDS, 20_000),
        }
    }
}

/// A page that carries its text; every other one loads a script.
fn static_page(page: &Planted, n: usize, next: Option<&str>) -> String {
    let script = if n.is_multiple_of(2) {
        r#"<script src="/assets/analytics.js"></script>"#
    } else {
        ""
    };
    let next = next.map_or(String::new(), |p| {
        format!(r#"<p><a href="{p}">Next</a></p>"#)
    });
    let text: String = paragraphs(&page.text)
        .iter()
        .map(|p| format!("<p>{p}</p>"))
        .collect();
    let title = &page.title;
    format!(
        "<!doctype html><html><head><title>{title}</title>{script}</head><body><main><h1>{title}</h1>{text}{next}</main></body></html>"
    )
}

/// Word F1 of `got` against `want` (bags of words).
pub fn word_f1(got: &str, want: &str) -> f64 {
    let bag = |s: &str| {
        let mut b: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        for w in s.split_whitespace() {
            *b.entry(w.to_string()).or_default() += 1;
        }
        b
    };
    let (g, w) = (bag(got), bag(want));
    let common: usize = g
        .iter()
        .map(|(k, n)| (*n).min(*w.get(k).unwrap_or(&0)))
        .sum();
    let (gn, wn) = (g.values().sum::<usize>(), w.values().sum::<usize>());
    if common == 0 {
        return 0.0;
    }
    let (p, r) = (common as f64 / gn as f64, common as f64 / wn as f64);
    2.0 * p * r / (p + r)
}

/// `words` as paragraphs of 40 words.
fn paragraphs(words: &str) -> Vec<String> {
    let words: Vec<&str> = words.split(' ').collect();
    words.chunks(40).map(|c| c.join(" ")).collect()
}

/// An app shell: a mount element, the script, an image, a style sheet.
fn shell(mount: &str, title: &str, script: &str, head: &str) -> String {
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>{title}</title><link rel="stylesheet" href="/assets/app.css">{head}<script defer src="{script}"></script></head><body><div id="{mount}"></div><img src="/assets/logo.png" alt=""><noscript>You need to enable JavaScript to run this app.</noscript></body></html>"#
    )
}

/// Writes a page's data into `el`: the start of each kind's script.
const DRAW: &str = r#"
function draw(el, d) {
  document.title = d.title;
  let html = '<article><h1>' + d.title + '</h1>';
  for (const p of d.paragraphs) html += '<p>' + p + '</p>';
  if (d.next) html += '<a href="' + d.next + '" data-link>Next</a>';
  el.innerHTML = html + '</article>';
}
"#;

const JSON_JS: &str = r#"
fetch('/private/secret.json').catch(() => {});
const n = location.pathname.match(/(\d+)\.html$/)[1];
fetch('/api/json/' + n + '.json').then(r => r.json()).then(d => draw(document.getElementById('root'), d));
"#;

const BLOB_JS: &str = r#"
const data = JSON.parse(document.getElementById('__NEXT_DATA__').textContent);
draw(document.getElementById('__next'), data.props.pageProps);
"#;

const ROUTER_JS: &str = r#"
function route() {
  const n = location.pathname.split('/').pop();
  fetch('/api/routes/' + n + '.json').then(r => r.json()).then(d => draw(document.getElementById('root'), d));
}
document.addEventListener('click', e => {
  const a = e.target.closest('a[data-link]');
  if (a) { e.preventDefault(); history.pushState({}, '', a.href); route(); }
});
window.addEventListener('popstate', route);
route();
"#;

const TIMER_JS: &str = r#"
setTimeout(() => draw(document.getElementById('app'), window.PAGE), 800);
"#;

/// Scripts a crawl must survive.
const HOSTILE: &[(&str, &str)] = &[
    ("loop", "while (true) {}"),
    (
        "poll",
        "(function again() { document.getElementById('root').textContent = Date.now(); setTimeout(again, 200); })();",
    ),
    (
        "dialogs",
        "alert('hi'); confirm('sure?'); prompt('name?'); document.getElementById('root').textContent = 'after the dialogs';",
    ),
    (
        "popup",
        "window.open('/hostile/popup-target.html'); document.getElementById('root').textContent = 'after the popup';",
    ),
    (
        "flood",
        "(async () => { for (let i = 0; i < 30; i++) await fetch('/api/flood/' + i + '.json').catch(() => {}); document.getElementById('root').textContent = 'after the flood'; })();",
    ),
];
