//! Pages built by JavaScript, rendered in headless Chromium.
//!
//! The browser never touches the network: it is driven over the DevTools
//! protocol on a pipe, every request a page makes is paused, and the
//! crawler answers it through [`Resources`], with its own rules (robots.txt,
//! scope, the host's delay, the address guard). The page's document is the
//! response the crawler already fetched; images, fonts, media and styles are
//! refused (a page's text does not need them).
//!
//! ```no_run
//! use nearcrawl_render::{Answer, Browser, BrowserConfig, ResourceKind, Resources, Served};
//! use url::Url;
//!
//! #[derive(Clone)]
//! struct Nothing;
//! impl Resources for Nothing {
//!     fn fetch(&self, _: Url, _: ResourceKind) -> impl Future<Output = Answer> + Send + 'static {
//!         async { Answer::Refused("offline") }
//!     }
//! }
//!
//! # async fn f() -> Result<(), nearcrawl_render::RenderError> {
//! let browser = Browser::new(BrowserConfig::default());
//! let url = Url::parse("http://127.0.0.1:8000/").unwrap();
//! let body = b"<div id=root></div><script>root.textContent = 'Hello'</script>".to_vec();
//! let served = Served { status: 200, headers: vec![], body };
//! let page = browser.render(&url, served, &Nothing).await?;
//! assert!(page.html.contains("Hello"));
//! # Ok(()) }
//! ```

mod browser;
mod cdp;
mod config;
mod page;

use std::future::Future;
use std::time::Duration;

use url::Url;

pub use browser::Browser;
pub use config::BrowserConfig;
pub use page::{SHORT_TIMER_MS, Served};

/// A rendered page.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    /// The DOM, serialized (`document.documentElement.outerHTML`).
    pub html: String,
    /// The page settled before the time limit (else this is the DOM as it
    /// stood at the limit).
    pub settled: bool,
    /// Requests the page made that were handed to [`Resources`].
    pub requested: u32,
    /// Requests refused for their kind or method.
    pub refused: u32,
}

/// Why a page was not rendered.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum RenderError {
    /// No browser can be run here (not installed, or not a browser).
    #[error("no browser: {0}")]
    Unavailable(String),
    /// The browser could not be started this time.
    #[error("the browser did not start: {0}")]
    Launch(String),
    /// The page's DOM could not be read within the time limit.
    #[error("the page did not give its DOM within {0:?}")]
    Timeout(Duration),
    /// The page's renderer or the browser died.
    #[error("the browser or the page's renderer crashed")]
    Crashed,
    /// The browser refused a command.
    #[error("the browser refused: {0}")]
    Protocol(String),
}

impl RenderError {
    /// The error's kind, as `errors.jsonl` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            RenderError::Unavailable(_) => "render_unavailable",
            RenderError::Launch(_) => "render_launch",
            RenderError::Timeout(_) => "render_timeout",
            RenderError::Crashed => "render_crashed",
            RenderError::Protocol(_) => "render_failed",
        }
    }
}

/// What a page asked for, as the browser says (`Network.ResourceType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    Document,
    Script,
    /// `XMLHttpRequest` and `fetch()`: the data a page builds itself from.
    Data,
    Stylesheet,
    Image,
    Media,
    Font,
    Other,
}

impl ResourceKind {
    fn of(cdp: &str) -> ResourceKind {
        match cdp {
            "Document" => ResourceKind::Document,
            "Script" => ResourceKind::Script,
            "XHR" | "Fetch" => ResourceKind::Data,
            "Stylesheet" => ResourceKind::Stylesheet,
            "Image" => ResourceKind::Image,
            "Media" => ResourceKind::Media,
            "Font" => ResourceKind::Font,
            _ => ResourceKind::Other,
        }
    }

    /// What a page needs to build its text: scripts and data. Styles,
    /// images, fonts, media, beacons, sockets and the rest are refused,
    /// and so are documents other than the page's own (frames, whose text
    /// is not the page's DOM, and navigations away from it).
    pub fn is_needed(self) -> bool {
        matches!(self, ResourceKind::Script | ResourceKind::Data)
    }

    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::Document => "document",
            ResourceKind::Script => "script",
            ResourceKind::Data => "data",
            ResourceKind::Stylesheet => "stylesheet",
            ResourceKind::Image => "image",
            ResourceKind::Media => "media",
            ResourceKind::Font => "font",
            ResourceKind::Other => "other",
        }
    }
}

/// A request's answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The response, its body decoded and whole.
    Body {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Not fetched (robots.txt, scope, the guard, an error), and why.
    Refused(&'static str),
}

/// The crawler's side of a render: it fetches what a page asks for, with
/// its rules. The future owns what it needs (it runs as its own task).
pub trait Resources: Send + Sync {
    fn fetch(&self, url: Url, kind: ResourceKind) -> impl Future<Output = Answer> + Send + 'static;
}
