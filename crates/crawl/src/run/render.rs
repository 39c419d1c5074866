//! Pages built by script: which are rendered (`[render]` in the config:
//! app shells by default, see [`nearcrawl_extract::Page::app_shell`]),
//! and the crawler's side of a render (see [`nearcrawl_render`]): every
//! request the page makes is fetched by the crawl's own fetcher, so
//! robots.txt, the host's delay and concurrency and the address guard
//! hold for the browser as for any page; hosts out of the crawl's scope
//! are refused unless `third_party` allows them.
//!
//! A page that needs rendering and cannot be rendered (no browser, a
//! timeout) is read as served, and counted by why.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nearcrawl_extract::Page;
use nearcrawl_fetch::{Ask, FetchError, Fetched};
use nearcrawl_render::{Answer, Browser, BrowserConfig, ResourceKind, Resources, Served};
use url::Url;

use super::Stages;
use crate::config::{self, RenderMode};
use crate::stats::RenderCounts;

/// Renders the pages that need it, in one browser started on first use.
#[derive(Debug)]
pub struct Renderer {
    browser: Browser,
    config: config::Render,
    /// "No browser" is said once.
    said_unavailable: AtomicBool,
    scripts: Mutex<Scripts>,
}

/// Scripts the rendered pages loaded, kept for the next pages: an app's
/// bundle is the same on each of its pages, and asked once it takes no
/// more of the host's turns. Bounded by [`SCRIPTS_KEPT_BYTES`], the oldest
/// dropped first.
#[derive(Debug, Default)]
struct Scripts {
    by_url: std::collections::HashMap<String, Arc<Script>>,
    order: std::collections::VecDeque<String>,
    bytes: usize,
}

#[derive(Debug)]
struct Script {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// What the kept scripts may hold.
const SCRIPTS_KEPT_BYTES: usize = 16 << 20;

impl Scripts {
    fn get(&self, url: &Url) -> Option<Arc<Script>> {
        self.by_url.get(url.as_str()).cloned()
    }

    fn keep(&mut self, url: &Url, script: Script) {
        let len = script.body.len();
        if len > SCRIPTS_KEPT_BYTES / 4 || self.by_url.contains_key(url.as_str()) {
            return;
        }
        while self.bytes + len > SCRIPTS_KEPT_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(s) = self.by_url.remove(&oldest) {
                self.bytes -= s.body.len();
            }
        }
        self.bytes += len;
        self.order.push_back(url.to_string());
        self.by_url.insert(url.to_string(), Arc::new(script));
    }
}

impl Renderer {
    pub fn new(config: &config::Render) -> Renderer {
        let browser = Browser::new(BrowserConfig {
            program: config.browser.clone(),
            tabs: config.tabs.0,
            page_timeout: Duration::from_secs(config.page_timeout_secs.0 as u64),
            pages_per_browser: config.pages_per_browser.0 as u32,
            ..BrowserConfig::default()
        });
        Renderer {
            browser,
            config: config.clone(),
            said_unavailable: AtomicBool::new(false),
            scripts: Mutex::default(),
        }
    }

    /// Whether `page`, read from `url` as served, is rendered.
    pub fn wants(&self, url: &Url, page: &Page) -> bool {
        match self.config.mode_of(url.host_str().unwrap_or("")) {
            RenderMode::Never => false,
            RenderMode::Always => true,
            RenderMode::Auto => page.app_shell,
        }
    }

    /// The DOM of the page `fetched` served, rendered; none when it could
    /// not be (counted in `counts` by why, and logged).
    pub async fn render(
        &self,
        stages: &Arc<Stages>,
        fetched: &Fetched,
        counts: &mut RenderCounts,
    ) -> Option<String> {
        let url = &fetched.final_url;
        let requests = PageRequests {
            stages: stages.clone(),
            page_host: url.host_str().unwrap_or("").to_string(),
            third_party: self.config.third_party,
            sent: Arc::default(),
            most: self.config.requests_per_page.0,
            counts: Arc::default(),
        };
        let served = Served {
            status: fetched.status,
            headers: fetched.headers.clone(),
            body: fetched.body.clone(),
        };
        let result = self.browser.render(url, served, &requests).await;
        counts.merge(std::mem::take(&mut *requests.counts.lock().unwrap()));
        match result {
            Ok(page) => {
                counts.rendered += 1;
                counts.unsettled += u64::from(!page.settled);
                *counts.refused.entry("kind".into()).or_default() += u64::from(page.refused);
                tracing::debug!(%url, settled = page.settled, requests = page.requested, "rendered");
                Some(page.html)
            }
            Err(e) => {
                *counts.not_rendered.entry(e.kind().into()).or_default() += 1;
                if matches!(e, nearcrawl_render::RenderError::Unavailable(_)) {
                    if !self.said_unavailable.swap(true, Ordering::Relaxed) {
                        tracing::warn!("pages built by script are read as served: {e}");
                    }
                } else {
                    tracing::info!(%url, kind = e.kind(), "not rendered: {e}");
                }
                None
            }
        }
    }
}

/// The requests of one page being rendered, fetched with the crawl's
/// rules.
#[derive(Debug, Clone)]
struct PageRequests {
    stages: Arc<Stages>,
    page_host: String,
    third_party: bool,
    /// Requests sent to servers, against the `most` allowed.
    sent: Arc<AtomicUsize>,
    most: usize,
    counts: Arc<Mutex<RenderCounts>>,
}

impl PageRequests {
    /// The page's own host, the crawl's hosts, or any with `third_party`.
    fn allows(&self, url: &Url) -> bool {
        let host = url.host_str().unwrap_or("");
        self.third_party || host == self.page_host || self.stages.pages.allows_host(host)
    }

    fn refused(&self, why: &str) -> Answer {
        *self
            .counts
            .lock()
            .unwrap()
            .refused
            .entry(why.into())
            .or_default() += 1;
        Answer::Refused("refused by the crawl")
    }

    fn scripts(&self) -> &Mutex<Scripts> {
        &(self.stages.renderer.as_ref().expect("rendering")).scripts
    }

    async fn answer(self, url: Url, kind: ResourceKind) -> Answer {
        if !self.allows(&url) {
            return self.refused("scope");
        }
        let kept = (kind == ResourceKind::Script).then(|| self.scripts().lock().unwrap().get(&url));
        if let Some(script) = kept.flatten() {
            self.counts.lock().unwrap().scripts_kept += 1;
            return Answer::Body {
                status: 200,
                headers: script.headers.clone(),
                body: script.body.clone(),
            };
        }
        if self.sent.fetch_add(1, Ordering::Relaxed) >= self.most {
            return self.refused("budget");
        }
        let hop_ok = |hop: &Url| self.allows(hop);
        let answer = (self.stages.fetcher)
            .fetch_resource(&url, Ask::new(&hop_ok))
            .await;
        tracing::trace!(%url, kind = kind.name(), "a rendered page's request");
        match answer {
            Ok(mut f) => {
                self.counts.lock().unwrap().requests += 1;
                let (headers, body) = (std::mem::take(&mut f.headers), std::mem::take(&mut f.body));
                if kind == ResourceKind::Script && f.status == 200 {
                    let script = Script {
                        headers: headers.clone(),
                        body: body.clone(),
                    };
                    self.scripts().lock().unwrap().keep(&url, script);
                }
                Answer::Body {
                    status: f.status,
                    headers,
                    body,
                }
            }
            Err(FetchError::HttpStatus(status)) => {
                self.counts.lock().unwrap().requests += 1;
                Answer::Body {
                    status,
                    headers: Vec::new(),
                    body: Vec::new(),
                }
            }
            Err(FetchError::RobotsDenied) => self.refused("robots"),
            Err(e) => self.refused(e.kind()),
        }
    }
}

impl Resources for PageRequests {
    fn fetch(&self, url: Url, kind: ResourceKind) -> impl Future<Output = Answer> + Send + 'static {
        self.clone().answer(url, kind)
    }
}
