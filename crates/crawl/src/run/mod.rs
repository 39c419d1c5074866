//! The one crawl loop, driven over either store: the embedded one (sled,
//! [`crate::embedded`]) or a Redis Cluster (`nearcrawl-cluster`).
//!
//! ```text
//!            take(room)            spawn              join
//!   store ─────────────► claims ─────────► fetch task ─────► done
//!     ▲                                    (robots, fetch,     │
//!     │  commit(group)                      read, judge)       │ finished(done)
//!     └────────────────────────── group of done URLs ◄─────────┘
//! ```
//!
//! A store has two sides, as ripgrep's searcher has a `Sink` and a
//! `Matcher`:
//! - [`CrawlStore`], owned by the loop: hands out URLs whose turn has
//!   come, takes them back when their request is over, commits the
//!   outcomes of finished URLs in groups, checkpoints, and says when the
//!   crawl is over;
//! - [`PageStore`], shared by the fetch tasks: the page budgets and the
//!   duplicate gate, asked while a page is fetched and judged.
//!
//! Everything a page becomes is [`crate::page::Pipeline`]'s, the same for
//! both stores; the stores differ only in where the state lives.

mod crawl;
mod driver;
mod fetch;
mod render;
mod stages;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_index::{Decision, Prepared};
use url::Url;

use crate::sink::Outcome;
use crate::stats::{Metrics, Stats};

pub use crawl::Crawl;
pub use driver::run;
pub use render::Renderer;
pub use stages::Stages;

/// A URL a store handed out to be fetched.
#[derive(Debug)]
pub struct Claimed<C> {
    pub url: Url,
    /// Links from a seed.
    pub depth: u32,
    /// A sitemap file to read, at this level below the ones robots.txt
    /// names, rather than a page.
    pub sitemap: Option<u32>,
    /// What the store needs back to finish it (its frontier entry, its
    /// lease).
    pub claim: C,
}

/// What [`CrawlStore::take`] found.
#[derive(Debug)]
pub struct Taken<C> {
    pub claims: Vec<Claimed<C>>,
    /// URLs finished without a request (a section cut off as a trap, a
    /// queued URL that does not parse).
    pub done: Vec<Done<C>>,
    /// Nothing is due before this long (links of pages in flight may make
    /// something due sooner).
    pub next: Duration,
}

impl<C> Taken<C> {
    pub fn nothing(next: Duration) -> Taken<C> {
        Taken {
            claims: Vec::new(),
            done: Vec::new(),
            next,
        }
    }
}

/// A claimed URL whose request is over, with what it gave.
#[derive(Debug)]
pub struct Done<C> {
    pub claimed: Claimed<C>,
    /// In the order the outputs get them.
    pub outcomes: Vec<Outcome>,
    /// What it adds to the crawl's counts.
    pub stats: Stats,
    /// A new page's links to queue, a level below it.
    pub links: Vec<Url>,
    /// Sitemap files to read, with their level.
    pub sitemaps: Vec<(Url, u32)>,
    /// Pages a sitemap lists, to queue a link from the seeds.
    pub listed: Vec<Url>,
    /// Where a page was fetched from after redirects (seen, too).
    pub final_url: Option<Url>,
    /// The canonical URL a redirect led to whose page this request read
    /// (judged, or confirmed by a 304): that URL is not fetched again.
    pub read_target: Option<Url>,
    /// The gate's verdict on a fetched page.
    pub verdict: Option<PageVerdict>,
    /// Not fetched: a URL rule's duplicate (see [`PageStore::predict`]).
    pub predicted: Option<Prediction>,
    /// The request failed in a way that counts against its host.
    pub host_error: bool,
    /// The host's delay when the request was made (a Crawl-delay).
    pub delay: Duration,
    /// When the request started, if one was sent.
    pub started: Option<Instant>,
    /// Not done after all: back to its queue (the host's turn went to its
    /// robots.txt, the crawl stopped before the request, the gate could
    /// not be reached).
    pub again: bool,
}

impl<C> Done<C> {
    /// Nothing done yet.
    pub fn new(claimed: Claimed<C>, delay: Duration) -> Done<C> {
        Done {
            claimed,
            outcomes: Vec::new(),
            stats: Stats::default(),
            links: Vec::new(),
            sitemaps: Vec::new(),
            listed: Vec::new(),
            final_url: None,
            read_target: None,
            verdict: None,
            predicted: None,
            host_error: false,
            delay,
            started: None,
            again: false,
        }
    }

    /// Done as an error of `kind` about its URL.
    pub fn error(&mut self, kind: &str, detail: String) {
        let url = self.claimed.url.to_string();
        let record = crate::page::error(&url, kind, detail, &mut self.stats);
        self.outcomes.push(record);
    }
}

/// What the gate's verdict tells about a page's host.
#[derive(Debug, Clone, Copy)]
pub struct PageVerdict {
    pub duplicate: bool,
    /// A duplicate of a page in its own directory: the trap rule's signal.
    pub copies_neighbour: bool,
    pub written: bool,
}

/// A URL a proven URL rule maps to a page written (see
/// [`nearcrawl_index::dust`]): it is not fetched.
#[derive(Debug, Clone)]
pub struct Prediction {
    /// The page written.
    pub target: String,
    /// The rule's id in the gate's [`nearcrawl_index::dust::DustRules`].
    pub rule: usize,
    /// The rule as the report shows it.
    pub shown: String,
}

/// The URL rules of a store's gate, asked by the fetch tasks before each
/// request without the gate's own lock (a read a URL), learned under it.
pub type SharedRules = Arc<std::sync::RwLock<nearcrawl_index::dust::DustRules>>;

impl Prediction {
    /// What `rules` predict for `url`: a skip (not a check, not a fetch).
    pub fn of(rules: &nearcrawl_index::dust::DustRules, url: &Url) -> Option<Prediction> {
        match rules.predict(url.as_str()) {
            nearcrawl_index::dust::Predicted::Skip { target, rule } => Some(Prediction {
                target,
                shown: rules.rule(rule)?.rule.to_string(),
                rule,
            }),
            _ => None,
        }
    }
}

/// The gate's answer on a page, and the duplicate's original by URL.
pub type Verdicted = (Decision, Option<String>);

/// Why a page could not be judged.
#[derive(Debug)]
pub enum GateError {
    /// Try the URL again later (the gate could not be reached).
    Again(String),
    /// Record the error; the URL is done.
    Failed(String),
}

/// When the request of a URL handed out may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Whenever its host's turn comes: the fetcher waits for it. The store
    /// hands a host out this close to its turn.
    WhenReady(Duration),
    /// Within this of being handed out, or not at all (the store counted
    /// the host's turn from then: a cluster's shared schedule).
    AtOnce(Duration),
}

impl Start {
    /// How close to its host's turn a request counts as on time.
    pub fn slack(self) -> Duration {
        match self {
            Start::WhenReady(slack) | Start::AtOnce(slack) => slack,
        }
    }
}

/// Whether a URL may be fetched: a budget may be spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    Yes,
    /// Done without a request, counted out of scope for this reason.
    No(&'static str),
    /// Not known now (the store failed): the URL goes back.
    Later,
}

/// The store's side the fetch tasks ask while a page is fetched and judged.
pub trait PageStore: Send + Sync + 'static {
    type Claim: Send + 'static;

    /// When a handed-out URL's request may start.
    fn start(&self) -> Start;

    /// Takes a page of its host's and domain's budgets, by
    /// [`crate::scope::page_budget_spent`] over the pages taken before
    /// (asked for pages robots.txt allows, before their request).
    fn admit(&self, claimed: &Claimed<Self::Claim>) -> impl Future<Output = Admitted> + Send;

    /// Gives back the page [`admit`](PageStore::admit) took for a URL that
    /// goes back to its queue unfetched (or to be fetched again).
    fn give_back_page(&self, claimed: &Claimed<Self::Claim>) -> impl Future<Output = ()> + Send;

    /// Whether the sitemaps named by the robots.txt of `url`'s origin are
    /// still to be read; asked once the host's rules are known.
    fn wants_sitemaps(&self, url: &Url, robots_fetched_now: bool) -> bool;

    /// Takes the turn of the server `claimed`'s request goes to, where
    /// turns are kept per server (`politeness.key = "ip"` in a cluster);
    /// false if it has not come: the URL goes back.
    fn take_server_turn(
        &self,
        claimed: &mut Claimed<Self::Claim>,
        stages: &Stages,
    ) -> impl Future<Output = bool> + Send;

    /// When `claimed`'s request must start by, if its store counted the
    /// host's turn from handing it out; a request that would start later
    /// is not sent, and the URL goes back.
    fn start_by(&self, _claimed: &Claimed<Self::Claim>) -> Option<Instant> {
        None
    }

    /// Whether `url` was queued before (a hint: links known to be seen are
    /// not handed back).
    fn seen(&self, url: &Url) -> bool;

    /// Records that the page of (canonical) `url` was read, through a
    /// redirect from another URL, for [`read_before`](PageStore::read_before)
    /// to say at once; the store keeps it for good when the URL that
    /// redirected is committed (its [`Done::read_target`]).
    fn mark_read(&self, url: &Url) -> impl Future<Output = ()> + Send;

    /// Whether the page of `url` was read already, through a redirect from
    /// another URL (false when the store cannot tell: it is fetched).
    fn read_before(&self, url: &Url) -> impl Future<Output = bool> + Send;

    /// The page written that a proven URL rule maps `url` to, if any:
    /// `url` is then not fetched (asked with `dedup.predict` on).
    fn predict(&self, url: &Url) -> impl Future<Output = Option<Prediction>> + Send;

    /// The gate's verdict on a prepared page; a new page is recorded, so
    /// the next page is judged against it.
    fn judge(
        &self,
        claimed: &mut Claimed<Self::Claim>,
        prepared: Prepared,
    ) -> impl Future<Output = Result<Verdicted, GateError>> + Send;
}

/// The store's side the loop owns.
pub trait CrawlStore: Send {
    type Claim: Send + 'static;
    type Pages: PageStore<Claim = Self::Claim>;
    type Error: std::fmt::Display + Send;

    /// A finished URL's outcomes wait at most this long to be committed.
    const GROUP_AGE: Duration;

    fn pages(&self) -> Arc<Self::Pages>;

    /// Keeps this engine's share of the crawl (a cluster worker's
    /// partitions); called every round.
    fn maintain(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Up to `room` URLs whose turn has come, within the crawl's page
    /// budget with `in_flight` URLs out.
    fn take(
        &mut self,
        room: usize,
        in_flight: usize,
    ) -> impl Future<Output = Result<Taken<Self::Claim>, Self::Error>> + Send;

    /// URLs whose requests are over (or will not be made): their hosts may
    /// have their next turns. Their outcomes wait for
    /// [`commit`](CrawlStore::commit).
    fn finished(
        &mut self,
        done: &[Done<Self::Claim>],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Commits finished URLs: each is done in the state, its links queued,
    /// its outcomes in the outputs, so that a crash anywhere loses or
    /// repeats nothing.
    fn commit(
        &mut self,
        group: Vec<Done<Self::Claim>>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Makes the outputs and the state durable together.
    fn checkpoint(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// With nothing in flight and nothing waiting to be committed: whether
    /// the crawl is over for this engine (nothing left to take, the budget
    /// spent, or `stopping`).
    fn over(&mut self, stopping: bool) -> impl Future<Output = Result<bool, Self::Error>> + Send;

    /// Publishes what the loop has in flight (for progress and metrics).
    fn show(&mut self, in_flight: usize) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// The counts so far: over every run of the crawl for the embedded
    /// store, a worker's own in a cluster.
    fn stats(&self) -> Stats;

    /// A reader of the figures while the loop runs.
    fn metrics(&self) -> Box<dyn Fn() -> Metrics + Send + Sync>;

    /// After the loop: makes everything durable, lets go of what this
    /// engine holds, and writes `stats.json` (`stats` with this run's
    /// figures filled in).
    fn finish(&mut self, stats: &Stats) -> impl Future<Output = Result<(), Self::Error>> + Send;
}
