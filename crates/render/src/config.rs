//! How the browser is run.

use std::path::PathBuf;
use std::time::Duration;

/// How the browser is run.
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// The Chromium binary.
    pub program: PathBuf,
    /// Pages rendered at once (a tab each).
    pub tabs: usize,
    /// The most a page may take, from navigation to its DOM read.
    pub page_timeout: Duration,
    /// A page is settled once nothing it waits for (requests, short
    /// timers) has been pending for this long.
    pub quiet: Duration,
    /// The browser is started afresh after this many pages: what a long
    /// crawl's pages leave behind (caches, leaks) stays bounded.
    pub pages_per_browser: u32,
    /// The most a page's JavaScript heap may hold, in MiB.
    pub js_heap_mb: u32,
}

impl Default for BrowserConfig {
    fn default() -> BrowserConfig {
        BrowserConfig {
            program: PathBuf::from("chromium"),
            tabs: 2,
            page_timeout: Duration::from_secs(15),
            quiet: Duration::from_millis(300),
            pages_per_browser: 500,
            js_heap_mb: 256,
        }
    }
}
