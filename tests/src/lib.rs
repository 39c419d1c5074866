//! `nearcrawl` binary.
//!
//! The binary is the one of this build (`target/<profile>/nearcrawl`).
//! Before the first test uses it, it is brought up to date with `cargo
//! build`, so `cargo test -p nearcrawl-tests` never runs a stale binary.
//! That build resolves features as `cargo test --workspace` does (see
//! [`nearcrawl_bin`]), so under it the build reuses every dependency the
//! tests were built with.
//! `NEARCRAWL_BIN` overrides the path and skips the build.

pub mod app_site;
pub mod dns;
pub mod dust_site;
pub mod nginx;
pub mod pdf;
pub mod redis_cluster;
pub mod site;
pub mod warcio;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The `nearcrawl` binary of this build: beside the `deps/` folder that holds
/// this test executable.
///
/// It is built with `--workspace --examples` because selecting examples
/// makes cargo resolve features with every member's dev-dependencies, as
/// `cargo test --workspace` does (which has built the examples already).
/// `--package nearcrawl-cli` alone resolves without them, so a dev-only
/// feature (criterion turns on serde's `alloc`) gave a second copy of
/// serde's dependents, pdf_oxide among them: gigabytes of `target/` in CI.
pub fn nearcrawl_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("NEARCRAWL_BIN") {
            return PathBuf::from(p);
        }
        let exe = std::env::current_exe().expect("test executable path");
        let dir = exe
            .parent()
            .and_then(|d| d.parent())
            .expect("target/<profile>/ folder");
        let release = dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "--quiet",
            "--workspace",
            "--examples",
            "--bin",
            "nearcrawl",
        ]);
        if release {
            build.arg("--release");
        }
        let status = build
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build for the nearcrawl binary");
        assert!(
            status.success(),
            "cargo build of the nearcrawl binary failed"
        );
        let bin = dir.join(format!("nearcrawl{}", std::env::consts::EXE_SUFFIX));
        assert!(
            bin.exists(),
            "{} not found after building it",
            bin.display()
        );
        bin
    })
    .clone()
}

/// Runs `nearcrawl ARGS` with `stdin` as standard input.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(nearcrawl_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nearcrawl");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait for nearcrawl")
}

/// The repository's 50 real news articles (pages and their hand-made
/// article bodies: `tests/fixtures/articles/README.md`).
pub fn articles_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/articles")
}

/// Article bodies of the repository's real articles with more than
/// `min_words` words (ASCII-only ones if `ascii`), sorted and deduplicated:
/// real text for the tests.
pub fn article_bodies(min_words: usize, ascii: bool) -> Vec<String> {
    let path = articles_dir().join("ground-truth.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let gt: serde_json::Value = serde_json::from_str(&text).expect("ground truth is JSON");
    let mut out: Vec<String> = gt
        .as_object()
        .expect("ground truth is an object")
        .values()
        .map(|v| v["articleBody"].as_str().unwrap_or("").to_string())
        .filter(|b| (!ascii || b.is_ascii()) && b.split_whitespace().count() > min_words)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `count` made-up words (`w` and a number below `vocabulary`) drawn from
/// `seed`: text of its own for a generated page, the same every run.
pub fn made_up_words(seed: u64, count: usize, vocabulary: u64) -> String {
    let mut x = seed;
    (0..count)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            format!("w{}", (x >> 40) % vocabulary)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A page titled `title` with text of its own (250 made-up words from
/// `seed`) and a link to each of `links`.
pub fn linked_page(title: &str, seed: u64, links: &[&str]) -> Vec<u8> {
    let links: String = links
        .iter()
        .map(|l| format!("<a href='{l}'>{l}</a> "))
        .collect();
    let text = made_up_words(seed, 250, 5_000);
    format!(
        "<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>\
         {links}</main></body></html>"
    )
    .into_bytes()
}

/// What a test server answers: status, content type, body (for a 3xx, the
/// body is the Location).
pub type Response = (u16, &'static str, Vec<u8>);

/// Requested paths, in order.
pub type RequestLog = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// Serves `route(path)` over HTTP/1.1 keep-alive on 127.0.0.1 (a thread per
/// connection), each response after `delay`; returns the port and the log
/// of requested paths.
pub fn serve(
    route: impl Fn(&str) -> Response + Send + Sync + 'static,
    delay: std::time::Duration,
) -> (u16, RequestLog) {
    let log = RequestLog::default();
    let log2 = log.clone();
    let addr = serve_with("127.0.0.1", route, delay, move |_, path| {
        log2.lock().unwrap().push(path.to_string())
    });
    (addr.port(), log)
}

/// Requests as the server saw them: arrival time and path, in order.
pub type TimedLog = std::sync::Arc<std::sync::Mutex<Vec<(std::time::Instant, String)>>>;

/// Like [`serve`], on `ip` (a 127.x address: several make several hosts),
/// logging when each request arrived: politeness is measured here, where
/// the server sees it.
pub fn serve_timed(
    ip: &str,
    route: impl Fn(&str) -> Response + Send + Sync + 'static,
) -> (std::net::SocketAddr, TimedLog) {
    let log = TimedLog::default();
    let log2 = log.clone();
    let addr = serve_with(ip, route, std::time::Duration::ZERO, move |at, path| {
        log2.lock().unwrap().push((at, path.to_string()))
    });
    (addr, log)
}

/// Like [`serve_timed`], for many host names on one address: `route`
/// gets the request's `Host` header (without the port) and path.
pub fn serve_named(
    ip: &str,
    route: impl Fn(&str, &str) -> Response + Send + Sync + 'static,
) -> (std::net::SocketAddr, TimedLog) {
    let log = TimedLog::default();
    let log2 = log.clone();
    let addr = serve_routed(
        ip,
        route,
        std::time::Duration::ZERO,
        move |at, host, path| log2.lock().unwrap().push((at, format!("{host}{path}"))),
    );
    (addr, log)
}

/// Like [`serve_named`], on several addresses with one port (a host and
/// its aliases: `http://127.0.0.21:P/` and `http://127.0.0.22:P/` differ
/// in their host alone); the port, or None if it was taken on one of
/// them.
pub fn serve_named_alike(
    ips: &[&str],
    route: impl Fn(&str, &str) -> Response + Send + Sync + 'static,
) -> Option<(u16, TimedLog)> {
    let first = std::net::TcpListener::bind((ips[0], 0)).expect("bind a loopback address");
    let port = first.local_addr().expect("local address").port();
    let mut listeners = vec![first];
    for ip in &ips[1..] {
        listeners.push(std::net::TcpListener::bind((*ip, port)).ok()?);
    }
    let log = TimedLog::default();
    let route = std::sync::Arc::new(route);
    for listener in listeners {
        let (log2, route) = (log.clone(), route.clone());
        spawn_server(
            listener,
            move |host, path| route(host, path),
            std::time::Duration::ZERO,
            move |at, host, path| log2.lock().unwrap().push((at, format!("{host}{path}"))),
        );
    }
    Some((port, log))
}

/// Like [`serve_timed`], each answer after `delay` (a slow or far server),
/// logging arrival times.
pub fn serve_slow(
    ip: &str,
    route: impl Fn(&str) -> Response + Send + Sync + 'static,
    delay: std::time::Duration,
) -> (std::net::SocketAddr, TimedLog) {
    let log = TimedLog::default();
    let log2 = log.clone();
    let addr = serve_with(ip, route, delay, move |at, path| {
        log2.lock().unwrap().push((at, path.to_string()))
    });
    (addr, log)
}

fn serve_with(
    ip: &str,
    route: impl Fn(&str) -> Response + Send + Sync + 'static,
    delay: std::time::Duration,
    on_request: impl Fn(std::time::Instant, &str) + Send + Sync + 'static,
) -> std::net::SocketAddr {
    serve_routed(
        ip,
        move |_, path| route(path),
        delay,
        move |at, _, path| on_request(at, path),
    )
}

fn serve_routed(
    ip: &str,
    route: impl Fn(&str, &str) -> Response + Send + Sync + 'static,
    delay: std::time::Duration,
    on_request: impl Fn(std::time::Instant, &str, &str) + Send + Sync + 'static,
) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind((ip, 0)).expect("bind a loopback address");
    let addr = listener.local_addr().expect("local address");
    spawn_server(listener, route, delay, on_request);
    addr
}

fn spawn_server(
    listener: std::net::TcpListener,
    route: impl Fn(&str, &str) -> Response + Send + Sync + 'static,
    delay: std::time::Duration,
    on_request: impl Fn(std::time::Instant, &str, &str) + Send + Sync + 'static,
) {
    use std::io::{BufRead, BufReader, Read};
    let route = std::sync::Arc::new(route);
    let on_request = std::sync::Arc::new(on_request);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (route, log) = (route.clone(), on_request.clone());
            std::thread::spawn(move || {
                let _ = stream.set_nodelay(true);
                let Ok(read_half) = stream.try_clone() else {
                    return;
                };
                let mut reader = BufReader::new(read_half);
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let at = std::time::Instant::now();
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let (mut len, mut host) = (0usize, String::new());
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 {
                            return;
                        }
                        if h == "\r\n" {
                            break;
                        }
                        let lower = h.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                        if let Some(v) = lower.strip_prefix("host:") {
                            host = v.trim().split(':').next().unwrap_or("").to_string();
                        }
                    }
                    let mut body = vec![0; len];
                    let _ = reader.read_exact(&mut body);
                    log(at, &host, &path);
                    if !delay.is_zero() {
                        std::thread::sleep(delay);
                    }
                    let (status, ctype, body) = route(&host, &path);
                    let location = if (300..400).contains(&status) {
                        format!("Location: {}\r\n", String::from_utf8_lossy(&body))
                    } else {
                        String::new()
                    };
                    let mut resp = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\n{location}Content-Length: {}\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    resp.extend_from_slice(&body);
                    if stream.write_all(&resp).is_err() {
                        return;
                    }
                }
            });
        }
    });
}

/// The JSON lines of a file (none if it does not exist); panics on a line
/// that is not JSON, which is what torn writes would leave.
pub fn json_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: bad line {l:?}: {e}", path.display()))
        })
        .collect()
}

/// A fresh, empty temporary directory for the test `tag` (of this
/// process).
pub fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nearcrawl-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `nearcrawl crawl --config dir/c.toml`, which must succeed, and
/// returns `dir/out/stats.json`.
pub fn crawl_ok(dir: &std::path::Path) -> serde_json::Value {
    crawl_ok_with(dir, &[])
}

/// Like [`crawl_ok`], with `more` arguments (`--worker w0`).
pub fn crawl_ok_with(dir: &std::path::Path, more: &[&str]) -> serde_json::Value {
    let config = dir.join("c.toml");
    let mut args = vec!["crawl", "--config", config.to_str().unwrap()];
    args.extend_from_slice(more);
    let out = run(&args, b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = std::fs::read_to_string(dir.join("out/stats.json")).expect("stats.json");
    serde_json::from_str(&stats).expect("stats.json is JSON")
}
