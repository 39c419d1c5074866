//! One crawl, many workers: the crawl state they share, kept in a Redis
//! Cluster, and the loop of one worker (`nearcrawl crawl --cluster`).
//!
//! The embedded crawl keeps its state in sled under its output directory;
//! workers that crawl together keep what they share in a Redis Cluster
//! (the design and its figures: `docs/distributed.md`).
//!
//! - [`SharedFrontier`]: queues per politeness key, the seen set and the
//!   URLs in flight, cut into partitions that one worker owns at a time;
//!   every change is a Lua script on the partition's node. The schedule
//!   (each key's next allowed start) lives there too, so politeness holds
//!   whichever worker owns a key.
//! - [`Partitions`]: leases on partitions with fencing: one owner at a
//!   time, a script of an owner that lost its lease refused
//!   ([`ClusterError::Stale`]); `balance` keeps each worker's share as
//!   workers join and die.
//! - [`SharedGate`]: one duplicate gate for all workers, as a replicated
//!   state machine. A worker appends what it wants judged to a log (a Redis
//!   Stream); every worker applies the whole log, in order, to its own
//!   replica of the embedded gate ([`nearcrawl_index::Deduper`]). A verdict
//!   depends only on the entries before it, so every replica gives every
//!   page the verdict one machine would give judging the pages in the log's
//!   order: two copies judged at the same moment on two workers are never
//!   both kept. The log is trimmed to what every replica has flushed.
//! - [`Worker`]: one worker, the crawl loop of `nearcrawl_crawl::run`
//!   over the worker's store: URLs leased from the partitions it holds,
//!   judged by the shared gate; a URL's outcomes go to a synced local
//!   outbox, then the URL is acknowledged (fenced), then the outcomes reach
//!   the outputs, so the union of the workers' outputs holds every page
//!   once even when workers are killed.
//!
//! ```no_run
//! # async fn f() -> Result<(), nearcrawl_cluster::ClusterError> {
//! use nearcrawl_cluster::SharedGate;
//! use nearcrawl_index::{DedupConfig, Doc, Fingerprinter};
//!
//! let config = DedupConfig::default();
//! let mut fingerprinter = Fingerprinter::new(&config)?;
//! let replica = std::path::Path::new("/tmp/worker-1/gate");
//! let nodes = ["redis://127.0.0.1:7000"];
//! let mut gate = SharedGate::open(&nodes, "crawl-1", replica, config).await?;
//! let prepared = fingerprinter.prepare(Doc::from("the text of a page"));
//! // The request id names this judging across retries: a hash of the
//! // page's URL and content, say.
//! let (place, decision) = gate.judge(0x5eed, "https://example.org/", &prepared).await?;
//! println!("{place}: {:?}", decision.verdict);
//! gate.flush()?; // this worker's replica is durable up to here
//! # Ok(()) }
//! ```

mod commit;
mod error;
mod frontier;
mod hash;
mod lease;
mod open;
mod outbox;
mod pages;
mod retry;
mod share;
mod shared_gate;
mod snapshot;
mod store;
mod worker;

pub use error::ClusterError;
pub use frontier::{Added, FrontierConfig, Leased, Leases, Link, SharedFrontier};
pub use lease::{Lease, Partitions};
pub use shared_gate::{LogId, SharedGate};
pub use store::RedisStore;
pub use worker::{Worker, join};
