//! One page rendered: a fresh browser context (no cookies or storage of
//! other pages), every request paused and answered by the crawler, and
//! the DOM read once the page settles.
//!
//! A page is settled when its load event has fired and, for
//! [`BrowserConfig::quiet`], it has had no request pending and no timer
//! of [`SHORT_TIMER_MS`] or less waiting (content a page shows after a
//! short timer is waited for; a poll every few seconds, an animation or
//! a script that never ends is not). At the time limit, the DOM as it
//! stands is read; a page too busy to give it is an error.

use std::time::Duration;

use data_encoding::BASE64;
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio::time::Instant;
use url::Url;

use crate::cdp::{CallError, Connection, Event};
use crate::config::BrowserConfig;
use crate::{Answer, RenderError, Rendered, ResourceKind, Resources};

/// The response the crawler fetched: given to the browser as the page's
/// document, so the page is not requested twice.
#[derive(Debug, Clone)]
pub struct Served {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Timers up to this long are waited for.
pub const SHORT_TIMER_MS: u32 = 5000;

/// Run in every frame before the page's own scripts: counts the page's
/// pending short timers, and takes away what would stall or escape a
/// headless page (dialogs, new windows).
const PRELUDE: &str = r#"(() => {
  const set = window.setTimeout, clear = window.clearTimeout, pending = new Set();
  Object.defineProperty(window, '__nearcrawlPending', { value: () => pending.size });
  window.setTimeout = function (f, ms, ...args) {
    if (typeof ms === 'number' && ms > SHORT) return set.call(window, f, ms, ...args);
    const id = set.call(window, function () {
      pending.delete(id);
      return typeof f === 'function' ? f.apply(this, args) : undefined;
    }, ms);
    pending.add(id);
    return id;
  };
  window.clearTimeout = function (id) { pending.delete(id); return clear.call(window, id); };
  window.open = () => null;
  window.alert = () => {};
  window.confirm = () => false;
  window.prompt = () => null;
  window.print = () => {};
})();"#;

/// How often a loaded page is asked whether it is settled.
const POLL: Duration = Duration::from_millis(100);

pub(crate) async fn render<R: Resources>(
    conn: &Connection,
    config: &BrowserConfig,
    url: &Url,
    served: Served,
    resources: &R,
) -> Result<Rendered, RenderError> {
    let deadline = Instant::now() + config.page_timeout;
    let context = call(conn, None, "Target.createBrowserContext", json!({})).await?;
    let context = context["browserContextId"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let result = tokio::time::timeout_at(
        deadline + Duration::from_secs(2),
        in_context(conn, config, &context, url, served, resources, deadline),
    )
    .await
    .unwrap_or(Err(RenderError::Timeout(config.page_timeout)));
    // Closes the page and whatever it opened.
    let dispose = call(
        conn,
        None,
        "Target.disposeBrowserContext",
        json!({"browserContextId": context}),
    );
    let _ = tokio::time::timeout(Duration::from_secs(5), dispose).await;
    result
}

async fn in_context<R: Resources>(
    conn: &Connection,
    config: &BrowserConfig,
    context: &str,
    url: &Url,
    served: Served,
    resources: &R,
    deadline: Instant,
) -> Result<Rendered, RenderError> {
    let target = json!({"url": "about:blank", "browserContextId": context});
    let target = call(conn, None, "Target.createTarget", target).await?;
    let attach = json!({"targetId": target["targetId"], "flatten": true});
    let session = call(conn, None, "Target.attachToTarget", attach).await?;
    let session = session["sessionId"].as_str().unwrap_or("").to_string();
    let events = conn.subscribe(&session);
    let _subscribed = Subscribed {
        conn,
        session: &session,
    };
    let s = Some(session.as_str());
    let patterns = json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]});
    call(conn, s, "Fetch.enable", patterns).await?;
    call(conn, s, "Page.enable", json!({})).await?;
    let prelude = PRELUDE.replace("SHORT", &SHORT_TIMER_MS.to_string());
    call(
        conn,
        s,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": prelude}),
    )
    .await?;
    conn.send(&session, "Page.navigate", json!({"url": url.as_str()}));
    let mut run = Run {
        conn,
        session: &session,
        url,
        served: Some(served),
        resources,
        fetches: JoinSet::new(),
        rendered: Rendered::default(),
    };
    let settled = run.until_settled(events, config.quiet, deadline).await?;
    run.fetches.abort_all();
    let mut rendered = run.rendered;
    rendered.settled = settled;
    let dom = json!({"expression": "document.documentElement.outerHTML", "returnByValue": true});
    let read = tokio::time::timeout_at(
        deadline + Duration::from_secs(1),
        call(conn, s, "Runtime.evaluate", dom),
    );
    let dom = read
        .await
        .map_err(|_| RenderError::Timeout(config.page_timeout))??;
    rendered.html = dom["result"]["value"].as_str().unwrap_or("").to_string();
    Ok(rendered)
}

/// A page's events are routed to it until this is dropped, however its
/// render ends.
struct Subscribed<'a> {
    conn: &'a Connection,
    session: &'a str,
}

impl Drop for Subscribed<'_> {
    fn drop(&mut self) {
        self.conn.unsubscribe(self.session);
    }
}

/// A page being rendered: its paused requests answered, its state watched.
struct Run<'a, R> {
    conn: &'a Connection,
    session: &'a str,
    url: &'a Url,
    /// The document, until the browser asks for it.
    served: Option<Served>,
    resources: &'a R,
    fetches: JoinSet<()>,
    rendered: Rendered,
}

impl<R: Resources> Run<'_, R> {
    /// Answers the page's requests until it settles (true) or the deadline
    /// passes (false).
    async fn until_settled(
        &mut self,
        mut events: tokio::sync::mpsc::UnboundedReceiver<Event>,
        quiet: Duration,
        deadline: Instant,
    ) -> Result<bool, RenderError> {
        let mut loaded = false;
        let mut quiet_since: Option<Instant> = None;
        let mut poll = tokio::time::interval(POLL);
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { return Err(RenderError::Crashed) };
                    match event.method.as_str() {
                        "Fetch.requestPaused" => self.answer(event.params),
                        "Page.loadEventFired" => loaded = true,
                        "Page.javascriptDialogOpening" => {
                            self.conn.send(self.session, "Page.handleJavaScriptDialog", json!({"accept": false}));
                        }
                        "Inspector.targetCrashed" => return Err(RenderError::Crashed),
                        _ => {}
                    }
                    quiet_since = None;
                }
                Some(_) = self.fetches.join_next(), if !self.fetches.is_empty() => quiet_since = None,
                _ = poll.tick() => {
                    if Instant::now() >= deadline {
                        return Ok(false);
                    }
                    if !loaded || !self.fetches.is_empty() || self.timers_pending().await {
                        quiet_since = None;
                        continue;
                    }
                    let since = *quiet_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= quiet {
                        return Ok(true);
                    }
                }
                () = tokio::time::sleep_until(deadline) => return Ok(false),
            }
        }
    }

    /// Whether the page waits for a short timer (or is too busy to say).
    async fn timers_pending(&self) -> bool {
        let ask = json!({"expression": "window.__nearcrawlPending ? window.__nearcrawlPending() : 0", "returnByValue": true});
        let asked = self.conn.call(Some(self.session), "Runtime.evaluate", ask);
        match tokio::time::timeout(POLL * 5, asked).await {
            Ok(Ok(v)) => v["result"]["value"].as_u64().unwrap_or(0) > 0,
            _ => true,
        }
    }

    /// Answers one paused request: the document from what was served, what
    /// a page needs to build itself from the crawler, the rest refused.
    fn answer(&mut self, paused: Value) {
        let id = paused["requestId"].as_str().unwrap_or("").to_string();
        let kind = ResourceKind::of(paused["resourceType"].as_str().unwrap_or(""));
        let method = paused["request"]["method"].as_str().unwrap_or("GET");
        let url = Url::parse(paused["request"]["url"].as_str().unwrap_or(""));
        let (conn, session) = (self.conn, self.session.to_string());
        let url = match url {
            Ok(u) if u.scheme() == "data" || u.scheme() == "blob" => {
                conn.send(&session, "Fetch.continueRequest", json!({"requestId": id}));
                return;
            }
            Ok(u) => u,
            Err(_) => return refuse(conn, &session, &id),
        };
        if kind == ResourceKind::Document && self.served.is_some() && same_document(&url, self.url)
        {
            let served = self.served.take().expect("checked");
            fulfill(
                conn,
                &session,
                &id,
                served.status,
                &served.headers,
                &served.body,
            );
            return;
        }
        if !kind.is_needed() || method != "GET" {
            self.rendered.refused += 1;
            return refuse(conn, &session, &id);
        }
        self.rendered.requested += 1;
        let answered = self.resources.fetch(url, kind);
        let conn = conn.clone();
        self.fetches.spawn(async move {
            match answered.await {
                Answer::Body {
                    status,
                    headers,
                    body,
                } => fulfill(&conn, &session, &id, status, &headers, &body),
                Answer::Refused(_) => refuse(&conn, &session, &id),
            }
        });
    }
}

/// The page's own URL, as the browser asks for it (without a fragment).
fn same_document(asked: &Url, page: &Url) -> bool {
    let mut page = page.clone();
    page.set_fragment(None);
    *asked == page
}

/// Response headers the browser may be given: the body it gets is
/// decoded and whole.
fn passes(name: &str) -> bool {
    const DROPPED: &[&str] = &[
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
    ];
    !DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d))
}

fn fulfill(
    conn: &Connection,
    session: &str,
    id: &str,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) {
    let headers: Vec<Value> = headers
        .iter()
        .filter(|(k, _)| passes(k))
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    let answer = json!({
        "requestId": id,
        "responseCode": status,
        "responseHeaders": headers,
        "body": BASE64.encode(body),
    });
    conn.send(session, "Fetch.fulfillRequest", answer);
}

fn refuse(conn: &Connection, session: &str, id: &str) {
    let answer = json!({"requestId": id, "errorReason": "BlockedByClient"});
    conn.send(session, "Fetch.failRequest", answer);
}

async fn call(
    conn: &Connection,
    session: Option<&str>,
    method: &str,
    params: Value,
) -> Result<Value, RenderError> {
    conn.call(session, method, params)
        .await
        .map_err(|e| match e {
            CallError::Closed => RenderError::Crashed,
            CallError::Refused(why) => RenderError::Protocol(format!("{method}: {why}")),
        })
}
