//! The loop over a store kept in memory, against a loopback server: what
//! any store can rely on, whatever keeps its state.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nearcrawl_fetch::Fetcher;
use nearcrawl_index::{DedupConfig, Deduper, Prepared};
use url::Url;

use super::*;
use crate::config::Config;
use crate::page::Pipeline;

/// Requests as the server saw them: when, and the path.
type Log = Arc<Mutex<Vec<(std::time::Instant, String)>>>;

/// Serves `pages` (path -> HTML) on 127.0.0.1, robots.txt answered 404;
/// every request's path is logged.
fn serve(pages: HashMap<String, String>) -> (Url, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (pages, seen) = (pages.clone(), seen.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split(' ').nth(1).unwrap_or("/").to_string();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    seen.lock()
                        .unwrap()
                        .push((std::time::Instant::now(), path.clone()));
                    let (status, body) = match pages.get(&path) {
                        Some(body) => ("200 OK", body.clone()),
                        None => ("404 Not Found", String::new()),
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    let sent = stream.write_all(head.as_bytes());
                    if sent
                        .and_then(|()| stream.write_all(body.as_bytes()))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (base, log)
}

fn page(title: &str, words: u64, links: &[&str]) -> String {
    let text: Vec<String> = (0..300)
        .map(|i| format!("w{}", (i * 7919 + words) % 997))
        .collect();
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    format!(
        "<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{}</p>{links}</main></body></html>",
        text.join(" ")
    )
}

/// A store in memory: a queue, a seen set, a gate, and what was committed.
struct MemStore {
    queue: VecDeque<(Url, u32)>,
    seen: HashSet<Url>,
    pages: Arc<MemPages>,
    committed: Vec<Url>,
    /// Sent back by the tasks (`again`), then handed out again.
    again: usize,
    /// URLs handed out and not finished.
    out: usize,
    stats: Stats,
    /// The figures `finish` was given, each time.
    finished: Arc<Mutex<Vec<Stats>>>,
}

struct MemPages {
    gate: Mutex<(Deduper, Vec<String>)>,
}

impl PageStore for MemPages {
    type Claim = ();

    fn start(&self) -> Start {
        Start::WhenReady(Duration::ZERO)
    }

    async fn give_back_page(&self, _: &Claimed<()>) {}

    async fn admit(&self, _: &Claimed<()>) -> Admitted {
        Admitted::Yes
    }

    fn wants_sitemaps(&self, _: &Url, _: bool) -> bool {
        false
    }

    async fn take_server_turn(&self, _: &mut Claimed<()>, _: &Stages) -> bool {
        true
    }

    fn seen(&self, _: &Url) -> bool {
        false
    }

    async fn mark_read(&self, _: &Url) {}

    async fn read_before(&self, _: &Url) -> bool {
        false
    }

    async fn predict(&self, _: &Url) -> Option<crate::run::Prediction> {
        None
    }

    async fn judge(
        &self,
        claimed: &mut Claimed<()>,
        prepared: Prepared,
    ) -> Result<Verdicted, GateError> {
        let mut gate = self.gate.lock().unwrap();
        let (dedup, urls) = &mut *gate;
        let judgement = dedup
            .judge_prepared(prepared, |_| true)
            .map_err(|e| GateError::Failed(e.to_string()))?;
        let original = judgement
            .decision
            .verdict
            .duplicate_of()
            .map(|(of, ..)| urls[of as usize].clone());
        if original.is_none() {
            dedup.record(urls.len() as u64, &judgement).unwrap();
            urls.push(claimed.url.to_string());
        }
        Ok((judgement.decision, original))
    }
}

impl CrawlStore for MemStore {
    type Claim = ();
    type Pages = MemPages;
    type Error = std::io::Error;
    const GROUP_AGE: Duration = Duration::from_millis(5);

    fn pages(&self) -> Arc<MemPages> {
        self.pages.clone()
    }

    async fn maintain(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    async fn take(&mut self, room: usize, _in_flight: usize) -> Result<Taken<()>, Self::Error> {
        let mut taken = Taken::nothing(Duration::from_millis(5));
        while taken.claims.len() < room {
            let Some((url, depth)) = self.queue.pop_front() else {
                break;
            };
            self.out += 1;
            taken.claims.push(Claimed {
                url,
                depth,
                sitemap: None,
                claim: (),
            });
        }
        Ok(taken)
    }

    async fn finished(&mut self, finished: &[Done<()>]) -> Result<(), Self::Error> {
        for done in finished {
            self.out -= 1;
            if done.again {
                self.again += 1;
                self.queue
                    .push_front((done.claimed.url.clone(), done.claimed.depth));
            }
        }
        Ok(())
    }

    async fn commit(&mut self, group: Vec<Done<()>>) -> Result<(), Self::Error> {
        for done in group.into_iter().filter(|d| !d.again) {
            assert!(
                !self.committed.contains(&done.claimed.url),
                "{} committed twice",
                done.claimed.url
            );
            self.committed.push(done.claimed.url.clone());
            self.stats.merge(done.stats);
            for link in done.links {
                if self.seen.insert(link.clone()) {
                    self.queue.push_back((link, done.claimed.depth + 1));
                }
            }
        }
        Ok(())
    }

    async fn checkpoint(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    async fn over(&mut self, stopping: bool) -> Result<bool, Self::Error> {
        assert_eq!(self.out, 0, "over asked with URLs out");
        Ok(stopping || self.queue.is_empty())
    }

    async fn show(&mut self, _: usize) -> Result<(), Self::Error> {
        Ok(())
    }

    fn stats(&self) -> Stats {
        self.stats.clone()
    }

    fn metrics(&self) -> Box<dyn Fn() -> crate::stats::Metrics + Send + Sync> {
        unimplemented!("not read by these tests")
    }

    async fn finish(&mut self, stats: &Stats) -> Result<(), Self::Error> {
        self.finished.lock().unwrap().push(stats.clone());
        Ok(())
    }
}

fn open(seed: &Url, name: &str, delay_ms: u64) -> (MemStore, Arc<Stages>) {
    let toml = format!(
        "[politeness]\ndelay_ms = {delay_ms}\nglobal_concurrency = 4\nper_host_concurrency = 4\n\
         [fetch]\nallow_private_networks = true\n"
    );
    let config = Config::parse(&toml, std::path::Path::new("test.toml")).unwrap();
    let fetcher = Fetcher::new(config.fetch_config()).unwrap();
    let dir = std::env::temp_dir().join(format!("nearcrawl-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dedup = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let seeds = [(seed.clone(), 0)];
    let pages = Pipeline::new(&config, &seeds, dedup.fingerprinter(), None, None).unwrap();
    let stages = Arc::new(Stages::new(config, fetcher, pages));
    let store = MemStore {
        queue: VecDeque::from([(seed.clone(), 0)]),
        seen: HashSet::from([seed.clone()]),
        pages: Arc::new(MemPages {
            gate: Mutex::new((dedup, Vec::new())),
        }),
        committed: Vec::new(),
        again: 0,
        out: 0,
        stats: Stats::default(),
        finished: Arc::default(),
    };
    (store, stages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_is_committed_once_and_a_copys_links_are_never_followed() {
    let mut site = HashMap::new();
    site.insert("/".into(), page("home", 1, &["/a", "/b", "/copy"]));
    site.insert("/a".into(), page("alpha", 2, &["/c", "/"]));
    site.insert("/b".into(), page("beta", 3, &["/c"]));
    site.insert("/c".into(), page("gamma", 4, &[]));
    // The home page again, with a link only it has.
    site.insert("/copy".into(), page("home", 1, &["/only-from-the-copy"]));
    site.insert("/only-from-the-copy".into(), page("delta", 5, &[]));
    let (base, log) = serve(site);
    let (mut store, stages) = open(&base, "once", 0);
    run(&mut store, &stages).await.unwrap();
    let mut committed: Vec<String> = store
        .committed
        .iter()
        .map(|u| u.path().to_string())
        .collect();
    committed.sort();
    assert_eq!(committed, ["/", "/a", "/b", "/c", "/copy"]);
    let requested: Vec<String> = log.lock().unwrap().iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(
        requested.iter().filter(|p| *p == "/robots.txt").count(),
        1,
        "{requested:?}"
    );
    assert!(
        !requested.contains(&"/only-from-the-copy".to_string()),
        "{requested:?}"
    );
    // The seed's turn went to robots.txt; with no delay the next is now.
    assert_eq!(store.again, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_crawl_takes_nothing_and_hands_nothing_out() {
    let mut site = HashMap::new();
    site.insert("/".into(), page("home", 1, &["/a"]));
    let (base, log) = serve(site);
    let (mut store, stages) = open(&base, "stopped", 0);
    stages.stop();
    run(&mut store, &stages).await.unwrap();
    assert!(store.committed.is_empty());
    assert_eq!(store.queue.len(), 1, "the seed is still queued");
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_takes_the_hosts_turn_and_the_url_waits_for_the_next() {
    let mut site = HashMap::new();
    site.insert("/".into(), page("home", 1, &["/a"]));
    site.insert("/a".into(), page("alpha", 2, &[]));
    let (base, log) = serve(site);
    let (mut store, stages) = open(&base, "robots", 300);
    run(&mut store, &stages).await.unwrap();
    assert_eq!(store.committed.len(), 2);
    assert_eq!(store.again, 1, "the seed went back once, for robots.txt");
    let log = log.lock().unwrap().clone();
    let paths: Vec<&str> = log.iter().map(|(_, p)| p.as_str()).collect();
    assert_eq!(paths, ["/robots.txt", "/", "/a"]);
    for pair in log.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(
            gap >= Duration::from_millis(290),
            "{gap:?} between {pair:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_finishes_its_store_once_with_this_runs_figures() {
    let mut site = HashMap::new();
    site.insert("/".into(), page("home", 1, &["/a", "/b"]));
    site.insert("/a".into(), page("alpha", 2, &[]));
    site.insert("/b".into(), page("beta", 3, &[]));
    let (base, _log) = serve(site);
    let (mut store, stages) = open(&base, "finish", 0);
    // Counts of an earlier run of the same crawl.
    store.stats.fetched = 10;
    let finished = store.finished.clone();
    let stats = Crawl::new(store, stages).run().await.unwrap();
    assert_eq!((stats.fetched, stats.fetched_this_run), (13, 3));
    assert!(stats.elapsed_secs > 0.0);
    let finished = finished.lock().unwrap();
    assert_eq!(finished.len(), 1, "finished once");
    assert_eq!(finished[0].fetched_this_run, 3);
}
