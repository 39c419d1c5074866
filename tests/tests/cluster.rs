//! Three `nearcrawl crawl --cluster` workers on a 3-node Redis Cluster, one
//! worker killed with `kill -9` twice and a Redis node once (at moments
//! drawn at random), on a site of
//! several loopback hosts with planted copies: every page counted once in
//! the union of the workers' outputs, each copy pair judged once (its
//! duplicate's links never followed), and every host's requests spaced by
//! its delay as its server saw them.
//!
//! And workers on a duplicate trap and a chain of hosts (a third joining
//! late, from a copy of a running worker's gate replica): the trap cut off
//! once for all, `max_hosts` kept over all, a sitemap index read once and
//! the pages it lists fetched once.
//!
//! And with `politeness.key = "ip"`: hosts on one server, crawled by two
//! workers, keep that server's delay between all their requests (one of
//! them serving live figures at `--metrics`).
//!
//! And a recrawl (`--refresh` every worker's output) of a site nginx
//! serves, by two workers (its one host in one worker's partitions): every
//! page asked again once over both, 304s for the unchanged, the changed,
//! gone and new pages told apart. And two workers crawling a mirror of an
//! embedded crawl's site on another host against that crawl
//! (`dedup.remember`): every mirror page a duplicate of its original there.
//! And two workers on a site of pages built by script: each rendered once
//! over both, the browsers' requests under the host's delay, robots.txt
//! and a page's request budget.
//!
//! Needs `redis-server`, `redis-cli` and dnsmasq (installed by `.ci/run`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use nearcrawl_tests::app_site::{self, word_f1};
use nearcrawl_tests::dns::Dnsmasq;
use nearcrawl_tests::nginx::{Nginx, open_to_all};
use nearcrawl_tests::redis_cluster::Cluster;
use nearcrawl_tests::site::{PAGES as SITE_PAGES, Site};
use nearcrawl_tests::{
    TimedLog, fresh_dir, json_lines, made_up_words, nearcrawl_bin, serve_named, serve_timed,
};

const HOSTS: usize = 6;
const PAGES: usize = 14;
const DELAY_MS: u64 = 80;

/// Text of its own for page `i` of host `h`.
fn text(h: usize, i: usize) -> String {
    made_up_words((h * 1000 + i + 7) as u64, 150, 30_000)
}

/// A title of its own: the gate compares names without their hosts'
/// template words, and titles like "Page 5" make "Page" one (a copy titled
/// "Page 5" on a host whose "Page" is not yet known as template is then
/// another name, and kept: precision first).
fn title(h: usize, i: usize) -> String {
    text(h, i).split(' ').take(3).collect::<Vec<_>>().join(" ")
}

fn html(title: &str, body: &str, links: &[String]) -> Vec<u8> {
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">x</a> "))
        .collect();
    format!(
        "<html><head><title>{title}</title></head><body><main><h1>{title}</h1>\
         <p>{body}</p>{links}</main></body></html>"
    )
    .into_bytes()
}

/// Host `h`: `/p/i` links to `/p/i+1` and to a page of the next host;
/// `/p/2` also links to `/copy`, the next host's `/p/5` word for word,
/// which links to `/orphan`: reached only through the copy, so fetched
/// only if the copy is judged the original.
fn route(h: usize, next: &str, path: &str) -> (u16, &'static str, Vec<u8>) {
    let page = |i: usize| {
        let mut links = vec![
            format!("/p/{}", (i + 1) % PAGES),
            format!("{next}/p/{}", (i * 3) % PAGES),
        ];
        if i == 2 {
            links.push("/copy".into());
        }
        html(&title(h, i), &text(h, i), &links)
    };
    match path {
        "/robots.txt" => (200, "text/plain", b"User-agent: *\nAllow: /\n".to_vec()),
        "/copy" => {
            let n = (h + 1) % HOSTS;
            let links = vec!["/orphan".to_string()];
            (200, "text/html", html(&title(n, 5), &text(n, 5), &links))
        }
        "/orphan" => (200, "text/html", html("Orphan", &text(h, 900), &[])),
        _ => match path.strip_prefix("/p/").and_then(|i| i.parse().ok()) {
            Some(i) if i < PAGES => (200, "text/html", page(i)),
            _ => (404, "text/plain", b"no".to_vec()),
        },
    }
}

/// Serves every host on its own 127.0.4.x address; their base URLs and logs.
fn serve_hosts() -> Vec<(String, TimedLog)> {
    let mut hosts = Vec::new();
    let mut nexts = Vec::new();
    for h in 0..HOSTS {
        let next_slot = Arc::new(OnceLock::<String>::new());
        let next = next_slot.clone();
        let ip = format!("127.0.4.{}", h + 1);
        let (addr, log) = serve_timed(&ip, move |path| {
            route(h, next.get().map_or("", String::as_str), path)
        });
        nexts.push(next_slot);
        hosts.push((format!("http://{addr}"), log));
    }
    for h in 0..HOSTS {
        nexts[h].set(hosts[(h + 1) % HOSTS].0.clone()).unwrap();
    }
    hosts
}

fn write_config(dir: &Path, seed: &str, nodes: &[String]) -> PathBuf {
    let nodes: Vec<String> = nodes.iter().map(|n| format!("\"{n}\"")).collect();
    let path = dir.join("c.toml");
    std::fs::write(
        &path,
        format!(
            "[seeds]\nurls = [\"{seed}\"]\nsitemaps = false\n\
             [scope]\nhosts = [\"*\"]\n\
             [politeness]\ndelay_ms = {DELAY_MS}\nglobal_concurrency = 8\n\
             [fetch]\nallow_private_networks = true\n\
             [output]\ncheckpoint_secs = 1\n\
             [cluster]\nnodes = [{}]\nname = \"e2e\"\npartitions = 32\nlease_secs = 2\n",
            nodes.join(", ")
        ),
    )
    .unwrap();
    path
}

/// Starts a worker; its log (leases and verdicts) goes beside its output,
/// kept when the test fails.
fn start_worker(config: &Path, out: &Path, name: &str) -> Child {
    start_worker_with(config, out, name, &[])
}

fn start_worker_with(config: &Path, out: &Path, name: &str, more: &[&str]) -> Child {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let log = std::fs::File::create(config.with_file_name(format!("{name}-{n}.log"))).unwrap();
    Command::new(nearcrawl_bin())
        .args(["crawl", "--config", config.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap(), "--worker", name])
        .args(more)
        .env("RUST_LOG", "nearcrawl_cluster=debug,nearcrawl_fetch=debug")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("starts nearcrawl")
}

/// Each worker's `stats.json`.
fn stats_of(outs: &[PathBuf]) -> Vec<serde_json::Value> {
    outs.iter()
        .map(|o| {
            serde_json::from_str(&std::fs::read_to_string(o.join("stats.json")).unwrap()).unwrap()
        })
        .collect()
}

/// Waits for every worker to exit, successfully, within `limit`.
fn wait_for(workers: &mut [Child], limit: Duration) {
    let deadline = Instant::now() + limit;
    for (w, child) in workers.iter_mut().enumerate() {
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "worker {w}");
                break;
            }
            assert!(Instant::now() < deadline, "worker {w} did not finish");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Pauses drawn from a seed (printed), in ms within each range given.
fn pauses() -> impl FnMut((u64, u64)) -> u64 {
    let seed = std::env::var("NEARCRAWL_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos() as u64
                | 1
        });
    eprintln!("kill moments: NEARCRAWL_TEST_SEED={seed}");
    let mut x = seed;
    move |(low, high)| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        low + x % (high - low + 1)
    }
}

/// Every JSON record of `name*` files in the outputs.
fn records(outs: &[PathBuf], prefix: &str) -> Vec<serde_json::Value> {
    let mut all = Vec::new();
    for out in outs {
        for e in std::fs::read_dir(out).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with(prefix) && name.ends_with(".jsonl") {
                all.extend(json_lines(&path));
            }
        }
    }
    all
}

#[test]
fn three_workers_one_killed_twice_and_a_redis_node_killed_count_every_page_once() {
    let mut cluster = Cluster::start_durable(3);
    let (i0, s0) = (Instant::now(), std::time::SystemTime::now());
    let wall = move |t: Instant| {
        (s0 + (t - i0))
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let hosts = serve_hosts();
    let tmp = std::env::temp_dir().join(format!("nearcrawl-e2e-cluster-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let config = write_config(&tmp, &format!("{}/p/0", hosts[0].0), &cluster.urls());
    let outs: Vec<PathBuf> = (0..3).map(|w| tmp.join(format!("out{w}"))).collect();
    let mut workers: Vec<Child> = (0..3)
        .map(|w| start_worker(&config, &outs[w], &format!("w{w}")))
        .collect();

    // Worker 0 is killed twice and started again; the node holding the
    // gate's log is killed once and started again; each after a pause
    // drawn at random (the seed is printed; NEARCRAWL_TEST_SEED repeats it).
    let gate_node = cluster.node_of("{e2e:gate}:log");
    let mut pause = pauses();
    for (range_ms, what) in [
        ((600, 1600), "worker"),
        ((300, 900), "node down"),
        ((400, 1000), "node up"),
        ((300, 1000), "worker"),
    ] {
        std::thread::sleep(Duration::from_millis(pause(range_ms)));
        match what {
            "worker" => {
                workers[0].kill().unwrap(); // SIGKILL
                workers[0].wait().unwrap();
                workers[0] = start_worker(&config, &outs[0], "w0");
            }
            "node down" => cluster.kill(gate_node),
            _ => cluster.restart(gate_node),
        }
    }
    wait_for(&mut workers, Duration::from_secs(120));

    // Every URL the servers were asked for (robots.txt aside) is counted
    // once over all outputs: a page, a duplicate or an error.
    let pages = records(&outs, "pages");
    let dups = records(&outs, "duplicates");
    let mut counted: HashMap<String, usize> = HashMap::new();
    for r in pages.iter().chain(&dups).chain(&records(&outs, "errors")) {
        *counted
            .entry(r["url"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let mut asked = HashSet::new();
    for (base, log) in &hosts {
        for (_, path) in log.lock().unwrap().iter() {
            if path != "/robots.txt" {
                asked.insert(format!("{base}{path}"));
            }
        }
    }
    // Nothing is left queued or in flight in any partition.
    let queued: Vec<(u32, String)> = (0..32)
        .filter_map(|p| Some((p, cluster.get(&format!("{{e2e:p{p}}}:n"))?)))
        .collect();
    assert!(!queued.is_empty(), "no partition counted anything");
    assert!(
        queued.iter().all(|(_, n)| n == "0"),
        "left in partitions: {queued:?}"
    );
    let twice: Vec<_> = counted.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "counted more than once: {twice:?}");
    let missing: Vec<_> = asked.iter().filter(|u| !counted.contains_key(*u)).collect();
    assert!(missing.is_empty(), "fetched but in no output: {missing:?}");
    for (base, _) in &hosts {
        for i in 0..PAGES {
            let url = format!("{base}/p/{i}");
            assert!(counted.contains_key(&url), "{url} was never crawled");
        }
    }

    // Each copy pair: one written, one a duplicate of it; the orphan
    // behind a copy is fetched exactly when the copy was the one written.
    let written: HashSet<&str> = pages.iter().map(|r| r["url"].as_str().unwrap()).collect();
    let dup_of: HashMap<&str, &str> = dups
        .iter()
        .map(|r| {
            (
                r["url"].as_str().unwrap(),
                r["duplicate_of"].as_str().unwrap(),
            )
        })
        .collect();
    for h in 0..HOSTS {
        let copy = format!("{}/copy", hosts[h].0);
        let original = format!("{}/p/5", hosts[(h + 1) % HOSTS].0);
        let (kept, dropped) = if written.contains(copy.as_str()) {
            (&copy, &original)
        } else {
            (&original, &copy)
        };
        assert!(written.contains(kept.as_str()), "{kept} written");
        assert_eq!(
            dup_of.get(dropped.as_str()),
            Some(&kept.as_str()),
            "{dropped}"
        );
        let orphan = format!("{}/orphan", hosts[h].0);
        assert_eq!(asked.contains(&orphan), kept == &copy, "{orphan}");
    }

    // Politeness, where the servers saw it.
    let mut gaps = BTreeMap::new();
    for (base, log) in &hosts {
        let mut times: Vec<Instant> = log.lock().unwrap().iter().map(|(t, _)| *t).collect();
        times.sort();
        let least = times.windows(2).map(|w| w[1] - w[0]).min().unwrap();
        gaps.insert(base.clone(), least);
    }
    for (base, log) in &hosts {
        let mut times: Vec<(Instant, String)> = log.lock().unwrap().clone();
        times.sort();
        for w in times.windows(2) {
            if w[1].0 - w[0].0 < Duration::from_millis(DELAY_MS - 10) {
                eprintln!(
                    "{base}: {:.4} {} / {:.4} {}",
                    wall(w[0].0),
                    w[0].1,
                    wall(w[1].0),
                    w[1].1
                );
            }
        }
    }
    for (host, least) in &gaps {
        assert!(
            *least >= Duration::from_millis(DELAY_MS - 10),
            "{host}: two requests {least:?} apart (delay {DELAY_MS} ms): {gaps:?}"
        );
    }
    let stats = stats_of(&outs);
    let sum = |s: &serde_json::Value| -> u64 {
        let errors: u64 = s["errors"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        s["fetched"].as_u64().unwrap() + errors
    };
    let total: u64 = stats.iter().map(sum).sum();
    for (w, s) in stats.iter().enumerate() {
        eprintln!(
            "worker {w}: fetched {} errors {} lapsed {} (this run)",
            s["fetched"], s["errors"], s["cluster"]["lapsed"]
        );
    }
    assert_eq!(
        total as usize,
        counted.len(),
        "stats agree with the outputs: {stats:?}"
    );
    // A worker records its figures over time as the embedded crawl does
    // (for `nearcrawl report`): its last sample is its final count.
    for (out, s) in outs.iter().zip(&stats) {
        let series = json_lines(&out.join("series.jsonl"));
        let last = series.last().expect("samples in series.jsonl");
        assert_eq!(last["fetched"], s["fetched"], "{}", out.display());
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A shop whose home page links to 100 filter pages, each a near copy of
/// the others.
fn trap_route(path: &str) -> (u16, &'static str, Vec<u8>) {
    match path {
        "/robots.txt" => (404, "text/plain", Vec::new()),
        "/" => {
            let links: Vec<String> = (0..100).map(|i| format!("/search?f={i}")).collect();
            (200, "text/html", html("Shop", &text(50, 0), &links))
        }
        p if p.starts_with("/search?f=") => {
            let body = format!("Filter {} {}", &p[10..], text(50, 1));
            (200, "text/html", html("Search results", &body, &[]))
        }
        _ => (404, "text/plain", Vec::new()),
    }
}

#[test]
fn two_workers_cut_a_trap_off_once_keep_max_hosts_and_read_sitemaps_once() {
    let cluster = Cluster::start(3);
    let (trap, trap_log) = serve_timed("127.0.4.20", trap_route);
    // A chain of hosts: each home page links to its three pages and to
    // the next host's home page.
    let mut chain: Vec<(String, TimedLog)> = Vec::new();
    let slots: Vec<Arc<OnceLock<String>>> = (0..6).map(|_| Arc::new(OnceLock::new())).collect();
    // The first host's robots.txt names a sitemap index; its sitemap lists
    // three pages no page links to.
    let first = Arc::new(OnceLock::<String>::new());
    for (h, slot) in slots.iter().enumerate() {
        let next = slot.clone();
        let me = first.clone();
        let (addr, log) = serve_timed(&format!("127.0.4.{}", 21 + h), move |path| {
            let me = me.get().unwrap();
            let xml = |body: String| (200, "application/xml", body.into_bytes());
            let i = match path {
                "/robots.txt" if h == 0 => {
                    let robots = format!("User-agent: *\nAllow: /\nSitemap: {me}/index.xml\n");
                    return (200, "text/plain", robots.into_bytes());
                }
                "/index.xml" if h == 0 => {
                    return xml(format!(
                        "<sitemapindex><sitemap><loc>{me}/pages.xml</loc></sitemap></sitemapindex>"
                    ));
                }
                "/pages.xml" if h == 0 => {
                    let urls: String = (1..=3)
                        .map(|i| format!("<url><loc>{me}/listed/{i}</loc></url>"))
                        .collect();
                    return xml(format!("<urlset>{urls}</urlset>"));
                }
                p if h == 0 && p.starts_with("/listed/") => {
                    let i: usize = p[8..].parse().unwrap_or(0);
                    return (200, "text/html", html(&title(70, i), &text(70, i), &[]));
                }
                "/robots.txt" => return (404, "text/plain", Vec::new()),
                "/" => 0,
                p => match p.strip_prefix("/p/").and_then(|i| i.parse().ok()) {
                    Some(i @ 1..=3) => i,
                    _ => return (404, "text/plain", Vec::new()),
                },
            };
            let mut links: Vec<String> = (1..=3).map(|i| format!("/p/{i}")).collect();
            links.push(format!("{}/", next.get().unwrap()));
            (
                200,
                "text/html",
                html(&title(60 + h, i), &text(60 + h, i), &links),
            )
        });
        chain.push((format!("http://{addr}"), log));
    }
    for (h, slot) in slots.iter().enumerate() {
        slot.set(chain[(h + 1) % 6].0.clone()).unwrap();
    }
    first.set(chain[0].0.clone()).unwrap();
    let tmp = std::env::temp_dir().join(format!("nearcrawl-e2e-trap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let nodes: Vec<String> = cluster.urls().iter().map(|n| format!("\"{n}\"")).collect();
    let config = tmp.join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[seeds]\nurls = [\"http://{trap}/\", \"{}/\"]\nsitemaps = true\n\
             [scope]\nhosts = [\"*\"]\nmax_hosts = 4\n\
             [politeness]\ndelay_ms = 300\nglobal_concurrency = 4\n\
             [fetch]\nallow_private_networks = true\n\
             [dedup]\ntrap_window = 10\ntrap_share = 0.8\n\
             [output]\ncheckpoint_secs = 1\n\
             [cluster]\nnodes = [{}]\nname = \"traps\"\npartitions = 32\nlease_secs = 2\n",
            chain[0].0,
            nodes.join(", ")
        ),
    )
    .unwrap();
    let outs: Vec<PathBuf> = (0..3).map(|w| tmp.join(format!("out{w}"))).collect();
    let mut workers: Vec<Child> = (0..2)
        .map(|w| start_worker(&config, &outs[w], &format!("w{w}")))
        .collect();
    // A third joins once the log was trimmed (a checkpoint a second): it
    // starts from a copy of a running worker's gate replica.
    let trimmed = Instant::now();
    while cluster
        .get("{traps:gate}:trimmed")
        .is_none_or(|at| at == "0-0")
    {
        assert!(trimmed.elapsed() < Duration::from_secs(20), "never trimmed");
        std::thread::sleep(Duration::from_millis(50));
    }
    workers.push(start_worker(&config, &outs[2], "w2"));
    wait_for(&mut workers, Duration::from_secs(60));

    let searches = trap_log
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, p)| p.starts_with("/search"))
        .count();
    assert!(
        (9..=20).contains(&searches),
        "{searches} filter pages fetched: the trap should be cut after about 10"
    );
    let stats = stats_of(&outs);
    assert!(
        stats[2]["cluster"]["gate_from_snapshot"].is_string(),
        "{:?}",
        stats[2]["cluster"]
    );
    let traps: Vec<&serde_json::Value> = stats
        .iter()
        .flat_map(|s| s["duplicate_traps"].as_array().unwrap())
        .collect();
    assert_eq!(traps.len(), 1, "one trap over both workers: {stats:?}");
    assert_eq!(traps[0]["host"], "127.0.4.20");
    let out_of_scope = |why: &str| -> u64 {
        stats
            .iter()
            .map(|s| s["out_of_scope"][why].as_u64().unwrap_or(0))
            .sum()
    };
    assert!(out_of_scope("duplicate_trap") >= 80, "{stats:?}");
    let errors: String = outs
        .iter()
        .map(|o| std::fs::read_to_string(o.join("errors.jsonl")).unwrap_or_default())
        .collect();
    assert!(
        errors.contains("\"kind\":\"duplicate_trap\"") && errors.contains("of its last 10 pages"),
        "{errors}"
    );
    // The trap host and the chain's first three hosts make four; each
    // path asked once over all workers (the first host's sitemaps and the
    // pages they list too), robots.txt once per worker at most.
    for (h, (base, log)) in chain.iter().enumerate() {
        let paths: Vec<String> = log.lock().unwrap().iter().map(|(_, p)| p.clone()).collect();
        let (robots, pages): (Vec<&String>, Vec<&String>) =
            paths.iter().partition(|p| *p == "/robots.txt");
        let asked: HashSet<&String> = pages.iter().copied().collect();
        let want = match h {
            0 => 9,
            1 | 2 => 4,
            _ => 0,
        };
        assert_eq!(
            (asked.len(), pages.len()),
            (want, want),
            "{base}: {paths:?}"
        );
        assert!(
            robots.len() <= 3 && (want == 0) == robots.is_empty(),
            "{base}: {paths:?}"
        );
    }
    assert_eq!(
        stats
            .iter()
            .map(|s| s["sitemap_urls"].as_u64().unwrap())
            .sum::<u64>(),
        3,
        "{stats:?}"
    );
    assert!(out_of_scope("host_limit") >= 1, "{stats:?}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn hosts_on_one_server_keep_its_delay_over_two_workers_with_politeness_by_ip() {
    const NAMES: usize = 4;
    const PAGES_EACH: usize = 8;
    const DELAY: u64 = 100;
    let cluster = Cluster::start(3);
    let tmp = std::env::temp_dir().join(format!("nearcrawl-e2e-ip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    // Names of their own registrable domains, so of different partitions
    // (which two workers share), all on one server.
    let names: Vec<(String, &str)> = (0..NAMES)
        .map(|i| (format!("site{i}.test"), "127.0.4.40"))
        .collect();
    let dns = Dnsmasq::start(&tmp.join("dns"), &names);
    let (addr, log) = serve_named("127.0.4.40", move |host, path| {
        let name = host.split(':').next().unwrap_or("");
        let n: usize = name
            .trim_start_matches("site")
            .trim_end_matches(".test")
            .parse()
            .unwrap_or(0);
        match path
            .strip_prefix("/p/")
            .and_then(|i| i.parse::<usize>().ok())
        {
            Some(i) if i < PAGES_EACH => {
                let links = [
                    format!("/p/{}", (i + 1) % PAGES_EACH),
                    format!("/p/{}", (i + 3) % PAGES_EACH),
                ];
                (
                    200,
                    "text/html",
                    html(&title(80 + n, i), &text(80 + n, i), &links),
                )
            }
            _ => (404, "text/plain", Vec::new()),
        }
    });
    let seeds: Vec<String> = (0..NAMES)
        .map(|i| format!("\"http://site{i}.test:{}/p/0\"", addr.port()))
        .collect();
    let nodes: Vec<String> = cluster.urls().iter().map(|n| format!("\"{n}\"")).collect();
    let config = tmp.join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[seeds]\nurls = [{}]\nsitemaps = false\n\
             [scope]\nhosts = [\"*\"]\n\
             [politeness]\nkey = \"ip\"\ndelay_ms = {DELAY}\nglobal_concurrency = 8\n\
             [fetch]\nallow_private_networks = true\ndns_servers = [\"127.0.0.1:{}\"]\n\
             [cluster]\nnodes = [{}]\nname = \"by-ip\"\npartitions = 32\nlease_secs = 2\n",
            seeds.join(", "),
            dns.port,
            nodes.join(", ")
        ),
    )
    .unwrap();
    let outs: Vec<PathBuf> = (0..2).map(|w| tmp.join(format!("out{w}"))).collect();
    // The second serves its figures while it runs.
    let metrics = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().to_string()
    };
    let mut workers = [
        start_worker(&config, &outs[0], "w0"),
        start_worker_with(&config, &outs[1], "w1", &["--metrics", &metrics]),
    ];
    let scraped = scrape_until_fetched(&metrics);
    for series in [
        "nearcrawl_written_total ",
        "nearcrawl_queued ",
        "nearcrawl_in_flight ",
        "nearcrawl_hosts_active ",
        "nearcrawl_fetch_seconds_count ",
        "nearcrawl_cpu_seconds_total{stage=\"parse\"} ",
    ] {
        assert!(scraped.contains(series), "{series} missing:\n{scraped}");
    }
    wait_for(&mut workers, Duration::from_secs(60));
    let mut requests = log.lock().unwrap().clone();
    requests.sort();
    let pages: HashSet<&String> = requests
        .iter()
        .map(|(_, p)| p)
        .filter(|p| p.contains("/p/"))
        .collect();
    assert_eq!(pages.len(), NAMES * PAGES_EACH, "{requests:?}");
    let fetched: Vec<u64> = stats_of(&outs)
        .iter()
        .map(|s| s["fetched"].as_u64().unwrap())
        .collect();
    assert_eq!(fetched.iter().sum::<u64>() as usize, NAMES * PAGES_EACH);
    assert!(
        fetched.iter().all(|&n| n > 0),
        "both workers fetched: {fetched:?}"
    );
    // Each worker says where its CPU went; the shared gate's judging is
    // timed where the replica judges.
    for stats in stats_of(&outs) {
        let cpu = &stats["this_run"]["cpu_secs"];
        for stage in ["parse", "extract", "gate", "write"] {
            assert!(cpu[stage].as_f64().unwrap() > 0.0, "{stage}: {cpu}");
        }
    }
    for w in requests.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            gap >= Duration::from_millis(DELAY - 10),
            "{} then {} only {gap:?} apart (fetched per worker: {fetched:?})",
            w[0].1,
            w[1].1
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `/metrics` of a worker, once it says a page was fetched.
fn scrape_until_fetched(metrics: &str) -> String {
    use std::io::{Read, Write};
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::net::TcpStream::connect(metrics)
            .ok()
            .and_then(|mut s| {
                write!(s, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").ok()?;
                let mut text = String::new();
                s.read_to_string(&mut text).ok()?;
                Some(text)
            })
            .unwrap_or_default();
        let fetched = text
            .lines()
            .find_map(|l| l.strip_prefix("nearcrawl_fetched_total "))
            .and_then(|v| v.trim().parse::<u64>().ok());
        if fetched.is_some_and(|n| n >= 1) {
            return text;
        }
        assert!(Instant::now() < deadline, "no live figures: {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Paths as a TOML list.
fn toml_list(paths: &[PathBuf]) -> String {
    let quoted: Vec<String> = paths
        .iter()
        .map(|d| format!("{:?}", d.display().to_string()))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// A crawl of `seeds` by two workers (crawl `name`), with `more` config
/// lines; the workers' outputs.
fn two_workers(
    dir: &Path,
    nodes: &[String],
    seeds: &[String],
    name: &str,
    more: &str,
) -> Vec<PathBuf> {
    let nodes: Vec<String> = nodes.iter().map(|n| format!("\"{n}\"")).collect();
    let seeds: Vec<String> = seeds.iter().map(|s| format!("\"{s}\"")).collect();
    let config = dir.join(format!("{name}.toml"));
    std::fs::write(
        &config,
        format!(
            "{more}\n[seeds]\nurls = [{}]\nsitemaps = false\n\
             [politeness]\ndelay_ms = 5\n[fetch]\nallow_private_networks = true\n\
             [output]\ncheckpoint_secs = 1\n\
             [cluster]\nnodes = [{}]\nname = \"{name}\"\npartitions = 8\nlease_secs = 2\n",
            seeds.join(", "),
            nodes.join(", ")
        ),
    )
    .unwrap();
    let outs: Vec<PathBuf> = (0..2).map(|w| dir.join(format!("{name}-out{w}"))).collect();
    let mut workers: Vec<Child> = (0..2)
        .map(|w| start_worker(&config, &outs[w], &format!("{name}-w{w}")))
        .collect();
    wait_for(&mut workers, Duration::from_secs(120));
    outs
}

#[test]
fn a_recrawl_by_two_workers_asks_every_page_once_and_tells_the_changes_apart() {
    let cluster = Cluster::start(3);
    let (tmp, mut site) = Site::in_fresh_dir("cluster-recrawl");
    let nginx = Nginx::serve(&site.root);
    let base = format!("http://127.0.0.1:{}", nginx.port);
    let seeds = [format!("{base}/index.html")];
    let first = two_workers(&tmp, &cluster.urls(), &seeds, "rc1", "");
    let truth = site.change();
    let refresh = format!("[recrawl]\nfrom = {}", toml_list(&first));
    let second = two_workers(&tmp, &cluster.urls(), &seeds, "rc2", &refresh);

    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in records(&second, "visits") {
        let path = v["url"]
            .as_str()
            .unwrap()
            .trim_start_matches(&base)
            .to_string();
        seen.entry(path)
            .or_default()
            .push(v["change"].as_str().unwrap().to_string());
    }
    for (path, want) in &truth {
        assert_eq!(seen.get(path), Some(&vec![want.to_string()]), "{path}");
    }
    assert_eq!(seen.len(), truth.len(), "{seen:?}");
    let written: HashSet<String> = records(&second, "pages")
        .iter()
        .map(|p| {
            p["url"]
                .as_str()
                .unwrap()
                .trim_start_matches(&base)
                .to_string()
        })
        .collect();
    let want: HashSet<String> = (truth.iter())
        .filter(|(_, c)| **c == "changed" || **c == "new")
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(written, want);
    let not_modified: u64 = stats_of(&second)
        .iter()
        .map(|s| s["not_modified"].as_u64().unwrap())
        .sum();
    assert_eq!(not_modified, (SITE_PAGES - 3 - 2 - 2) as u64);
    drop(nginx);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn workers_crawling_a_mirror_against_an_earlier_crawl_drop_every_copy() {
    let cluster = Cluster::start(3);
    let (tmp, site) = Site::in_fresh_dir("cluster-remember");
    // The first crawl, embedded, of the site on 127.0.0.1.
    let nginx = Nginx::serve(&site.root);
    let first = tmp.join("first");
    let conf = tmp.join("first.toml");
    std::fs::write(
        &conf,
        "[politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true\n",
    )
    .unwrap();
    let seed = format!("http://127.0.0.1:{}/index.html", nginx.port);
    let done = nearcrawl_tests::run(
        &[
            "crawl",
            "--config",
            conf.to_str().unwrap(),
            "--out",
            first.to_str().unwrap(),
            &seed,
        ],
        b"",
    );
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // The mirror on 127.0.5.9, every page a seed (a copy's links are not
    // followed), crawled by two workers against the first crawl.
    let mirror = Nginx::serve_on(&site.root, "127.0.5.9");
    let base = format!("http://127.0.5.9:{}", mirror.port);
    let mut seeds = vec![format!("{base}/index.html")];
    seeds.extend((0..SITE_PAGES).map(|i| format!("{base}/p{i}.html")));
    let more = format!(
        "[dedup]\nremember = {}\n[scope]\nhosts = [\"*\"]",
        toml_list(std::slice::from_ref(&first))
    );
    let outs = two_workers(&tmp, &cluster.urls(), &seeds, "mirror", &more);

    let dups = records(&outs, "duplicates");
    assert_eq!(dups.len(), seeds.len(), "{dups:?}");
    for d in &dups {
        let url = d["url"].as_str().unwrap().trim_start_matches(&base);
        let of = d["duplicate_of"].as_str().unwrap();
        assert_eq!(of, format!("http://127.0.0.1:{}{url}", nginx.port), "{d}");
        assert_eq!(d["crawl"], first.to_str().unwrap());
    }
    assert!(records(&outs, "pages").is_empty());
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn two_workers_render_each_app_shell_once_with_the_browsers_requests_under_the_rules() {
    let cluster = Cluster::start(3);
    let tmp = fresh_dir("cluster-render");
    let root = tmp.join("site");
    let planted = app_site::write(&root, 3);
    for d in [&tmp, &root] {
        open_to_all(d);
    }
    let nginx = Nginx::serve_app(&root);
    let base = format!("http://127.0.0.1:{}", nginx.port);
    let render = "[render]\ntabs = 1\npage_timeout_secs = 5\nrequests_per_page = 10\n";
    let seeds = [format!("{base}/index.html")];
    let outs = two_workers(&tmp, &cluster.urls(), &seeds, "render", render);

    // Every page built by script written once over both workers, with the
    // text a browser shows: the links each script wrote were followed.
    let mut written: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in records(&outs, "pages") {
        let path = p["url"].as_str().unwrap().trim_start_matches(&base);
        let text = p["text"].as_str().unwrap_or("").to_string();
        written.entry(path.to_string()).or_default().push(text);
    }
    for p in planted.iter().filter(|p| p.kind != "hostile") {
        let texts = &written[&p.path];
        assert_eq!(texts.len(), 1, "{} written {} times", p.path, texts.len());
        let f1 = word_f1(&texts[0], &format!("{} {}", p.title, p.text));
        assert!(f1 >= 0.9, "{} ({}): F1 {f1:.2}", p.path, p.kind);
    }
    let stats = stats_of(&outs);
    let sum = |key: &str| -> u64 {
        (stats.iter())
            .map(|s| s["render"][key].as_u64().unwrap_or(0))
            .sum()
    };
    assert_eq!((sum("app_shells"), sum("rendered")), (17, 16));

    // What the server saw: each page asked once, each script at most once
    // a worker, the flood cut at the page's budget, nothing forbidden or
    // never fetched, and the host's delay between any two requests (the
    // browsers' of both workers included; nginx's log is to the ms).
    let requests = nginx.requests();
    let times = |path: &str| requests.iter().filter(|(_, u)| u == path).count();
    for p in &planted {
        assert_eq!(times(&p.path), 1, "{}", p.path);
    }
    assert!(times("/assets/json.js") <= 2);
    let flood = requests
        .iter()
        .filter(|(_, u)| u.starts_with("/api/flood/"));
    assert_eq!(flood.count(), 10);
    for never in [
        "/assets/app.css",
        "/assets/logo.png",
        "/private/secret.json",
    ] {
        assert_eq!(times(never), 0, "{never}");
    }
    let least = (requests.windows(2))
        .map(|w| w[1].0 - w[0].0)
        .fold(f64::MAX, f64::min);
    assert!(least >= 0.003, "two requests {least:.4} s apart");
    drop(nginx);
    let _ = std::fs::remove_dir_all(&tmp);
}
