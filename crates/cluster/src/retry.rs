//! Calls that outlast a failover: a node restarting, the cluster reporting
//! `CLUSTERDOWN` for a few seconds, a dropped connection.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::RedisError;
use redis::cluster_async::ClusterConnection;

/// How long a call keeps retrying a cluster that is failing over or a node
/// that is restarting (Redis reports CLUSTERDOWN for a few seconds).
pub(crate) const RETRY_FOR: Duration = Duration::from_secs(60);

/// Calls sent to the cluster by this process (tries included), for the
/// worker's `stats.json`: what a page costs in requests to Redis.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Calls this process has sent to the cluster so far.
pub(crate) fn calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}

/// Errors that pass: the same call may succeed once the cluster recovers.
fn passing(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_cluster_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
}

/// Runs `call` until it succeeds, fails with an error that does not pass,
/// or [`RETRY_FOR`] is over, with growing pauses between tries. A call
/// whose reply was lost runs twice: only idempotent calls, or calls whose
/// second run is harmless, come here.
pub(crate) async fn retrying<T, F, Fut>(mut call: F) -> Result<T, RedisError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RedisError>>,
{
    let start = Instant::now();
    let mut wait = Duration::from_millis(20);
    loop {
        CALLS.fetch_add(1, Ordering::Relaxed);
        match call().await {
            Ok(v) => return Ok(v),
            Err(e) if !passing(&e) || start.elapsed() > RETRY_FOR => return Err(e),
            Err(_) => {}
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(1));
    }
}

/// `cmd`, [retrying](retrying).
pub(crate) async fn query_retrying<T: redis::FromRedisValue>(
    con: &mut ClusterConnection,
    cmd: &redis::Cmd,
) -> Result<T, RedisError> {
    retrying(|| {
        let mut con = con.clone();
        async move { cmd.query_async(&mut con).await }
    })
    .await
}

/// `script` with `keys` and `args`, [retrying](retrying). The first key
/// routes the call to its node.
pub(crate) async fn invoke_retrying<T: redis::FromRedisValue>(
    con: &ClusterConnection,
    script: &redis::Script,
    keys: &[String],
    args: &[Vec<u8>],
) -> Result<T, RedisError> {
    retrying(|| {
        let mut con = con.clone();
        let mut invocation = script.prepare_invoke();
        for k in keys {
            invocation.key(k);
        }
        for a in args {
            invocation.arg(a.as_slice());
        }
        async move { invocation.invoke_async(&mut con).await }
    })
    .await
}
