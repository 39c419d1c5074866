//! Broad crawls through `nearcrawl crawl`, on several loopback hosts:
//! politeness measured where a server sees it (the arrival times in each
//! host's log), and the open scope with its budgets.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use nearcrawl_tests::dns::Dnsmasq;
use nearcrawl_tests::{TimedLog, crawl_ok, made_up_words, serve_named, serve_timed};

/// Text of its own for page `i` of host `h` (so no page is a duplicate and
/// every page's links are followed).
fn text(h: usize, i: usize) -> String {
    made_up_words((h * 1000 + i + 1) as u64, 120, 20_000)
}

fn page(h: usize, i: usize, links: &str) -> Vec<u8> {
    format!(
        "<html><head><title>Host {h} page {i}</title></head><body><main><h1>Host {h} page {i}</h1>\
         <p>{}</p>{links}</main></body></html>",
        text(h, i)
    )
    .into_bytes()
}

const PAGES: usize = 6;

/// Host `h`: `/` links to its pages, to a disallowed page and to the next
/// host; `/p/0` is a redirect to `/p/moved`.
fn route(h: usize, robots: &'static str, next: String, path: &str) -> (u16, &'static str, Vec<u8>) {
    let links: String = (0..PAGES)
        .map(|i| format!("<a href=\"/p/{i}\">p{i}</a> "))
        .collect();
    match path {
        "/robots.txt" => (200, "text/plain", robots.as_bytes().to_vec()),
        "/" => (
            200,
            "text/html",
            page(
                h,
                99,
                &format!("{links}<a href=\"/private/x\">x</a> <a href=\"{next}\">next</a>"),
            ),
        ),
        "/p/0" => (302, "text/html", b"/p/moved".to_vec()),
        "/p/moved" => (200, "text/html", page(h, 0, &links)),
        _ => match path
            .strip_prefix("/p/")
            .and_then(|i| i.parse::<usize>().ok())
        {
            Some(i) if i < PAGES => (200, "text/html", page(h, i, &links)),
            _ => (404, "text/plain", b"no".to_vec()),
        },
    }
}

/// Per host, the least gap between the arrivals of two requests.
fn least_gaps(logs: &[(String, TimedLog)]) -> BTreeMap<String, Duration> {
    logs.iter()
        .map(|(host, log)| {
            let mut times: Vec<_> = log.lock().unwrap().iter().map(|(t, _)| *t).collect();
            times.sort();
            let least = times
                .windows(2)
                .map(|w| w[1] - w[0])
                .min()
                .unwrap_or(Duration::MAX);
            (host.clone(), least)
        })
        .collect()
}

/// Serves host `h` on `ips[h]` with `robots[h]`, each linking to the next
/// (the last to the first); returns each host's base URL and log.
fn serve_hosts(ips: &[&str], robots: &[&'static str]) -> Vec<(String, TimedLog)> {
    let mut logs = Vec::new();
    let mut nexts = Vec::new();
    for h in 0..ips.len() {
        // Each host links to the next, whose port is known only once it
        // is bound: filled in below.
        let next_slot = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
        let next = next_slot.clone();
        let robots = robots[h];
        let (addr, log) = serve_timed(ips[h], move |path| {
            route(h, robots, next.get().cloned().unwrap_or_default(), path)
        });
        nexts.push(next_slot);
        logs.push((format!("http://{addr}"), log));
    }
    for h in 0..ips.len() {
        let next = format!("{}/", logs[(h + 1) % ips.len()].0);
        nexts[h].set(next).unwrap();
    }
    logs
}

/// Runs `nearcrawl crawl` in a fresh `dir` with `seeds` and the config
/// body `toml` (the output directory is added); returns stats.json.
fn crawl(dir: &std::path::Path, seeds: &[&str], toml: &str) -> serde_json::Value {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let seeds: String = seeds.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(dir.join("seeds.txt"), seeds).unwrap();
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[seeds]\nfile = \"seeds.txt\"\n{toml}\n[output]\ndir = \"{}\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    crawl_ok(dir)
}

#[test]
fn delays_and_crawl_delay_hold_for_every_request_whatever_the_concurrency() {
    // Four hosts on four loopback addresses; the first asks for a
    // Crawl-delay longer than the configured delay, and per-host
    // concurrency is high, which must not matter.
    let ips = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"];
    let robots = [
        "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n",
        "User-agent: *\nDisallow: /private/\n",
        "User-agent: *\nDisallow: /private/\n",
        "User-agent: *\nDisallow: /private/\n",
    ];
    let logs = serve_hosts(&ips, &robots);
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-polite-{}", std::process::id()));
    let seeds: Vec<String> = logs.iter().map(|(b, _)| format!("{b}/")).collect();
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let stats = crawl(
        &dir,
        &seeds,
        "[politeness]\ndelay_ms = 250\nper_host_concurrency = 64\nglobal_concurrency = 16\n\
         [fetch]\nallow_private_networks = true",
    );
    // stats.json's per-host figures: every page of each host, at its delay.
    let top = stats["top_hosts"].as_array().unwrap();
    assert_eq!(top.len(), 4, "{stats}");
    for row in top {
        assert_eq!(row["fetched"].as_u64(), Some(PAGES as u64 + 1), "{row}");
        assert_eq!(row["written"].as_u64(), Some(PAGES as u64 + 1), "{row}");
        // A host is its politeness key: the address and the test server's port.
        let host = row["host"].as_str().unwrap().split(':').next();
        let delay = if host == Some(ips[0]) { 1000 } else { 250 };
        assert_eq!(row["mean_delay_ms"].as_u64(), Some(delay), "{row}");
    }

    // Every page of every host, robots.txt and the redirect hop included;
    // nothing disallowed.
    for (host, log) in &logs {
        let paths: HashSet<String> = log.lock().unwrap().iter().map(|(_, p)| p.clone()).collect();
        let mut want: Vec<String> = vec!["/robots.txt".into(), "/".into(), "/p/moved".into()];
        want.extend((0..PAGES).map(|i| format!("/p/{i}")));
        for p in &want {
            assert!(paths.contains(p), "{host}{p} never requested: {paths:?}");
        }
        assert!(
            !paths.iter().any(|p| p.starts_with("/private/")),
            "{host}: disallowed URL fetched"
        );
    }
    // Never early: 10 ms of slack for the timer and the loopback.
    let gaps = least_gaps(&logs);
    eprintln!("least gap between two requests, per host: {gaps:?}");
    for (i, (host, _)) in logs.iter().enumerate() {
        let delay = if i == 0 {
            Duration::from_secs(1)
        } else {
            Duration::from_millis(250)
        };
        let least = gaps[host];
        let seen: Vec<_> = logs[i].1.lock().unwrap().clone();
        let t0 = seen.first().map(|(t, _)| *t);
        let seen: Vec<String> = seen
            .iter()
            .map(|(t, p)| format!("{:.3} {p}", (*t - t0.unwrap()).as_secs_f64()))
            .collect();
        assert!(
            least + Duration::from_millis(10) >= delay,
            "{host}: two requests {least:?} apart, delay {delay:?}; gaps {gaps:?}; requests {seen:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_open_scope_follows_links_to_any_host_up_to_max_hosts() {
    let ips = [
        "127.0.0.5",
        "127.0.0.6",
        "127.0.0.7",
        "127.0.0.8",
        "127.0.0.9",
    ];
    let logs = serve_hosts(&ips, &["User-agent: *\nDisallow: /private/\n"; 5]);
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-open-{}", std::process::id()));
    let seed = format!("{}/", logs[0].0);
    let config = "[scope]\nhosts = [\"*\"]\nmax_hosts = 3\n\
                  [politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true";
    let stats = crawl(&dir, &[&seed], config);
    // Host 0 is the seed; links lead to 1, then 2, then 3: one too many.
    for (h, (host, log)) in logs.iter().enumerate() {
        let requests = log.lock().unwrap().len();
        if h < 3 {
            assert_eq!(
                requests,
                PAGES + 3,
                "{host}: robots.txt, home, pages, redirect target"
            );
        } else {
            assert_eq!(requests, 0, "{host} is past max_hosts");
        }
    }
    assert!(
        stats["out_of_scope"]["host_limit"].as_u64().unwrap_or(0) >= 1,
        "{stats}"
    );
    // Without an open scope only the seed's host is crawled.
    let stats = crawl(
        &dir,
        &[&seed],
        "[fetch]\nallow_private_networks = true\n[politeness]\ndelay_ms = 0",
    );
    assert!(
        stats["out_of_scope"]["host"].as_u64().unwrap_or(0) >= 1,
        "{stats}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A faceted-search trap: `/` links to 100 filter pages that all show the
/// same results.
fn trap_route(path: &str) -> (u16, &'static str, Vec<u8>) {
    let results = text(7, 7);
    match path {
        "/robots.txt" => (404, "text/plain", Vec::new()),
        "/" => {
            let links: String = (0..100)
                .map(|i| format!("<a href=\"/search?f={i}\">filter {i}</a> "))
                .collect();
            (
                200,
                "text/html",
                format!(
                    "<html><head><title>Shop</title></head><body><main><h1>Shop</h1><p>{}</p>{links}\
                     </main></body></html>",
                    text(7, 8)
                )
                .into_bytes(),
            )
        }
        p if p.starts_with("/search?f=") => (
            200,
            "text/html",
            format!(
                "<html><head><title>Search results</title></head><body><main><h1>Search results</h1>\
                 <p>Filter {}</p><p>{results}</p></main></body></html>",
                &p[10..]
            )
            .into_bytes(),
        ),
        _ => (404, "text/plain", Vec::new()),
    }
}

#[test]
fn a_host_of_mostly_duplicates_is_cut_off_as_a_trap_and_others_are_not() {
    let (trap, trap_log) = serve_timed("127.0.0.10", trap_route);
    let fine = serve_hosts(&["127.0.0.11"], &["User-agent: *\nDisallow: /private/\n"]);
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-trap-{}", std::process::id()));
    let seeds = [format!("http://{trap}/"), format!("{}/", fine[0].0)];
    let config = "[politeness]\ndelay_ms = 0\nglobal_concurrency = 4\n\
                  [fetch]\nallow_private_networks = true\n[dedup]\ntrap_window = 10\ntrap_share = 0.8";
    let stats = crawl(&dir, &[&seeds[0], &seeds[1]], config);

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
    let traps = stats["duplicate_traps"].as_array().unwrap();
    assert_eq!(traps.len(), 1, "{stats}");
    assert_eq!(traps[0]["host"], "127.0.0.10");
    assert!(traps[0]["duplicates"].as_u64().unwrap() >= 8);
    assert!(
        stats["out_of_scope"]["duplicate_trap"].as_u64().unwrap() >= 80,
        "{stats}"
    );
    let errors = std::fs::read_to_string(dir.join("out/errors.jsonl")).unwrap();
    assert!(
        errors.contains("\"kind\":\"duplicate_trap\"") && errors.contains("of its last 10 pages"),
        "{errors}"
    );
    // The other host had nothing to do with it: every page fetched.
    let fine_paths = fine[0].1.lock().unwrap().len();
    assert_eq!(
        fine_paths,
        PAGES + 3,
        "robots.txt, home, pages, redirect target"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_resolve_through_a_caching_dns_and_domain_budgets_hold() {
    // 2,000 names on one loopback address; site i links to sites 8i+1 to
    // 8i+8 and to a name the DNS does not know.
    let names: Vec<(String, &str)> = (0..2000)
        .map(|i| (format!("h{i}.shop.test"), "127.0.0.12"))
        .collect();
    let port = std::sync::Arc::new(std::sync::OnceLock::<u16>::new());
    let known = port.clone();
    let (addr, log) = serve_named("127.0.0.12", move |host, path| {
        let port = known.get().copied().unwrap_or(0);
        let i: usize = host
            .strip_prefix('h')
            .and_then(|h| h.split('.').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        match path {
            "/robots.txt" => (404, "text/plain", Vec::new()),
            "/" => {
                let mut links: String = (8 * i + 1..=8 * i + 8)
                    .map(|j| format!("<a href=\"http://h{j}.shop.test:{port}/\">{j}</a> "))
                    .collect();
                links.push_str(&format!(
                    "<a href=\"http://nowhere.shop.test:{port}/\">c</a>"
                ));
                (200, "text/html", page(i, 0, &links))
            }
            _ => (404, "text/plain", Vec::new()),
        }
    });
    port.set(addr.port()).unwrap();
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-dns-{}", std::process::id()));
    let dns = Dnsmasq::start(&dir.join("dns"), &names);
    let config = format!(
        "[scope]\nhosts = [\"*\"]\nmax_pages_per_domain = 40\n[politeness]\ndelay_ms = 1000\n\
         [fetch]\nallow_private_networks = true\ndns_servers = [\"127.0.0.1:{}\"]",
        dns.port
    );
    let seed = format!("http://h0.shop.test:{}/", addr.port());
    let stats = crawl(&dir.join("crawl"), &[&seed], &config);

    // One registrable domain (shop.test): 40 pages of it, no more (the
    // name that does not resolve took one).
    let pages = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, p)| p.ends_with("shop.test/"))
        .count();
    assert_eq!(pages, 39, "{stats}");
    assert!(
        stats["out_of_scope"]["domain_page_limit"]
            .as_u64()
            .unwrap_or(0)
            >= 1,
        "{stats}"
    );
    // The unknown name is an error, counted once per URL (and not fetched).
    assert_eq!(stats["errors"]["dns"].as_u64(), Some(1), "{stats}");
    // Cached: each name was asked once, though robots.txt and the page
    // came over two connections (a 1 s delay closes them).
    assert_eq!(
        dns.queries_for("h5.shop.test"),
        1,
        "asked once, then cached"
    );
    assert!(dns.queries_for("nowhere.shop.test") >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_politeness_by_ip_names_on_one_address_share_one_delay() {
    // Three names of one shared host, each with a home page and two pages.
    let names: Vec<(String, &str)> = ["a", "b", "c"]
        .iter()
        .map(|n| (format!("{n}.hosting.test"), "127.0.0.13"))
        .collect();
    let (addr, log) = serve_named("127.0.0.13", |host, path| {
        let h = host.bytes().next().map_or(0, |b| b as usize);
        match path {
            "/robots.txt" => (404, "text/plain", Vec::new()),
            "/" => (
                200,
                "text/html",
                page(h, 0, "<a href=\"/p/1\">1</a> <a href=\"/p/2\">2</a>"),
            ),
            "/p/1" => (200, "text/html", page(h, 1, "")),
            "/p/2" => (200, "text/html", page(h, 2, "")),
            _ => (404, "text/plain", Vec::new()),
        }
    });
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-ip-{}", std::process::id()));
    let dns = Dnsmasq::start(&dir.join("dns"), &names);
    let seeds: Vec<String> = names
        .iter()
        .map(|(n, _)| format!("http://{n}:{}/", addr.port()))
        .collect();
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let least_gap = |key: &str| {
        log.lock().unwrap().clear();
        let config = format!(
            "[politeness]\ndelay_ms = 300\nkey = \"{key}\"\n\
             [fetch]\nallow_private_networks = true\ndns_servers = [\"127.0.0.1:{}\"]",
            dns.port
        );
        crawl(&dir.join(key), &seeds, &config);
        let mut times: Vec<_> = log.lock().unwrap().iter().map(|(t, _)| *t).collect();
        assert_eq!(times.len(), 12, "robots.txt and three pages of each name");
        times.sort();
        times.windows(2).map(|w| w[1] - w[0]).min().unwrap()
    };
    // By address: the server sees one request per delay, whatever the name.
    let by_ip = least_gap("ip");
    assert!(
        by_ip + Duration::from_millis(10) >= Duration::from_millis(300),
        "{by_ip:?}"
    );
    // By host: the three names are asked side by side (so the test can fail).
    let by_host = least_gap("host");
    assert!(by_host < Duration::from_millis(100), "{by_host:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
