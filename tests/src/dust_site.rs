//! A generated news, forum and shop site whose pages have many URLs
//! ("DUST": different URLs with similar text), with the planted truth:
//! which page each URL shows.
//!
//! Duplicates a site really has, each linked from its page:
//! - a story at `/news/story_N.html` is also `/news/story?id=N` (a number
//!   moved from the path to the query), `…?utm_source=S&utm_medium=M` (a
//!   share link, several sources) and `…?print=1` (a print view);
//! - a thread's first page `/forum/thread/N` is also `…?page=1`, `…/print`
//!   and `…?sid=X` (a session id, a new one per link);
//! - a category `/shop/cat/N/` is also `…/index.html` and `…?sort=K` (its
//!   products in another order);
//! - a product `/shop/item/N.html` is also on the mobile host `m` (another
//!   127.x address, the same port).
//!
//! Decoys, which are pages of their own and must stay: `…?page=2` and
//! `…?page=3` of a thread, `…?lang=de` of a story (another text), and
//! `story?id=N` of every story (each a different story).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde_json::Value;

use crate::{Response, TimedLog, crawl_ok_with, json_lines, made_up_words, serve_named_alike};

/// Stories, threads and categories at scale 1 (each times the scale).
const STORIES: usize = 150;
const THREADS: usize = 60;
const THREAD_PAGES: usize = 3;
const CATEGORIES: usize = 40;
const ITEMS_PER_CATEGORY: usize = 5;
const SORTS: [&str; 3] = ["price", "name", "rating"];
const SOURCES: [&str; 4] = ["feed", "mail", "social", "partner"];

/// The site on `main` and its mobile alias `mobile` (`ip:port` each), at
/// `scale` times the pages of scale 1 (150 stories, 60 threads, 40
/// categories).
#[derive(Debug, Clone)]
pub struct DustSite {
    pub main: String,
    pub mobile: String,
    pub scale: usize,
}

impl DustSite {
    /// The page a URL path (with its query) shows: an id naming one distinct
    /// page, or None for a URL the site does not have.
    pub fn page_of(&self, path: &str) -> Option<String> {
        let (stories, threads, categories) = (
            STORIES * self.scale,
            THREADS * self.scale,
            CATEGORIES * self.scale,
        );
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let param = |name: &str| {
            query
                .split('&')
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")[..]))
        };
        let number = |s: &str| s.parse::<usize>().ok();
        if path == "/" {
            return Some("home".into());
        }
        if let Some(rest) = path.strip_prefix("/news/story_") {
            let n = number(rest.strip_suffix(".html")?)?;
            let de = param("lang") == Some("de");
            return (n < stories).then(|| format!("story {n}{}", if de { " de" } else { "" }));
        }
        if path == "/news/story" {
            let n = number(param("id")?)?;
            return (n < stories).then(|| format!("story {n}"));
        }
        if let Some(rest) = path.strip_prefix("/forum/thread/") {
            let (n, print) = match rest.strip_suffix("/print") {
                Some(n) => (number(n)?, true),
                None => (number(rest)?, false),
            };
            let page = if print {
                1
            } else {
                param("page").map_or(Some(1), number)?
            };
            return (n < threads && (1..=THREAD_PAGES).contains(&page))
                .then(|| format!("thread {n} page {page}"));
        }
        if let Some(rest) = path.strip_prefix("/shop/cat/") {
            let n = number(
                rest.strip_suffix("/index.html")
                    .or(rest.strip_suffix('/'))?,
            )?;
            return (n < categories).then(|| format!("category {n}"));
        }
        if let Some(rest) = path.strip_prefix("/shop/item/") {
            let n = number(rest.strip_suffix(".html")?)?;
            return (n < categories * ITEMS_PER_CATEGORY).then(|| format!("item {n}"));
        }
        None
    }

    /// Distinct pages the site has (the decoys among them).
    pub fn distinct_pages(&self) -> usize {
        let s = self.scale;
        1 + 2 * STORIES * s + THREADS * s * THREAD_PAGES + CATEGORIES * s * (1 + ITEMS_PER_CATEGORY)
    }

    /// The answer to a request for `path` on `host` (an address of the
    /// site).
    pub fn route(&self, _host: &str, path: &str) -> Response {
        if path == "/robots.txt" {
            return (404, "text/plain", Vec::new());
        }
        match self.page_of(path) {
            Some(page) => (200, "text/html", self.html(&page, path).into_bytes()),
            None => (404, "text/plain", Vec::new()),
        }
    }

    fn html(&self, page: &str, path: &str) -> String {
        let words: Vec<&str> = page.split(' ').collect();
        let n: usize = words.get(1).and_then(|n| n.parse().ok()).unwrap_or(0);
        let (title, text, links) = match words[0] {
            "home" => (
                "Home".to_string(),
                "Every story, thread and shop category.".to_string(),
                self.home_links(),
            ),
            "story" if page.ends_with(" de") => (
                format!("Geschichte {n}"),
                made_up_words(90_000 + n as u64, 220, 6_000).replace('w', "ü"),
                String::new(),
            ),
            "story" => (
                format!("Story {n}"),
                made_up_words(10_000 + n as u64, 220, 6_000),
                self.story_links(n),
            ),
            "thread" => {
                let p: usize = words[3].parse().unwrap_or(1);
                let text = made_up_words(20_000 + (n * 10 + p) as u64, 220, 6_000);
                (
                    format!("Thread {n}, page {p}"),
                    text,
                    self.thread_links(n, p),
                )
            }
            "category" => (
                format!("Category {n}"),
                self.listing(n, path),
                self.category_links(n),
            ),
            _ => (
                format!("Item {n}"),
                made_up_words(40_000 + n as u64, 220, 6_000),
                self.item_links(n),
            ),
        };
        format!(
            "<!DOCTYPE html><html><head><title>{title} - Example Site</title></head><body>\
             <nav><a href=\"/\">Home</a> <a href=\"/news/story_0.html\">News</a></nav>\
             <main><h1>{title}</h1><p>{text}</p>{links}</main>\
             <footer>Example Site, all rights reserved.</footer></body></html>"
        )
    }

    /// A category's products, each with a short description, in the order
    /// the URL's `sort` asks for.
    fn listing(&self, n: usize, path: &str) -> String {
        let mut items: Vec<usize> = (0..ITEMS_PER_CATEGORY)
            .map(|i| n * ITEMS_PER_CATEGORY + i)
            .collect();
        if let Some(k) = SORTS
            .iter()
            .position(|s| path.contains(&format!("sort={s}")))
        {
            items.rotate_left(k + 1);
        }
        items
            .iter()
            .map(|i| {
                format!(
                    "</p><p>Item {i}: {}",
                    made_up_words(50_000 + *i as u64, 45, 6_000)
                )
            })
            .collect()
    }

    fn home_links(&self) -> String {
        let mut links = String::new();
        for n in 0..STORIES * self.scale {
            links += &format!("<a href=\"/news/story_{n}.html\">Story {n}</a> ");
        }
        for n in 0..THREADS * self.scale {
            links += &format!("<a href=\"/forum/thread/{n}\">Thread {n}</a> ");
        }
        for n in 0..CATEGORIES * self.scale {
            links += &format!("<a href=\"/shop/cat/{n}/\">Category {n}</a> ");
        }
        format!("<ul><li>{links}</li></ul>")
    }

    fn story_links(&self, n: usize) -> String {
        let source = SOURCES[n % SOURCES.len()];
        let medium = if n.is_multiple_of(2) { "rss" } else { "email" };
        let next = (n + 1) % (STORIES * self.scale);
        format!(
            "<p><a href=\"/news/story?id={n}\">Permalink</a> \
             <a href=\"/news/story_{n}.html?utm_source={source}&amp;utm_medium={medium}\">Share</a> \
             <a href=\"/news/story_{n}.html?print=1\">Print</a> \
             <a href=\"/news/story_{n}.html?lang=de\">Deutsch</a> \
             <a href=\"/news/story?id={next}\">Next story</a></p>"
        )
    }

    fn thread_links(&self, n: usize, page: usize) -> String {
        let sid = format!(
            "{:x}",
            (n as u64 * 2_654_435_761 + page as u64 * 40_503) % 0xffff_ffff
        );
        let pages: String = (1..=THREAD_PAGES)
            .map(|p| format!("<a href=\"/forum/thread/{n}?page={p}\">{p}</a> "))
            .collect();
        format!(
            "<p>Pages: {pages} <a href=\"/forum/thread/{n}/print\">Print</a> \
             <a href=\"/forum/thread/{n}?sid={sid}\">Reply</a></p>"
        )
    }

    fn category_links(&self, n: usize) -> String {
        let sorts: String = SORTS
            .iter()
            .map(|s| format!("<a href=\"/shop/cat/{n}/?sort={s}\">by {s}</a> "))
            .collect();
        let items: String = (0..ITEMS_PER_CATEGORY)
            .map(|i| n * ITEMS_PER_CATEGORY + i)
            .map(|i| format!("<a href=\"/shop/item/{i}.html\">Item {i}</a> "))
            .collect();
        format!("<p>Sort: {sorts} <a href=\"/shop/cat/{n}/index.html\">All</a></p><p>{items}</p>")
    }

    fn item_links(&self, n: usize) -> String {
        format!(
            "<p><a href=\"http://{}/shop/item/{n}.html\">Mobile</a></p>",
            self.mobile
        )
    }
}

/// Serves the site on 127.0.0.21 and its mobile alias 127.0.0.22, one
/// port; returns the two `ip:port` and the server's log.
pub fn serve_dust_site(scale: usize) -> (DustSite, TimedLog) {
    serve_dust_site_paced(scale, std::time::Duration::ZERO)
}

/// Like [`serve_dust_site`], each answer after `pause` (a crawl slow
/// enough to be killed in the middle).
pub fn serve_dust_site_paced(scale: usize, pause: std::time::Duration) -> (DustSite, TimedLog) {
    for _ in 0..20 {
        let site = std::sync::Arc::new(std::sync::OnceLock::<DustSite>::new());
        let s = site.clone();
        let route = move |host: &str, path: &str| {
            std::thread::sleep(pause);
            s.get().expect("site set").route(host, path)
        };
        if let Some((port, log)) = serve_named_alike(&["127.0.0.21", "127.0.0.22"], route) {
            let dust = DustSite {
                main: format!("127.0.0.21:{port}"),
                mobile: format!("127.0.0.22:{port}"),
                scale,
            };
            site.set(dust.clone()).unwrap();
            return (dust, log);
        }
    }
    panic!("no port free on both 127.0.0.21 and 127.0.0.22");
}

/// Crawls the site into `dir/out` (`predict` on or off; as cluster worker
/// `w0` when `cluster` names the nodes and crawl); returns `stats.json`.
pub fn crawl(
    dir: &Path,
    site: &DustSite,
    predict: bool,
    cluster: Option<(&[String], &str)>,
) -> Value {
    write_config(dir, site, predict, cluster);
    let worker: &[&str] = if cluster.is_some() {
        &["--worker", "w0"]
    } else {
        &[]
    };
    crawl_ok_with(dir, worker)
}

/// Writes `dir/c.toml`: the site's two hosts in scope, no delay, four
/// requests at a time, checkpoints every second, output in `dir/out`.
pub fn write_config(
    dir: &Path,
    site: &DustSite,
    predict: bool,
    cluster: Option<(&[String], &str)>,
) {
    let cluster = crate::redis_cluster::config_section(cluster);
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[scope]\nhosts = [\"127.0.0.21\", \"127.0.0.22\"]\n\
             [politeness]\ndelay_ms = 0\nper_host_concurrency = 4\n\
             [fetch]\nallow_private_networks = true\n\
             [dedup]\npredict = {predict}\n\
             [seeds]\nurls = [\"http://{}/\"]\nsitemaps = false\n\
             [output]\ndir = \"{}\"\ncheckpoint_secs = 1\n{cluster}",
            site.main,
            dir.join("out").display()
        ),
    )
    .unwrap();
}

/// The path and query of a URL.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// What a crawl did, by the planted truth.
#[derive(Debug)]
pub struct Figures {
    /// Requests for pages (robots.txt aside).
    pub requests: usize,
    /// Requests for a page already requested under another URL.
    pub duplicate_fetches: usize,
    /// Distinct pages in the corpus.
    pub written: BTreeSet<String>,
    /// Predicted duplicates, and those whose URL shows another page.
    pub predicted: usize,
    pub false_predictions: Vec<String>,
}

pub fn figures(site: &DustSite, dir: &Path, log: &TimedLog) -> Figures {
    let page_of = |p: &str| site.page_of(p);
    let requests: Vec<String> = (log.lock().unwrap().iter())
        .map(|(_, p)| p.clone())
        .filter(|p| !p.ends_with("/robots.txt"))
        .collect();
    let mut first = HashMap::new();
    for r in &requests {
        let page = page_of(path_of(&format!("http://{r}"))).unwrap_or_default();
        *first.entry(page).or_insert(0usize) += 1;
    }
    let duplicate_fetches = first.values().map(|n| n - 1).sum();
    let written = (json_lines(&dir.join("out/pages-00000.jsonl")).iter())
        .filter(|p| p["duplicate_of"].is_null())
        .filter_map(|p| page_of(path_of(p["url"].as_str()?)))
        .collect();
    let dups = json_lines(&dir.join("out/duplicates.jsonl"));
    let predicted: Vec<&Value> = dups.iter().filter(|d| d["kind"] == "predicted").collect();
    let false_predictions = predicted
        .iter()
        .filter(|d| {
            let url = page_of(path_of(d["url"].as_str().unwrap()));
            url != page_of(path_of(d["duplicate_of"].as_str().unwrap()))
        })
        .map(|d| d.to_string())
        .collect();
    Figures {
        requests: requests.len(),
        duplicate_fetches,
        written,
        predicted: predicted.len(),
        false_predictions,
    }
}
