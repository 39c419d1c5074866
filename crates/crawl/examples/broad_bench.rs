//! A broad crawl of a generated web of many hosts, measured where the
//! servers see it: early requests, disallowed URLs fetched, reachable pages
//! missed, wall time against the politeness bound, and the crawler's peak
//! RSS.
//!
//! ```text
//! cargo build --release -p nearcrawl-cli
//! cargo run --release -p nearcrawl-crawl --example broad_bench -- [HOSTS] [MIN_PAGES] [MAX_PAGES] [CONCURRENCY]
//! ```
//!
//! Defaults: 1,000 hosts of 20-50 pages. Every host listens on its own
//! loopback address (127.1.x.y, one port), served by this process; the
//! crawler is the `nearcrawl` binary beside this example (or
//! `NEARCRAWL_BIN`), run with an open scope (`hosts = ["*"]`), a 1 s delay
//! and one request per host at a time. Every page has text of its own and
//! links to two pages of its host and to the home pages of two other hosts;
//! 20 hosts are seeds. Every 10th host's robots.txt says `Crawl-delay: 2`,
//! every 7th disallows `/private/` (and links there), every 13th has none
//! (404).
//!
//! The bound: an ideal crawler with no latency and unlimited concurrency
//! that fetches robots.txt when it first sees a host and then one URL per
//! delay, each as soon as it is known. No polite crawler can finish
//! earlier; the goal is to finish within 1.15 times it. Besides the
//! bound, it prints where a crawl falls behind it: how late hosts are
//! first asked (links reach the frontier once their page is judged and
//! committed), and how much longer than its delays each host takes from
//! its first request to its last (waiting for a turn). CONCURRENCY is the
//! crawler's `global_concurrency` (default 64, the crawler's own).

mod common;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use common::{Rng, arg, cpu_seconds, proc_status, vocabulary};

const PORT: u16 = 18_080;
const SEEDS: usize = 20;
const DELAY: Duration = Duration::from_secs(1);

/// One generated host.
struct Host {
    pages: usize,
    crawl_delay: Option<u64>,
    disallow_private: bool,
    robots_404: bool,
    /// Per page: links within the host (page numbers) and to other hosts'
    /// home pages (host numbers).
    links: Vec<(Vec<usize>, Vec<usize>)>,
}

impl Host {
    fn delay(&self) -> Duration {
        DELAY.max(Duration::from_secs(self.crawl_delay.unwrap_or(0)))
    }
}

fn ip(h: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 1, (h / 200) as u8, (h % 200 + 1) as u8)
}

fn path(page: usize) -> String {
    if page == 0 {
        "/".into()
    } else {
        format!("/p/{page}")
    }
}

fn build(hosts: usize, min_pages: usize, max_pages: usize) -> Vec<Host> {
    let mut rng = Rng(11);
    (0..hosts)
        .map(|h| {
            let pages = min_pages + rng.below(max_pages - min_pages + 1);
            let links = (0..pages)
                .map(|j| {
                    let inner = vec![(j + 1) % pages, (j * 7 + 3) % pages];
                    let outer = vec![rng.below(hosts), rng.below(hosts)];
                    (inner, outer)
                })
                .collect();
            // robots.txt rules only where there is a robots.txt.
            let robots_404 = h % 13 == 5 && h % 7 != 3 && h % 10 != 9;
            Host {
                pages,
                crawl_delay: (h % 10 == 9).then_some(2),
                disallow_private: h % 7 == 3,
                robots_404,
                links,
            }
        })
        .collect()
}

/// Distinct words, so each page's text is its own.
fn distinct_words() -> Vec<String> {
    let mut words = vocabulary();
    words.sort();
    words.dedup();
    words
}

fn page_html(site: &[Host], vocab: &[String], h: usize, j: usize) -> String {
    let mut rng = Rng((h as u64) << 20 | j as u64);
    let text: Vec<&str> = (0..180)
        .map(|_| vocab[rng.below(vocab.len())].as_str())
        .collect();
    let (inner, outer) = &site[h].links[j];
    let mut links: String = inner
        .iter()
        .map(|p| format!("<a href=\"{}\">more</a> ", path(*p)))
        .collect();
    for o in outer {
        links.push_str(&format!(
            "<a href=\"http://{}:{PORT}/\">elsewhere</a> ",
            ip(*o)
        ));
    }
    if site[h].disallow_private {
        links.push_str(&format!("<a href=\"/private/{j}\">private</a>"));
    }
    format!(
        "<html><head><title>Site {h} page {j}</title></head><body><main><h1>Site {h} page {j}</h1>\
         <p>{}</p><p>{}</p><nav>{links}</nav></main></body></html>",
        text[..90].join(" "),
        text[90..].join(" ")
    )
}

fn robots(host: &Host) -> Option<String> {
    if host.robots_404 {
        return None;
    }
    let mut r = "User-agent: *\n".to_string();
    if let Some(d) = host.crawl_delay {
        r.push_str(&format!("Crawl-delay: {d}\n"));
    }
    if host.disallow_private {
        r.push_str("Disallow: /private/\n");
    }
    Some(r)
}

/// (arrival, host, path) of every request.
type Log = Arc<Mutex<Vec<(Instant, u32, String)>>>;

fn respond(
    site: &[Host],
    vocab: &[String],
    h: usize,
    path: &str,
) -> (&'static str, &'static str, String) {
    let not_found = ("404 Not Found", "text/plain", "no".to_string());
    if path == "/robots.txt" {
        return match robots(&site[h]) {
            Some(r) => ("200 OK", "text/plain", r),
            None => not_found,
        };
    }
    let page = if path == "/" {
        Some(0)
    } else {
        path.strip_prefix("/p/")
            .and_then(|s| s.parse::<usize>().ok())
    };
    match page.filter(|j| *j < site[h].pages) {
        Some(j) => ("200 OK", "text/html", page_html(site, vocab, h, j)),
        None if path.starts_with("/private/") => ("200 OK", "text/html", "<p>private</p>".into()),
        None => not_found,
    }
}

async fn serve_host(site: Arc<Vec<Host>>, vocab: Arc<Vec<String>>, h: usize, log: Log) {
    let addr = SocketAddr::new(IpAddr::V4(ip(h)), PORT);
    let listener = TcpListener::bind(addr)
        .await
        .unwrap_or_else(|e| panic!("bind {addr}: {e}"));
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let _ = sock.set_nodelay(true);
        let (site, vocab, log) = (site.clone(), vocab.clone(), log.clone());
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            let mut req = Vec::new();
            loop {
                // Idle connections are closed after 5 s, as Apache does.
                let n =
                    match tokio::time::timeout(Duration::from_secs(5), sock.read(&mut buf)).await {
                        Ok(Ok(n)) if n > 0 => n,
                        _ => return,
                    };
                req.extend_from_slice(&buf[..n]);
                while let Some(end) = req.windows(4).position(|w| w == b"\r\n\r\n") {
                    let at = Instant::now();
                    let head = String::from_utf8_lossy(&req[..end]).to_string();
                    req.drain(..end + 4);
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let (status, ctype, body) = respond(&site, &vocab, h, &path);
                    log.lock().unwrap().push((at, h as u32, path));
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    if sock.write_all(head.as_bytes()).await.is_err()
                        || sock.write_all(body.as_bytes()).await.is_err()
                    {
                        return;
                    }
                }
            }
        });
    }
}

/// Pages reachable from the seeds without disallowed URLs, per host.
fn reachable(site: &[Host]) -> Vec<HashSet<usize>> {
    let mut seen: Vec<HashSet<usize>> = vec![HashSet::new(); site.len()];
    let mut todo: VecDeque<(usize, usize)> = (0..SEEDS.min(site.len())).map(|h| (h, 0)).collect();
    for (h, p) in &todo {
        seen[*h].insert(*p);
    }
    while let Some((h, j)) = todo.pop_front() {
        let (inner, outer) = &site[h].links[j];
        let next = inner
            .iter()
            .map(|p| (h, *p))
            .chain(outer.iter().map(|o| (*o, 0)));
        for (h2, p2) in next {
            if seen[h2].insert(p2) {
                todo.push_back((h2, p2));
            }
        }
    }
    seen
}

/// The ideal crawl's finish time (see the crate doc), and when it first
/// requests each host: events in time order; a host's first request is
/// its robots.txt, then one URL per delay.
fn bound(site: &[Host]) -> (Duration, Vec<Option<Duration>>) {
    #[derive(Default)]
    struct HostSim {
        queue: VecDeque<(Duration, usize)>,
        next: Duration,
        scheduled: bool,
    }
    let mut sims: Vec<HostSim> = (0..site.len()).map(|_| HostSim::default()).collect();
    let mut known: Vec<HashSet<usize>> = vec![HashSet::new(); site.len()];
    let mut events: BinaryHeap<Reverse<(Duration, usize)>> = BinaryHeap::new();
    let mut end = Duration::ZERO;
    let mut first: Vec<Option<Duration>> = vec![None; site.len()];
    let mut discover =
        |h: usize, p: usize, at: Duration, sims: &mut Vec<HostSim>, events: &mut BinaryHeap<_>| {
            if !known[h].insert(p) {
                return;
            }
            let s = &mut sims[h];
            if known[h].len() == 1 {
                first[h] = Some(at);
                // robots.txt at discovery, the first page one delay later.
                s.next = at + site[h].delay();
            }
            s.queue.push_back((at, p));
            if !s.scheduled {
                s.scheduled = true;
                let when = s.next.max(at);
                events.push(Reverse((when, h)));
            }
        };
    for h in 0..SEEDS.min(site.len()) {
        discover(h, 0, Duration::ZERO, &mut sims, &mut events);
    }
    while let Some(Reverse((t, h))) = events.pop() {
        let Some((_, p)) = sims[h].queue.pop_front() else {
            sims[h].scheduled = false;
            continue;
        };
        end = end.max(t);
        sims[h].next = t + site[h].delay();
        let (inner, outer) = site[h].links[p].clone();
        for q in inner {
            discover(h, q, t, &mut sims, &mut events);
        }
        for o in outer {
            discover(o, 0, t, &mut sims, &mut events);
        }
        let s = &mut sims[h];
        match s.queue.front() {
            Some((at, _)) => events.push(Reverse((s.next.max(*at), h))),
            None => s.scheduled = false,
        }
    }
    (end, first)
}

fn nearcrawl_bin() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("NEARCRAWL_BIN") {
        return p.into();
    }
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("nearcrawl")
}

fn main() {
    let (hosts, min_pages, max_pages) = (arg(1, 1000), arg(2, 20), arg(3, 50));
    // The crawler's default; the bound assumes no limit.
    let concurrency = arg(4, 64);
    let site = Arc::new(build(hosts, min_pages, max_pages.max(min_pages)));
    let vocab = Arc::new(distinct_words());
    let reach = reachable(&site);
    let reachable_pages: usize = reach.iter().map(HashSet::len).sum();
    let reachable_hosts = reach.iter().filter(|r| !r.is_empty()).count();
    let (bound, ideal_first) = bound(&site);
    println!(
        "site: {hosts} hosts, {} pages; reachable from {SEEDS} seeds: {reachable_hosts} hosts, {reachable_pages} pages; \
         politeness bound {:.1} s",
        site.iter().map(|h| h.pages).sum::<usize>(),
        bound.as_secs_f64()
    );

    let log: Log = Arc::default();
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    for h in 0..hosts {
        server.spawn(serve_host(site.clone(), vocab.clone(), h, log.clone()));
    }
    std::thread::sleep(Duration::from_millis(500));

    let dir = std::env::temp_dir().join(format!("nearcrawl-broad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seeds: String = (0..SEEDS.min(hosts))
        .map(|h| format!("http://{}:{PORT}/\n", ip(h)))
        .collect();
    std::fs::write(dir.join("seeds.txt"), seeds).unwrap();
    std::fs::write(
        dir.join("broad.toml"),
        format!(
            "[seeds]\nfile = \"seeds.txt\"\nsitemaps = false\n[scope]\nhosts = [\"*\"]\nmax_depth = 1000\n\
             [politeness]\ndelay_ms = {}\nper_host_concurrency = 1\nglobal_concurrency = {}\n\
             [fetch]\nallow_private_networks = true\n\
             [dedup]\ncapacity = {}\n[output]\ndir = \"{}\"\n",
            DELAY.as_millis(),
            concurrency,
            reachable_pages,
            dir.join("out").display()
        ),
    )
    .unwrap();
    let bin = nearcrawl_bin();
    let server_cpu_before = cpu_seconds("self");
    let t = Instant::now();
    let mut child = std::process::Command::new(&bin)
        .args(["crawl", "--config"])
        .arg(dir.join("broad.toml"))
        .stderr(match std::env::var_os("BENCH_STDERR") {
            Some(f) => std::process::Stdio::from(std::fs::File::create(f).unwrap()),
            None => std::process::Stdio::null(),
        })
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (cargo build --release -p nearcrawl-cli)",
                bin.display()
            )
        });
    let (mut peak, mut cpu) = (0, 0.0);
    let status = loop {
        let pid = child.id().to_string();
        peak = peak.max(proc_status(&pid, "VmHWM:"));
        // Zero once the process is gone: keep the last reading.
        cpu = cpu_seconds(&pid).max(cpu);
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let wall = t.elapsed();
    let server_cpu = cpu_seconds("self") - server_cpu_before;
    assert!(status.success(), "crawl failed: {status}");
    report(&site, &reach, &log.lock().unwrap(), wall, bound, peak);
    outside_requests(&log.lock().unwrap(), t, wall);
    where_the_time_goes(&site, &log.lock().unwrap(), &ideal_first);
    // BENCH_LOG=FILE: every request as the servers saw it (seconds from
    // the first, host, path), to study a schedule.
    if let Some(path) = std::env::var_os("BENCH_LOG") {
        let log = log.lock().unwrap();
        let start = log.iter().map(|(t, ..)| *t).min();
        let lines: String = log
            .iter()
            .map(|(t, h, p)| {
                let at = start.map_or(0.0, |s| (*t - s).as_secs_f64());
                format!("{at:.4} {h} {p}\n")
            })
            .collect();
        let _ = std::fs::write(path, lines);
    }
    println!(
        "crawler CPU {cpu:.1} s ({:.0}% of one core over the crawl); this server {server_cpu:.1} s",
        cpu / wall.as_secs_f64() * 100.0
    );
    let stats = std::fs::read_to_string(dir.join("out/stats.json")).unwrap_or_default();
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap_or_default();
    println!(
        "crawler: fetched {}, written {}, duplicates {} exact + {} near, errors {}; \
         commit lock held {} s, waited for {} s (summed over threads)",
        stats["fetched"],
        stats["written"],
        stats["exact_duplicates"],
        stats["near_duplicates"],
        stats["errors"],
        stats["this_run"]["core_lock"]["held_secs"],
        stats["this_run"]["core_lock"]["waited_secs"],
    );
    println!(
        "workers' time (s, summed over workers): {}",
        stats["this_run"]["worker_secs"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The wall time before the first request (the crawler starting, opening
/// its state) and after the last (finishing its outputs, exiting): the
/// bound counts neither.
fn outside_requests(log: &[(Instant, u32, String)], spawned: Instant, wall: Duration) {
    let (Some(first), Some(last)) = (
        log.iter().map(|(t, ..)| *t).min(),
        log.iter().map(|(t, ..)| *t).max(),
    ) else {
        return;
    };
    println!(
        "first request {:.2} s after the crawler started; it exited {:.2} s after the last request",
        (first - spawned).as_secs_f64(),
        (spawned + wall)
            .saturating_duration_since(last)
            .as_secs_f64()
    );
}

/// Where the crawl falls behind the ideal one: how late each host's first
/// request comes (links reach the frontier after their page is fetched,
/// judged and committed; the ideal crawl follows them at once), and how
/// much longer than its delays each host takes from its first request to
/// its last (the scheduler, and requests slower than the delay).
fn where_the_time_goes(
    site: &[Host],
    log: &[(Instant, u32, String)],
    ideal_first: &[Option<Duration>],
) {
    let Some(start) = log.iter().map(|(t, ..)| *t).min() else {
        return;
    };
    let mut spans: HashMap<u32, (Instant, Instant, usize)> = HashMap::new();
    for (t, h, _) in log {
        let e = spans.entry(*h).or_insert((*t, *t, 0));
        e.0 = e.0.min(*t);
        e.1 = e.1.max(*t);
        e.2 += 1;
    }
    let (mut late, mut slow) = (Vec::new(), Vec::new());
    for (h, (first, last, requests)) in &spans {
        let host = &site[*h as usize];
        if let Some(ideal) = ideal_first[*h as usize] {
            late.push((*first - start).as_secs_f64() - ideal.as_secs_f64());
        }
        let ideal_span = host.delay().as_secs_f64() * (*requests as f64 - 1.0);
        slow.push((*last - *first).as_secs_f64() - ideal_span);
    }
    let q = |v: &mut Vec<f64>, f: f64| {
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 - 1.0) * f) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "hosts first requested later than ideal: median {:.2} s, p90 {:.2} s, max {:.2} s; \
         first to last request longer than the delays: median {:.2} s, p90 {:.2} s, max {:.2} s",
        q(&mut late, 0.5),
        q(&mut late, 0.9),
        q(&mut late, 1.0),
        q(&mut slow, 0.5),
        q(&mut slow, 0.9),
        q(&mut slow, 1.0)
    );
}

fn report(
    site: &[Host],
    reach: &[HashSet<usize>],
    log: &[(Instant, u32, String)],
    wall: Duration,
    bound: Duration,
    peak_kib: u64,
) {
    let mut per_host: HashMap<u32, Vec<(Instant, &str)>> = HashMap::new();
    for (t, h, p) in log {
        per_host.entry(*h).or_default().push((*t, p.as_str()));
    }
    let (mut early, mut least_margin_ms) = (0usize, f64::MAX);
    let mut disallowed = 0usize;
    let mut missed = 0usize;
    for (h, reqs) in per_host.iter_mut() {
        reqs.sort();
        let host = &site[*h as usize];
        for w in reqs.windows(2) {
            let gap = w[1].0 - w[0].0;
            let margin = gap.as_secs_f64() * 1e3 - host.delay().as_secs_f64() * 1e3;
            least_margin_ms = least_margin_ms.min(margin);
            if margin < -10.0 {
                early += 1;
                if early <= 3 || margin < -500.0 {
                    println!("early: host {h} {} then {} {margin:+.1} ms", w[0].1, w[1].1);
                }
            }
        }
        disallowed += reqs
            .iter()
            .filter(|(_, p)| p.starts_with("/private/"))
            .count();
    }
    for (h, pages) in reach.iter().enumerate() {
        let got: HashSet<&str> = per_host
            .get(&(h as u32))
            .map(|r| r.iter().map(|(_, p)| *p).collect())
            .unwrap_or_default();
        missed += pages
            .iter()
            .filter(|p| !got.contains(path(**p).as_str()))
            .count();
    }
    println!(
        "requests {}: early (gap < delay - 10 ms) {early}, least gap - delay {least_margin_ms:+.1} ms; \
         disallowed fetched {disallowed}; reachable pages never fetched {missed}",
        log.len()
    );
    println!(
        "wall {:.1} s = {:.3} x bound ({:.1} s); crawler peak RSS {} MiB",
        wall.as_secs_f64(),
        wall.as_secs_f64() / bound.as_secs_f64(),
        bound.as_secs_f64(),
        peak_kib / 1024
    );
}
