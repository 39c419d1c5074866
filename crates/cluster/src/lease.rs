//! Partitions owned one worker at a time: leases with fencing.
//!
//! A partition's keys share the hash tag `{CRAWL:pN}`, so a Lua script
//! updates them atomically on one node. A worker owns partition N while
//! its lease key `{CRAWL:pN}:owner` lives (`SET NX PX`); each new owner
//! bumps `{CRAWL:pN}:epoch`, and every script that changes the partition
//! checks the caller's epoch first ([`Partitions::fenced`]), so a worker
//! that lost its lease without knowing (paused past it, cut off) cannot
//! write over its successor.

use std::collections::HashSet;
use std::fmt;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::Script;
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;

use crate::error::ClusterError;
use crate::hash::fnv1a;
use crate::retry::{invoke_retrying, query_retrying};

/// Takes a free partition: owner set if absent, epoch bumped; returns the
/// new epoch, or nothing when another worker owns it.
const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local epoch = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. epoch, 'PX', ARGV[2])
  return epoch
end
return false
";

/// Extends a lease that is still this owner's, of this epoch.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Gives a lease up, if it is still this owner's.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// The check every script on a partition starts with: KEYS[1] is the
/// partition's epoch key, ARGV[1] the caller's epoch.
pub(crate) const FENCE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE the partition has a newer owner')
end
";

/// Registers a worker as alive until ARGV[2] ms from now, forgets the ones
/// whose registration lapsed; returns how many are alive.
const HEARTBEAT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
";

static ACQUIRE_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(ACQUIRE));
static RENEW_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(RENEW));
static RELEASE_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(RELEASE));
/// Takes the ask for work (KEYS[1]) unless it is the caller's (ARGV[1]).
const CLAIM: &str = r"
local who = redis.call('GET', KEYS[1])
if who and who ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return who
end
return false
";
static CLAIM_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(CLAIM));
static HEARTBEAT_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(HEARTBEAT));

/// A worker's hold on one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub partition: u32,
    pub epoch: u64,
    /// When the lease lapses at the latest, by this worker's clock: the
    /// lease was set or renewed after the instant this counts from.
    expires: Instant,
}

impl Lease {
    /// Whether the partition may still be worked on: the lease has more
    /// than `margin` left. A worker stops starting requests on a partition
    /// once this is false, so it never works on one another worker owns.
    pub fn usable(&self, margin: Duration) -> bool {
        Instant::now() + margin < self.expires
    }
}

/// The partitions of a crawl, as one worker sees them.
pub struct Partitions {
    con: ClusterConnection,
    crawl: String,
    worker: String,
    ttl: Duration,
    /// When [`balance`](Partitions::balance) last renewed the leases, and
    /// last looked for free partitions.
    renewed: Option<Instant>,
    scanned: Option<Instant>,
}

impl fmt::Debug for Partitions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Partitions")
            .field("crawl", &self.crawl)
            .field("worker", &self.worker)
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl Partitions {
    /// Connects as `worker` (a name unique among the crawl's workers) to
    /// the partitions of the crawl named `crawl`; leases last `ttl` unless
    /// renewed.
    pub async fn open(
        nodes: &[&str],
        crawl: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Partitions, ClusterError> {
        let con = ClusterClient::new(nodes.to_vec())?
            .get_async_connection()
            .await?;
        Ok(Partitions {
            con,
            crawl: crawl.to_string(),
            worker: worker.to_string(),
            ttl,
            renewed: None,
            scanned: None,
        })
    }

    /// The key `name` of partition `p`, in the partition's hash slot.
    pub fn key(&self, p: u32, name: &str) -> String {
        format!("{{{}:p{p}}}:{name}", self.crawl)
    }

    /// Takes partition `p` if no worker holds it.
    pub async fn acquire(&self, p: u32) -> Result<Option<Lease>, ClusterError> {
        let start = Instant::now();
        // A retried call whose first reply was lost finds the lease taken
        // (by this worker): it lapses unused after one term.
        let keys = [self.key(p, "owner"), self.key(p, "epoch")];
        let args = [self.worker.clone().into_bytes(), self.ttl_ms()];
        let epoch: Option<u64> = invoke_retrying(&self.con, &ACQUIRE_SCRIPT, &keys, &args).await?;
        Ok(epoch.map(|epoch| Lease {
            partition: p,
            epoch,
            expires: start + self.ttl,
        }))
    }

    /// Extends `lease`; false if it lapsed or the partition passed to
    /// another worker (then stop working on it).
    pub async fn renew(&mut self, lease: &mut Lease) -> Result<bool, ClusterError> {
        let start = Instant::now();
        let keys = [self.key(lease.partition, "owner")];
        let args = [self.owner_value(lease).into_bytes(), self.ttl_ms()];
        let renewed: u64 = invoke_retrying(&self.con, &RENEW_SCRIPT, &keys, &args).await?;
        if renewed == 1 {
            lease.expires = start + self.ttl;
        }
        Ok(renewed == 1)
    }

    /// Gives `lease` up at once, so another worker may take the partition.
    pub async fn release(&mut self, lease: Lease) -> Result<(), ClusterError> {
        let keys = [self.key(lease.partition, "owner")];
        let args = [self.owner_value(&lease).into_bytes()];
        let _: u64 = invoke_retrying(&self.con, &RELEASE_SCRIPT, &keys, &args).await?;
        Ok(())
    }

    /// Runs the Lua `body` on `lease`'s partition, fenced: it runs only if
    /// the partition's epoch is still the lease's, and otherwise fails
    /// with [`ClusterError::Stale`]. In `body`, KEYS and ARGV are `keys` and
    /// `args` shifted by one (`KEYS[1]` and `ARGV[1]` are the fence's); every
    /// key must be one of the partition's ([`key`](Partitions::key)).
    pub async fn fenced<T: redis::FromRedisValue>(
        &mut self,
        lease: &Lease,
        body: &str,
        keys: &[String],
        args: &[Vec<u8>],
    ) -> Result<T, ClusterError> {
        let script = Script::new(&format!("{FENCE}\n{body}"));
        let mut invocation = script.key(self.key(lease.partition, "epoch"));
        invocation.arg(lease.epoch.to_string());
        for k in keys {
            invocation.key(k);
        }
        for a in args {
            invocation.arg(a.as_slice());
        }
        match invocation.invoke_async(&mut self.con).await {
            Ok(v) => Ok(v),
            Err(e) if e.code() == Some("STALE") => Err(ClusterError::Stale {
                partition: lease.partition,
                epoch: lease.epoch,
            }),
            Err(e) => Err(e.into()),
        }
    }

    /// Renews `lease` once a third of its term has passed since it was
    /// set or last renewed; false if it was lost.
    pub async fn keep_alive(&mut self, lease: &mut Lease) -> Result<bool, ClusterError> {
        if lease.usable(self.ttl * 2 / 3) {
            return Ok(true);
        }
        self.renew(lease).await
    }

    /// Renews every lease in `held` (all at once), dropping the lost ones.
    async fn renew_all(&mut self, held: &mut Vec<Lease>) -> Result<(), ClusterError> {
        let start = Instant::now();
        let calls = held.iter().map(|lease| {
            let keys = [self.key(lease.partition, "owner")];
            let args = [self.owner_value(lease).into_bytes(), self.ttl_ms()];
            let con = &self.con;
            async move { invoke_retrying::<u64>(con, &RENEW_SCRIPT, &keys, &args).await }
        });
        let renewed = futures_util::future::try_join_all(calls).await?;
        let mut kept = renewed.iter().map(|&r| r == 1);
        held.retain(|_| kept.next().unwrap_or(false));
        for lease in held.iter_mut() {
            lease.expires = start + self.ttl;
        }
        self.renewed = Some(start);
        Ok(())
    }

    /// Keeps this worker's share of the `partitions`: registers it as alive,
    /// renews the leases in `held` every third of their term (dropping the
    /// lost ones), takes free
    /// partitions while it holds fewer than its share (⌈partitions / live
    /// workers⌉) and returns the leases beyond its share. The caller stops
    /// leasing URLs on those, and [releases](Partitions::release) each
    /// once its URLs in flight there are acknowledged, so a joining worker
    /// gets them. Called often (a heartbeat is one round trip): a joining
    /// worker gets its share at the others' next calls.
    pub async fn balance(
        &mut self,
        held: &mut Vec<Lease>,
        partitions: u32,
    ) -> Result<Vec<Lease>, ClusterError> {
        self.balance_skipping(held, partitions, &HashSet::new())
            .await
    }

    /// [`balance`](Partitions::balance), not taking the partitions in
    /// `skip` (ones this worker just gave to another), and handing back
    /// surplus from the end of `held` (put the idle ones last).
    pub async fn balance_skipping(
        &mut self,
        held: &mut Vec<Lease>,
        partitions: u32,
        skip: &HashSet<u32>,
    ) -> Result<Vec<Lease>, ClusterError> {
        let keys = [self.crawl_key("workers")];
        let args = [self.worker.clone().into_bytes(), self.ttl_ms()];
        let live: u32 = invoke_retrying(&self.con, &HEARTBEAT_SCRIPT, &keys, &args).await?;
        let share = partitions.div_ceil(live.max(1)) as usize;
        if self.renewed.is_none_or(|t| t.elapsed() >= self.ttl / 3) {
            self.renew_all(held).await?;
        }
        if held.len() > share {
            return Ok(held.split_off(share));
        }
        // At its share rounded down, a worker looks for a free partition
        // once a term only: the shares rounded up add to more than there
        // are partitions, so one worker is always one short.
        let floor = (partitions / live.max(1)) as usize;
        if held.len() >= share
            || (held.len() >= floor && self.scanned.is_some_and(|t| t.elapsed() < self.ttl / 3))
        {
            return Ok(Vec::new());
        }
        self.scanned = Some(Instant::now());
        self.take_free(held, partitions, share, skip).await?;
        Ok(Vec::new())
    }

    /// Takes free partitions until `held` has `share`, asking many at once,
    /// from where this worker's name points (so workers starting together
    /// do not all race for partition 0).
    async fn take_free(
        &mut self,
        held: &mut Vec<Lease>,
        partitions: u32,
        share: usize,
        skip: &HashSet<u32>,
    ) -> Result<(), ClusterError> {
        let start = fnv1a(self.worker.as_bytes()) % u64::from(partitions);
        let owned: HashSet<u32> = held.iter().map(|l| l.partition).collect();
        let candidates: Vec<u32> = (0..u64::from(partitions))
            .map(|i| ((start + i) % u64::from(partitions)) as u32)
            .filter(|p| !skip.contains(p) && !owned.contains(p))
            .collect();
        let mut next = candidates.iter();
        while held.len() < share {
            // At least 32 tries at once (owned ones fail at once); a few
            // taken beyond the share go back at the next balance.
            let tries = (share - held.len()).max(32);
            let batch: Vec<u32> = next.by_ref().take(tries).copied().collect();
            if batch.is_empty() {
                break;
            }
            let this = &*self;
            let tries = batch.iter().map(|&p| this.acquire(p));
            for lease in futures_util::future::try_join_all(tries)
                .await?
                .into_iter()
                .flatten()
            {
                held.push(lease);
            }
        }
        Ok(())
    }

    /// Says this worker has nothing to do while the crawl has work: a
    /// worker with work in several partitions will give it one
    /// ([`claim_hungry`](Partitions::claim_hungry)).
    pub async fn ask_for_work(&self) -> Result<(), ClusterError> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.crawl_key("hungry"))
            .arg(&self.worker)
            .arg("PX")
            .arg(self.ttl.as_millis() as u64);
        let _: () = query_retrying(&mut self.con.clone(), &cmd).await?;
        Ok(())
    }

    /// The worker asking for work, if another one is; taken (only one
    /// giver answers an ask).
    pub async fn claim_hungry(&self) -> Result<Option<String>, ClusterError> {
        let keys = [self.crawl_key("hungry")];
        let args = [self.worker.clone().into_bytes()];
        Ok(invoke_retrying(&self.con, &CLAIM_SCRIPT, &keys, &args).await?)
    }

    /// Gives `lease`'s partition to worker `to`: released, and named in
    /// `to`'s gifts, which it takes at its next [`gifts`](Partitions::gifts).
    pub async fn give(&mut self, lease: Lease, to: &str) -> Result<(), ClusterError> {
        let p = lease.partition;
        self.release(lease).await?;
        let key = self.crawl_key(&format!("gifts:{to}"));
        let mut cmd = redis::cmd("RPUSH");
        cmd.arg(&key).arg(p);
        let _: u64 = query_retrying(&mut self.con.clone(), &cmd).await?;
        let mut expire = redis::cmd("PEXPIRE");
        expire.arg(&key).arg(self.ttl.as_millis() as u64);
        let _: u64 = query_retrying(&mut self.con.clone(), &expire).await?;
        Ok(())
    }

    /// Partitions other workers gave this one, taken where still free.
    pub async fn gifts(&mut self) -> Result<Vec<Lease>, ClusterError> {
        let mut cmd = redis::cmd("LPOP");
        cmd.arg(self.crawl_key(&format!("gifts:{}", self.worker)))
            .arg(64);
        let given: Option<Vec<u32>> = query_retrying(&mut self.con.clone(), &cmd).await?;
        let mut taken = Vec::new();
        for p in given.unwrap_or_default() {
            taken.extend(self.acquire(p).await?);
        }
        Ok(taken)
    }

    fn crawl_key(&self, name: &str) -> String {
        format!("{{{}}}:{name}", self.crawl)
    }

    fn ttl_ms(&self) -> Vec<u8> {
        self.ttl.as_millis().to_string().into_bytes()
    }

    fn owner_value(&self, lease: &Lease) -> String {
        format!("{} {}", self.worker, lease.epoch)
    }
}
