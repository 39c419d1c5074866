use std::net::SocketAddr;
use std::time::Duration;

/// What politeness counts requests by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolitenessKey {
    /// Host name and port.
    #[default]
    Host,
    /// The server's address: every name that resolves to it shares one
    /// delay and one concurrency limit.
    Ip,
}

/// How the fetcher behaves. Defaults suit a polite crawl of the open web.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Product token, matched against robots.txt groups (`nearcrawl`).
    pub agent: String,
    /// Where site owners can learn about the crawl; goes in the User-Agent.
    pub contact_url: Option<String>,
    pub connect_timeout: Duration,
    /// One request and its body (each redirect hop has its own); waits
    /// for the host's turn do not count.
    pub request_timeout: Duration,
    /// Longest silence while reading a response.
    pub read_timeout: Duration,
    /// Bodies are cut here (after decompression): a cap on memory and on
    /// decompression bombs.
    pub max_body_bytes: u64,
    /// PDF bodies (`application/pdf`, when it is among the content types)
    /// are cut here instead: a PDF is larger than a page, and a cut one is
    /// unreadable (the crawl records it as too large).
    pub max_pdf_bytes: u64,
    /// Bytes of response bodies held at once, from the moment one is read
    /// until its [`Fetched`](crate::Fetched) is dropped: a response whose
    /// body would pass it waits before its body is read (a body larger than
    /// it waits to be alone). Bounds memory by bytes, not by requests in
    /// flight: 64 requests for multi-megabyte pages otherwise held them all.
    pub body_memory_bytes: u64,
    /// A response waits at most this long for room among the bodies held;
    /// then it is let go, [`FetchError::NoRoom`](crate::FetchError::NoRoom),
    /// for the caller to ask again later. A server does not wait for a
    /// client that does not read forever (nginx's `send_timeout` is 60 s),
    /// and a body it cuts is lost.
    pub body_room_wait: Duration,
    pub max_redirects: usize,
    /// Media types whose bodies are downloaded; others are reported as
    /// [`FetchError::ContentType`](crate::FetchError::ContentType) unread.
    pub content_types: Vec<String>,
    /// Allow loopback, private and link-local addresses (for crawling
    /// local test servers). Off by default.
    pub allow_private_networks: bool,
    /// Fixed addresses for host names (like curl's `--resolve`); such
    /// hosts skip DNS and the address check.
    pub resolve: Vec<(String, SocketAddr)>,
    /// Name servers to ask; empty: the system's (`/etc/resolv.conf`).
    pub dns_servers: Vec<SocketAddr>,
    /// Time limit of one DNS query (two are tried).
    pub dns_timeout: Duration,
    /// DNS lookups in flight at once.
    pub dns_concurrency: usize,
    /// Names whose answers are cached (each for its TTL, at most an hour;
    /// a failed lookup for 10 s to 5 minutes).
    pub dns_cache_size: u64,
    /// What the delay and concurrency limits count by: each host, or each
    /// server address (shared hosting puts thousands of hosts on one).
    pub politeness_key: PolitenessKey,
    /// Least time between two requests to one host.
    pub per_host_delay: Duration,
    pub per_host_concurrency: usize,
    pub global_concurrency: usize,
    /// Retries of a retryable failure (connect error, timeout, 5xx, 429).
    pub max_retries: u32,
    /// First retry backoff; doubles each retry, with jitter.
    pub retry_backoff: Duration,
    /// Longest Retry-After honoured; longer ones count as a failure.
    pub max_retry_after: Duration,
    pub obey_robots: bool,
    /// A robots.txt Crawl-delay above this skips the host.
    pub crawl_delay_cap: Duration,
    pub robots_ttl: Duration,
    /// After this many consecutive failures a host is parked...
    pub park_after_failures: u32,
    /// ... for this long.
    pub park_for: Duration,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            agent: "nearcrawl".into(),
            contact_url: None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(15),
            max_body_bytes: 10 << 20,
            max_pdf_bytes: 20 << 20,
            body_memory_bytes: 16 << 20,
            body_room_wait: Duration::from_secs(30),
            max_redirects: 10,
            content_types: vec![
                "text/html".into(),
                "application/xhtml+xml".into(),
                "application/pdf".into(),
            ],
            allow_private_networks: false,
            resolve: Vec::new(),
            dns_servers: Vec::new(),
            dns_timeout: Duration::from_secs(5),
            dns_concurrency: 64,
            dns_cache_size: 100_000,
            politeness_key: PolitenessKey::Host,
            per_host_delay: Duration::from_secs(1),
            per_host_concurrency: 1,
            global_concurrency: 64,
            max_retries: 2,
            retry_backoff: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(120),
            obey_robots: true,
            crawl_delay_cap: Duration::from_secs(30),
            robots_ttl: Duration::from_secs(24 * 3600),
            park_after_failures: 5,
            park_for: Duration::from_secs(600),
        }
    }
}

impl FetchConfig {
    /// `nearcrawl/0.1 (+contact)`.
    pub fn user_agent(&self) -> String {
        let version = env!("CARGO_PKG_VERSION");
        match &self.contact_url {
            Some(c) => format!("{}/{version} (+{c})", self.agent),
            None => format!("{}/{version}", self.agent),
        }
    }
}
