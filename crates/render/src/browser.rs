//! The browser process: started when the first page needs it, started
//! again when it dies or has rendered its share of pages, a bounded number
//! of pages at once.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use command_fds::{CommandFdExt, FdMapping};
use serde_json::json;
use tokio::net::unix::pipe;
use tokio::sync::{Mutex, Semaphore};
use url::Url;

use crate::cdp::Connection;
use crate::config::BrowserConfig;
use crate::page::{self, Served};
use crate::{RenderError, Rendered, Resources};

/// Renders pages in headless Chromium.
///
/// No process is started until [`Browser::render`] is first called; a
/// browser that cannot start makes every render fail with
/// [`RenderError::Unavailable`], at once after the first try.
#[derive(Debug)]
pub struct Browser {
    config: BrowserConfig,
    running: Mutex<Running>,
    tabs: Semaphore,
}

#[derive(Debug, Default)]
enum Running {
    #[default]
    NotStarted,
    Up(Arc<Instance>),
    Unavailable(String),
}

/// One browser process. Dropped when no page uses it and a newer one
/// took its place: then the process is closed.
#[derive(Debug)]
pub(crate) struct Instance {
    conn: Connection,
    child: std::sync::Mutex<tokio::process::Child>,
    profile: PathBuf,
    rendered: AtomicU32,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.lock().unwrap().start_kill();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Browser {
    pub fn new(config: BrowserConfig) -> Browser {
        let tabs = Semaphore::new(config.tabs.max(1));
        Browser {
            config,
            running: Mutex::new(Running::NotStarted),
            tabs,
        }
    }

    /// Renders the page served at `url`: the browser is given `served` as
    /// the document, and every other request the page makes is answered
    /// by `resources`. The DOM once the page settles, or as it stands at
    /// the time limit.
    pub async fn render<R: Resources>(
        &self,
        url: &Url,
        served: Served,
        resources: &R,
    ) -> Result<Rendered, RenderError> {
        let _tab = self.tabs.acquire().await.expect("semaphore open");
        let instance = self.instance().await?;
        let result = page::render(&instance.conn, &self.config, url, served, resources).await;
        if matches!(result, Err(RenderError::Timeout(_) | RenderError::Crashed)) {
            // A page that stopped answering may hold its renderer busy:
            // later pages get a new browser.
            self.retire(&instance).await;
        }
        result
    }

    /// Whether the browser could not be started (known after the first
    /// render).
    pub async fn unavailable(&self) -> Option<String> {
        match &*self.running.lock().await {
            Running::Unavailable(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// The running browser, started if none is, or if it has done its share.
    async fn instance(&self) -> Result<Arc<Instance>, RenderError> {
        let mut running = self.running.lock().await;
        if let Running::Up(instance) = &*running {
            let used = instance.rendered.fetch_add(1, Ordering::Relaxed);
            if !instance.conn.is_closed() && used < self.config.pages_per_browser {
                return Ok(instance.clone());
            }
        }
        if let Running::Unavailable(why) = &*running {
            return Err(RenderError::Unavailable(why.clone()));
        }
        match launch(&self.config).await {
            Ok(instance) => {
                let instance = Arc::new(instance);
                instance.rendered.store(1, Ordering::Relaxed);
                *running = Running::Up(instance.clone());
                Ok(instance)
            }
            Err(RenderError::Unavailable(why)) if matches!(*running, Running::NotStarted) => {
                *running = Running::Unavailable(why.clone());
                Err(RenderError::Unavailable(why))
            }
            Err(e) => {
                *running = Running::NotStarted;
                Err(e)
            }
        }
    }

    /// Makes the next render start a new browser, if `instance` is still
    /// the one running.
    async fn retire(&self, instance: &Arc<Instance>) {
        let mut running = self.running.lock().await;
        if matches!(&*running, Running::Up(i) if Arc::ptr_eq(i, instance)) {
            *running = Running::NotStarted;
        }
    }
}

/// Flags for a browser that only renders what it is given: no network of
/// its own (every request it makes is paused for the crawler, and a proxy
/// that does not exist catches what the pause would miss), no images, no
/// background services.
const FLAGS: &[&str] = &[
    "--headless",
    "--remote-debugging-pipe",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
    "--blink-settings=imagesEnabled=false",
    "--mute-audio",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "about:blank",
];

/// Browser profiles are `nearcrawl-chromium-{pid}-{n}` in the temporary
/// directory.
const PROFILE_PREFIX: &str = "nearcrawl-chromium-";

/// Removes the profiles of crawls that are gone: a browser killed as its
/// crawl exits may write to its profile after the crawl removed it.
fn sweep_profiles(temp: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PROFILE_PREFIX)) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        let alive = std::path::Path::new("/proc").join(pid).exists();
        if !alive && pid.parse::<u32>().is_ok() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// How long a browser may take to start answering.
const START_TIMEOUT: Duration = Duration::from_secs(30);

async fn launch(config: &BrowserConfig) -> Result<Instance, RenderError> {
    static STARTED: AtomicU32 = AtomicU32::new(0);
    let n = STARTED.fetch_add(1, Ordering::Relaxed);
    let temp = std::env::temp_dir();
    sweep_profiles(&temp);
    let profile = temp.join(format!("{PROFILE_PREFIX}{}-{n}", std::process::id()));
    let io = |e: std::io::Error| RenderError::Launch(e.to_string());
    let (to_browser_read, to_browser) = std::io::pipe().map_err(io)?;
    let (from_browser, from_browser_write) = std::io::pipe().map_err(io)?;
    let mut command = tokio::process::Command::new(&config.program);
    command
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!(
            "--js-flags=--max-old-space-size={}",
            config.js_heap_mb
        ))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    command
        .fd_mappings(vec![
            FdMapping {
                parent_fd: to_browser_read.into(),
                child_fd: 3,
            },
            FdMapping {
                parent_fd: from_browser_write.into(),
                child_fd: 4,
            },
        ])
        .map_err(|e| RenderError::Launch(e.to_string()))?;
    let child = command.spawn().map_err(|e| {
        let program = config.program.display();
        RenderError::Unavailable(format!("{program} could not be started: {e}"))
    })?;
    // The browser's ends of the pipes were moved into the command: drop
    // it so that only the browser holds them (a browser that dies then
    // closes the pipe).
    drop(command);
    let receiver = pipe::Receiver::from_owned_fd(from_browser.into()).map_err(io)?;
    let sender = pipe::Sender::from_owned_fd(to_browser.into()).map_err(io)?;
    let instance = Instance {
        conn: Connection::start(receiver, sender),
        child: std::sync::Mutex::new(child),
        profile,
        rendered: AtomicU32::new(0),
    };
    let version = instance.conn.call(None, "Browser.getVersion", json!({}));
    match tokio::time::timeout(START_TIMEOUT, version).await {
        Ok(Ok(v)) => {
            tracing::info!(
                product = v["product"].as_str().unwrap_or(""),
                "browser started"
            );
            Ok(instance)
        }
        Ok(Err(e)) => Err(RenderError::Unavailable(format!(
            "{} started but does not speak the DevTools protocol: {e:?}",
            config.program.display()
        ))),
        Err(_) => Err(RenderError::Launch(format!(
            "the browser did not answer within {START_TIMEOUT:?}"
        ))),
    }
}
