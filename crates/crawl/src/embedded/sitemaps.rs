//! Sitemap files the embedded crawl is to read, per origin: kept in
//! memory, since an origin is recorded as read only once all of its files
//! are committed (a run that stops before reads them again next time).

use std::collections::{HashMap, HashSet, VecDeque};

use url::Url;

/// Sitemap files read per origin, at most.
const MAX_SITEMAP_FILES: usize = 1000;

#[derive(Debug, Default)]
pub(super) struct SitemapQueue {
    queue: VecDeque<Queued>,
    origins: HashMap<String, OriginFiles>,
}

#[derive(Debug)]
pub(super) struct Queued {
    pub url: Url,
    pub level: u32,
    pub origin: String,
}

#[derive(Debug, Default)]
struct OriginFiles {
    named: HashSet<String>,
    /// Queued or being read, not committed.
    open: usize,
}

impl SitemapQueue {
    /// Queues files `origin`'s robots.txt or one of its sitemap indexes
    /// named: each once, and [`MAX_SITEMAP_FILES`] at most.
    pub fn add(&mut self, origin: &str, files: &[(Url, u32)]) {
        let o = self.origins.entry(origin.to_string()).or_default();
        for (url, level) in files {
            if o.named.len() >= MAX_SITEMAP_FILES || !o.named.insert(url.to_string()) {
                continue;
            }
            o.open += 1;
            self.queue.push_back(Queued {
                url: url.clone(),
                level: *level,
                origin: origin.to_string(),
            });
        }
    }

    pub fn pop(&mut self) -> Option<Queued> {
        self.queue.pop_front()
    }

    /// A file that was not read after all: first in line again.
    pub fn put_back(&mut self, q: Queued) {
        self.queue.push_front(q);
    }

    /// A file of `origin` was read and committed; true when it was the
    /// origin's last.
    pub fn read(&mut self, origin: &str) -> bool {
        let Some(o) = self.origins.get_mut(origin) else {
            return false;
        };
        o.open = o.open.saturating_sub(1);
        if o.open > 0 {
            return false;
        }
        tracing::info!(origin, files = o.named.len(), "sitemaps read");
        true
    }

    /// Nothing queued and nothing being read.
    pub fn is_empty(&self) -> bool {
        self.origins.values().all(|o| o.open == 0)
    }
}
