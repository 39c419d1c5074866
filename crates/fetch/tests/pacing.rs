//! A host's pacing as its server sees it: forgetting idle hosts
//! (`Fetcher::forget_idle`) keeps a broad crawl's memory to the hosts it is
//! crawling and never makes a request early; a request whose turn would
//! come after its deadline (`Ask::start_by`) is never sent.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use nearcrawl_fetch::{Ask, FetchConfig, FetchError, Fetcher, RobotsStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

type Log = Arc<Mutex<Vec<(String, Instant)>>>;

/// A server whose robots.txt says `Crawl-delay: 1` and disallows
/// `/private/`; it logs each request's path and arrival time.
async fn server() -> (SocketAddr, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log: Log = Arc::default();
    let served = log.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = served.clone();
            tokio::spawn(async move {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&req);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                log.lock().unwrap().push((path.clone(), Instant::now()));
                let (ctype, body) = if path == "/robots.txt" {
                    (
                        "text/plain",
                        "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n",
                    )
                } else {
                    ("text/html", "<p>page</p>")
                };
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(answer.as_bytes()).await;
            });
        }
    });
    (addr, log)
}

#[derive(Default)]
struct MemoryStore(Mutex<HashMap<String, (SystemTime, Vec<u8>)>>);

impl RobotsStore for MemoryStore {
    fn load(&self, origin: &str) -> Option<(SystemTime, Vec<u8>)> {
        self.0.lock().unwrap().get(origin).cloned()
    }
    fn save(&self, origin: &str, expires: SystemTime, text: &[u8]) {
        self.0
            .lock()
            .unwrap()
            .insert(origin.to_string(), (expires, text.to_vec()));
    }
}

fn config() -> FetchConfig {
    FetchConfig {
        allow_private_networks: true,
        per_host_delay: Duration::from_millis(200),
        per_host_concurrency: 4,
        // The idle time before a host is forgotten is this cap.
        crawl_delay_cap: Duration::from_millis(1500),
        ..FetchConfig::default()
    }
}

const ANY: &(dyn Fn(&Url) -> bool + Send + Sync) = &|_| true;

fn starts(log: &Log, path: &str) -> Vec<Instant> {
    let log = log.lock().unwrap();
    log.iter().filter(|(p, _)| p == path).map(|e| e.1).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_host_is_forgotten_and_still_paced_by_its_crawl_delay() {
    let (addr, log) = server().await;
    let f = Fetcher::new(config())
        .unwrap()
        .with_robots_store(Arc::new(MemoryStore::default()));
    let page = |p: &str| Url::parse(&format!("http://{addr}{p}")).unwrap();

    f.fetch(&page("/a"), ANY).await.unwrap();
    assert_eq!(f.forget_idle(), (0, 0), "asked just now: kept");
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(f.forget_idle(), (1, 1), "idle past the cap: forgotten");

    // Forgotten, the host is paced by its Crawl-delay again (read back
    // from the store, not fetched again), even with requests in parallel.
    let (b, c, d) = (page("/b"), page("/c"), page("/d"));
    let (b, c, d) = tokio::join!(f.fetch(&b, ANY), f.fetch(&c, ANY), f.fetch(&d, ANY));
    for r in [b, c, d] {
        r.unwrap();
    }
    assert_eq!(starts(&log, "/robots.txt").len(), 1, "robots.txt once");
    let mut pages: Vec<Instant> = ["/b", "/c", "/d"]
        .iter()
        .flat_map(|p| starts(&log, p))
        .collect();
    pages.sort();
    for pair in pages.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(990), "gap {gap:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_store_robots_txt_is_kept_until_it_expires() {
    let (addr, log) = server().await;
    let f = Fetcher::new(config()).unwrap();
    let page = |p: &str| Url::parse(&format!("http://{addr}{p}")).unwrap();
    f.fetch(&page("/a"), ANY).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(f.forget_idle(), (1, 0), "the host goes, its rules stay");
    f.fetch(&page("/b"), ANY).await.unwrap();
    assert_eq!(starts(&log, "/robots.txt").len(), 1);
}

/// `forbids` tells a scheduler which URLs would make no request; it reads
/// only the cache, so it never asks the server anything itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbids_answers_from_cached_rules_only() {
    let (addr, log) = server().await;
    let f = Fetcher::new(config()).unwrap();
    let page = |p: &str| Url::parse(&format!("http://{addr}{p}")).unwrap();
    assert!(!f.forbids(&page("/private/1")), "rules not at hand yet");
    assert!(log.lock().unwrap().is_empty(), "and nothing asked for them");
    f.fetch(&page("/a"), ANY).await.unwrap();
    assert!(f.forbids(&page("/private/1")));
    assert!(f.forbids(&page("/private/2?q=1")));
    assert!(!f.forbids(&page("/b")));
    assert!(!f.forbids(&page("/robots.txt")));
    let other = Url::parse("http://127.0.0.2:1/private/1").unwrap();
    assert!(!f.forbids(&other), "another origin's rules are not known");
    assert_eq!(log.lock().unwrap().len(), 2, "robots.txt and /a only");
}

/// A shared schedule hands a URL out for a turn that starts now; if the
/// host's own pacing would start it later than the slack allows, the
/// request is not sent at all (the URL goes back to the schedule).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_turn_comes_after_its_deadline_is_not_sent() {
    let (addr, log) = server().await;
    let f = Fetcher::new(config()).unwrap();
    let page = |p: &str| Url::parse(&format!("http://{addr}{p}")).unwrap();
    f.fetch(&page("/a"), ANY).await.unwrap();
    // Crawl-delay 1: /b's turn is a second away.
    let by = |slack| Ask {
        start_by: Some(Instant::now() + Duration::from_millis(slack)),
        ..Ask::new(ANY)
    };
    let asked = Instant::now();
    let late = f.fetch_with(&page("/b"), by(10)).await;
    assert_eq!(late.unwrap_err(), FetchError::Late);
    assert!(
        asked.elapsed() < Duration::from_millis(900),
        "without waiting for the turn"
    );
    assert!(starts(&log, "/b").is_empty(), "never sent");
    // With room for the host's turn, it is sent when the turn comes.
    f.fetch_with(&page("/b"), by(2500)).await.unwrap();
    let (a, b) = (starts(&log, "/a")[0], starts(&log, "/b")[0]);
    assert!(b - a >= Duration::from_millis(990), "{:?}", b - a);
}
