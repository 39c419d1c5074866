//! The fetcher against a misbehaving server on 127.0.0.1 (port 0): every
//! case gets its designed outcome within bounded time, and the client keeps
//! working afterwards.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nearcrawl_fetch::{FetchConfig, FetchError, Fetcher};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

/// Starts a server whose `robots` body (or status) and pages are given by
/// `handle(path, hits)`. Returns its address.
/// 64 MiB of zeros, gzipped: made once, before any request, since a debug
/// build takes seconds to compress it and a request that waited for it
/// timed out on a loaded machine.
fn bomb() -> &'static [u8] {
    static BOMB: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BOMB.get_or_init(|| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..64 {
            gz.write_all(&zeros).unwrap();
        }
        gz.finish().unwrap()
    })
}

async fn server(robots: &'static str) -> SocketAddr {
    bomb();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicU32::new(0));
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            let hits = hits.clone();
            tokio::spawn(async move {
                let _ = handle(sock, robots, addr, hits).await;
            });
        }
    });
    addr
}

async fn handle(
    mut sock: TcpStream,
    robots: &str,
    addr: SocketAddr,
    hits: Arc<AtomicU32>,
) -> std::io::Result<()> {
    loop {
        let mut req = Vec::new();
        let mut buf = [0u8; 1024];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = sock.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            req.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8_lossy(&req);
        let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
        let n = hits.fetch_add(1, Ordering::SeqCst);
        let html = "text/html; charset=utf-8";
        match path.as_str() {
            "/robots.txt" => match robots {
                "500" => respond(&mut sock, 500, "text/plain", b"oops").await?,
                "404" => respond(&mut sock, 404, "text/plain", b"no").await?,
                "403" => respond(&mut sock, 403, "text/plain", b"no").await?,
                "redirect" => redirect(&mut sock, "/real-robots.txt").await?,
                "huge" => {
                    let mut body = String::from("User-agent: *\nDisallow: /blocked\n");
                    while body.len() < 2 << 20 {
                        body.push_str("Disallow: /filler/path/\n");
                    }
                    respond(&mut sock, 200, "text/plain", body.as_bytes()).await?
                }
                other => respond(&mut sock, 200, "text/plain", other.as_bytes()).await?,
            },
            "/real-robots.txt" => {
                respond(
                    &mut sock,
                    200,
                    "text/plain",
                    b"User-agent: *\nDisallow: /secret\n",
                )
                .await?
            }
            "/ok" | "/secret" | "/blocked" | "/public" => {
                respond(&mut sock, 200, html, b"<p>hello</p>").await?
            }
            "/drip" => {
                sock.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n",
                )
                .await?;
                for _ in 0..100 {
                    sock.write_all(b"x").await?;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
            // Bodies sent in two halves, a pause between them.
            p if p.starts_with("/halves/") => {
                let (len, pause_ms) = p[8..].split_once('/').unwrap();
                let (len, pause_ms): (usize, u64) =
                    (len.parse().unwrap(), pause_ms.parse().unwrap());
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len}\r\n\r\n"
                );
                sock.write_all(head.as_bytes()).await?;
                sock.write_all(&vec![b'h'; len / 2]).await?;
                tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                sock.write_all(&vec![b'h'; len - len / 2]).await?;
            }
            "/never" => {
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            "/reset" => {
                sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\npartial").await?;
                return Ok(()); // dropped: the connection closes mid-body
            }
            "/infinite" => {
                sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n").await?;
                let chunk = format!("{:x}\r\n{}\r\n", 4096, "y".repeat(4096));
                loop {
                    sock.write_all(chunk.as_bytes()).await?;
                }
            }
            "/bomb" => {
                let body = bomb();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                sock.write_all(head.as_bytes()).await?;
                sock.write_all(body).await?;
            }
            "/loop-a" => redirect(&mut sock, "/loop-b").await?,
            "/loop-b" => redirect(&mut sock, "/loop-a").await?,
            p if p.starts_with("/chain/") => {
                let k: u32 = p[7..].parse().unwrap_or(0);
                if k == 0 {
                    respond(&mut sock, 200, html, b"<p>end</p>").await?
                } else {
                    redirect(&mut sock, &format!("/chain/{}", k - 1)).await?
                }
            }
            "/429" => {
                if n.is_multiple_of(2) {
                    let r = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n";
                    sock.write_all(r).await?;
                } else {
                    respond(&mut sock, 200, html, b"<p>after 429</p>").await?
                }
            }
            "/flap" => {
                if n.is_multiple_of(2) {
                    respond(&mut sock, 503, "text/plain", b"busy").await?
                } else {
                    respond(&mut sock, 200, html, b"<p>after 503</p>").await?
                }
            }
            "/latin1-declared" => {
                respond(
                    &mut sock,
                    200,
                    "text/html; charset=iso-8859-1",
                    "<p>naïve café</p>".as_bytes(),
                )
                .await?
            }
            "/gbk-meta" => {
                let mut body = b"<meta charset=gbk><p>".to_vec();
                body.extend_from_slice(&encoding_rs::GBK.encode("中文网页").0);
                respond(&mut sock, 200, "text/html", &body).await?
            }
            "/binary" => {
                let junk: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
                respond(&mut sock, 200, "text/html", &junk).await?
            }
            "/pdf" => respond(&mut sock, 200, "application/pdf", b"%PDF-1.4").await?,
            "/zip" => respond(&mut sock, 200, "application/zip", b"PK\x03\x04").await?,
            "/to-loopback" => {
                redirect(&mut sock, &format!("http://127.0.0.1:{}/ok", addr.port())).await?
            }
            "/to-metadata" => {
                redirect(&mut sock, "http://169.254.169.254/latest/meta-data/").await?
            }
            _ => respond(&mut sock, 404, "text/plain", b"not found").await?,
        }
    }
}

async fn respond(
    sock: &mut TcpStream,
    status: u16,
    ctype: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body).await
}

async fn redirect(sock: &mut TcpStream, to: &str) -> std::io::Result<()> {
    let head = format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n");
    sock.write_all(head.as_bytes()).await
}

fn config() -> FetchConfig {
    FetchConfig {
        allow_private_networks: true,
        per_host_delay: Duration::ZERO,
        per_host_concurrency: 4,
        request_timeout: Duration::from_secs(4),
        read_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(2),
        max_body_bytes: 1 << 20,
        retry_backoff: Duration::from_millis(50),
        max_retries: 1,
        park_after_failures: 100,
        ..FetchConfig::default()
    }
}

fn url(addr: SocketAddr, path: &str) -> Url {
    Url::parse(&format!("http://{addr}{path}")).unwrap()
}

const ANY: &(dyn Fn(&Url) -> bool + Send + Sync) = &|_| true;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_responses_get_their_designed_outcomes() {
    let addr = server("User-agent: *\nDisallow: /secret\n").await;
    let f = Fetcher::new(config()).unwrap();
    let t = Instant::now();
    let err = |r: Result<nearcrawl_fetch::Fetched, FetchError>| r.map(|p| p.status).unwrap_err();

    // A body cut off by the timeout says so, and how much had come.
    let drip = err(f.fetch(&url(addr, "/drip"), ANY).await);
    assert!(
        matches!(
            drip,
            FetchError::BodyTimeout {
                read: 1..=6,
                expected: Some(100),
                ..
            }
        ),
        "{drip:?}"
    );
    assert_eq!(drip.kind(), "body_timeout");
    assert!(matches!(
        err(f.fetch(&url(addr, "/never"), ANY).await),
        FetchError::Timeout(_)
    ));
    assert!(matches!(
        err(f.fetch(&url(addr, "/reset"), ANY).await),
        FetchError::Decode(_) | FetchError::Connect(_)
    ));
    let inf = f.fetch(&url(addr, "/infinite"), ANY).await.unwrap();
    assert!(inf.truncated && inf.body.len() == 1 << 20);
    let bomb = f.fetch(&url(addr, "/bomb"), ANY).await.unwrap();
    assert!(
        bomb.truncated && bomb.body.len() == 1 << 20,
        "decompressed bytes are capped"
    );
    assert!(matches!(
        err(f.fetch(&url(addr, "/loop-a"), ANY).await),
        FetchError::TooManyRedirects(_)
    ));
    assert!(matches!(
        err(f.fetch(&url(addr, "/chain/20"), ANY).await),
        FetchError::TooManyRedirects(10)
    ));
    let short = f.fetch(&url(addr, "/chain/3"), ANY).await.unwrap();
    assert_eq!(short.redirects.len(), 3);
    assert_eq!(short.final_url.path(), "/chain/0");
    let refuse: &(dyn Fn(&Url) -> bool + Send + Sync) = &|u: &Url| !u.path().ends_with("/1");
    assert!(matches!(
        err(f.fetch(&url(addr, "/chain/3"), refuse).await),
        FetchError::RedirectRefused(_)
    ));
    let after = f.fetch(&url(addr, "/429"), ANY).await.unwrap();
    assert_eq!(after.body, b"<p>after 429</p>");
    let after = f.fetch(&url(addr, "/flap"), ANY).await.unwrap();
    assert_eq!(after.body, b"<p>after 503</p>");
    assert!(matches!(
        err(f.fetch(&url(addr, "/secret"), ANY).await),
        FetchError::RobotsDenied
    ));
    assert!(
        matches!(err(f.fetch(&url(addr, "/zip"), ANY).await), FetchError::ContentType(t) if t == "application/zip")
    );
    let pdf = f.fetch(&url(addr, "/pdf"), ANY).await.unwrap();
    assert!(
        pdf.is_declared_pdf() && pdf.body.starts_with(b"%PDF"),
        "PDFs are taken"
    );
    assert!(matches!(
        err(f.fetch(&url(addr, "/nothing"), ANY).await),
        FetchError::HttpStatus(404)
    ));
    let latin = f.fetch(&url(addr, "/latin1-declared"), ANY).await.unwrap();
    assert_eq!(
        latin.charset.as_deref(),
        Some("iso-8859-1"),
        "the declared charset is passed on as is"
    );
    let gbk = f.fetch(&url(addr, "/gbk-meta"), ANY).await.unwrap();
    assert_eq!(gbk.charset, None);
    let bin = f.fetch(&url(addr, "/binary"), ANY).await.unwrap();
    assert_eq!(bin.body.len(), 5000);
    // And the same client still works.
    assert_eq!(
        f.fetch(&url(addr, "/ok"), ANY).await.unwrap().body,
        b"<p>hello</p>"
    );
    assert!(
        t.elapsed() < Duration::from_secs(40),
        "took {:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_failures_and_delays() {
    let f = Fetcher::new(config()).unwrap();
    // 5xx: disallow everything for now.
    let a = server("500").await;
    assert!(matches!(
        f.fetch(&url(a, "/ok"), ANY).await,
        Err(FetchError::RobotsDenied)
    ));
    // 4xx: allow everything.
    for status in ["404", "403"] {
        let a = server(status).await;
        assert!(f.fetch(&url(a, "/ok"), ANY).await.is_ok(), "{status}");
    }
    // Redirected robots.txt is followed.
    let a = server("redirect").await;
    assert!(matches!(
        f.fetch(&url(a, "/secret"), ANY).await,
        Err(FetchError::RobotsDenied)
    ));
    assert!(f.fetch(&url(a, "/ok"), ANY).await.is_ok());
    // A huge robots.txt is read up to 500 KiB.
    let a = server("huge").await;
    assert!(matches!(
        f.fetch(&url(a, "/blocked"), ANY).await,
        Err(FetchError::RobotsDenied)
    ));
    // Crawl-delay is honoured; above the cap the host is skipped.
    let a = server("User-agent: *\nCrawl-delay: 1\n").await;
    let t = Instant::now();
    f.fetch(&url(a, "/ok"), ANY).await.unwrap();
    f.fetch(&url(a, "/public"), ANY).await.unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    let a = server("User-agent: *\nCrawl-delay: 3600\n").await;
    assert!(matches!(
        f.fetch(&url(a, "/ok"), ANY).await,
        Err(FetchError::CrawlDelayTooLong(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_refused_on_every_hop() {
    let addr = server("User-agent: *\nAllow: /\n").await;
    // A "public" name pinned to the test server; private networks not allowed.
    let config = FetchConfig {
        allow_private_networks: false,
        resolve: vec![("public.test".into(), addr)],
        ..config()
    };
    let f = Fetcher::new(config).unwrap();
    let public = |p: &str| Url::parse(&format!("http://public.test:{}{p}", addr.port())).unwrap();
    assert_eq!(
        f.fetch(&public("/ok"), ANY).await.unwrap().body,
        b"<p>hello</p>"
    );
    for hop in ["/to-loopback", "/to-metadata"] {
        let r = f.fetch(&public(hop), ANY).await;
        assert!(
            matches!(r, Err(FetchError::BlockedAddress(_))),
            "{hop}: {r:?}"
        );
    }
    assert!(matches!(
        f.fetch(&url(addr, "/ok"), ANY).await,
        Err(FetchError::BlockedAddress(_))
    ));
    let r = f
        .fetch(&Url::parse("http://localhost:9/x").unwrap(), ANY)
        .await;
    assert!(matches!(r, Err(FetchError::BlockedAddress(_))), "{r:?}");
    assert!(matches!(
        f.fetch(&Url::parse("ftp://example.com/").unwrap(), ANY)
            .await,
        Err(FetchError::Scheme(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_host_is_slowed_then_parked() {
    let addr = server("User-agent: *\nAllow: /\n").await;
    let f = Fetcher::new(FetchConfig {
        request_timeout: Duration::from_millis(300),
        max_retries: 0,
        park_after_failures: 2,
        park_for: Duration::from_secs(600),
        ..config()
    })
    .unwrap();
    for _ in 0..2 {
        assert!(matches!(
            f.fetch(&url(addr, "/never"), ANY).await,
            Err(FetchError::Timeout(_))
        ));
    }
    let t = Instant::now();
    assert!(matches!(
        f.fetch(&url(addr, "/ok"), ANY).await,
        Err(FetchError::HostParked)
    ));
    assert!(
        t.elapsed() < Duration::from_millis(100),
        "parked hosts are skipped at once"
    );
    // Other hosts are not affected.
    let other = server("User-agent: *\nAllow: /\n").await;
    assert!(f.fetch(&url(other, "/ok"), ANY).await.is_ok());
}

/// A body waiting for room among the bodies held is not timed: our memory
/// is not the server being slow. Two bodies of 900 and 500 bytes with 1,000
/// bytes for bodies, a 2 s timeout: the second waits for the first (~1.3
/// s), and its server sends the second half 2.3 s after the request; the
/// wait is not counted, so it is read. A retry is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_body_memory_is_not_the_servers_time() {
    let addr = server("User-agent: *\nAllow: /\n").await;
    let f = Arc::new(
        Fetcher::new(FetchConfig {
            body_memory_bytes: 1000,
            request_timeout: Duration::from_secs(2),
            max_retries: 0,
            ..config()
        })
        .unwrap(),
    );
    f.fetch(&url(addr, "/ok"), ANY).await.unwrap(); // robots.txt read
    let first = {
        let f = f.clone();
        // Its body is let go once read (a fetched body holds its bytes).
        tokio::spawn(async move {
            f.fetch(&url(addr, "/halves/900/1500"), ANY)
                .await
                .map(|f| f.body.len())
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = Instant::now();
    let second = f.fetch(&url(addr, "/halves/500/2300"), ANY).await.unwrap();
    assert!(t.elapsed() > Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(second.body.len(), 500);
    assert_eq!(first.await.unwrap().unwrap(), 900);

    // The server's own slowness still counts, and a retry is told.
    let retried = std::sync::Mutex::new(Vec::new());
    let note = |e: &FetchError| retried.lock().unwrap().push(e.kind());
    let f = Fetcher::new(FetchConfig {
        request_timeout: Duration::from_secs(1),
        ..config()
    })
    .unwrap();
    let ask = nearcrawl_fetch::Ask {
        on_retry: Some(&note),
        ..nearcrawl_fetch::Ask::new(ANY)
    };
    let cut = f
        .fetch_with(&url(addr, "/halves/500/1500"), ask)
        .await
        .unwrap_err();
    assert!(
        matches!(
            cut,
            FetchError::BodyTimeout {
                read: 250,
                expected: Some(500),
                ..
            }
        ),
        "{cut:?}"
    );
    assert_eq!(
        *retried.lock().unwrap(),
        ["body_timeout"],
        "max_retries 1: one retry"
    );
}

#[tokio::test]
async fn a_body_with_no_room_for_too_long_is_let_go_for_later() {
    let addr = server("User-agent: *\nAllow: /\n").await;
    let f = Fetcher::new(FetchConfig {
        body_memory_bytes: 1000,
        body_room_wait: Duration::from_millis(300),
        max_retries: 0,
        ..config()
    })
    .unwrap();
    f.fetch(&url(addr, "/ok"), ANY).await.unwrap(); // robots.txt read
    // A fetched body holds its bytes until it is dropped.
    let held = f.fetch(&url(addr, "/halves/900/10"), ANY).await.unwrap();
    let t = Instant::now();
    let waited = f
        .fetch(&url(addr, "/halves/500/10"), ANY)
        .await
        .unwrap_err();
    assert!(matches!(waited, FetchError::NoRoom(_)), "{waited:?}");
    assert_eq!(waited.kind(), "no_room");
    assert!(!waited.is_retryable(), "the caller asks again later");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    drop(held);
    let later = f.fetch(&url(addr, "/halves/500/10"), ANY).await.unwrap();
    assert_eq!(later.body.len(), 500);
}
