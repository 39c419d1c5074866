//! Time per page in the browser, by step: pages rendered one after another
//! (and N at once), every request answered from memory at once.
//!
//! ```sh
//! cargo run --release -p nearcrawl-render --example render_latency -- 40 2
//! ```

use std::time::Instant;

use nearcrawl_render::{Answer, Browser, BrowserConfig, ResourceKind, Resources, Served};
use url::Url;

#[derive(Clone)]
struct Data;

impl Resources for Data {
    fn fetch(&self, _: Url, _: ResourceKind) -> impl Future<Output = Answer> + Send + 'static {
        let body = br#"{"text": "Text the script fetched from its endpoint."}"#.to_vec();
        async move {
            Answer::Body {
                status: 200,
                headers: vec![("Content-Type".into(), "application/json".into())],
                body,
            }
        }
    }
}

const SHELL: &str = r#"<!doctype html><title>App</title><div id="root"></div><script>
fetch('/api/page.json').then(r => r.json()).then(d => { root.innerHTML = '<p>' + d.text + '</p>'; });
</script>"#;

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (pages, tabs) = (
        args.first().copied().unwrap_or(40),
        args.get(1).copied().unwrap_or(2),
    );
    let browser = std::sync::Arc::new(Browser::new(BrowserConfig {
        tabs,
        ..BrowserConfig::default()
    }));
    let url = Url::parse("http://127.0.0.1:9/page").unwrap();
    let served = || Served {
        status: 200,
        headers: vec![],
        body: SHELL.as_bytes().to_vec(),
    };
    let started = Instant::now();
    browser.render(&url, served(), &Data).await.unwrap();
    println!("first page (the browser starting): {:?}", started.elapsed());
    let mut times = Vec::new();
    for _ in 0..pages {
        let t = Instant::now();
        let page = browser.render(&url, served(), &Data).await.unwrap();
        assert!(page.html.contains("Text the script fetched"));
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "one at a time: median {:?}, p90 {:?}",
        times[times.len() / 2],
        times[times.len() * 9 / 10]
    );
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..pages {
        let (b, u) = (browser.clone(), url.clone());
        let s = served();
        set.spawn(async move { b.render(&u, s, &Data).await.unwrap() });
    }
    while set.join_next().await.is_some() {}
    let each = t.elapsed() / pages as u32;
    println!(
        "{tabs} at a time: {:.1} pages/s ({:?} a page)",
        1.0 / each.as_secs_f64(),
        each
    );
}
