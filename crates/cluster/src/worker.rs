//! One worker of a crawl shared through a Redis Cluster: the one crawl
//! loop ([`nearcrawl_crawl::run::Crawl`]) over the worker's [`RedisStore`]:
//! the shared frontier and the partitions it holds, the shared gate, and
//! the local outbox and outputs (see [`crate::commit`]).

use nearcrawl_crawl::config::Config;
use nearcrawl_crawl::run::Crawl;
use nearcrawl_crawl::sink::Sink;
use url::Url;

use crate::error::ClusterError;
use crate::store::RedisStore;

/// One worker of a shared crawl. Its `run` crawls until the shared
/// frontier is empty (for every worker), the crawl's page budget is spent
/// or the worker is stopped; then it commits, checkpoints and releases its
/// partitions. Its stopper leaves requests not answered yet to go back to
/// their queues.
pub type Worker = Crawl<RedisStore>;

/// Joins the crawl `config.cluster.name` on `config.cluster.nodes`,
/// writing to `sink` under `config.output.dir`; a worker that ran there
/// before recovers its outputs first. Seeds are added (those seen before
/// by any worker are skipped).
pub async fn join(
    config: Config,
    seeds: &[Url],
    sink: Box<dyn Sink>,
) -> Result<Worker, ClusterError> {
    let (store, stages) = RedisStore::open(config, seeds, sink).await?;
    Ok(Crawl::new(store, stages))
}
