//! A worker's side of the shared state its fetch tasks ask: the shared
//! gate, and the servers' turns under `politeness.key = "ip"`.

use std::time::Duration;

use nearcrawl_crawl::run::{Admitted, Claimed, GateError, PageStore, Stages, Start, Verdicted};
use nearcrawl_index::Prepared;
use url::Url;

use crate::frontier::{Leased, SharedFrontier};
use crate::lease::Lease;
use crate::shared_gate::SharedGate;

/// A request must start within this of its lease (added to every delay).
pub(crate) const START_SLACK: Duration = Duration::from_millis(10);

/// What a worker hands its fetch tasks: a URL leased from a partition.
#[derive(Debug)]
pub struct ClusterClaim {
    pub leased: Leased,
    pub lease: Lease,
    /// The server whose turn the request took (`politeness.key = "ip"`).
    pub address: Option<std::net::IpAddr>,
}

pub struct ClusterPages {
    pub(crate) gate: tokio::sync::Mutex<SharedGate>,
    /// The gate's URL rules, asked without the gate's lock.
    pub(crate) rules: nearcrawl_crawl::run::SharedRules,
    pub(crate) frontier: SharedFrontier,
    /// With `politeness.key = "ip"`: where servers' turns are taken.
    pub(crate) addresses: Option<SharedFrontier>,
}

impl std::fmt::Debug for ClusterPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterPages").finish_non_exhaustive()
    }
}

impl PageStore for ClusterPages {
    type Claim = ClusterClaim;

    /// The shared schedule counts a key's delay from the lease.
    fn start(&self) -> Start {
        Start::AtOnce(START_SLACK)
    }

    /// The page budgets are kept in the shared frontier, by the rule the
    /// embedded crawl keeps them by.
    async fn admit(&self, claimed: &Claimed<ClusterClaim>) -> Admitted {
        match self.frontier.take_page(&claimed.url).await {
            Ok(None) => Admitted::Yes,
            Ok(Some(spent)) => Admitted::No(spent),
            Err(e) => {
                tracing::warn!(url = %claimed.url, "taking a page of the budgets failed, the URL goes back: {e}");
                Admitted::Later
            }
        }
    }

    async fn give_back_page(&self, claimed: &Claimed<ClusterClaim>) {
        if let Err(e) = self.frontier.give_back_page(&claimed.url).await {
            tracing::warn!(url = %claimed.url, "giving a page back to the budgets failed: {e}");
        }
    }

    /// A worker reads the sitemaps a robots.txt names when it reads that
    /// robots.txt for its rules, in the host's turn: once per crawl for
    /// most hosts (another worker reading it again queues nothing new).
    fn wants_sitemaps(&self, _: &Url, robots_fetched_now: bool) -> bool {
        robots_fetched_now
    }

    /// With `politeness.key = "ip"`, takes the turn of the URL's server,
    /// shared by the hosts on it whatever their partitions; false if it
    /// has not come (or the request could no longer start within the
    /// start slack of its lease).
    async fn take_server_turn(&self, claimed: &mut Claimed<ClusterClaim>, stages: &Stages) -> bool {
        let Some(frontier) = &self.addresses else {
            return true;
        };
        if claimed.claim.address.is_some() {
            return true;
        }
        // A name that does not resolve: the request reports it.
        let Some(address) = stages.fetcher.address_of(&claimed.url).await else {
            return true;
        };
        let delay = stages.fetcher.delay_of(&claimed.url);
        match frontier.reserve_address(address, delay).await {
            Ok(None) if claimed.claim.leased.startable(START_SLACK) => {
                claimed.claim.address = Some(address);
                true
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(%address, "taking the server's turn failed, the URL goes back: {e}");
                false
            }
        }
    }

    /// The request must start within the slack its lease added to the
    /// key's delay.
    fn start_by(&self, claimed: &Claimed<ClusterClaim>) -> Option<std::time::Instant> {
        Some(claimed.claim.leased.start_by(START_SLACK))
    }

    /// Whether a link was seen is the shared frontier's to say.
    fn seen(&self, _: &Url) -> bool {
        false
    }

    /// At once in the shared frontier, so every worker knows it.
    async fn mark_read(&self, url: &Url) {
        if let Err(e) = self.frontier.mark_read(url).await {
            tracing::warn!(%url, "marking a redirect's target read failed: {e}");
        }
    }

    async fn read_before(&self, url: &Url) -> bool {
        match self.frontier.read_before(url).await {
            Ok(read) => read,
            Err(e) => {
                tracing::warn!(%url, "asking whether the URL was read failed, it is fetched: {e}");
                false
            }
        }
    }

    /// By this worker's replica of the rules (a few entries behind the
    /// log at most: a rule proven meanwhile skips from the next URL on).
    async fn predict(&self, url: &Url) -> Option<nearcrawl_crawl::run::Prediction> {
        nearcrawl_crawl::run::Prediction::of(&self.rules.read().unwrap(), url)
    }

    /// Appends the page to the shared log and waits for its verdict; a
    /// gate out of reach gives the URL back.
    async fn judge(
        &self,
        claimed: &mut Claimed<ClusterClaim>,
        prepared: Prepared,
    ) -> Result<Verdicted, GateError> {
        let url = &claimed.claim.leased.url;
        let request = crate::hash::fnv1a(url.as_bytes());
        let mut gate = self.gate.lock().await;
        let (place, decision) = (gate.judge(request, url, &prepared).await)
            .map_err(|e| GateError::Again(e.to_string()))?;
        tracing::debug!(%url, %place, verdict = ?decision.verdict, "judged");
        let of = decision.verdict.duplicate_of().map(|(of, ..)| of);
        let original = of.and_then(|of| gate.url_of(of).ok().flatten());
        Ok((decision, original))
    }
}
