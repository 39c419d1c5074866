//! What can go wrong in a shared crawl.

/// The cluster or a replica failed, or the log holds what this version did
/// not write.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("gate replica: {0}")]
    Gate(#[from] nearcrawl_index::IndexError),
    #[error("the shared log: {0}")]
    Corrupt(String),
    #[error("fetcher: {0}")]
    Fetch(#[from] nearcrawl_fetch::FetchError),
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
    #[error("config: {0}")]
    Config(String),
    /// The shared log was trimmed past this replica's position (a worker
    /// that joins late, or lost its replica): it needs a copy of another's
    /// ([`SharedGate::receive_snapshot`]).
    #[error(
        "the shared log was trimmed past this gate replica (at {applied}): it needs a copy of \
         a running worker's replica"
    )]
    Trimmed { applied: String },
    /// A write on a partition whose lease passed to another worker.
    #[error("partition {partition}: the lease of epoch {epoch} was taken over")]
    Stale { partition: u32, epoch: u64 },
}
