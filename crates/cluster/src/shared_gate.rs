//! The duplicate gate shared by all workers: a log in Redis, a replica of
//! the gate on every worker.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nearcrawl_crawl::cpu::Stage;
use nearcrawl_crawl::remembered::Remembered;
use nearcrawl_crawl::run::SharedRules;
use nearcrawl_index::dust::DustRules;
use nearcrawl_index::{Decision, DedupConfig, Deduper, Prepared, Verdict};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;

use crate::error::ClusterError;
use crate::retry::{invoke_retrying, query_retrying};
use crate::snapshot::{self, Channel};

/// Compares two stream ids (`ms-seq`) in Lua.
const LESS: &str = r"
local function parse(id)
  local d = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, d - 1)), tonumber(string.sub(id, d + 1))
end
local function less(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  return am < bm or (am == bm and as < bs)
end
";

/// KEYS: the log, the applied hash, the trim point; ARGV: worker, its
/// replica's position. Refuses (TRIMMED) a replica behind the trim point
/// (entries after it may be gone); registers it.
const JOIN: &str = r"
local trimmed = redis.call('GET', KEYS[3])
if trimmed and less(ARGV[2], trimmed) then
  return redis.error_reply('TRIMMED the log was trimmed to ' .. trimmed)
end
local known = redis.call('HGET', KEYS[2], ARGV[1])
if not known or less(known, ARGV[2]) then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1
";

/// KEYS: the log, the applied hash, the trim point; ARGV: worker, its
/// flushed position. Trims the log to the least position of the
/// registered replicas (entries before it are gone; the one at it stays).
const TRIM: &str = r"
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local least = nil
for _, id in ipairs(redis.call('HVALS', KEYS[2])) do
  if not least or less(id, least) then least = id end
end
redis.call('SET', KEYS[3], least)
return redis.call('XTRIM', KEYS[1], 'MINID', least)
";

static JOIN_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(&format!("{LESS}\n{JOIN}")));
static TRIM_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(&format!("{LESS}\n{TRIM}")));

/// Log entries read per round trip.
const READ_BATCH: usize = 256;
/// The fields of a log entry: the caller's request id, the prepared page.
const REQUEST: &str = "q";
const DOC: &str = "p";
/// The page's URL, so every replica can name the original of a duplicate
/// judged on any worker.
const URL: &str = "u";
/// Requests remembered (in every replica, by log order) so that one
/// appended again is recognized: an append whose reply was lost is sent
/// again, and a page whose judging failed is judged again under the same
/// request id.
const WINDOW: usize = 1 << 16;

/// A document's place in the log: the Redis Stream id `ms-seq`, which is
/// also its document id in every replica ([`doc`](LogId::doc)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogId {
    pub ms: u64,
    pub seq: u64,
}

/// Bits of a document id that hold the stream id's sequence number: more
/// than Redis hands out in one millisecond; the other 42 hold milliseconds
/// until the year 2109.
const SEQ_BITS: u32 = 22;

impl LogId {
    /// The document id the replicas record the entry under.
    pub fn doc(self) -> u64 {
        self.ms << SEQ_BITS | self.seq
    }

    fn parse(s: &str) -> Option<LogId> {
        let (ms, seq) = s.split_once('-')?;
        let id = LogId {
            ms: ms.parse().ok()?,
            seq: seq.parse().ok()?,
        };
        (id.seq < 1 << SEQ_BITS && id.ms < 1 << (64 - SEQ_BITS)).then_some(id)
    }
}

impl fmt::Display for LogId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// Times a judging appends its page when the log lost the entry it
/// appended (a node that restarted).
const APPENDS: usize = 3;

/// One gate for many workers: judging appends to a log in the cluster and
/// applies the log, up to that entry, to this worker's replica.
///
/// Every replica applies every entry with the embedded gate's
/// [`judge_prepared`](Deduper::judge_prepared) and
/// [`record`](Deduper::record), in log order, so all of them reach the
/// same verdicts: those of one machine judging the pages in that order.
/// Judging is microseconds a page, so judging all of the crawl's pages on
/// every worker costs little beside fetching and extracting them.
pub struct SharedGate {
    replica: Deduper,
    /// The replica's database, which also holds the last entry applied and
    /// the remembered requests (see [`flush`](SharedGate::flush)).
    db: sled::Db,
    dir: PathBuf,
    urls: sled::Tree,
    con: ClusterConnection,
    /// The log's key: one hash slot, so one node orders every append.
    log: String,
    /// The last entry applied to the replica.
    applied: LogId,
    /// The last [`WINDOW`] requests applied, with their places and
    /// decisions, oldest first in `order`.
    requests: HashMap<u64, (LogId, Decision)>,
    order: VecDeque<u64>,
    /// Requests remembered, and forgotten, since the last flush.
    unsaved: Vec<(u64, LogId, Decision)>,
    forgotten: Vec<LogId>,
    /// The name the replica is registered under, once it joined.
    name: Option<String>,
    /// Earlier crawls whose documents the replica holds too.
    remembered: Remembered,
    /// The URL rules learned from the log's verdicts, in log order: the
    /// same in every replica (but for the skips, each worker's own).
    dust: SharedRules,
    /// The URLs this worker skipped by a URL rule, by rule id (queued
    /// again if the rule retires).
    skipped: sled::Tree,
}

impl fmt::Debug for SharedGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedGate")
            .field("log", &self.log)
            .field("applied", &self.applied)
            .field("indexed", &self.replica.indexed())
            .finish()
    }
}

/// Trees beside the replica's: the last entry applied, and the remembered
/// requests by place.
const META: &str = "shared_gate.meta";
const REQUESTS: &str = "shared_gate.requests";
/// New documents' URLs by document id.
const URLS: &str = "shared_gate.urls";
/// URLs a URL rule skipped here: rule id and URL, to the depth.
const SKIPPED: &str = "shared_gate.skipped";
/// The URL rules, as of the last entry applied (in `META`).
const URL_RULES: &[u8] = b"url_rules";
const APPLIED: &[u8] = b"applied";
const LOG: &[u8] = b"log";
/// The name this replica is registered under (see `join`).
const NAME: &[u8] = b"name";
/// The earlier crawls the replica holds (see `remember`).
const REMEMBERED: &[u8] = b"remembered";

impl SharedGate {
    /// Connects to the cluster (any of its nodes) and shares the gate of the
    /// crawl named `crawl`, with this worker's replica kept in `dir` (made
    /// if new): a replica flushed there before goes on from the last entry
    /// it applied.
    pub async fn open(
        nodes: &[&str],
        crawl: &str,
        dir: &Path,
        config: DedupConfig,
    ) -> Result<SharedGate, ClusterError> {
        let db = nearcrawl_index::open_sled(&sled::Config::new().path(dir)).map_err(gate_error)?;
        let replica = Deduper::open_in(&db, dir, config)?;
        let con = ClusterClient::new(nodes.to_vec())?
            .get_async_connection()
            .await?;
        let urls = db.open_tree(URLS).map_err(gate_error)?;
        let skipped = db.open_tree(SKIPPED).map_err(gate_error)?;
        let mut gate = SharedGate {
            replica,
            db,
            dir: dir.to_path_buf(),
            urls,
            con,
            log: format!("{{{crawl}:gate}}:log"),
            applied: LogId::default(),
            requests: HashMap::new(),
            order: VecDeque::new(),
            unsaved: Vec::new(),
            forgotten: Vec::new(),
            name: None,
            remembered: Remembered::default(),
            dust: SharedRules::default(),
            skipped,
        };
        gate.load()?;
        Ok(gate)
    }

    /// Holds the documents of earlier crawls too (see
    /// [`nearcrawl_crawl::remembered`]): imported into a new replica before
    /// it applies any entry, the same way on every worker, so the replicas
    /// keep agreeing; a replica copied from another's holds them already.
    /// Call before [`join`](SharedGate::join).
    pub fn remember_crawls(&mut self, remembered: Remembered) -> Result<(), ClusterError> {
        let meta = self.db.open_tree(META).map_err(gate_error)?;
        let recorded = meta.get(REMEMBERED).map_err(gate_error)?;
        let recorded = recorded.map(|v| String::from_utf8_lossy(&v).into_owned());
        let judged = self.applied != LogId::default();
        let imported = remembered
            .bring_into(&mut self.replica, recorded.as_deref(), judged)
            .map_err(|e| ClusterError::Config(e.to_string()))?;
        if let Some(names) = imported {
            meta.insert(REMEMBERED, names.as_bytes())
                .map_err(gate_error)?;
            self.db.flush().map_err(gate_error)?;
        }
        self.remembered = remembered;
        Ok(())
    }

    /// Makes the replica durable up to the last entry applied. After a
    /// crash the replica goes on from its last flush: the entries after it
    /// are applied again.
    pub fn flush(&mut self) -> Result<(), ClusterError> {
        // The replica first: a crash before the next lines leaves it ahead
        // of the entry named as applied, and applying those entries again
        // finds each one recorded under its own id (see `apply`).
        self.replica.flush()?;
        let meta = self.db.open_tree(META).map_err(gate_error)?;
        let requests = self.db.open_tree(REQUESTS).map_err(gate_error)?;
        // Removals last: a request remembered and forgotten since the last
        // flush is in both lists, and the later write to a key wins.
        let mut batch = sled::Batch::default();
        for (request, place, decision) in self.unsaved.drain(..) {
            let mut value = request.to_be_bytes().to_vec();
            value.extend_from_slice(&decision.to_bytes());
            batch.insert(&place_key(place)[..], value);
        }
        for place in self.forgotten.drain(..) {
            batch.remove(&place_key(place)[..]);
        }
        requests.apply_batch(batch).map_err(gate_error)?;
        // The rules and the entry they saw last, together.
        let mut batch = sled::Batch::default();
        batch.insert(URL_RULES, self.dust.read().unwrap().to_bytes());
        batch.insert(APPLIED, &place_key(self.applied)[..]);
        meta.apply_batch(batch).map_err(gate_error)?;
        self.db.flush().map_err(gate_error)?;
        Ok(())
    }

    /// Reads the last entry applied and the remembered requests.
    fn load(&mut self) -> Result<(), ClusterError> {
        let meta = self.db.open_tree(META).map_err(gate_error)?;
        // A replica is of one crawl's log: its document ids are that log's.
        match meta.get(LOG).map_err(gate_error)? {
            Some(log) if log != self.log.as_bytes() => {
                return Err(ClusterError::Corrupt(format!(
                    "this replica applies {}, not {}: give each crawl its own directory",
                    String::from_utf8_lossy(&log),
                    self.log
                )));
            }
            Some(_) => {}
            None => {
                meta.insert(LOG, self.log.as_bytes()).map_err(gate_error)?;
            }
        }
        if let Some(v) = meta.get(APPLIED).map_err(gate_error)? {
            self.applied = parse_place_key(&v)
                .ok_or_else(|| ClusterError::Corrupt("the last entry applied".into()))?;
        }
        if let Some(rules) = meta.get(URL_RULES).map_err(gate_error)? {
            *self.dust.write().unwrap() = DustRules::from_bytes(&rules)
                .ok_or_else(|| ClusterError::Corrupt("the URL rules".into()))?;
        }
        for kv in self.urls.iter() {
            let (_, url) = kv.map_err(gate_error)?;
            (self.dust.write().unwrap()).add_written(&String::from_utf8_lossy(&url));
        }
        let requests = self.db.open_tree(REQUESTS).map_err(gate_error)?;
        for kv in requests.iter() {
            let (k, v) = kv.map_err(gate_error)?;
            let bad = || ClusterError::Corrupt(format!("a remembered request {k:?}"));
            let place = parse_place_key(&k).ok_or_else(bad)?;
            let request = u64::from_be_bytes(v.get(..8).ok_or_else(bad)?.try_into().unwrap());
            let decision = Decision::from_bytes(&v[8..]).ok_or_else(bad)?;
            self.order.push_back(request);
            self.requests.insert(request, (place, decision));
        }
        Ok(())
    }

    /// Judges a page: appends it to the log and applies the log up to it.
    /// Returns its place and the decision (a duplicate names its original
    /// by [`LogId::doc`]).
    ///
    /// `request` identifies the page's judging across retries (a hash of
    /// its URL and content, say): a request already in the log, appended
    /// twice because a reply was lost or judged again after an error, is
    /// not judged again; the first one's place and decision are returned.
    pub async fn judge(
        &mut self,
        request: u64,
        url: &str,
        doc: &Prepared,
    ) -> Result<(LogId, Decision), ClusterError> {
        if let Some(&known) = self.requests.get(&request) {
            return Ok(known);
        }
        let mut lost = None;
        for _ in 0..APPENDS {
            let place = self.append(request, url, doc).await?;
            self.apply(Some(place), |_, _, _| {}).await?;
            if let Some(&known) = self.requests.get(&request) {
                return Ok(known);
            }
            // Acknowledged, and not in the log: the node holding it was
            // killed before its append-only file had the entry (under
            // `appendfsync everysec`, Redis may reply before it writes when
            // a sync is slow). Appended again, as a lost reply would be.
            tracing::warn!(request, %place, "the log lost an entry: appending it again");
            lost = Some(place);
        }
        Err(ClusterError::Corrupt(format!(
            "request {request:x} was not in the log at {}",
            lost.map_or_else(String::new, |p| p.to_string())
        )))
    }

    /// Applies every entry appended so far (by any worker) to the replica,
    /// calling `seen` with each judged one's place, request and decision;
    /// returns how many were judged.
    pub async fn catch_up(
        &mut self,
        seen: impl FnMut(LogId, u64, &Decision),
    ) -> Result<usize, ClusterError> {
        self.apply(None, seen).await
    }

    /// Registers this replica as `worker`'s in the crawl: the log is never
    /// trimmed past a registered replica's last flush (see
    /// [`trim`](SharedGate::trim)). Fails if the log was already trimmed
    /// past this replica's position (a worker joining late, or a worker
    /// that lost its replica), with [`ClusterError::Trimmed`]: it would miss
    /// entries. Such a worker starts from a copy of a running worker's
    /// replica ([`receive_snapshot`](SharedGate::receive_snapshot)).
    ///
    /// A replica is registered under the first worker name it joined with,
    /// kept in its directory, so a worker restarted under another name
    /// (the default name holds the process id) does not leave a stale
    /// registration holding the log back.
    pub async fn join(&mut self, worker: &str) -> Result<(), ClusterError> {
        let meta = self.db.open_tree(META).map_err(gate_error)?;
        let name = match meta.get(NAME).map_err(gate_error)? {
            Some(name) => String::from_utf8_lossy(&name).into_owned(),
            None => {
                meta.insert(NAME, worker.as_bytes()).map_err(gate_error)?;
                worker.to_string()
            }
        };
        let keys = [self.log.clone(), self.applied_key(), self.trimmed_key()];
        let args = [
            name.as_bytes().to_vec(),
            self.applied.to_string().into_bytes(),
        ];
        let joined: Result<u8, _> = invoke_retrying(&self.con, &JOIN_SCRIPT, &keys, &args).await;
        match joined {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some("TRIMMED") => Err(ClusterError::Trimmed {
                applied: self.applied.to_string(),
            }),
            Err(e) => Err(e.into()),
        }?;
        self.name = Some(name);
        Ok(())
    }

    /// Records this replica as flushed up to its last applied entry,
    /// and trims the log to the least such position over the registered
    /// replicas: every replica holds what is cut. Call after
    /// [`flush`](SharedGate::flush); does nothing before
    /// [`join`](SharedGate::join).
    pub async fn trim(&mut self) -> Result<(), ClusterError> {
        let Some(name) = &self.name else {
            return Ok(());
        };
        let keys = [self.log.clone(), self.applied_key(), self.trimmed_key()];
        let args = [
            name.as_bytes().to_vec(),
            self.applied.to_string().into_bytes(),
        ];
        let _: u64 = invoke_retrying(&self.con, &TRIM_SCRIPT, &keys, &args).await?;
        Ok(())
    }

    /// The name this replica is registered under (see
    /// [`join`](SharedGate::join)), if it joined before.
    pub fn registered_name(&self) -> Result<Option<String>, ClusterError> {
        let meta = self.db.open_tree(META).map_err(gate_error)?;
        let name = meta.get(NAME).map_err(gate_error)?;
        Ok(name.map(|n| String::from_utf8_lossy(&n).into_owned()))
    }

    /// A worker that asked for a copy of a replica (see
    /// [`receive_snapshot`](SharedGate::receive_snapshot)), if one did.
    pub async fn snapshot_wanted(&self) -> Result<Option<String>, ClusterError> {
        self.channel().next_ask().await
    }

    /// Writes a copy of this replica, flushed, to the file `to` for
    /// `joiner` and registers `joiner` at its position, so the log is kept
    /// for it from there; then [`send_snapshot`] streams the file.
    pub async fn dump_for(&mut self, joiner: &str, to: &Path) -> Result<LogId, ClusterError> {
        self.flush()?;
        snapshot::dump(&self.db, &self.dir.join(nearcrawl_index::RECORDS_FILE), to)?;
        let mut register = redis::cmd("HSET");
        register
            .arg(self.applied_key())
            .arg(joiner)
            .arg(self.applied.to_string());
        let _: u64 = query_retrying(&mut self.con, &register).await?;
        Ok(self.applied)
    }

    /// Where snapshots of this crawl's replicas pass.
    fn channel(&self) -> Channel {
        Channel {
            con: self.con.clone(),
            base: self.log.trim_end_matches(":log").to_string(),
        }
    }

    /// A future that streams the snapshot file `file` (from
    /// [`dump_for`](SharedGate::dump_for)) to `joiner` through the cluster,
    /// without this gate (it may judge meanwhile).
    pub fn send_snapshot(
        &self,
        joiner: String,
        file: PathBuf,
    ) -> impl std::future::Future<Output = Result<(), ClusterError>> + Send + 'static {
        let channel = self.channel();
        async move { channel.send(&joiner, &file).await }
    }

    /// Makes the replica directory `dir` a copy of a running worker's
    /// replica, for a worker that cannot apply the log from where its own
    /// replica stands (it was trimmed: [`ClusterError::Trimmed`]). Asks
    /// the crawl's running workers for one (one of them sends it at its
    /// next checkpoint), waits up to `wait`, then replaces `dir` with it.
    /// The copy is registered under `name`.
    pub async fn receive_snapshot(
        nodes: &[&str],
        crawl: &str,
        dir: &Path,
        name: &str,
        wait: Duration,
    ) -> Result<(), ClusterError> {
        let con = ClusterClient::new(nodes.to_vec())?
            .get_async_connection()
            .await?;
        let channel = Channel {
            con,
            base: format!("{{{crawl}:gate}}"),
        };
        let file = snapshot::scratch(dir, "received");
        channel.ask(name).await?;
        channel.receive(name, &file, wait).await?;
        let fresh = snapshot::scratch(dir, "restoring");
        let _ = std::fs::remove_dir_all(&fresh);
        snapshot::restore(&file, &fresh, nearcrawl_index::RECORDS_FILE, |db| {
            // The URLs the sender skipped are the sender's to queue again.
            db.drop_tree(SKIPPED).map_err(gate_error)?;
            set_name(db, name)
        })?;
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::rename(&fresh, dir)?;
        std::fs::remove_file(&file)?;
        Ok(())
    }

    fn applied_key(&self) -> String {
        format!("{}:applied", self.log.trim_end_matches(":log"))
    }

    fn trimmed_key(&self) -> String {
        format!("{}:trimmed", self.log.trim_end_matches(":log"))
    }

    /// The URL of the new page with document id `doc` (judged on any
    /// worker), once this replica has applied it.
    pub fn url_of(&self, doc: u64) -> Result<Option<String>, ClusterError> {
        if Remembered::split(doc).is_some() {
            return Ok(self.remembered.url_of(doc));
        }
        let url = self.urls.get(doc.to_be_bytes()).map_err(gate_error)?;
        Ok(url.map(|u| String::from_utf8_lossy(&u).into_owned()))
    }

    /// The last entry applied to this replica.
    pub fn applied(&self) -> LogId {
        self.applied
    }

    /// This worker's replica of the gate.
    pub fn replica(&self) -> &Deduper {
        &self.replica
    }

    /// `XADD`, retried while the cluster recovers; its place.
    async fn append(
        &mut self,
        request: u64,
        url: &str,
        doc: &Prepared,
    ) -> Result<LogId, ClusterError> {
        let mut xadd = redis::cmd("XADD");
        xadd.arg(&self.log)
            .arg("*")
            .arg(REQUEST)
            .arg(&request.to_be_bytes()[..])
            .arg(DOC)
            .arg(doc.to_bytes())
            .arg(URL)
            .arg(url);
        let id: String = query_retrying(&mut self.con, &xadd).await?;
        LogId::parse(&id).ok_or_else(|| ClusterError::Corrupt(format!("stream id {id:?}")))
    }

    /// Applies the entries after the last applied one, up to `until` (or
    /// all), in order; a request seen before is skipped.
    async fn apply(
        &mut self,
        until: Option<LogId>,
        mut seen: impl FnMut(LogId, u64, &Decision),
    ) -> Result<usize, ClusterError> {
        let end = until.map_or_else(|| "+".to_string(), |id| id.to_string());
        let mut judged = 0;
        loop {
            if until.is_some_and(|u| self.applied >= u) {
                return Ok(judged);
            }
            let mut xrange = redis::cmd("XRANGE");
            xrange
                .arg(&self.log)
                .arg(format!("({}", self.applied))
                .arg(&end)
                .arg("COUNT")
                .arg(READ_BATCH);
            let entries: Vec<(String, Vec<Vec<u8>>)> =
                query_retrying(&mut self.con, &xrange).await?;
            if entries.is_empty() {
                return Ok(judged);
            }
            for (id, fields) in entries {
                let (place, request, doc, url) = decode(&id, &fields)?;
                self.applied = place;
                if self.requests.contains_key(&request) {
                    continue;
                }
                // A page's own earlier version in a remembered crawl is
                // not its original (the recrawl compares with it).
                let (remembered, page) = (&self.remembered, String::from_utf8_lossy(&url));
                let judge = || {
                    self.replica.judge_prepared(doc, |d| {
                        Remembered::split(d).is_none()
                            || remembered.url_of(d).is_some_and(|u| u != page)
                    })
                };
                let mut judgement = nearcrawl_crawl::cpu::time(Stage::Gate, judge)?;
                if judgement.decision.verdict == (Verdict::Exact { of: place.doc() }) {
                    // Recorded under its own id: applied before a crash that
                    // came between the replica's flush and the note of it.
                    judgement.decision.verdict = Verdict::New;
                }
                self.replica.record(place.doc(), &judgement)?;
                if judgement.decision.verdict == Verdict::New && !url.is_empty() {
                    self.urls
                        .insert(place.doc().to_be_bytes(), &url[..])
                        .map_err(gate_error)?;
                }
                self.observe(&url, &judgement.decision)?;
                self.remember(request, place, judgement.decision);
                seen(place, request, &judgement.decision);
                judged += 1;
            }
        }
    }

    /// What a verdict tells the URL rules (see [`nearcrawl_index::dust`]).
    fn observe(&mut self, url: &[u8], decision: &Decision) -> Result<(), ClusterError> {
        let url = String::from_utf8_lossy(url);
        if url.is_empty() {
            return Ok(());
        }
        match decision.verdict.duplicate_of() {
            None => {
                self.dust.write().unwrap().observe_new(&url);
            }
            // An earlier crawl's original is not this site's URL pair.
            Some((of, ..)) if Remembered::split(of).is_none() => {
                if let Some(original) = self.url_of(of)? {
                    (self.dust.write().unwrap()).observe_duplicate(&url, &original);
                }
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// The URL rules (see [`SharedRules`]).
    pub fn url_rules(&self) -> SharedRules {
        self.dust.clone()
    }

    /// Records that this worker skipped `url`, at `depth`, by URL rule
    /// `rule`.
    pub fn note_skipped(&mut self, rule: usize, url: &str, depth: u32) -> Result<(), ClusterError> {
        self.dust.write().unwrap().note_skipped(rule);
        let key = skipped_key(rule, url);
        self.skipped
            .insert(key, &depth.to_be_bytes())
            .map_err(gate_error)?;
        Ok(())
    }

    /// The URLs this worker skipped by rules retired since the last call
    /// (`all`: by every retired rule, at a start), to be queued again; a
    /// URL another proven rule still skips moves to it. Their records stay
    /// until [`forget_requeued`](SharedGate::forget_requeued), once they
    /// are queued: a crash in between queues them again at the next start
    /// (once, the frontier's second seen hash says).
    pub fn take_requeued(&mut self, all: bool) -> Result<Vec<Requeued>, ClusterError> {
        let mut again = Vec::new();
        let rules = self.dust.clone();
        let mut rules = rules.write().unwrap();
        for rule in rules.retired(all) {
            let prefix = skipped_key(rule, "");
            for kv in self.skipped.scan_prefix(&prefix) {
                let (k, v) = kv.map_err(gate_error)?;
                let url = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
                let depth = v
                    .get(..4)
                    .map_or(0, |d| u32::from_be_bytes(d.try_into().unwrap()));
                match rules.still_skipped_by(&url) {
                    Some(still) => {
                        self.skipped
                            .insert(skipped_key(still, &url), &v)
                            .map_err(gate_error)?;
                        self.skipped.remove(&k).map_err(gate_error)?;
                    }
                    None => again.push(Requeued {
                        key: k.to_vec(),
                        url,
                        depth,
                    }),
                }
            }
        }
        Ok(again)
    }

    /// Forgets the records of URLs queued again.
    pub fn forget_requeued(&mut self, queued: &[Requeued]) -> Result<(), ClusterError> {
        for r in queued {
            self.skipped.remove(&r.key).map_err(gate_error)?;
        }
        Ok(())
    }

    fn remember(&mut self, request: u64, place: LogId, decision: Decision) {
        if self.order.len() == WINDOW {
            if let Some((old, _)) = self
                .order
                .pop_front()
                .and_then(|old| self.requests.remove(&old))
            {
                self.forgotten.push(old);
            }
        }
        self.order.push_back(request);
        self.requests.insert(request, (place, decision));
        self.unsaved.push((request, place, decision));
    }
}

/// Registers the replica whose database is `db` under `name`.
fn set_name(db: &sled::Db, name: &str) -> Result<(), ClusterError> {
    let meta = db.open_tree(META).map_err(gate_error)?;
    meta.insert(NAME, name.as_bytes()).map_err(gate_error)?;
    Ok(())
}

fn gate_error(e: sled::Error) -> ClusterError {
    ClusterError::Gate(e.into())
}

/// A place as a key that sorts as places do.
/// A URL a retired rule skipped here, to be queued again.
#[derive(Debug)]
pub struct Requeued {
    /// Its record.
    key: Vec<u8>,
    pub url: String,
    pub depth: u32,
}

fn skipped_key(rule: usize, url: &str) -> Vec<u8> {
    let mut k = (rule as u64).to_be_bytes().to_vec();
    k.extend_from_slice(url.as_bytes());
    k
}

fn place_key(place: LogId) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&place.ms.to_be_bytes());
    k[8..].copy_from_slice(&place.seq.to_be_bytes());
    k
}

fn parse_place_key(k: &[u8]) -> Option<LogId> {
    Some(LogId {
        ms: u64::from_be_bytes(k.get(..8)?.try_into().ok()?),
        seq: u64::from_be_bytes(k.get(8..16)?.try_into().ok()?),
    })
}

/// A log entry: its place, its request, the page it holds and its URL
/// (empty in entries of versions that did not write it).
fn decode(id: &str, fields: &[Vec<u8>]) -> Result<(LogId, u64, Prepared, Vec<u8>), ClusterError> {
    let bad = || ClusterError::Corrupt(format!("log entry {id}"));
    let place = LogId::parse(id).ok_or_else(bad)?;
    let (q, request, p, doc, url) = match fields {
        [q, request, p, doc] => (q, request, p, doc, Vec::new()),
        [q, request, p, doc, u, url] if u == URL.as_bytes() => (q, request, p, doc, url.clone()),
        _ => return Err(bad()),
    };
    if q != REQUEST.as_bytes() || p != DOC.as_bytes() {
        return Err(bad());
    }
    Ok((
        place,
        u64::from_be_bytes(request.as_slice().try_into().map_err(|_| bad())?),
        Prepared::from_bytes(doc).ok_or_else(bad)?,
        url,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ids_order_as_documents_and_parse_back() {
        let a = LogId::parse("1795620669872-0").unwrap();
        let b = LogId::parse("1795620669872-3").unwrap();
        let c = LogId::parse("1795620669873-0").unwrap();
        assert!(a < b && b < c);
        assert!(a.doc() < b.doc() && b.doc() < c.doc());
        assert_eq!(LogId::parse(&b.to_string()), Some(b));
        for bad in ["", "12", "x-1", "1-", "1-4194304"] {
            assert_eq!(LogId::parse(bad), None, "{bad:?}");
        }
    }
}
