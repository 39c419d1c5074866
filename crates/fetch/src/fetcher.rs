//! The HTTP client: politeness, robots.txt, redirects, limits, typed
//! outcomes.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use tokio::sync::Semaphore;
use url::Url;

use crate::body_memory::{BodyMemory, BodyShare};
use crate::config::{FetchConfig, PolitenessKey};
use crate::error::FetchError;
use crate::refresh::refresh_target;
use crate::robots::{AgentRules, Robots};
use crate::safety::{BLOCKED_MARK, Dns, GuardedResolver, is_non_public};

/// A fetched response.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub status: u16,
    /// Where the body came from, after redirects.
    pub final_url: Url,
    /// Every hop before `final_url`, in order.
    pub redirects: Vec<Url>,
    pub content_type: Option<String>,
    /// The `charset` parameter of Content-Type, as declared.
    pub charset: Option<String>,
    pub x_robots_tag: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was cut at the configured maximum.
    pub truncated: bool,
    /// Time spent on its requests (every hop), politeness waits not
    /// counted.
    pub elapsed: Duration,
    /// The address the body came from (`WARC-IP-Address`).
    pub remote_ip: Option<IpAddr>,
    /// The body's share of [`FetchConfig::body_memory_bytes`], given back
    /// when this is dropped.
    _memory: Option<Arc<BodyShare>>,
}

/// The media type of PDF documents.
pub const PDF: &str = "application/pdf";

impl Fetched {
    /// Declared a PDF (`application/pdf`).
    pub fn is_declared_pdf(&self) -> bool {
        media_type(self.content_type.as_deref()) == PDF
    }

    /// Declared HTML, or declared nothing (sniffing is the extractor's).
    fn is_html(&self) -> bool {
        let media = media_type(self.content_type.as_deref());
        media.is_empty() || media == "text/html" || media == "application/xhtml+xml"
    }

    /// The last hop's body, with the hops before it.
    fn after(mut self, redirects: Vec<Url>, elapsed: Duration) -> Fetched {
        self.redirects = redirects;
        self.elapsed = elapsed;
        self
    }
}

/// A Content-Type's media type, lowercased, without its parameters (empty
/// when none is declared).
fn media_type(content_type: Option<&str>) -> String {
    content_type
        .and_then(|c| c.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Politeness state of one host.
#[derive(Debug)]
struct Host {
    in_flight: Semaphore,
    pace: Mutex<Pace>,
}

/// When a host may be asked next. Every request to the host (robots.txt,
/// pages, redirect hops) takes a turn by reserving its start time under
/// the lock, so concurrent requests cannot all see the host as free.
#[derive(Debug)]
struct Pace {
    /// Start of the latest request (or the reserved start of one waiting),
    /// moved to when its answer began if that is later: the server saw the
    /// request before answering, so counting from the answer is never
    /// early, even when the request took a while to go out.
    last_start: Option<Instant>,
    /// Not before this instant (Retry-After, retry backoff).
    not_before: Instant,
    /// Least time between the starts of two requests: the configured delay
    /// or the robots.txt Crawl-delay, doubled while the host keeps failing.
    delay: Duration,
    /// The delay to return to after a success.
    base_delay: Duration,
    failures: u32,
    parked_until: Option<Instant>,
}

impl Pace {
    /// The host began to answer a request now.
    fn answered(&mut self) {
        let now = Instant::now();
        self.last_start = Some(self.last_start.map_or(now, |t| t.max(now)));
    }

    /// The earliest start the next request could have.
    fn next_start(&self, now: Instant) -> Instant {
        let after_last = self.last_start.map_or(now, |t| t + self.delay);
        now.max(self.not_before).max(after_last)
    }

    /// Whether a fresh `Pace` would pace the host the same from now on: no
    /// failures or backoff to remember, and the last start longer ago than
    /// `idle` (which is at least any delay the host can have).
    fn is_idle(&self, now: Instant, idle: Duration) -> bool {
        self.failures == 0
            && self.parked_until.is_none_or(|t| t <= now)
            && self.not_before <= now
            && self.last_start.is_none_or(|t| t + idle <= now)
    }
}

/// A map emptied by a sweep gives its memory back once it is mostly empty
/// (`retain` keeps the capacity of the largest the map ever was).
fn shrink_if_sparse<V>(map: &mut HashMap<String, V>) {
    if map.capacity() > 64 && map.len() < map.capacity() / 4 {
        map.shrink_to_fit();
    }
}

/// A robots.txt in memory, once fetched or read back from the store.
struct CachedRobots {
    expires: Instant,
    robots: Arc<Robots>,
    /// Its rules for this fetcher's agent.
    rules: AgentRules,
    /// The store holds it too, so it can be dropped and read back.
    stored: bool,
}

type RobotsSlot = Arc<tokio::sync::Mutex<Option<CachedRobots>>>;

/// How often per-host state is swept of hosts not asked for a while.
const SWEEP_EVERY: Duration = Duration::from_secs(10);

/// Fetches pages politely. Share one per crawl (it is `Send + Sync`; clone
/// the `Arc`).
pub struct Fetcher {
    config: FetchConfig,
    client: reqwest::Client,
    global: Semaphore,
    /// Bodies held (see [`FetchConfig::body_memory_bytes`]).
    body_memory: Arc<BodyMemory>,
    hosts: Mutex<HashMap<String, Arc<Host>>>,
    /// Each origin's robots.txt and when a fetch last asked for it.
    robots: Mutex<HashMap<String, (Instant, RobotsSlot)>>,
    /// The last sweep of idle hosts ([`forget_idle`](Fetcher::forget_idle)).
    swept: Mutex<Instant>,
    /// Where robots.txt files outlive the process, if anywhere.
    robots_store: Option<Arc<dyn RobotsStore>>,
    /// The configured per-host rate (none when the delay is zero).
    rate: Option<DefaultKeyedRateLimiter<String>>,
    dns: Arc<Dns>,
    /// With `PolitenessKey::Ip`: each host name's first address, once
    /// resolved (politeness is counted by it).
    addresses: Mutex<HashMap<String, IpAddr>>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A redirect hop the caller refuses (out of scope, say).
pub type HopCheck<'a> = &'a (dyn Fn(&Url) -> bool + Send + Sync);

/// What a fetch asks besides its URL.
#[derive(Clone, Copy)]
pub struct Ask<'a> {
    /// Redirect hops are followed only where this allows.
    pub hop_ok: HopCheck<'a>,
    /// The first request starts by then or is not sent
    /// ([`FetchError::Late`]): a schedule shared by several crawlers
    /// counted the host's turn from when it handed the URL out.
    pub start_by: Option<Instant>,
    /// An earlier response's validators: the request is conditional, and
    /// an unchanged page answers 304 with no body.
    pub validators: Option<&'a Validators>,
    /// Told of each failed attempt that is tried again (to count and log
    /// it).
    pub on_retry: Option<RetryNote<'a>>,
}

/// Told of a failed attempt that will be tried again.
pub type RetryNote<'a> = &'a (dyn Fn(&FetchError) + Send + Sync);

/// What an earlier response said identifies its version (`ETag`,
/// `Last-Modified`), sent back as `If-None-Match` / `If-Modified-Since`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

impl Validators {
    /// The validators among a response's headers.
    pub fn of(headers: &[(String, String)]) -> Validators {
        let get = |name: &str| {
            let mut values = headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case(name));
            values.next().map(|(_, v)| v.trim().to_string())
        };
        Validators {
            etag: get("etag"),
            last_modified: get("last-modified"),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    /// The headers that make a request conditional on these, as sent.
    pub fn conditions(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let etag = self.etag.as_deref().map(|v| ("If-None-Match", v));
        let date = (self.last_modified.as_deref()).map(|v| ("If-Modified-Since", v));
        etag.into_iter().chain(date)
    }
}

impl std::fmt::Debug for Ask<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ask")
            .field("start_by", &self.start_by)
            .finish_non_exhaustive()
    }
}

impl<'a> Ask<'a> {
    pub fn new(hop_ok: HopCheck<'a>) -> Ask<'a> {
        Ask {
            hop_ok,
            start_by: None,
            validators: None,
            on_retry: None,
        }
    }
}

impl Fetcher {
    /// The headers every request carries besides `Host` (reqwest adds
    /// `Accept` and `Accept-Encoding` for the decoders it was built with),
    /// for archival records of the request.
    pub fn request_headers(&self) -> Vec<(String, String)> {
        vec![
            ("User-Agent".into(), self.config.user_agent()),
            ("Accept".into(), "*/*".into()),
            ("Accept-Encoding".into(), "gzip, br, zstd, deflate".into()),
        ]
    }

    pub fn new(config: FetchConfig) -> Result<Fetcher, FetchError> {
        let dns = Arc::new(Dns::new(&config).map_err(FetchError::Dns)?);
        let mut builder = reqwest::Client::builder()
            .user_agent(config.user_agent())
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.read_timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(
                config
                    .per_host_concurrency
                    .clamp(1, MAX_IDLE_CONNECTIONS_PER_HOST),
            )
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: config.allow_private_networks,
                dns: dns.clone(),
            }));
        for (host, addr) in &config.resolve {
            builder = builder.resolve(host, *addr);
        }
        let client = builder
            .build()
            .map_err(|e| FetchError::Connect(e.to_string()))?;
        let rate = NonZeroU32::new(1).and_then(|one| {
            Quota::with_period(config.per_host_delay)
                .map(|q| RateLimiter::keyed(q.allow_burst(one)))
        });
        Ok(Fetcher {
            global: Semaphore::new(config.global_concurrency.max(1)),
            body_memory: BodyMemory::new(config.body_memory_bytes),
            client,
            hosts: Mutex::new(HashMap::new()),
            robots: Mutex::new(HashMap::new()),
            swept: Mutex::new(Instant::now()),
            robots_store: None,
            rate,
            dns,
            addresses: Mutex::new(HashMap::new()),
            config,
        })
    }

    /// Keeps fetched robots.txt files in `store` too, and asks it before
    /// fetching one: a resumed crawl does not fetch them again while they
    /// are fresh (`robots_ttl`).
    pub fn with_robots_store(mut self, store: Arc<dyn RobotsStore>) -> Fetcher {
        self.robots_store = Some(store);
        self
    }

    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// What `url`'s politeness is counted by: its host and port, or with
    /// `PolitenessKey::Ip` its server's address once resolved (see
    /// [`learn_address`](Fetcher::learn_address)).
    fn pace_key(&self, url: &Url) -> String {
        if self.config.politeness_key == PolitenessKey::Host {
            return politeness_key(url);
        }
        match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(url::Host::Domain(name)) => match self.addresses.lock().unwrap().get(name) {
                Some(ip) => ip.to_string(),
                None => politeness_key(url),
            },
            None => politeness_key(url),
        }
    }

    /// The address `url`'s requests are paced by with `PolitenessKey::Ip`
    /// (an IP literal, or the host name's first address, resolved once and
    /// cached); none for a name that does not resolve, or with
    /// `PolitenessKey::Host`.
    pub async fn address_of(&self, url: &Url) -> Option<IpAddr> {
        if self.config.politeness_key != PolitenessKey::Ip {
            return None;
        }
        match url.host()? {
            url::Host::Ipv4(ip) => Some(ip.into()),
            url::Host::Ipv6(ip) => Some(ip.into()),
            url::Host::Domain(name) => {
                self.learn_address(url).await;
                self.addresses.lock().unwrap().get(name).copied()
            }
        }
    }

    /// With `PolitenessKey::Ip`, resolves `url`'s host (once; the resolver
    /// caches) so its requests are counted by address. A name that does
    /// not resolve is left to the request to report.
    async fn learn_address(&self, url: &Url) {
        if self.config.politeness_key != PolitenessKey::Ip {
            return;
        }
        let Some(url::Host::Domain(name)) = url.host() else {
            return;
        };
        if self.addresses.lock().unwrap().contains_key(name) {
            return;
        }
        if let Ok(ips) = self.dns.lookup(name).await {
            if let Some(ip) = ips.first() {
                self.addresses.lock().unwrap().insert(name.to_string(), *ip);
            }
        }
    }

    fn host(&self, url: &Url) -> Arc<Host> {
        let key = self.pace_key(url);
        let mut hosts = self.hosts.lock().unwrap();
        hosts
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Host {
                    in_flight: Semaphore::new(self.config.per_host_concurrency.max(1)),
                    pace: Mutex::new(Pace {
                        last_start: None,
                        not_before: Instant::now(),
                        delay: self.config.per_host_delay,
                        base_delay: self.config.per_host_delay,
                        failures: 0,
                        parked_until: None,
                    }),
                })
            })
            .clone()
    }

    fn sweep_if_due(&self) {
        let now = Instant::now();
        let mut swept = self.swept.lock().unwrap();
        if now >= *swept + SWEEP_EVERY {
            *swept = now;
            drop(swept);
            self.forget_idle();
        }
    }

    /// Drops what is kept per host for hosts not asked for a while, so a
    /// broad crawl holds state for the hosts it is crawling, not for every
    /// host it ever met (a million hosts held ~1 KB each). Called every
    /// [`SWEEP_EVERY`] by fetches; returns the hosts and robots.txt files
    /// dropped.
    ///
    /// Never early: a host's pacing is dropped only when nothing holds it
    /// and its last request started longer ago than any delay it can have
    /// (the Crawl-delay cap, or the configured delay if longer), with no
    /// failure, backoff or parking to remember: a fresh start then paces
    /// it exactly as the old one would have. A robots.txt is dropped once
    /// expired, or when the store holds it and no fetch has asked for it
    /// for that same time; it is read back from the store on the next
    /// fetch (a sled read and a parse), never fetched again before its TTL.
    pub fn forget_idle(&self) -> (usize, usize) {
        let now = Instant::now();
        let idle = self.config.crawl_delay_cap.max(self.config.per_host_delay);
        let hosts = {
            let mut hosts = self.hosts.lock().unwrap();
            let before = hosts.len();
            hosts.retain(|_, h| {
                Arc::strong_count(h) > 1 || !h.pace.lock().unwrap().is_idle(now, idle)
            });
            shrink_if_sparse(&mut hosts);
            before - hosts.len()
        };
        let robots = {
            let mut robots = self.robots.lock().unwrap();
            let before = robots.len();
            robots.retain(|_, (used, slot)| {
                if Arc::strong_count(slot) > 1 {
                    return true;
                }
                let Ok(guard) = slot.try_lock() else {
                    return true;
                };
                guard.as_ref().is_some_and(|cached| {
                    let expired = cached.expires <= now;
                    let can_read_back = cached.stored && *used + idle <= now;
                    !(expired || can_read_back)
                })
            });
            shrink_if_sparse(&mut robots);
            before - robots.len()
        };
        if let Some(rate) = &self.rate {
            // governor drops the keys whose state a fresh key would equal.
            rate.retain_recent();
            rate.shrink_to_fit();
        }
        tracing::debug!(
            hosts_forgotten = hosts,
            robots_forgotten = robots,
            hosts_kept = self.hosts.lock().unwrap().len(),
            robots_kept = self.robots.lock().unwrap().len(),
            "idle hosts swept"
        );
        (hosts, robots)
    }

    /// Fetches `url`, following redirects that robots.txt and `hop_ok`
    /// allow. Politeness waits, retries and backoff happen inside.
    pub async fn fetch(&self, url: &Url, hop_ok: HopCheck<'_>) -> Result<Fetched, FetchError> {
        self.fetch_as(url, Ask::new(hop_ok), Wanted::Page).await
    }

    /// [`fetch`](Fetcher::fetch) with what [`Ask`] adds.
    pub async fn fetch_with(&self, url: &Url, ask: Ask<'_>) -> Result<Fetched, FetchError> {
        self.fetch_as(url, ask, Wanted::Page).await
    }

    /// Fetches what a rendered page asks for (its scripts, its data): like
    /// [`fetch`](Fetcher::fetch), politeness, robots.txt and the address
    /// guard included, but of any content type, and a page that refreshes
    /// is not followed (the browser does that itself).
    pub async fn fetch_resource(&self, url: &Url, ask: Ask<'_>) -> Result<Fetched, FetchError> {
        self.fetch_as(url, ask, Wanted::Resource).await
    }

    /// Fetches a sitemap (XML, plain text or gzip, which is decompressed):
    /// like [`fetch`](Fetcher::fetch), politeness and robots.txt included,
    /// but any content type is taken and bodies up to the sitemap protocol's
    /// 50 MiB limit (after decompression) are read.
    pub async fn fetch_sitemap(&self, url: &Url, ask: Ask<'_>) -> Result<Fetched, FetchError> {
        let mut fetched = self.fetch_as(url, ask, Wanted::Sitemap).await?;
        if fetched.body.starts_with(&[0x1f, 0x8b]) {
            use std::io::Read;
            let mut plain = Vec::new();
            flate2::read::MultiGzDecoder::new(&fetched.body[..])
                .take(SITEMAP_MAX_BYTES + 1)
                .read_to_end(&mut plain)
                .map_err(|e| FetchError::Decode(format!("gzip: {e}")))?;
            fetched.truncated = plain.len() as u64 > SITEMAP_MAX_BYTES;
            plain.truncate(SITEMAP_MAX_BYTES as usize);
            fetched.body = plain;
        }
        Ok(fetched)
    }

    /// The parsed robots.txt of `url`'s origin (fetched and cached as for
    /// [`rules_for`](Fetcher::rules_for)); for its sitemap lines.
    pub async fn robots_for(&self, url: &Url) -> Result<Arc<Robots>, FetchError> {
        if !self.config.obey_robots {
            // Not fetched for its rules: fetch it for its sitemaps only.
            let origin = url.origin().ascii_serialization();
            return Ok(Arc::new(self.fetch_robots(&origin).await?.0));
        }
        self.rules_for(url).await?;
        self.cached_robots(url).await
    }

    async fn fetch_as(
        &self,
        url: &Url,
        ask: Ask<'_>,
        wanted: Wanted,
    ) -> Result<Fetched, FetchError> {
        check_scheme(url)?;
        self.sweep_if_due();
        self.learn_address(url).await;
        let rules = self.rules_for(url).await?;
        if !rules.is_allowed(&path_and_query(url)) {
            return Err(FetchError::RobotsDenied);
        }
        let host = self.host(url);
        let parked = host.pace.lock().unwrap().parked_until;
        if parked.is_some_and(|until| Instant::now() < until) {
            return Err(FetchError::HostParked);
        }
        let _global = self.global.acquire().await.expect("semaphore open");
        let _slot = host.in_flight.acquire().await.expect("semaphore open");
        let mut attempt = 0;
        loop {
            // A retry waits out its backoff: past any deadline.
            let ask = Ask {
                start_by: ask.start_by.filter(|_| attempt == 0),
                ..ask
            };
            match self.follow(url, ask, &host, wanted).await {
                Ok(page) => {
                    // A success ends the slow-down.
                    let mut pace = host.pace.lock().unwrap();
                    pace.failures = 0;
                    pace.delay = pace.base_delay;
                    return Ok(page);
                }
                Err(e) if e.is_retryable() && attempt < self.config.max_retries => {
                    if let Some(note) = ask.on_retry {
                        note(&e);
                    }
                    self.note_failure(&host);
                    let backoff = self.config.retry_backoff * 2u32.pow(attempt);
                    let jitter = backoff.mul_f64(jitter_fraction(url, attempt));
                    let mut pace = host.pace.lock().unwrap();
                    pace.not_before = pace.not_before.max(Instant::now() + backoff + jitter);
                    attempt += 1;
                }
                Err(e) => {
                    if e.is_retryable() {
                        self.note_failure(&host);
                    }
                    return Err(e);
                }
            }
        }
    }

    /// A failure slows the host (its delay doubles, up to a minute) and,
    /// past the limit, parks it.
    fn note_failure(&self, host: &Host) {
        let mut pace = host.pace.lock().unwrap();
        pace.failures += 1;
        pace.delay = (pace.delay * 2).clamp(Duration::from_millis(100), Duration::from_secs(60));
        if pace.failures >= self.config.park_after_failures {
            pace.parked_until = Some(Instant::now() + self.config.park_for);
        }
    }

    /// Waits for the host's turn. The start is reserved under the lock
    /// before sleeping, so the starts of two requests to one host are
    /// always at least its delay apart, whatever `per_host_concurrency`
    /// allows in flight. governor paces the configured rate per host; the
    /// reservation adds what differs per host and changes over time
    /// (Crawl-delay, backoff, Retry-After), which a fixed quota cannot.
    /// A turn that would come after `start_by` is not taken.
    async fn wait_turn(
        &self,
        url: &Url,
        host: &Host,
        start_by: Option<Instant>,
    ) -> Result<(), FetchError> {
        let late = |at: Instant| start_by.is_some_and(|by| at > by);
        if let Some(rate) = &self.rate {
            rate.until_key_ready(&self.pace_key(url)).await;
        }
        let start = {
            let mut pace = host.pace.lock().unwrap();
            let start = pace.next_start(Instant::now());
            if late(start) {
                return Err(FetchError::Late);
            }
            pace.last_start = Some(start);
            start
        };
        tokio::time::sleep_until(start.into()).await;
        // A busy runtime may wake the task late.
        if late(Instant::now()) {
            return Err(FetchError::Late);
        }
        Ok(())
    }

    /// When a request to `url`'s host could start, were it asked now: for
    /// schedulers that would rather pick a host that is ready.
    pub fn ready_at(&self, url: &Url) -> Instant {
        let key = self.pace_key(url);
        let host = self.hosts.lock().unwrap().get(&key).cloned();
        match host {
            Some(h) => h.pace.lock().unwrap().next_start(Instant::now()),
            None => Instant::now(),
        }
    }

    /// The least time between two starts at `url`'s host, as now known
    /// (the configured delay until its robots.txt says otherwise).
    pub fn delay_of(&self, url: &Url) -> Duration {
        let key = self.pace_key(url);
        let host = self.hosts.lock().unwrap().get(&key).cloned();
        host.map_or(self.config.per_host_delay, |h| h.pace.lock().unwrap().delay)
    }

    /// One attempt: the request and its redirects. Every hop waits for its
    /// host's turn, and the timeout covers each hop's request and body, not
    /// the politeness waits nor a body's wait for memory (see
    /// [`read_body`](Fetcher::read_body)).
    async fn follow(
        &self,
        start: &Url,
        ask: Ask<'_>,
        host: &Arc<Host>,
        wanted: Wanted,
    ) -> Result<Fetched, FetchError> {
        let mut start_by = ask.start_by;
        let mut url = start.clone();
        let mut hop_host = host.clone();
        let mut redirects = Vec::new();
        let mut seen = HashSet::new();
        let mut elapsed = Duration::ZERO;
        loop {
            check_address(&url, self.config.allow_private_networks)?;
            self.wait_turn(&url, &hop_host, start_by.take()).await?;
            let started = tokio::time::Instant::now();
            let deadline = started + self.config.request_timeout;
            let hop = (self.request(&url, &hop_host, wanted, ask.validators, deadline)).await?;
            elapsed += started.elapsed();
            let next = match hop {
                // A page that refreshes to another at once is a redirect.
                Hop::Body(fetched) if wanted == Wanted::Page && fetched.is_html() => {
                    match refresh_target(&fetched.body, &url) {
                        Some(next) => next,
                        None => return Ok(fetched.after(redirects, elapsed)),
                    }
                }
                Hop::Body(fetched) => return Ok(fetched.after(redirects, elapsed)),
                Hop::Redirect(next) => next,
            };
            seen.insert(url.clone());
            if redirects.len() >= self.config.max_redirects || seen.contains(&next) {
                return Err(FetchError::TooManyRedirects(self.config.max_redirects));
            }
            if !(ask.hop_ok)(&next) {
                return Err(FetchError::RedirectRefused(next.to_string()));
            }
            let rules = self.rules_for(&next).await?;
            if !rules.is_allowed(&path_and_query(&next)) {
                return Err(FetchError::RobotsDenied);
            }
            redirects.push(url);
            self.learn_address(&next).await;
            hop_host = self.host(&next);
            url = next;
        }
    }

    /// A GET of `url`, asking to close the connection after it when the
    /// host's next turn is far off (see [`KEEP_ALIVE_BELOW`]).
    fn get(&self, url: &Url, host: &Host) -> reqwest::RequestBuilder {
        self.get_if(url, host, None)
    }

    /// [`get`](Fetcher::get), conditional on `validators` when given.
    fn get_if(
        &self,
        url: &Url,
        host: &Host,
        validators: Option<&Validators>,
    ) -> reqwest::RequestBuilder {
        let mut request = self.client.get(url.clone());
        for (name, value) in validators.into_iter().flat_map(Validators::conditions) {
            request = request.header(name, value);
        }
        if host.pace.lock().unwrap().delay >= KEEP_ALIVE_BELOW {
            return request.header(reqwest::header::CONNECTION, "close");
        }
        request
    }

    /// One request, its answer due by `deadline`: a redirect's target, or
    /// the body read.
    async fn request(
        &self,
        url: &Url,
        host: &Host,
        wanted: Wanted,
        validators: Option<&Validators>,
        deadline: tokio::time::Instant,
    ) -> Result<Hop, FetchError> {
        let sent = tokio::time::timeout_at(deadline, self.get_if(url, host, validators).send());
        let timed_out = FetchError::Timeout(self.config.request_timeout);
        let resp = sent.await.map_err(|_| timed_out)?.map_err(map_error)?;
        host.pace.lock().unwrap().answered();
        let status = resp.status().as_u16();
        if (300..400).contains(&status) && status != 304 {
            let Some(loc) = resp.headers().get(LOCATION).and_then(|v| v.to_str().ok()) else {
                return Err(FetchError::HttpStatus(status));
            };
            let next = url
                .join(loc)
                .map_err(|_| FetchError::RedirectRefused(loc.to_string()))?;
            check_scheme(&next).map_err(|_| FetchError::RedirectRefused(next.to_string()))?;
            return Ok(Hop::Redirect(next));
        }
        if status == 429 || status == 503 {
            if let Some(wait) = retry_after(resp.headers()) {
                if wait > self.config.max_retry_after {
                    return Err(FetchError::HttpStatus(status));
                }
                let mut pace = host.pace.lock().unwrap();
                pace.not_before = pace.not_before.max(Instant::now() + wait);
            }
            return Err(FetchError::HttpStatus(status));
        }
        if status >= 400 {
            return Err(FetchError::HttpStatus(status));
        }
        let content_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let media = media_type(content_type.as_deref());
        // No Content-Type: sniffing is the extractor's job, so take it.
        let listed = |t: &String| t.eq_ignore_ascii_case(&media);
        // A 304 has no body to be of a type.
        if wanted == Wanted::Page
            && status != 304
            && !media.is_empty()
            && !self.config.content_types.iter().any(listed)
        {
            return Err(FetchError::ContentType(media));
        }
        let limit = match wanted {
            Wanted::Page if media == PDF => self.config.max_pdf_bytes,
            Wanted::Page => self.config.max_body_bytes,
            Wanted::Sitemap => self.config.max_body_bytes.max(SITEMAP_MAX_BYTES),
            Wanted::Resource => self.config.max_body_bytes,
        };
        let body = self
            .read_body(resp, url.clone(), content_type, limit, deadline)
            .await?;
        Ok(Hop::Body(body))
    }

    /// Reads a response's body by `deadline`, moved on by the time the
    /// body waited for room in the bodies held (our memory is not the
    /// server being slow). A body not read by then is cut off: an error of
    /// its own kind, with how much had come.
    async fn read_body(
        &self,
        resp: reqwest::Response,
        final_url: Url,
        content_type: Option<String>,
        limit: u64,
        deadline: tokio::time::Instant,
    ) -> Result<Fetched, FetchError> {
        let declared = resp
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let compressed = resp
            .headers()
            .contains_key(reqwest::header::CONTENT_ENCODING);
        if let Some(len) = declared {
            if len > limit && !compressed {
                return Err(FetchError::TooLarge {
                    limit,
                    declared: len,
                });
            }
        }
        let status = resp.status().as_u16();
        let remote_ip = resp.remote_addr().map(|a| a.ip());
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let x_robots_tag = {
            let v: Vec<&str> = resp
                .headers()
                .get_all("x-robots-tag")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            (!v.is_empty()).then(|| v.join("\n"))
        };
        let expected = declared
            .filter(|_| !compressed)
            .unwrap_or(UNKNOWN_BODY_BYTES);
        let waiting = tokio::time::Instant::now();
        let room_wait = self.config.body_room_wait;
        let admitted = tokio::time::timeout(room_wait, self.body_memory.admit(expected.min(limit)));
        let mut memory = admitted.await.map_err(|_| FetchError::NoRoom(room_wait))?;
        let deadline = deadline + waiting.elapsed();
        // Sized once when the length is known: growing by doubling held up
        // to twice a large body, and copied it on every step.
        let mut body = match declared {
            Some(len) if !compressed => Vec::with_capacity(len.min(limit) as usize),
            _ => Vec::new(),
        };
        let mut truncated = false;
        let mut stream = resp.bytes_stream();
        loop {
            let Ok(next) = tokio::time::timeout_at(deadline, stream.next()).await else {
                return Err(FetchError::BodyTimeout {
                    after: self.config.request_timeout,
                    read: body.len() as u64,
                    expected: declared.filter(|_| !compressed),
                });
            };
            let Some(chunk) = next else { break };
            let chunk = chunk.map_err(map_error)?;
            let room = (limit as usize).saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
            memory.set(body.capacity() as u64);
        }
        // Grown by doubling when its length was not known: up to twice
        // the body, for as long as the body is held.
        body.shrink_to_fit();
        memory.set(body.capacity() as u64);
        let charset = content_type.as_deref().and_then(charset_param);
        Ok(Fetched {
            status,
            final_url,
            redirects: Vec::new(),
            content_type,
            charset,
            x_robots_tag,
            headers,
            body,
            truncated,
            elapsed: Duration::ZERO,
            remote_ip,
            _memory: Some(Arc::new(memory)),
        })
    }

    /// Whether `url`'s robots.txt rules are at hand (fresh in the cache, or
    /// not obeyed): a fetch then makes no request before the page's own.
    pub fn has_rules(&self, url: &Url) -> bool {
        !self.config.obey_robots || self.fresh_robots(url, |_| ()).is_some()
    }

    /// Whether `url`'s robots.txt, fresh in the cache, forbids it: a fetch
    /// of it would then make no request, so it needs no turn of its host.
    /// False when the rules are not at hand (nothing is fetched here).
    pub fn forbids(&self, url: &Url) -> bool {
        self.config.obey_robots
            && self
                .fresh_robots(url, |r| !r.rules.is_allowed(&path_and_query(url)))
                .unwrap_or(false)
    }

    /// `read` of `url`'s robots.txt if it is fresh in the cache and not
    /// being fetched; never waits.
    fn fresh_robots<T>(&self, url: &Url, read: impl FnOnce(&CachedRobots) -> T) -> Option<T> {
        let origin = url.origin().ascii_serialization();
        let slot = self
            .robots
            .lock()
            .unwrap()
            .get(&origin)
            .map(|e| e.1.clone())?;
        let cached = slot.try_lock().ok()?;
        cached
            .as_ref()
            .filter(|c| Instant::now() < c.expires)
            .map(read)
    }

    /// The robots.txt rules for `url`'s origin: cached for the TTL; an
    /// unreachable or 5xx robots.txt disallows for now and is asked again
    /// after a minute; a 4xx allows everything.
    pub async fn rules_for(&self, url: &Url) -> Result<AgentRules, FetchError> {
        if !self.config.obey_robots {
            return Ok(Robots::allow_all().for_agent(&self.config.agent));
        }
        let origin = url.origin().ascii_serialization();
        let slot = {
            let mut robots = self.robots.lock().unwrap();
            let now = Instant::now();
            let entry = robots
                .entry(origin.clone())
                .or_insert_with(|| (now, RobotsSlot::default()));
            entry.0 = now;
            entry.1.clone()
        };
        let mut guard = slot.lock().await;
        let fresh = guard
            .as_ref()
            .filter(|cached| Instant::now() < cached.expires)
            .map(|cached| cached.robots.clone());
        let robots = match fresh {
            Some(r) => r,
            None => {
                let now = SystemTime::now();
                let stored = self.robots_store.as_ref().and_then(|st| {
                    let (expires, text) = st.load(&origin)?;
                    let left = expires.duration_since(now).ok()?;
                    Some((Robots::parse(&text), left, true))
                });
                let (robots, ttl, stored) = match stored {
                    Some(r) => r,
                    None => {
                        let (source, ttl) = self.fetch_robots_source(&origin).await?;
                        // Transient answers (5xx, unreachable) are not kept.
                        let mut saved = false;
                        if ttl == self.config.robots_ttl {
                            if let (Some(st), Some(text)) = (&self.robots_store, source.text()) {
                                st.save(&origin, now + ttl, text);
                                saved = true;
                            }
                        }
                        (source.parse(), ttl, saved)
                    }
                };
                let robots = Arc::new(robots);
                *guard = Some(CachedRobots {
                    expires: Instant::now() + ttl,
                    rules: robots.for_agent(&self.config.agent),
                    robots: robots.clone(),
                    stored,
                });
                robots
            }
        };
        let rules = robots.for_agent(&self.config.agent);
        if let Some(delay) = rules.crawl_delay() {
            if delay > self.config.crawl_delay_cap {
                return Err(FetchError::CrawlDelayTooLong(delay));
            }
            let host = self.host(url);
            let mut pace = host.pace.lock().unwrap();
            pace.base_delay = pace.base_delay.max(delay);
            pace.delay = pace.delay.max(delay);
        }
        Ok(rules)
    }

    async fn cached_robots(&self, url: &Url) -> Result<Arc<Robots>, FetchError> {
        let origin = url.origin().ascii_serialization();
        let slot = self
            .robots
            .lock()
            .unwrap()
            .get(&origin)
            .map(|e| e.1.clone());
        if let Some(slot) = slot {
            if let Some(cached) = slot.lock().await.as_ref() {
                return Ok(cached.robots.clone());
            }
        }
        Ok(Arc::new(self.fetch_robots(&origin).await?.0))
    }

    /// The parsed robots.txt of an origin and how long to keep it. A host
    /// at a refused address is an error, not a robots.txt.
    pub async fn fetch_robots(&self, origin: &str) -> Result<(Robots, Duration), FetchError> {
        let (source, ttl) = self.fetch_robots_source(origin).await?;
        Ok((source.parse(), ttl))
    }

    async fn fetch_robots_source(
        &self,
        origin: &str,
    ) -> Result<(RobotsSource, Duration), FetchError> {
        let retry_soon = Duration::from_secs(60);
        let Ok(mut url) = Url::parse(&format!("{origin}/robots.txt")) else {
            return Ok((RobotsSource::AllowAll, self.config.robots_ttl));
        };
        for _ in 0..=5 {
            check_address(&url, self.config.allow_private_networks)?;
            // robots.txt is a request like any other: it takes a turn.
            self.learn_address(&url).await;
            let host = self.host(&url);
            self.wait_turn(&url, &host, None).await?;
            let resp = match tokio::time::timeout(
                self.config.request_timeout,
                self.get(&url, &host).send(),
            )
            .await
            {
                Ok(Ok(r)) => {
                    host.pace.lock().unwrap().answered();
                    r
                }
                // A refused address or a name that does not resolve is the
                // page's error too; a host that does not answer waits.
                Ok(Err(e)) => match map_error(e) {
                    e @ (FetchError::BlockedAddress(_) | FetchError::Dns(_)) => return Err(e),
                    _ => return Ok((RobotsSource::DisallowAll, retry_soon)),
                },
                Err(_) => return Ok((RobotsSource::DisallowAll, retry_soon)),
            };
            let status = resp.status().as_u16();
            if (300..400).contains(&status) {
                match resp
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|l| url.join(l).ok())
                {
                    Some(next) => {
                        url = next;
                        continue;
                    }
                    None => return Ok((RobotsSource::AllowAll, self.config.robots_ttl)),
                }
            }
            if (400..500).contains(&status) {
                return Ok((RobotsSource::AllowAll, self.config.robots_ttl));
            }
            if status >= 500 {
                return Ok((RobotsSource::DisallowAll, retry_soon));
            }
            let mut body = Vec::new();
            let mut stream = resp.bytes_stream();
            while let Some(Ok(chunk)) = stream.next().await {
                body.extend_from_slice(&chunk);
                if body.len() >= crate::robots::MAX_BYTES {
                    break;
                }
            }
            return Ok((RobotsSource::Text(body), self.config.robots_ttl));
        }
        // More than five redirects: as if there were none (allow).
        Ok((RobotsSource::AllowAll, self.config.robots_ttl))
    }
}

/// Keeps robots.txt files between runs (the crawler's state, say).
pub trait RobotsStore: Send + Sync {
    /// The file kept for `origin` and when it expires.
    fn load(&self, origin: &str) -> Option<(SystemTime, Vec<u8>)>;
    /// Keeps `text` as `origin`'s robots.txt until `expires`. Errors are
    /// the store's to report: a lost entry only means fetching again.
    fn save(&self, origin: &str, expires: SystemTime, text: &[u8]);
}

/// A robots.txt outcome before parsing.
enum RobotsSource {
    Text(Vec<u8>),
    /// No file (4xx) or too many redirects.
    AllowAll,
    /// Unreachable or 5xx: everything waits.
    DisallowAll,
}

impl RobotsSource {
    fn parse(&self) -> Robots {
        match self {
            RobotsSource::Text(t) => Robots::parse(t),
            RobotsSource::AllowAll => Robots::allow_all(),
            RobotsSource::DisallowAll => Robots::disallow_all(),
        }
    }

    /// Text that parses to the same rules (an empty file allows all).
    fn text(&self) -> Option<&[u8]> {
        match self {
            RobotsSource::Text(t) => Some(t),
            RobotsSource::AllowAll => Some(b""),
            RobotsSource::DisallowAll => None,
        }
    }
}

/// What one request gave.
enum Hop {
    Redirect(Url),
    Body(Fetched),
}

/// What a fetch is for: pages must have one of the configured content
/// types; sitemaps may be XML, text or gzip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    Page,
    Sitemap,
    /// What a rendered page asks for.
    Resource,
}

/// Connections to a host are kept open between requests only when its
/// delay is shorter than this. A connection kept across a politeness delay
/// costs ~25 KB here (and a slot on the server) per host, and a broad crawl
/// has thousands of hosts between two requests: a new connection per
/// request is cheaper there, and it is what a server expects of a crawler
/// that comes once a second or less.
pub const KEEP_ALIVE_BELOW: Duration = Duration::from_secs(1);

/// Idle connections kept open per host: as many as the host may be asked
/// at once (more are never used), and at most this. Each keeps its read
/// buffer, which hyper grows to ~400 KB on large bodies over a fast link:
/// 64 kept after a burst of large pages held 29 MB on rust-doc (served on
/// loopback). Fewer kept cost reconnects: 32 cost ~5% of pages/s on a
/// loopback site crawled 64 at a time, 4 cost 25%.
const MAX_IDLE_CONNECTIONS_PER_HOST: usize = 32;

/// What a body of unknown length (chunked, or compressed) is expected
/// to take when it is admitted: a large web page. It is counted as it
/// grows.
const UNKNOWN_BODY_BYTES: u64 = 256 << 10;

/// The sitemap protocol's limit on a sitemap file, uncompressed.
pub const SITEMAP_MAX_BYTES: u64 = 50 << 20;

/// The politeness key of a URL, in both engines: its host, with the port
/// when it is not the scheme's default (another port is another server;
/// `http` and `https` of one host are one).
pub fn politeness_key(url: &Url) -> String {
    match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or("")),
        None => url.host_str().unwrap_or("").to_string(),
    }
}

/// The host of a politeness key (`host` or `host:port`; an IPv6 host keeps
/// its brackets).
pub fn host_of_key(key: &str) -> &str {
    match key.rsplit_once(':') {
        Some((host, port))
            if port.bytes().all(|b| b.is_ascii_digit())
                && (!host.starts_with('[') || host.ends_with(']')) =>
        {
            host
        }
        _ => key,
    }
}

fn path_and_query(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

fn check_scheme(url: &Url) -> Result<(), FetchError> {
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(()),
        _ => Err(FetchError::Scheme(url.to_string())),
    }
}

/// IP-literal hosts skip DNS, so the address check happens here.
fn check_address(url: &Url, allow_private: bool) -> Result<(), FetchError> {
    if allow_private {
        return Ok(());
    }
    let ip: Option<IpAddr> = match url.host() {
        Some(url::Host::Ipv4(v4)) => Some(v4.into()),
        Some(url::Host::Ipv6(v6)) => Some(v6.into()),
        _ => None,
    };
    match ip {
        Some(ip) if is_non_public(ip) => Err(FetchError::BlockedAddress(ip.to_string())),
        _ => Ok(()),
    }
}

fn map_error(e: reqwest::Error) -> FetchError {
    let mut chain = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        chain.push_str(": ");
        chain.push_str(&s.to_string());
        source = s.source();
    }
    if chain.contains(BLOCKED_MARK) {
        return FetchError::BlockedAddress(chain);
    }
    if e.is_timeout() {
        return FetchError::Timeout(Duration::ZERO);
    }
    if e.is_connect() {
        if chain.contains("dns error") || chain.contains("failed to lookup") {
            return FetchError::Dns(chain);
        }
        return FetchError::Connect(chain);
    }
    if e.is_body() || e.is_decode() {
        return FetchError::Decode(chain);
    }
    FetchError::Connect(chain)
}

/// Retry-After as seconds (an HTTP date is read as one minute).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    Some(match v.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => Duration::from_secs(60),
    })
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// 0..0.5 from the URL and attempt: jitter without a random source, so
/// concurrent retries of different URLs spread out.
fn jitter_fraction(url: &Url, attempt: u32) -> f64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(url.as_str().as_bytes());
    h.write(&attempt.to_le_bytes());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64 * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_its_host_and_port() {
        let key = |u: &str| politeness_key(&Url::parse(u).unwrap());
        assert_eq!(key("https://Example.org/a"), "example.org");
        assert_eq!(key("http://example.org:80/"), "example.org");
        assert_eq!(key("http://example.org:8080/"), "example.org:8080");
        assert_eq!(key("http://[::1]:8080/"), "[::1]:8080");
        assert_eq!(host_of_key("example.org"), "example.org");
        assert_eq!(host_of_key("example.org:8080"), "example.org");
        assert_eq!(host_of_key("127.0.4.1:80"), "127.0.4.1");
        assert_eq!(host_of_key("[::1]"), "[::1]");
        assert_eq!(host_of_key("[::1]:8080"), "[::1]");
    }

    #[test]
    fn charset_parameter() {
        assert_eq!(
            charset_param("text/html; charset=GBK").as_deref(),
            Some("GBK")
        );
        assert_eq!(
            charset_param("text/html;CHARSET=\"utf-8\"").as_deref(),
            Some("utf-8")
        );
        assert_eq!(charset_param("text/html"), None);
    }
}
