//! The frontier shared by all workers: per politeness key queues, the seen
//! set and the URLs in flight, cut into partitions that one worker owns at
//! a time ([`Partitions`](crate::Partitions)).
//!
//! Every key of partition N carries the hash tag `{CRAWL:pN}`, so one Lua
//! script changes a partition atomically:
//!
//! | key | type | holds |
//! |---|---|---|
//! | `s:B` | set (intset) | seen URLs as 63-bit hashes, bucket B |
//! | `q:KEY` | list | the politeness key's queued URLs, `depth url` |
//! | `ready` | sorted set | keys with URLs that may start, by earliest start (ms) |
//! | `next` | hash | key → earliest next start (ms), kept while the key rests |
//! | `busy` | hash | key → URLs in flight |
//! | `delay` | hash | key → its own delay (Crawl-delay), ms |
//! | `flight` | sorted set | lease id → deadline (ms) |
//! | `fl` | hash | lease id → `key depth url` |
//! | `leases` | integer | the last lease id handed out |
//! | `flight_epoch` | integer | the owner's epoch the URLs in flight were leased under |
//! | `acked` | bitmap | bit per lease id: acknowledged |
//! | `n` | integer | URLs queued or in flight |
//! | `admitted` | hash | key → URLs queued ever (the per key budget) |
//!
//! **Politeness across workers.** Times are the partition node's clock
//! (`TIME` inside the scripts), one clock per key. Leasing a URL writes the
//! key's next allowed start (lease time + delay + start slack) *before* the
//! request is sent, so a later lease, by this owner or the next, is never
//! early; a key with `per_host_concurrency` URLs in flight rests until one
//! is acknowledged. A request must start within the start slack of its
//! lease ([`Leased::startable`]); one that cannot is given back unsent.
//!
//! **Nothing lost.** A leased URL stays in `flight` until acknowledged. The
//! first lease call of a new owner puts every URL in flight under an
//! earlier owner back at the front of its queue (their acknowledgements
//! would be refused), and any owner's lease call does so for URLs whose
//! deadline passed. An
//! acknowledgement sets the lease's bit in `acked`, so an acknowledgement
//! retried after a lost reply is recognized, and a worker restarting after
//! a crash can ask whether an outcome it holds was acknowledged to it
//! ([`SharedFrontier::acked`]) or fetched again by another.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use redis::Script;
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;

use crate::ClusterError;
use crate::lease::{FENCE, Lease};
use crate::retry::invoke_retrying;

/// Functions the partition scripts share. ARGV[2] is the partition's key
/// prefix (`{CRAWL:pN}:`).
const COMMON: &str = r"
local P = ARGV[2]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The key in `ready` if it has URLs queued and room in flight, at its
-- earliest next start; out of it otherwise.
local function ready_again(key, now, conc)
  local busy = tonumber(redis.call('HGET', P .. 'busy', key) or '0')
  if busy >= conc or redis.call('LLEN', P .. 'q:' .. key) == 0 then
    redis.call('ZREM', P .. 'ready', key)
    return
  end
  local nxt = tonumber(redis.call('HGET', P .. 'next', key) or '0')
  redis.call('ZADD', P .. 'ready', math.max(now, nxt), key)
end
local function busy_down(key)
  if redis.call('HINCRBY', P .. 'busy', key, -1) <= 0 then
    redis.call('HDEL', P .. 'busy', key)
  end
end
-- Ends lease `id`: out of flight; its URL back to the front of its queue
-- unless it was done. Returns the key, or nothing for an unknown id.
local function end_lease(id, now, conc, done)
  local v = redis.call('HGET', P .. 'fl', id)
  if not v then return nil end
  redis.call('ZREM', P .. 'flight', id)
  redis.call('HDEL', P .. 'fl', id)
  local sp = string.find(v, ' ', 1, true)
  local key = string.sub(v, 1, sp - 1)
  if done then
    redis.call('SETBIT', P .. 'acked', id, 1)
    redis.call('DECR', P .. 'n')
  else
    redis.call('LPUSH', P .. 'q:' .. key, string.sub(v, sp + 1))
  end
  busy_down(key)
  ready_again(key, now, conc)
  return key
end
";

/// Adds links (unfenced: any worker adds to any partition). ARGV: 0 (no
/// epoch), prefix, per key concurrency, URLs admitted per key at most (0:
/// no limit), then `key bucket hash entry` per link. Returns how many were
/// new, and how many of those were over their key's budget (seen, not
/// queued).
const ADD: &str = r"
local now, conc, budget, added, over = now_ms(), tonumber(ARGV[3]), tonumber(ARGV[4]), 0, 0
for i = 5, #ARGV, 4 do
  local key = ARGV[i]
  if redis.call('SADD', P .. 's:' .. ARGV[i + 1], ARGV[i + 2]) == 1 then
    if budget > 0 and redis.call('HINCRBY', P .. 'admitted', key, 1) > budget then
      over = over + 1
    else
      redis.call('RPUSH', P .. 'q:' .. key, ARGV[i + 3])
      added = added + 1
      if not redis.call('ZSCORE', P .. 'ready', key) then
        ready_again(key, now, conc)
      end
    end
  end
end
redis.call('INCRBY', P .. 'n', added)
return {added, over}
";

/// Leases up to ARGV[3] URLs, one per ready key. ARGV: epoch, prefix, max,
/// flight ms, default delay ms, start slack ms, concurrency. Returns the
/// server time, the earliest start of a key still ready (-1: none), then
/// `id key entry` per URL.
const LEASE: &str = r"
local now = now_ms()
local max, flight, delay, slack, conc =
  tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
-- URLs leased under an earlier owner can never be acknowledged (acks are
-- fenced): back to their queues at once. Then those whose deadline passed.
if redis.call('GET', P .. 'flight_epoch') ~= ARGV[1] then
  for _, id in ipairs(redis.call('ZRANGE', P .. 'flight', 0, -1)) do
    end_lease(id, now, conc, false)
  end
  redis.call('SET', P .. 'flight_epoch', ARGV[1])
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'flight', '-inf', now, 'LIMIT', 0, 256)) do
  end_lease(id, now, conc, false)
end
local out = {now}
for _, key in ipairs(redis.call('ZRANGEBYSCORE', P .. 'ready', '-inf', now, 'LIMIT', 0, max)) do
  local entry = redis.call('LPOP', P .. 'q:' .. key)
  if entry then
    local id = redis.call('INCR', P .. 'leases')
    redis.call('ZADD', P .. 'flight', now + flight, id)
    redis.call('HSET', P .. 'fl', id, key .. ' ' .. entry)
    redis.call('HINCRBY', P .. 'busy', key, 1)
    local d = tonumber(redis.call('HGET', P .. 'delay', key) or delay)
    redis.call('HSET', P .. 'next', key, now + d + slack)
    out[#out + 1] = id
    out[#out + 1] = key
    out[#out + 1] = entry
  end
  ready_again(key, now, conc)
end
local first = redis.call('ZRANGE', P .. 'ready', 0, 0, 'WITHSCORES')
table.insert(out, 2, first[2] or -1)
return out
";

/// Acknowledges lease ARGV[3] (ARGV[4]: concurrency) whose request
/// started ARGV[5] ms ago (-1: none was sent); ARGV[6] and ARGV[7], the
/// default delay and the start slack. The key's next start is pushed to a
/// delay after the request's real start, if that is later than the lease
/// said (the request went out late): the next owner of the partition
/// starts from it. 1 if it is (or was already) acknowledged, 0 if it lapsed
/// and went back to its queue.
const ACK: &str = r"
local now, id, ago = now_ms(), ARGV[3], tonumber(ARGV[5])
local v = redis.call('HGET', P .. 'fl', id)
if v and ago >= 0 then
  local key = string.sub(v, 1, string.find(v, ' ', 1, true) - 1)
  local d = tonumber(redis.call('HGET', P .. 'delay', key) or ARGV[6])
  local nxt = tonumber(redis.call('HGET', P .. 'next', key) or '0')
  redis.call('HSET', P .. 'next', key, math.max(nxt, now - ago + d + tonumber(ARGV[7])))
end
if end_lease(id, now, tonumber(ARGV[4]), true) then return 1 end
return redis.call('GETBIT', P .. 'acked', id)
";

/// Gives lease ARGV[3] back unsent (ARGV[4]: concurrency): its URL to the
/// front of its queue; the key's next start stays where the lease put it.
const GIVE_BACK: &str = r"
end_lease(ARGV[3], now_ms(), tonumber(ARGV[4]), false)
return 1
";

/// Sets a key's own delay (ARGV[3], its key; ARGV[4], ms). Unfenced.
const SET_DELAY: &str = r"
redis.call('HSET', P .. 'delay', ARGV[3], ARGV[4])
return 1
";

fn script(body: &str, fenced: bool) -> Script {
    let fence = if fenced { FENCE } else { "" };
    Script::new(&format!("{fence}\n{COMMON}\n{body}"))
}

static ADD_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(ADD, false));
static LEASE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(LEASE, true));
static ACK_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(ACK, true));
static GIVE_BACK_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(GIVE_BACK, true));
static SET_DELAY_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(SET_DELAY, false));

/// How the shared frontier schedules: the same for every worker of a crawl.
#[derive(Debug, Clone)]
pub struct FrontierConfig {
    /// Partitions of the politeness keys (fixed for the crawl's life).
    pub partitions: u32,
    /// Seen-set buckets per partition: each an intset of up to 512 hashes
    /// while it stays compact (`set-max-intset-entries`).
    pub seen_buckets: u32,
    /// How long a leased URL may stay unacknowledged before it goes back
    /// to its queue.
    pub flight: Duration,
    /// The least time between two request starts on a key without a
    /// delay of its own.
    pub delay: Duration,
    /// Added to every delay: a request must start within this of its lease
    /// for the delay to hold as seen by the server.
    pub start_slack: Duration,
    pub per_key_concurrency: u32,
    /// URLs a key may have queued over the crawl (`max_pages_per_host`);
    /// 0: no limit.
    pub max_per_key: u64,
}

impl Default for FrontierConfig {
    fn default() -> Self {
        FrontierConfig {
            partitions: 1024,
            seen_buckets: 256,
            flight: Duration::from_secs(60),
            delay: Duration::from_secs(1),
            start_slack: Duration::from_millis(10),
            per_key_concurrency: 1,
            max_per_key: 0,
        }
    }
}

/// A URL to add: its politeness key (host or address), its spelling and
/// its depth.
#[derive(Debug, Clone, Copy)]
pub struct Link<'a> {
    pub key: &'a str,
    pub url: &'a str,
    pub depth: u32,
}

/// A URL leased to this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leased {
    pub partition: u32,
    /// Unique in its partition: names this leasing (a URL fetched again
    /// after a lapsed lease gets a new one).
    pub id: u64,
    pub key: String,
    pub url: String,
    pub depth: u32,
    /// The partition node's clock at the lease, ms.
    pub leased_at_ms: u64,
    /// When this worker sent the lease call: the lease was made after it.
    sent: Instant,
}

impl Leased {
    /// Whether the request may still start: within `slack` of the call that
    /// leased it, so at most `slack` after the lease (which set the key's
    /// next start `slack` later than its delay asks).
    pub fn startable(&self, slack: Duration) -> bool {
        self.sent.elapsed() <= slack
    }
}

/// What one lease call gave: URLs, and when the partition's next key is
/// due, if one is waiting (by the partition node's clock, from the call).
#[derive(Debug, Clone, Default)]
pub struct Leases {
    pub urls: Vec<Leased>,
    pub next_in: Option<Duration>,
}

/// Links added: new ones queued, and new ones over their key's budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Added {
    pub queued: usize,
    pub over_budget: usize,
}

/// The frontier of the crawl named `crawl`, shared through a Redis Cluster.
/// Cheap to clone: clones share one connection.
#[derive(Clone)]
pub struct SharedFrontier {
    con: ClusterConnection,
    crawl: String,
    config: FrontierConfig,
}

impl std::fmt::Debug for SharedFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedFrontier")
            .field("crawl", &self.crawl)
            .field("config", &self.config)
            .finish()
    }
}

impl SharedFrontier {
    pub async fn open(
        nodes: &[&str],
        crawl: &str,
        config: FrontierConfig,
    ) -> Result<SharedFrontier, ClusterError> {
        let con = ClusterClient::new(nodes.to_vec())?
            .get_async_connection()
            .await?;
        Ok(SharedFrontier {
            con,
            crawl: crawl.to_string(),
            config,
        })
    }

    pub fn config(&self) -> &FrontierConfig {
        &self.config
    }

    /// The partition of a politeness key.
    pub fn partition_of(&self, key: &str) -> u32 {
        (fnv1a(key.as_bytes()) % u64::from(self.config.partitions)) as u32
    }

    /// Adds the links not seen before to their keys' queues; returns how
    /// many were new. One round trip per partition touched, all at once.
    /// Safe to repeat: a link seen before is not queued again.
    pub async fn add(&self, links: &[Link<'_>]) -> Result<Added, ClusterError> {
        let mut by_partition: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
        for link in links {
            let p = self.partition_of(link.key);
            let h = fnv1a(link.url.as_bytes()) >> 1;
            let bucket = (h >> 32) % u64::from(self.config.seen_buckets);
            let args = by_partition.entry(p).or_default();
            args.push(link.key.as_bytes().to_vec());
            args.push(bucket.to_string().into_bytes());
            args.push(h.to_string().into_bytes());
            args.push(format!("{} {}", link.depth, link.url).into_bytes());
        }
        let concurrency = self.config.per_key_concurrency.to_string().into_bytes();
        let budget = self.config.max_per_key.to_string().into_bytes();
        let calls = by_partition.into_iter().map(|(p, mut args)| {
            let mut head = vec![
                b"0".to_vec(),
                self.prefix(p).into_bytes(),
                concurrency.clone(),
                budget.clone(),
            ];
            head.append(&mut args);
            run::<(usize, usize)>(&self.con, &ADD_SCRIPT, self.key(p, "n"), head)
        });
        let mut added = Added::default();
        for (queued, over) in try_join_all(calls).await? {
            added.queued += queued;
            added.over_budget += over;
        }
        Ok(added)
    }

    /// Leases up to `max` URLs of `lease`'s partition, one per key whose
    /// next start has come; URLs whose lease lapsed go back to their
    /// queues first. A retried call whose reply was lost leaves its URLs in
    /// flight until their deadline; they are then leased again.
    pub async fn lease(&self, lease: &Lease, max: usize) -> Result<Leases, ClusterError> {
        let c = &self.config;
        let args = [
            max.to_string(),
            c.flight.as_millis().to_string(),
            c.delay.as_millis().to_string(),
            c.start_slack.as_millis().to_string(),
            c.per_key_concurrency.to_string(),
        ];
        let sent = Instant::now();
        let reply: Vec<redis::Value> = self.fenced(&LEASE_SCRIPT, lease, &args).await?;
        parse_leases(lease.partition, &reply, sent)
    }

    /// Acknowledges a fetched URL: its outcome counts. False when its lease
    /// had lapsed and the URL went back to its queue (another fetch will
    /// count, not this one). Safe to repeat.
    ///
    /// `started` is how long ago its request started (none if no request
    /// was sent): a request that went out later than its lease is then
    /// still a full delay before the key's next one, whoever sends it.
    pub async fn ack(
        &self,
        lease: &Lease,
        leased: &Leased,
        started: Option<Duration>,
    ) -> Result<bool, ClusterError> {
        let c = &self.config;
        let args = [
            leased.id.to_string(),
            c.per_key_concurrency.to_string(),
            started.map_or(-1, |d| d.as_millis() as i64).to_string(),
            c.delay.as_millis().to_string(),
            c.start_slack.as_millis().to_string(),
        ];
        let done: u8 = self.fenced(&ACK_SCRIPT, lease, &args).await?;
        Ok(done == 1)
    }

    /// Gives a leased URL back unsent (it could not start in time): first
    /// in its queue again; its key's next start stays.
    pub async fn give_back(&self, lease: &Lease, leased: &Leased) -> Result<(), ClusterError> {
        let args = [
            leased.id.to_string(),
            self.config.per_key_concurrency.to_string(),
        ];
        let _: u8 = self.fenced(&GIVE_BACK_SCRIPT, lease, &args).await?;
        Ok(())
    }

    /// Gives a key a delay of its own (its robots.txt's Crawl-delay), used
    /// from its next lease on.
    pub async fn set_delay(&self, key: &str, delay: Duration) -> Result<(), ClusterError> {
        let p = self.partition_of(key);
        let args = vec![
            b"0".to_vec(),
            self.prefix(p).into_bytes(),
            key.as_bytes().to_vec(),
            delay.as_millis().to_string().into_bytes(),
        ];
        let _: u8 = run(&self.con, &SET_DELAY_SCRIPT, self.key(p, "delay"), args).await?;
        Ok(())
    }

    /// Whether lease `id` of `partition` was acknowledged.
    pub async fn acked(&self, partition: u32, id: u64) -> Result<bool, ClusterError> {
        let mut cmd = redis::cmd("GETBIT");
        cmd.arg(self.key(partition, "acked")).arg(id);
        let bit: u8 = crate::retry::query_retrying(&mut self.con.clone(), &cmd).await?;
        Ok(bit == 1)
    }

    /// URLs queued or in flight in all partitions: 0 once the crawl is
    /// done (and no worker holds a page whose links are not added yet:
    /// links are added before the acknowledgement).
    pub async fn pending(&self) -> Result<u64, ClusterError> {
        let calls = (0..self.config.partitions).map(|p| {
            let mut cmd = redis::cmd("GET");
            cmd.arg(self.key(p, "n"));
            let mut con = self.con.clone();
            async move {
                let n: Option<u64> = crate::retry::query_retrying(&mut con, &cmd).await?;
                Ok::<u64, ClusterError>(n.unwrap_or(0))
            }
        });
        Ok(try_join_all(calls).await?.into_iter().sum())
    }

    /// Counts `n` more pages fetched and acknowledged, over all workers
    /// (the crawl's `max_pages`).
    pub async fn count(&self, n: u64) -> Result<(), ClusterError> {
        let mut cmd = redis::cmd("INCRBY");
        cmd.arg(format!("{{{}}}:counted", self.crawl)).arg(n);
        let _: u64 = crate::retry::query_retrying(&mut self.con.clone(), &cmd).await?;
        Ok(())
    }

    /// Pages counted so far by all workers.
    pub async fn counted(&self) -> Result<u64, ClusterError> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(format!("{{{}}}:counted", self.crawl));
        let n: Option<u64> = crate::retry::query_retrying(&mut self.con.clone(), &cmd).await?;
        Ok(n.unwrap_or(0))
    }

    fn prefix(&self, p: u32) -> String {
        format!("{{{}:p{p}}}:", self.crawl)
    }

    fn key(&self, p: u32, name: &str) -> String {
        format!("{}{name}", self.prefix(p))
    }

    /// A partition script fenced by `lease`'s epoch.
    async fn fenced<T: redis::FromRedisValue>(
        &self,
        script: &'static Script,
        lease: &Lease,
        args: &[String],
    ) -> Result<T, ClusterError> {
        let p = lease.partition;
        let mut all = vec![
            lease.epoch.to_string().into_bytes(),
            self.prefix(p).into_bytes(),
        ];
        all.extend(args.iter().map(|a| a.clone().into_bytes()));
        run(&self.con, script, self.key(p, "epoch"), all)
            .await
            .map_err(|e| match e {
                ClusterError::Redis(r) if r.code() == Some("STALE") => ClusterError::Stale {
                    partition: p,
                    epoch: lease.epoch,
                },
                e => e,
            })
    }
}

/// Runs `script` with KEYS[1] = `key` (which routes it to its partition's
/// node) and `args`, retrying while the cluster recovers.
async fn run<T: redis::FromRedisValue>(
    con: &ClusterConnection,
    script: &'static Script,
    key: String,
    args: Vec<Vec<u8>>,
) -> Result<T, ClusterError> {
    Ok(invoke_retrying(con, script, &[key], &args).await?)
}

fn parse_leases(
    partition: u32,
    reply: &[redis::Value],
    sent: Instant,
) -> Result<Leases, ClusterError> {
    let bad = || ClusterError::Corrupt(format!("lease reply of partition {partition}"));
    let [now, first, rest @ ..] = reply else {
        return Err(bad());
    };
    let leased_at_ms: u64 = redis::from_redis_value_ref(now).map_err(|_| bad())?;
    let first: i64 = redis::from_redis_value_ref(first).map_err(|_| bad())?;
    let next_in = u64::try_from(first)
        .ok()
        .map(|at| Duration::from_millis(at.saturating_sub(leased_at_ms)));
    let urls = rest
        .chunks(3)
        .map(|c| {
            let [id, key, entry] = c else {
                return Err(bad());
            };
            let id: u64 = redis::from_redis_value_ref(id).map_err(|_| bad())?;
            let key: String = redis::from_redis_value_ref(key).map_err(|_| bad())?;
            let entry: String = redis::from_redis_value_ref(entry).map_err(|_| bad())?;
            let (depth, url) = entry.split_once(' ').ok_or_else(bad)?;
            Ok(Leased {
                partition,
                id,
                key,
                url: url.to_string(),
                depth: depth.parse().map_err(|_| bad())?,
                leased_at_ms,
                sent,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Leases { urls, next_in })
}

/// 64-bit FNV-1a: stable across workers, versions and platforms (the
/// partition of a key and a URL's seen hash must be the same everywhere).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}
