use std::time::Duration;

/// Why a fetch did not produce a page. Every kind is counted by the
/// crawler; none is fatal to the crawl.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("not an http(s) URL: {0}")]
    Scheme(String),
    #[error("DNS lookup failed: {0}")]
    Dns(String),
    #[error("refused to connect to {0}: private, loopback or link-local address")]
    BlockedAddress(String),
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("body cut off after {after:?}: {read} of {} bytes read", expected.map_or("an unknown number of".to_string(), |n| n.to_string()))]
    BodyTimeout {
        after: Duration,
        read: u64,
        expected: Option<u64>,
    },
    #[error("body larger than {limit} bytes (declared {declared})")]
    TooLarge { limit: u64, declared: u64 },
    #[error("more than {0} redirects (or a redirect loop)")]
    TooManyRedirects(usize),
    #[error("redirect to {0} refused")]
    RedirectRefused(String),
    #[error("disallowed by robots.txt")]
    RobotsDenied,
    #[error("host skipped: crawl-delay {0:?} above the configured cap")]
    CrawlDelayTooLong(Duration),
    #[error("content type {0:?} not fetched")]
    ContentType(String),
    #[error("HTTP status {0}")]
    HttpStatus(u16),
    #[error("response could not be read: {0}")]
    Decode(String),
    #[error("host parked after repeated failures")]
    HostParked,
    #[error("not sent: its turn would have come after the deadline the caller set")]
    Late,
    /// No room among the bodies held within
    /// [`FetchConfig::body_room_wait`](crate::FetchConfig::body_room_wait):
    /// the response was let go; the URL is for later.
    #[error("no room for the body among the bodies held in {0:?}: let go, for later")]
    NoRoom(Duration),
}

impl FetchError {
    /// Short stable name, for counting and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Scheme(_) => "scheme",
            FetchError::Dns(_) => "dns",
            FetchError::BlockedAddress(_) => "blocked_address",
            FetchError::Connect(_) => "connect",
            FetchError::Timeout(_) => "timeout",
            FetchError::BodyTimeout { .. } => "body_timeout",
            FetchError::TooLarge { .. } => "too_large",
            FetchError::TooManyRedirects(_) => "too_many_redirects",
            FetchError::RedirectRefused(_) => "redirect_refused",
            FetchError::RobotsDenied => "robots_denied",
            FetchError::CrawlDelayTooLong(_) => "crawl_delay_too_long",
            FetchError::ContentType(_) => "content_type",
            FetchError::HttpStatus(_) => "http_status",
            FetchError::Decode(_) => "decode",
            FetchError::HostParked => "host_parked",
            FetchError::Late => "late",
            FetchError::NoRoom(_) => "no_room",
        }
    }

    /// Worth trying again later: the failure may pass.
    pub fn is_retryable(&self) -> bool {
        match self {
            FetchError::Connect(_) | FetchError::Timeout(_) | FetchError::BodyTimeout { .. } => {
                true
            }
            FetchError::HttpStatus(s) => *s >= 500 || *s == 429,
            _ => false,
        }
    }
}
