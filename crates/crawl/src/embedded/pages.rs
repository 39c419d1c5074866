//! The embedded store's side the fetch tasks ask: the page budgets and
//! the duplicate gate, under the store's lock.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use nearcrawl_index::{Judgement, Prepared};
use url::Url;

use super::core::CoreLock;
use crate::config::Config;
use crate::embedded::frontier::{Entry, SeenSet};
use crate::run::{Admitted, Claimed, GateError, PageStore, Stages, Start, Verdicted};

/// What the embedded store hands out.
#[derive(Debug)]
pub enum EmbeddedClaim {
    Page {
        entry: Entry,
        /// The document the gate made of it, when it was new: committed
        /// with the page.
        doc: Option<(u64, Box<Judgement>)>,
    },
    /// A sitemap file of `origin`, whose robots.txt named it (or a sitemap
    /// index under it).
    Sitemap { origin: String },
}

pub struct EmbeddedPages {
    pub(super) core: Arc<CoreLock>,
    /// The URL rules, asked without the store's lock.
    rules: crate::run::SharedRules,
    pub(super) seen: SeenSet,
    /// Origins whose sitemaps this run has started reading.
    pub(super) sitemap_origins: Mutex<HashSet<String>>,
    /// URLs whose pages were read through redirects from other URLs (kept
    /// in the state by the commit of the URL that redirected).
    read_targets: Mutex<HashSet<String>>,
    pub(super) max_pages_per_host: u64,
    pub(super) max_pages_per_domain: u64,
}

impl std::fmt::Debug for EmbeddedPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedPages").finish_non_exhaustive()
    }
}

impl EmbeddedPages {
    pub(super) fn new(
        core: Arc<CoreLock>,
        rules: crate::run::SharedRules,
        seen: SeenSet,
        read_targets: HashSet<String>,
        config: &Config,
    ) -> EmbeddedPages {
        EmbeddedPages {
            core,
            rules,
            seen,
            sitemap_origins: Mutex::new(HashSet::new()),
            read_targets: Mutex::new(read_targets),
            max_pages_per_host: config.scope.max_pages_per_host,
            max_pages_per_domain: config.scope.max_pages_per_domain,
        }
    }
}

impl PageStore for EmbeddedPages {
    type Claim = EmbeddedClaim;

    fn start(&self) -> Start {
        Start::WhenReady(crate::embedded::frontier::SLACK)
    }

    async fn admit(&self, claimed: &Claimed<EmbeddedClaim>) -> Admitted {
        let url = &claimed.url;
        let host = nearcrawl_fetch::politeness_key(url);
        let section = crate::traps::section(url);
        let (per_host, per_domain) = (self.max_pages_per_host, self.max_pages_per_domain);
        let taken =
            (self.core.lock_async().await.state).take_page(&host, &section, per_host, per_domain);
        match taken {
            Ok(Ok(())) => Admitted::Yes,
            Ok(Err(budget)) => Admitted::No(budget),
            Err(e) => {
                tracing::error!(%url, "reading the page budgets failed, the URL goes back: {e}");
                Admitted::Later
            }
        }
    }

    async fn give_back_page(&self, claimed: &Claimed<EmbeddedClaim>) {
        let host = nearcrawl_fetch::politeness_key(&claimed.url);
        self.core.lock_async().await.state.give_back_page(&host);
    }

    /// The first time this run meets an origin whose sitemaps an earlier
    /// run did not read to the end.
    fn wants_sitemaps(&self, url: &Url, _robots_fetched_now: bool) -> bool {
        let origin = url.origin().ascii_serialization();
        let first = self.sitemap_origins.lock().unwrap().insert(origin.clone());
        first && !self.core.lock().state.sitemaps_read(&origin)
    }

    async fn take_server_turn(&self, _: &mut Claimed<EmbeddedClaim>, _: &Stages) -> bool {
        true
    }

    fn seen(&self, url: &Url) -> bool {
        self.seen.contains(url)
    }

    async fn mark_read(&self, url: &Url) {
        self.read_targets.lock().unwrap().insert(url.to_string());
    }

    async fn read_before(&self, url: &Url) -> bool {
        self.read_targets.lock().unwrap().contains(url.as_str())
    }

    async fn predict(&self, url: &Url) -> Option<crate::run::Prediction> {
        crate::run::Prediction::of(&self.rules.read().unwrap(), url)
    }

    /// A new page becomes a document at once (in the index, and pending
    /// until its page is committed), so the next page is judged against it.
    async fn judge(
        &self,
        claimed: &mut Claimed<EmbeddedClaim>,
        prepared: Prepared,
    ) -> Result<Verdicted, GateError> {
        let core = self.core.lock_async().await;
        crate::cpu::time(crate::cpu::Stage::Gate, || {
            self.judge_now(core, claimed, prepared)
        })
    }
}

impl EmbeddedPages {
    /// [`PageStore::judge`], under the store's lock (`guard`).
    fn judge_now(
        &self,
        mut guard: super::core::CoreGuard<'_>,
        claimed: &mut Claimed<EmbeddedClaim>,
        prepared: Prepared,
    ) -> Result<Verdicted, GateError> {
        let core = &mut *guard;
        let judgement = (core.judge(prepared, claimed.url.as_str()))
            .map_err(|e| GateError::Failed(e.to_string()))?;
        let decision = judgement.decision;
        if let Some((of, ..)) = decision.verdict.duplicate_of() {
            return Ok((decision, core.doc_url(of)));
        }
        let doc =
            (core.state.new_doc()).map_err(|e| GateError::Failed(format!("crawl state: {e}")))?;
        // A crash before the page is committed leaves the index naming a
        // document that never existed, which `doc_exists` rules out.
        (core.dedup.record(doc, &judgement)).map_err(|e| GateError::Failed(e.to_string()))?;
        core.pending_docs.insert(doc, claimed.url.to_string());
        if let EmbeddedClaim::Page { doc: slot, .. } = &mut claimed.claim {
            *slot = Some((doc, Box::new(judgement)));
        }
        Ok((decision, None))
    }
}
