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
//! - `hostile`: a script that never ends, one that polls forever, dialogs
//!   and a popup.
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
    let mut planted = Vec::new();
    let file = |path: &str, body: &str| {
        let p = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    file("/robots.txt", "User-agent: *\nDisallow: /private/\n");
    file("/private/secret.json", r#"{"secret": true}"#);
    file("/assets/app.css", "body { font-family: serif }");
    file("/assets/logo.png", "not really a png");
    file("/assets/json.js", JSON_JS);
    file("/assets/blob.js", BLOB_JS);
    file("/assets/router.js", ROUTER_JS);
    file("/assets/timer.js", TIMER_JS);
    file("/assets/analytics.js", "window.dataLayer = [];");
    let text = |kind: &str, n: usize| {
        let seed = kind.bytes().map(u64::from).sum::<u64>() * 1_000 + n as u64;
        let words = made_up_words(seed, WORDS, 20_000);
        let title = format!("{kind} page {n}");
        (title, words)
    };
    let mut links = Vec::new();
    for n in 0..per_kind {
        let next = (n + 1 < per_kind).then_some(n + 1);
        // json: the data endpoint holds the text and the next link.
        let (title, words) = text("json", n);
        let data = json!({"title": title, "paragraphs": paragraphs(&words), "next": next.map(|m| format!("/json/{m}.html"))});
        file(&format!("/api/json/{n}.json"), &data.to_string());
        file(
            &format!("/json/{n}.html"),
            &shell("root", &title, "/assets/json.js", ""),
        );
        planted.push(Planted {
            path: format!("/json/{n}.html"),
            kind: "json",
            title,
            text: words,
        });
        // blob: the data is in the page.
        let (title, words) = text("blob", n);
        let data = json!({"props": {"pageProps": {"title": title, "paragraphs": paragraphs(&words), "next": next.map(|m| format!("/blob/{m}.html"))}}});
        let blob = format!(r#"<script id="__NEXT_DATA__" type="application/json">{data}</script>"#);
        file(
            &format!("/blob/{n}.html"),
            &shell("__next", &title, "/assets/blob.js", &blob),
        );
        planted.push(Planted {
            path: format!("/blob/{n}.html"),
            kind: "blob",
            title,
            text: words,
        });
        // router: one shell for every route; the route's data by fetch().
        let (title, words) = text("router", n);
        let data = json!({"title": title, "paragraphs": paragraphs(&words), "next": next.map(|m| format!("/app/{m}"))});
        file(&format!("/api/routes/{n}.json"), &data.to_string());
        planted.push(Planted {
            path: format!("/app/{n}"),
            kind: "router",
            title,
            text: words,
        });
        // timer: the text is in the script's data, shown after a delay.
        let (title, words) = text("timer", n);
        let data = json!({"title": title, "paragraphs": paragraphs(&words), "next": next.map(|m| format!("/timer/{m}.html"))});
        let inline = format!("<script>window.PAGE = {data};</script>");
        file(
            &format!("/timer/{n}.html"),
            &shell("app", "Loading", "/assets/timer.js", &inline),
        );
        planted.push(Planted {
            path: format!("/timer/{n}.html"),
            kind: "timer",
            title,
            text: words,
        });
        // static: the text as served.
        let (title, words) = text("static", n);
        let script = if n % 2 == 0 {
            r#"<script src="/assets/analytics.js"></script>"#
        } else {
            ""
        };
        let next_link = next.map_or(String::new(), |m| {
            format!(r#"<p><a href="/static/{m}.html">Next</a></p>"#)
        });
        let body = format!(
            "<!doctype html><html><head><title>{title}</title>{script}</head><body><main><h1>{title}</h1>{}{next_link}</main></body></html>",
            paragraphs(&words)
                .iter()
                .map(|p| format!("<p>{p}</p>"))
                .collect::<String>()
        );
        file(&format!("/static/{n}.html"), &body);
        planted.push(Planted {
            path: format!("/static/{n}.html"),
            kind: "static",
            title,
            text: words,
        });
    }
    file(
        "/app/shell.html",
        &shell("root", "App", "/assets/router.js", ""),
    );
    for (name, script) in HOSTILE {
        let body = format!(
            r#"<!doctype html><html><head><title>Hostile {name}</title></head><body><div id="root"></div><script>{script}</script></body></html>"#
        );
        file(&format!("/hostile/{name}.html"), &body);
        planted.push(Planted {
            path: format!("/hostile/{name}.html"),
            kind: "hostile",
            title: String::new(),
            text: String::new(),
        });
        links.push(format!("/hostile/{name}.html"));
    }
    file(
        "/hostile/popup-target.html",
        "<p>a popup's page: never asked for</p>",
    );
    for kind in [
        "json/0.html",
        "blob/0.html",
        "app/0",
        "timer/0.html",
        "static/0.html",
    ] {
        links.push(format!("/{kind}"));
    }
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

const JSON_JS: &str = r#"
function draw(el, d) {
  document.title = d.title;
  let html = '<article><h1>' + d.title + '</h1>';
  for (const p of d.paragraphs) html += '<p>' + p + '</p>';
  if (d.next) html += '<a href="' + d.next + '" data-link>Next</a>';
  el.innerHTML = html + '</article>';
}
fetch('/private/secret.json').catch(() => {});
const n = location.pathname.match(/(\d+)\.html$/)[1];
fetch('/api/json/' + n + '.json').then(r => r.json()).then(d => draw(document.getElementById('root'), d));
"#;

const BLOB_JS: &str = r#"
function draw(el, d) {
  let html = '<article><h1>' + d.title + '</h1>';
  for (const p of d.paragraphs) html += '<p>' + p + '</p>';
  if (d.next) html += '<a href="' + d.next + '">Next</a>';
  el.innerHTML = html + '</article>';
}
const data = JSON.parse(document.getElementById('__NEXT_DATA__').textContent);
draw(document.getElementById('__next'), data.props.pageProps);
"#;

const ROUTER_JS: &str = r#"
function draw(el, d) {
  document.title = d.title;
  let html = '<article><h1>' + d.title + '</h1>';
  for (const p of d.paragraphs) html += '<p>' + p + '</p>';
  if (d.next) html += '<a href="' + d.next + '" data-link>Next</a>';
  el.innerHTML = html + '</article>';
}
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
setTimeout(() => {
  const d = window.PAGE, el = document.getElementById('app');
  document.title = d.title;
  let html = '<article><h1>' + d.title + '</h1>';
  for (const p of d.paragraphs) html += '<p>' + p + '</p>';
  if (d.next) html += '<a href="' + d.next + '">Next</a>';
  el.innerHTML = html + '</article>';
}, 800);
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
];
