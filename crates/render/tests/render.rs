//! Pages rendered in Debian's Chromium (`tests/run` installs it), every
//! request answered from a map in memory: what the browser asked for is
//! what these tests see.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nearcrawl_render::{
    Answer, Browser, BrowserConfig, RenderError, ResourceKind, Resources, Served,
};
use url::Url;

/// Answers from a map of paths; records every request it was asked.
#[derive(Clone, Default)]
struct Site {
    files: Arc<HashMap<&'static str, (&'static str, &'static str)>>,
    asked: Arc<Mutex<Vec<(String, ResourceKind)>>>,
}

impl Site {
    fn new(files: &[(&'static str, &'static str, &'static str)]) -> Site {
        let files = files.iter().map(|&(p, t, b)| (p, (t, b))).collect();
        Site {
            files: Arc::new(files),
            ..Site::default()
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|(u, _)| u.clone())
            .collect()
    }
}

impl Resources for Site {
    fn fetch(&self, url: Url, kind: ResourceKind) -> impl Future<Output = Answer> + Send + 'static {
        self.asked
            .lock()
            .unwrap()
            .push((url.path().to_string(), kind));
        let file = self.files.get(url.path()).copied();
        async move {
            match file {
                Some((t, body)) => Answer::Body {
                    status: 200,
                    headers: vec![("Content-Type".into(), t.into())],
                    body: body.as_bytes().to_vec(),
                },
                None => Answer::Refused("not found"),
            }
        }
    }
}

fn browser(timeout: Duration) -> Browser {
    assert!(
        std::process::Command::new("chromium")
            .arg("--version")
            .output()
            .is_ok(),
        "chromium is missing: apt-get install -y chromium (tests/run does)"
    );
    Browser::new(BrowserConfig {
        page_timeout: timeout,
        ..BrowserConfig::default()
    })
}

fn html(body: &str) -> Served {
    Served {
        status: 200,
        headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
        body: body.as_bytes().to_vec(),
    }
}

fn url(path: &str) -> Url {
    Url::parse("http://127.0.0.1:9/")
        .unwrap()
        .join(path)
        .unwrap()
}

const SHELL: &str = r#"<!doctype html><html><head><title>App</title>
<link rel="stylesheet" href="/app.css"><script src="/app.js"></script></head>
<body><div id="root"></div><img src="/logo.png">
<noscript>You need to enable JavaScript to run this app.</noscript></body></html>"#;

const APP: &str = r#"
fetch('/api/article.json').then(r => r.json()).then(d => {
  document.getElementById('root').innerHTML =
    '<article><h1>' + d.title + '</h1><p>' + d.body + '</p><a href="/next">Next</a></article>';
});"#;

#[tokio::test]
async fn a_shell_gets_its_text_from_a_json_endpoint_and_styles_and_images_are_refused() {
    let site = Site::new(&[
        ("/app.js", "text/javascript", APP),
        (
            "/api/article.json",
            "application/json",
            r#"{"title": "Rendered", "body": "Text the script fetched."}"#,
        ),
        ("/app.css", "text/css", "body { color: red }"),
    ]);
    let browser = browser(Duration::from_secs(15));
    let page = browser
        .render(&url("/a"), html(SHELL), &site)
        .await
        .unwrap();
    assert!(
        page.html.contains("<p>Text the script fetched.</p>"),
        "{}",
        page.html
    );
    assert!(page.html.contains(r#"<a href="/next">"#));
    assert!(page.settled);
    // The document was the one served: never asked again.
    assert_eq!(site.asked(), ["/app.js", "/api/article.json"]);
    assert_eq!(page.requested, 2);
    assert!(
        page.refused >= 2,
        "the style and the image: {}",
        page.refused
    );
}

#[tokio::test]
async fn content_shown_after_a_short_timer_is_waited_for() {
    let body = r#"<div id=out></div><script>
      setTimeout(() => { out.textContent = 'after a second'; }, 1000);
      setInterval(() => {}, 50);
    </script>"#;
    let browser = browser(Duration::from_secs(15));
    let started = Instant::now();
    let page = browser
        .render(&url("/t"), html(body), &Site::default())
        .await
        .unwrap();
    assert!(page.html.contains("after a second"), "{}", page.html);
    assert!(page.settled, "an interval is not waited for");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn dialogs_popups_and_frames_do_not_stall_a_page_nor_are_fetched() {
    let body = r#"<div id=out></div><script>
      alert('hello'); confirm('sure?'); window.open('/popup');
      out.textContent = 'went on';
    </script><iframe src="/frame.html"></iframe>"#;
    let site = Site::default();
    let browser = browser(Duration::from_secs(15));
    let page = browser.render(&url("/d"), html(body), &site).await.unwrap();
    assert!(page.html.contains("went on"), "{}", page.html);
    assert!(site.asked().is_empty(), "{:?}", site.asked());
}

#[tokio::test]
async fn a_script_that_never_ends_is_a_timeout_and_the_next_page_renders() {
    let browser = browser(Duration::from_secs(3));
    let hostile = "<p>before</p><script>while (true) {}</script>";
    let started = Instant::now();
    let result = browser
        .render(&url("/loop"), html(hostile), &Site::default())
        .await;
    assert_eq!(
        result.unwrap_err(),
        RenderError::Timeout(Duration::from_secs(3))
    );
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
    let page = browser
        .render(
            &url("/ok"),
            html("<div id=x></div><script>x.textContent='fine'</script>"),
            &Site::default(),
        )
        .await
        .unwrap();
    assert!(page.html.contains("fine"));
}

#[tokio::test]
async fn a_page_that_keeps_asking_is_read_at_the_time_limit() {
    let body = r#"<div id=out>0</div><script>
      let n = 0; (function again() { out.textContent = ++n; setTimeout(again, 100); })();
    </script>"#;
    let browser = browser(Duration::from_secs(2));
    let page = browser
        .render(&url("/busy"), html(body), &Site::default())
        .await
        .unwrap();
    assert!(!page.settled);
    assert!(
        !page.html.contains("<div id=\"out\">0</div>"),
        "{}",
        page.html
    );
}

#[tokio::test]
async fn no_browser_is_an_error_of_its_own_kind_and_is_tried_once() {
    let browser = Browser::new(BrowserConfig {
        program: "/nonexistent/chromium".into(),
        ..BrowserConfig::default()
    });
    for _ in 0..2 {
        let e = browser
            .render(&url("/"), html(SHELL), &Site::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), "render_unavailable", "{e}");
    }
    assert!(browser.unavailable().await.is_some());
}
