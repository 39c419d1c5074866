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
//! | `q:KEY` | list | the politeness key's queued URLs, `depth url` (a sitemap: `sLEVEL url`) |
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
//! | `admitted` | hash | key → 0: a key in it is admitted (`max_hosts`) |
//! | `pages` | hash | host → pages taken for fetching ever (`max_pages_per_host`) |
//! | `dpages` | hash | registrable domain → pages taken for fetching ever (`max_pages_per_domain`) |
//! | `tw` | hash | section → its last verdicts, `0`/`1` (1: duplicate), while its window is not clean |
//! | `trapped` | hash | section → duplicates in the window that made it a duplicate trap |
//! | `rd` | set | URLs whose pages were read through redirects from other URLs, as 63-bit hashes (not fetched again) |
//!
//! A partition holds whole registrable domains (a key's partition is the
//! hash of its host's domain), so the per domain budget and a section's
//! trap window are each kept by one script on one node. Admitting a new key
//! takes a ticket from the crawl's `{CRAWL}:keys` counter first
//! ([`SharedFrontier::add`]), which bounds the keys of the whole crawl.
//!
//! **Politeness across workers.** Times are the partition node's clock
//! (`TIME` inside the scripts), one clock per key. Leasing a URL writes the
//! key's next allowed start (lease time + delay + start slack) *before* the
//! request is sent, so a later lease, by this owner or the next, is never
//! early; a key with `per_host_concurrency` URLs in flight rests until one
//! is acknowledged. A request must start within the start slack of its
//! lease ([`Leased::startable`], checked again when its turn comes in the
//! fetcher); one that cannot is given back unsent. A URL whose lease ends
//! unacknowledged (its owner died, or its deadline passed) may have been
//! requested up to that moment, so its key's next start is then a whole
//! delay away.
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

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use nearcrawl_crawl::scope::{page_budget_spent, registrable_domain};
use nearcrawl_crawl::traps::section;
use nearcrawl_fetch::{host_of_key, politeness_key};
use redis::Script;
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use url::Url;

use crate::error::ClusterError;
use crate::hash::fnv1a;
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
/// epoch), prefix, per key concurrency, then `key admit bucket hash entry`
/// per link. A link of a key not admitted yet is skipped (not even marked
/// seen) unless `admit` is 1: the caller holds a ticket for its key.
/// Returns how many were queued, how many tickets were not needed (the
/// key was admitted meanwhile), the partition's owner (`WORKER EPOCH`,
/// empty if none) when something was queued, then the keys skipped.
const ADD: &str = r"
local now, conc = now_ms(), tonumber(ARGV[3])
local added, spare = 0, 0
local skipped, admitting = {}, {}
for i = 4, #ARGV, 5 do
  local key, admit = ARGV[i], ARGV[i + 1]
  if admit == '1' and admitting[key] == nil then
    admitting[key] = true
    if redis.call('HSETNX', P .. 'admitted', key, 0) == 0 then spare = spare + 1 end
  end
  if redis.call('HEXISTS', P .. 'admitted', key) == 0 then
    if skipped[key] == nil then
      skipped[key] = true
      skipped[#skipped + 1] = key
    end
  elseif redis.call('SADD', P .. 's:' .. ARGV[i + 2], ARGV[i + 3]) == 1 then
    redis.call('RPUSH', P .. 'q:' .. key, ARGV[i + 4])
    added = added + 1
    if not redis.call('ZSCORE', P .. 'ready', key) then
      ready_again(key, now, conc)
    end
  end
end
redis.call('INCRBY', P .. 'n', added)
local owner = ''
if added > 0 then owner = redis.call('GET', P .. 'owner') or '' end
local out = {added, spare, owner}
for _, key in ipairs(skipped) do out[#out + 1] = key end
return out
";

/// Counts a page taken for fetching (ARGV[3]: 1) or given back (-1) in
/// the budgets of host ARGV[4] and registrable domain ARGV[5]; returns the
/// counts after.
const COUNT_PAGE: &str = r"
local d = tonumber(ARGV[3])
return {redis.call('HINCRBY', P .. 'pages', ARGV[4], d), redis.call('HINCRBY', P .. 'dpages', ARGV[5], d)}
";

/// Takes up to ARGV[2] tickets for new keys (ARGV[1]: keys of the crawl
/// at most) from counter KEYS[1]; returns how many it got. A negative
/// ARGV[2] hands tickets back.
const TICKETS: &str = r"
local have, want = tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(ARGV[2])
local got = want
if want > 0 then got = math.max(0, math.min(want, tonumber(ARGV[1]) - have)) end
if got ~= 0 then redis.call('INCRBY', KEYS[1], got) end
return got
";

/// Leases up to ARGV[3] URLs, one per ready key. ARGV: epoch, prefix, max,
/// flight ms, default delay ms, start slack ms, concurrency. Returns the
/// server time, the earliest start of a key still ready (-1: none), the
/// number of sections cut off as traps, then `id key entry` per URL.
const LEASE: &str = r"
local now = now_ms()
local max, flight, delay, slack, conc =
  tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
-- A URL whose lease ends unacknowledged may have been requested at any
-- moment until now (by an owner that died just after, say): its key's
-- next start is a whole delay from now.
local function lapsed(id)
  local v = redis.call('HGET', P .. 'fl', id)
  if v then
    local key = string.sub(v, 1, string.find(v, ' ', 1, true) - 1)
    local d = tonumber(redis.call('HGET', P .. 'delay', key) or delay)
    local nxt = tonumber(redis.call('HGET', P .. 'next', key) or '0')
    redis.call('HSET', P .. 'next', key, math.max(nxt, now + d + slack))
  end
  end_lease(id, now, conc, false)
end
-- URLs leased under an earlier owner can never be acknowledged (acks are
-- fenced): back to their queues at once. Then those whose deadline passed.
if redis.call('GET', P .. 'flight_epoch') ~= ARGV[1] then
  for _, id in ipairs(redis.call('ZRANGE', P .. 'flight', 0, -1)) do
    lapsed(id)
  end
  redis.call('SET', P .. 'flight_epoch', ARGV[1])
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'flight', '-inf', now, 'LIMIT', 0, 256)) do
  lapsed(id)
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
table.insert(out, 3, redis.call('HLEN', P .. 'trapped'))
return out
";

/// Acknowledges lease ARGV[3] (ARGV[4]: concurrency) whose request
/// started ARGV[5] ms ago (-1: none was sent); ARGV[6] and ARGV[7], the
/// default delay and the start slack; ARGV[12], the flight time. The key's
/// next start is pushed to a delay after the request's real start, if that
/// is later than the lease said (the request went out late): the next
/// owner of the partition starts from it. A lease that sent no request (a
/// URL of a trapped section) gives the key's turn back: its next start
/// goes back to the lease's time, unless a later lease moved it.
///
/// A judged page (ARGV[9]: 1 duplicate, 0 new, -1 not judged) counts in
/// its section's (ARGV[8]) last ARGV[10] verdicts; when ARGV[11] of them
/// are duplicates the section is a trap. Counted once: a repeated
/// acknowledgement changes nothing.
///
/// Returns 1 if the lease is (or was already) acknowledged, 0 if it lapsed
/// and went back to its queue; then the duplicates that made the section a
/// trap, 0 if this did not.
const ACK: &str = r"
local now, id, ago = now_ms(), ARGV[3], tonumber(ARGV[5])
local v = redis.call('HGET', P .. 'fl', id)
if v then
  local key = string.sub(v, 1, string.find(v, ' ', 1, true) - 1)
  local d = tonumber(redis.call('HGET', P .. 'delay', key) or ARGV[6])
  local nxt = tonumber(redis.call('HGET', P .. 'next', key) or '0')
  if ago >= 0 then
    redis.call('HSET', P .. 'next', key, math.max(nxt, now - ago + d + tonumber(ARGV[7])))
  else
    local leased = tonumber(redis.call('ZSCORE', P .. 'flight', id)) - tonumber(ARGV[12])
    if nxt == leased + d + tonumber(ARGV[7]) then
      redis.call('HSET', P .. 'next', key, leased)
    end
  end
end
if not end_lease(id, now, tonumber(ARGV[4]), true) then
  return {redis.call('GETBIT', P .. 'acked', id), 0}
end
local section, verdict, window, need = ARGV[8], ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11])
if verdict == '-1' or window == 0 or redis.call('HEXISTS', P .. 'trapped', section) == 1 then
  return {1, 0}
end
local bits = (redis.call('HGET', P .. 'tw', section) or '') .. verdict
if #bits > window then bits = string.sub(bits, -window) end
local _, dups = string.gsub(bits, '1', '')
if #bits == window and dups >= need then
  redis.call('HDEL', P .. 'tw', section)
  redis.call('HSET', P .. 'trapped', section, dups)
  return {1, dups}
end
if #bits == window and dups == 0 then
  -- A clean window: nothing to remember until the next duplicate.
  redis.call('HDEL', P .. 'tw', section)
else
  redis.call('HSET', P .. 'tw', section, bits)
end
return {1, 0}
";

/// Gives lease ARGV[3] back unsent (ARGV[4]: concurrency): its URL to the
/// front of its queue; the key's next start stays where the lease put it.
const GIVE_BACK: &str = r"
end_lease(ARGV[3], now_ms(), tonumber(ARGV[4]), false)
return 1
";

/// Takes address ARGV[1]'s turn (hash KEYS[1], address → earliest next
/// start, ms) if it has come: its next start is then ARGV[2] ms (delay and
/// start slack) later; returns 0. Otherwise returns the ms to wait.
const RESERVE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nxt = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if now < nxt then return nxt - now end
redis.call('HSET', KEYS[1], ARGV[1], now + tonumber(ARGV[2]))
return 0
";

/// Address ARGV[1]'s request started ARGV[2] ms ago: its next start is at
/// least ARGV[3] ms (delay and slack) after that.
const PACED: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nxt = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local after = now - tonumber(ARGV[2]) + tonumber(ARGV[3])
if after > nxt then redis.call('HSET', KEYS[1], ARGV[1], after) end
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
static COUNT_PAGE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(COUNT_PAGE, false));
static TICKETS_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(TICKETS));
static LEASE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(LEASE, true));
static ACK_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(ACK, true));
static GIVE_BACK_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(GIVE_BACK, true));
static SET_DELAY_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(SET_DELAY, false));
static RESERVE_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(RESERVE));
static PACED_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(PACED));

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
    /// Pages a host may have fetched over the crawl (`max_pages_per_host`);
    /// 0: no limit.
    pub max_per_host: u64,
    /// Pages a registrable domain may have fetched over the crawl
    /// (`max_pages_per_domain`); 0: no limit.
    pub max_per_domain: u64,
    /// Keys admitted over the crawl (`max_hosts`): links to further keys
    /// are refused.
    pub max_keys: u64,
    /// A section is a duplicate trap when `trap_duplicates` of its last
    /// `trap_window` judged pages were duplicates (0: never).
    pub trap_window: u32,
    pub trap_duplicates: u32,
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
            max_per_host: 0,
            max_per_domain: 0,
            max_keys: u64::MAX,
            trap_window: 0,
            trap_duplicates: 0,
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

/// What a queued URL is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Page,
    Sitemap,
    /// A page queued again: seen under a hash of its own, so it is queued
    /// again once.
    Again,
}

/// Marks a sitemap's entry in a queue: `sLEVEL url`.
const SITEMAP: &str = "s";

/// A URL leased to this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leased {
    pub partition: u32,
    /// Unique in its partition: names this leasing (a URL fetched again
    /// after a lapsed lease gets a new one).
    pub id: u64,
    pub key: String,
    pub url: String,
    /// Links from the seeds (0 for a sitemap).
    pub depth: u32,
    /// A sitemap to read, not a page: its level (0: named by robots.txt).
    pub sitemap: Option<u32>,
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

    /// The latest start [`startable`](Leased::startable) allows.
    pub fn start_by(&self, slack: Duration) -> Instant {
        self.sent + slack
    }
}

/// What one lease call gave: URLs, and when the partition's next key is
/// due, if one is waiting (by the partition node's clock, from the call).
#[derive(Debug, Clone, Default)]
pub struct Leases {
    pub urls: Vec<Leased>,
    pub next_in: Option<Duration>,
    /// Sections of the partition cut off as duplicate traps (see
    /// [`SharedFrontier::trapped`]).
    pub trapped: usize,
}

/// Links added: new ones queued; new ones over their key's or their
/// domain's budget (seen, not queued); links to keys refused for
/// `max_keys`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Added {
    pub queued: usize,
    pub over_max_keys: usize,
    /// Partitions that got URLs, with their owners (worker names): an
    /// owner polls a partition with nothing ready only now and then, so
    /// the adder tells it ([`SharedFrontier::wake`]).
    pub woken: Vec<(u32, String)>,
}

/// An acknowledgement's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acked {
    /// The outcome counts: false when the lease had lapsed and the URL
    /// went back to its queue.
    pub done: bool,
    /// This page made its section a duplicate trap: its duplicates among
    /// the last `trap_window` judged pages.
    pub trap: Option<u32>,
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

    /// The partition of a politeness key: that of its host's registrable
    /// domain, so a domain's budget is kept in one place.
    pub fn partition_of(&self, key: &str) -> u32 {
        self.partition_of_domain(registrable_domain(host_of_key(key)))
    }

    fn partition_of_domain(&self, domain: &str) -> u32 {
        (fnv1a(domain.as_bytes()) % u64::from(self.config.partitions)) as u32
    }

    /// Adds the links not seen before to their keys' queues. One round
    /// trip per partition touched, all at once; when some links are of
    /// keys not admitted yet, two more: tickets for them from the crawl's
    /// key counter (`max_keys`), then the links of the keys that got one.
    /// Safe to repeat: a link seen before is not queued again.
    pub async fn add(&self, links: &[Link<'_>]) -> Result<Added, ClusterError> {
        self.add_as(links, Entry::Page).await
    }

    /// Adds sitemaps to read, as [`add`](SharedFrontier::add) adds pages:
    /// each link's `depth` is its sitemap's level (0: named by robots.txt,
    /// 1: in a sitemap index, …). A sitemap is fetched in its host's turn,
    /// like a page, and leased as [`Leased::sitemap`].
    pub async fn add_sitemaps(&self, links: &[Link<'_>]) -> Result<Added, ClusterError> {
        self.add_as(links, Entry::Sitemap).await
    }

    /// Queues pages again although they were seen (URLs a URL rule
    /// skipped, whose rule retired): once each, however often asked.
    pub async fn add_again(&self, links: &[Link<'_>]) -> Result<Added, ClusterError> {
        self.add_as(links, Entry::Again).await
    }

    async fn add_as(&self, links: &[Link<'_>], entry: Entry) -> Result<Added, ClusterError> {
        let (mut added, new_keys) = self.add_admitted(links, &HashSet::new(), entry).await?;
        if new_keys.is_empty() {
            return Ok(added);
        }
        let got = self.tickets(new_keys.len() as i64).await?;
        let admit: HashSet<&str> = new_keys.iter().take(got).map(String::as_str).collect();
        let new_keys: HashSet<&str> = new_keys.iter().map(String::as_str).collect();
        let theirs: Vec<Link<'_>> = links
            .iter()
            .filter(|l| admit.contains(l.key))
            .copied()
            .collect();
        let (more, _) = self.add_admitted(&theirs, &admit, entry).await?;
        added.woken.extend(more.woken);
        added.queued += more.queued;
        added.over_max_keys = links
            .iter()
            .filter(|l| new_keys.contains(l.key) && !admit.contains(l.key))
            .count();
        Ok(added)
    }

    /// Tickets for `n` new keys (negative: handed back); how many it got.
    async fn tickets(&self, n: i64) -> Result<usize, ClusterError> {
        let key = format!("{{{}}}:keys", self.crawl);
        let args = vec![
            self.config.max_keys.to_string().into_bytes(),
            n.to_string().into_bytes(),
        ];
        let got: i64 = run(&self.con, &TICKETS_SCRIPT, key, args).await?;
        Ok(usize::try_from(got).unwrap_or(0))
    }

    /// One ADD script per partition touched, all at once; the links of
    /// keys in `admit` carry their tickets. Returns the counts and the
    /// keys not admitted yet (in the order met).
    async fn add_admitted(
        &self,
        links: &[Link<'_>],
        admit: &HashSet<&str>,
        entry: Entry,
    ) -> Result<(Added, Vec<String>), ClusterError> {
        let mark = match entry {
            Entry::Page | Entry::Again => "",
            Entry::Sitemap => SITEMAP,
        };
        let mut by_partition: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
        for link in links {
            let domain = registrable_domain(host_of_key(link.key));
            let p = self.partition_of_domain(domain);
            let h = match entry {
                Entry::Again => fnv1a(format!("again {}", link.url).as_bytes()) >> 1,
                _ => fnv1a(link.url.as_bytes()) >> 1,
            };
            let bucket = (h >> 32) % u64::from(self.config.seen_buckets);
            let args = by_partition.entry(p).or_default();
            args.push(link.key.as_bytes().to_vec());
            args.push(if admit.contains(link.key) { b"1" } else { b"0" }.to_vec());
            args.push(bucket.to_string().into_bytes());
            args.push(h.to_string().into_bytes());
            args.push(format!("{mark}{} {}", link.depth, link.url).into_bytes());
        }
        let concurrency = self.config.per_key_concurrency.to_string();
        let calls = by_partition.into_iter().map(|(p, mut args)| {
            let mut all = vec![b"0".to_vec(), self.prefix(p).into_bytes()];
            all.push(concurrency.clone().into_bytes());
            all.append(&mut args);
            let reply = run::<Vec<redis::Value>>(&self.con, &ADD_SCRIPT, self.key(p, "n"), all);
            async move { Ok::<_, ClusterError>((p, reply.await?)) }
        });
        let mut added = Added::default();
        let (mut new_keys, mut spare) = (Vec::new(), 0);
        for (p, reply) in try_join_all(calls).await? {
            let bad = || ClusterError::Corrupt("add reply".into());
            let [queued, unused, owner, skipped @ ..] = reply.as_slice() else {
                return Err(bad());
            };
            let owner: String = redis::from_redis_value_ref(owner).map_err(|_| bad())?;
            if let Some((worker, _epoch)) = owner.rsplit_once(' ') {
                added.woken.push((p, worker.to_string()));
            }
            let n = |v: &redis::Value| redis::from_redis_value_ref::<usize>(v).map_err(|_| bad());
            added.queued += n(queued)?;
            spare += n(unused)?;
            for k in skipped {
                new_keys.push(redis::from_redis_value_ref::<String>(k).map_err(|_| bad())?);
            }
        }
        if spare > 0 {
            // Another worker admitted the key meanwhile: its ticket counts.
            self.tickets(-(spare as i64)).await?;
        }
        Ok((added, new_keys))
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

    /// Acknowledges a fetched URL: its outcome counts unless its lease had
    /// lapsed and the URL went back to its queue (another fetch will
    /// count, not this one). Safe to repeat.
    ///
    /// `started` is how long ago its request started: a request that went
    /// out later than its lease is then still a full delay before the
    /// key's next one, whoever sends it. None: no request was sent, and the
    /// key's turn goes back to it.
    /// `duplicate` is the gate's verdict on a judged page: it counts in
    /// its section's trap window (see [`FrontierConfig::trap_window`]).
    pub async fn ack(
        &self,
        lease: &Lease,
        leased: &Leased,
        started: Option<Duration>,
        duplicate: Option<bool>,
    ) -> Result<Acked, ClusterError> {
        let c = &self.config;
        let section = Url::parse(&leased.url).map_or(String::new(), |u| section(&u));
        let args = [
            leased.id.to_string(),
            c.per_key_concurrency.to_string(),
            started.map_or(-1, |d| d.as_millis() as i64).to_string(),
            c.delay.as_millis().to_string(),
            c.start_slack.as_millis().to_string(),
            section,
            duplicate.map_or(-1, i8::from).to_string(),
            c.trap_window.to_string(),
            c.trap_duplicates.to_string(),
            c.flight.as_millis().to_string(),
        ];
        let (done, trap): (u8, u32) = self.fenced(&ACK_SCRIPT, lease, &args).await?;
        Ok(Acked {
            done: done == 1,
            trap: (trap > 0).then_some(trap),
        })
    }

    /// The sections of `partition` cut off as duplicate traps (see
    /// [`nearcrawl_crawl::traps::section`]): URLs of theirs that are
    /// leased are not fetched.
    pub async fn trapped(&self, partition: u32) -> Result<HashSet<String>, ClusterError> {
        let mut cmd = redis::cmd("HKEYS");
        cmd.arg(self.key(partition, "trapped"));
        let keys: Vec<String> = crate::retry::query_retrying(&mut self.con.clone(), &cmd).await?;
        Ok(keys.into_iter().collect())
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

    /// Takes the turn of the server at `address` for a request that starts
    /// now (`politeness.key = "ip"`: hosts of any partition that share an
    /// address share its delay): None if taken, else how long until its
    /// turn. `delay` is the host's (its Crawl-delay, or the default).
    ///
    /// Addresses are kept apart from the partitions, in `{CRAWL:aN}`
    /// slots; a worker first leases a URL by its host, then takes its
    /// address's turn, and gives the URL back when that has not come.
    pub async fn reserve_address(
        &self,
        address: std::net::IpAddr,
        delay: Duration,
    ) -> Result<Option<Duration>, ClusterError> {
        let spacing = delay + self.config.start_slack;
        let args = vec![
            address.to_string().into_bytes(),
            spacing.as_millis().to_string().into_bytes(),
        ];
        let wait: u64 = run(&self.con, &RESERVE_SCRIPT, self.address_key(address), args).await?;
        Ok((wait > 0).then(|| Duration::from_millis(wait)))
    }

    /// The request to `address` whose turn was taken started `started`
    /// ago: its next one is a full delay after that, even if it went out
    /// late.
    pub async fn address_paced(
        &self,
        address: std::net::IpAddr,
        started: Duration,
        delay: Duration,
    ) -> Result<(), ClusterError> {
        let spacing = delay + self.config.start_slack;
        let args = vec![
            address.to_string().into_bytes(),
            started.as_millis().to_string().into_bytes(),
            spacing.as_millis().to_string().into_bytes(),
        ];
        let _: u8 = run(&self.con, &PACED_SCRIPT, self.address_key(address), args).await?;
        Ok(())
    }

    fn address_key(&self, address: std::net::IpAddr) -> String {
        let a = address.to_string();
        let n = fnv1a(a.as_bytes()) % u64::from(self.config.partitions);
        format!("{{{}:a{n}}}:next", self.crawl)
    }

    /// Tells `worker` that `partitions` of its got URLs: it leases from
    /// them at once instead of at its next poll.
    pub async fn wake(&self, worker: &str, partitions: &[u32]) -> Result<(), ClusterError> {
        let key = self.wake_key(worker);
        let mut push = redis::cmd("RPUSH");
        push.arg(&key).arg(partitions);
        let mut con = self.con.clone();
        let _: u64 = crate::retry::query_retrying(&mut con, &push).await?;
        // A worker gone for good does not leave its list behind.
        let mut expire = redis::cmd("PEXPIRE");
        expire.arg(&key).arg(60_000);
        let _: u64 = crate::retry::query_retrying(&mut con, &expire).await?;
        Ok(())
    }

    /// The partitions other workers woke for `worker` since it last asked.
    pub async fn woken(&self, worker: &str) -> Result<Vec<u32>, ClusterError> {
        let mut pop = redis::cmd("LPOP");
        pop.arg(self.wake_key(worker)).arg(4096);
        let woken: Option<Vec<u32>> =
            crate::retry::query_retrying(&mut self.con.clone(), &pop).await?;
        Ok(woken.unwrap_or_default())
    }

    fn wake_key(&self, worker: &str) -> String {
        format!("{{{}}}:wake:{worker}", self.crawl)
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

    /// Takes a page of `url`'s host's and registrable domain's budgets
    /// (see [`page_budget_spent`]); when one is spent, takes nothing and
    /// names it. Counted first and given back when spent, so workers
    /// taking pages at once never take more than the budget between them.
    pub async fn take_page(&self, url: &Url) -> Result<Option<&'static str>, ClusterError> {
        let c = &self.config;
        if c.max_per_host == 0 && c.max_per_domain == 0 {
            return Ok(None);
        }
        let (host_pages, domain_pages) = self.count_page(url, 1).await?;
        let spent = page_budget_spent(
            host_pages - 1,
            domain_pages - 1,
            c.max_per_host,
            c.max_per_domain,
        );
        if spent.is_some() {
            self.count_page(url, -1).await?;
        }
        Ok(spent)
    }

    /// Gives back a page [`take_page`](SharedFrontier::take_page) took:
    /// its request was not made after all.
    pub async fn give_back_page(&self, url: &Url) -> Result<(), ClusterError> {
        let c = &self.config;
        if c.max_per_host > 0 || c.max_per_domain > 0 {
            self.count_page(url, -1).await?;
        }
        Ok(())
    }

    /// Adds `delta` to the pages taken of `url`'s host and domain; the
    /// counts after.
    async fn count_page(&self, url: &Url, delta: i64) -> Result<(u64, u64), ClusterError> {
        let host = politeness_key(url);
        let domain = registrable_domain(url.host_str().unwrap_or(""));
        let p = self.partition_of_domain(domain);
        let args = vec![
            b"0".to_vec(),
            self.prefix(p).into_bytes(),
            delta.to_string().into_bytes(),
            host.as_bytes().to_vec(),
            domain.as_bytes().to_vec(),
        ];
        run(&self.con, &COUNT_PAGE_SCRIPT, self.key(p, "pages"), args).await
    }

    /// Records that the page of `url` was read through a redirect from
    /// another URL, in the partition of `url`'s domain.
    pub async fn mark_read(&self, url: &Url) -> Result<(), ClusterError> {
        let mut cmd = redis::cmd("SADD");
        cmd.arg(self.read_key(url))
            .arg(fnv1a(url.as_str().as_bytes()) >> 1);
        let _: u64 = crate::retry::query_retrying(&mut self.con.clone(), &cmd).await?;
        Ok(())
    }

    /// Whether the page of `url` was read through a redirect from another
    /// URL ([`mark_read`](SharedFrontier::mark_read)).
    pub async fn read_before(&self, url: &Url) -> Result<bool, ClusterError> {
        let mut cmd = redis::cmd("SISMEMBER");
        cmd.arg(self.read_key(url))
            .arg(fnv1a(url.as_str().as_bytes()) >> 1);
        Ok(crate::retry::query_retrying(&mut self.con.clone(), &cmd).await?)
    }

    fn read_key(&self, url: &Url) -> String {
        let domain = registrable_domain(url.host_str().unwrap_or(""));
        self.key(self.partition_of_domain(domain), "rd")
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
    let [now, first, trapped, rest @ ..] = reply else {
        return Err(bad());
    };
    let trapped: usize = redis::from_redis_value_ref(trapped).map_err(|_| bad())?;
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
            let (depth, sitemap) = match depth.strip_prefix(SITEMAP) {
                Some(level) => (0, Some(level.parse().map_err(|_| bad())?)),
                None => (depth.parse().map_err(|_| bad())?, None),
            };
            Ok(Leased {
                partition,
                id,
                key,
                url: url.to_string(),
                depth,
                sitemap,
                leased_at_ms,
                sent,
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Leases {
        urls,
        next_in,
        trapped,
    })
}
