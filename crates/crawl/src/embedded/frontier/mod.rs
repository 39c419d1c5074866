//! The frontier: URLs waiting to be fetched, URLs being fetched, and every
//! URL ever queued (as a 64-bit fingerprint).
//!
//! Per-host queues, lowest depth first within a host (breadth-first; in the
//! order found within a depth), and hosts served in turn so one large host
//! cannot starve the others. A host is only handed out when its politeness
//! allows a request now (asked of [`Turns`], which the fetcher answers):
//! hosts that must wait sleep in a time-ordered set, and a host at its
//! in-flight limit leaves the turn until a request finishes. So workers are
//! not parked on hosts that are not ready while others are. A URL that asks
//! its host nothing (its robots.txt forbids it) waits for no turn, and a
//! host with nothing queued is out of the turn: the crawl never waits out a
//! delay with nothing to ask after it.
//!
//! Where the bytes are: the URLs themselves are in an append-only file
//! (`state/queue.N`), as records "queued" (sequence number, depth, URL) and
//! "done" (sequence number); memory holds, per host with URLs queued or in
//! flight, its turn and the file offsets of its queued URLs (8 bytes each).
//! Records of done URLs are dropped by rewriting the live ones into the
//! next file at a checkpoint, once they are most of it. The seen set is an
//! append-only file of fingerprints (`state/seen`, 8 bytes per URL), held
//! in memory as a sorted array (8 bytes per URL). Neither is in the store:
//! as store keys they churned it, and its memory grew to ~200 MB at a
//! million URLs (see [`crate::append_file`], which also says how the files
//! stay exact through a crash).
//!
//! [`Frontier::pop`] moves a URL to the in-flight set (in memory); its
//! "done" record is written with its page's outcome. At open every queued
//! record without a "done" record is queued again: a crash loses no URL.

mod records;
mod seen;
mod upgrade;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

use crate::append_file::{AppendFile, Tail};
use crate::embedded::store::{Store, StoreError, Writes, be_u64, io_error, key};
use records::{Record, copy_queued, encode_done, encode_queued, read_queued, scan};
pub use seen::SeenSet;
use seen::seen_fp;

use crate::embedded::store::tag::{FILES, KNOWN};

/// The files' tags in the outbox's tails.
const QUEUE_FILE: u8 = b'q';
const SEEN_FILE: u8 = b'u';

/// A queue file is rewritten at a checkpoint when its records of done
/// URLs outweigh the live ones and are at least this many bytes (or when
/// nothing is live).
const COMPACT_MIN: u64 = 1 << 20;

/// A host this close to its turn is handed out: the fetcher waits the rest.
pub(crate) const SLACK: Duration = Duration::from_millis(2);

/// What the frontier asks about a host's politeness; the fetcher knows.
pub trait Turns {
    /// When a request to `url`'s host could start, were it asked now.
    fn ready_at(&self, url: &Url) -> Instant;
    /// Least time between the starts of two requests to `url`'s host.
    fn gap(&self, url: &Url) -> Duration;
    /// Whether taking `url` asks its host anything. A URL its robots.txt
    /// forbids is not requested, so it waits for no turn: it would
    /// otherwise hold its host, and at the end the whole crawl, for a
    /// delay with nothing asked.
    fn needs_turn(&self, _url: &Url) -> bool {
        true
    }
}

/// Every host always ready (tests, and tools that do not fetch).
#[derive(Debug, Clone, Copy)]
pub struct Unpaced;

impl Turns for Unpaced {
    fn ready_at(&self, _: &Url) -> Instant {
        Instant::now()
    }
    fn gap(&self, _: &Url) -> Duration {
        Duration::ZERO
    }
}

/// What [`Frontier::pop`] found.
#[derive(Debug)]
pub enum Popped {
    Entry(Entry),
    /// No host may be asked now; the first one may at this instant.
    WaitUntil(Instant),
    /// No queued URL is waiting for a turn (some may be in flight).
    Empty,
}

/// What [`Frontier::push`] did with a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Pushed {
    Queued,
    /// Queued once already.
    Seen,
    /// A new host, and `max_hosts` are admitted already.
    HostLimit,
}

/// Where a host with queued URLs is in the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// No URL queued.
    Idle,
    Ready,
    Waiting,
    /// At its in-flight limit: back in turn when a request finishes.
    Full,
}

#[derive(Debug)]
struct HostTurn {
    in_flight: u32,
    place: Place,
    /// Its queued URLs as [`Slot`]s, lowest depth first.
    queue: VecDeque<Slot>,
}

impl HostTurn {
    fn idle() -> HostTurn {
        HostTurn {
            in_flight: 0,
            place: Place::Idle,
            queue: VecDeque::new(),
        }
    }
}

/// A queued URL in memory: its depth (capped at 255: it only orders) in
/// the top byte, the offset of its record in the queue file below.
type Slot = u64;

fn slot(depth: u32, offset: u64) -> Slot {
    (u64::from(depth.min(255)) << 56) | offset
}

fn slot_depth(s: Slot) -> u64 {
    s >> 56
}

fn slot_offset(s: Slot) -> u64 {
    s & ((1 << 56) - 1)
}

/// Inserts `s` after the slots of lower or equal depth (`first`: before
/// those of equal depth), keeping the queue ordered by depth.
fn insert_slot(queue: &mut VecDeque<Slot>, s: Slot, first: bool) {
    let d = slot_depth(s);
    let at = if first {
        queue.partition_point(|&q| slot_depth(q) < d)
    } else {
        queue.partition_point(|&q| slot_depth(q) <= d)
    };
    queue.insert(at, s);
}

/// A popped URL not yet done: where its record is.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    slot: Slot,
    len: u32,
}

/// A URL to fetch and how many links it is from a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub url: Url,
    pub depth: u32,
    /// Its record's sequence number in the queue file.
    seq: u64,
}

impl Entry {
    /// Records, in `adds`, that the entry is done: it is not queued again.
    pub fn finish(&self, adds: &mut Additions) {
        encode_done(&mut adds.records, self.seq);
        adds.done.push(self.seq);
    }
}

/// A host's name, shared by the host map and the turn (one allocation per
/// host, however often it waits and is ready again).
type Host = Arc<str>;

/// The queue a URL joins: one per politeness key, as the fetcher keeps
/// turns (a host, with its port when not the scheme's default).
fn host_of(url: &Url) -> String {
    nearcrawl_fetch::politeness_key(url)
}

#[derive(Debug)]
pub struct Frontier {
    store: Arc<dyn Store>,
    dir: PathBuf,
    queue: AppendFile,
    /// The queue file's number: `queue.N` (a rewrite makes the next).
    queue_gen: u64,
    /// The file a rewrite replaced, deleted once the store names the new one.
    stale: Option<PathBuf>,
    /// Bytes of the queue file's records of URLs not done.
    live_bytes: u64,
    seen_file: AppendFile,
    seen: SeenSet,
    /// Hosts that may be asked now, in turn.
    ready: VecDeque<Host>,
    /// Hosts that may be asked at the instant (the u64 breaks ties).
    waiting: BTreeMap<(Instant, u64), Host>,
    hosts: HashMap<Host, HostTurn>,
    in_flight: HashMap<u64, InFlight>,
    per_host_in_flight: u32,
    max_hosts: u64,
    known_hosts: u64,
    seq: u64,
    queued: usize,
}

/// What a group of pages adds to the frontier, gathered before it is
/// committed: see [`Frontier::write`] and [`Frontier::added`].
#[derive(Debug, Default)]
pub struct Additions {
    urls: HashSet<String>,
    new_hosts: HashSet<String>,
    /// Queue records to append, in the order made.
    records: Vec<u8>,
    /// Host, slot depth, offset in `records` and length of each "queued".
    pushes: Vec<(String, u32, u64, u32)>,
    done: Vec<u64>,
    /// Fingerprints to add to the seen set.
    seen: Vec<u64>,
    /// Where `records` went in the queue file, once written.
    written_at: Option<u64>,
}

impl Additions {
    fn enqueue(&mut self, host: String, depth: u32, seq: u64, url: &str) {
        let at = self.records.len() as u64;
        let len = encode_queued(&mut self.records, seq, depth, url);
        self.pushes.push((host, depth, at, len));
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.seen.is_empty()
    }
}

impl Frontier {
    /// Opens the frontier kept in `store` and `dir` (a new one if there is
    /// none), resuming what is there: URLs that were in flight when the
    /// last run ended are queued again. For tools; a crawl opens it through
    /// [`crate::embedded::state::State`], which also hands it the outbox's tails.
    pub fn open_in(store: Arc<dyn Store>, dir: &Path) -> Result<Frontier, StoreError> {
        Frontier::resume(store, dir, &[])
    }

    /// [`open_in`](Frontier::open_in), with the bytes appended to the files
    /// since they were last saved (from the outbox).
    pub(crate) fn resume(
        store: Arc<dyn Store>,
        dir: &Path,
        tails: &[Tail],
    ) -> Result<Frontier, StoreError> {
        let queue_meta = store.get(&key(FILES, b"queue"))?;
        let (queue_gen, queue_len) = match queue_meta.as_deref() {
            None => (0, 0),
            Some(v) if v.len() == 16 => (be_u64(&v[..8]), be_u64(&v[8..])),
            Some(v) => return Err(StoreError::Corrupt(format!("the queue's length {v:?}"))),
        };
        let seen_len = store.get(&key(FILES, b"seen"))?.map_or(0, |v| be_u64(&v));
        let of = |tag| tails.iter().filter(move |t| t.file == tag);
        let queue_path = dir.join(format!("queue.{queue_gen}"));
        let queue = AppendFile::open(&queue_path, queue_len, of(QUEUE_FILE)).map_err(io_error)?;
        let seen_file =
            AppendFile::open(&dir.join("seen"), seen_len, of(SEEN_FILE)).map_err(io_error)?;
        let known_hosts = store.scan_prefix(&[KNOWN]).count() as u64;
        let mut f = Frontier {
            store,
            dir: dir.to_path_buf(),
            queue,
            queue_gen,
            stale: None,
            live_bytes: 0,
            seen_file,
            seen: SeenSet::default(),
            ready: VecDeque::new(),
            waiting: BTreeMap::new(),
            hosts: HashMap::new(),
            in_flight: HashMap::new(),
            per_host_in_flight: u32::MAX,
            max_hosts: u64::MAX,
            known_hosts,
            seq: 0,
            queued: 0,
        };
        f.load_seen()?;
        f.load_queue()?;
        f.migrate_store_keys()?;
        f.remove_stale_files();
        Ok(f)
    }

    /// Reads the fingerprints straight into their array (the file's bytes
    /// whole beside it would double the memory at open).
    fn load_seen(&mut self) -> Result<(), StoreError> {
        let mut fps = Vec::with_capacity((self.seen_file.len() / 8) as usize);
        let mut reader = self.seen_file.reader();
        let mut fp = [0; 8];
        loop {
            match reader.read_exact(&mut fp) {
                Ok(()) => fps.push(u64::from_be_bytes(fp)),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(io_error(e)),
            }
        }
        self.seen.load(fps);
        Ok(())
    }

    /// Queues every "queued" record of the queue file with no "done"
    /// record: two passes, the first to find the done ones.
    fn load_queue(&mut self) -> Result<(), StoreError> {
        let mut done = HashSet::new();
        let mut max_seq = None;
        scan(&self.queue, |_, record| match record {
            Record::Done(seq) => {
                done.insert(seq);
            }
            Record::Queued(q) => max_seq = max_seq.max(Some(q.seq)),
        })?;
        self.seq = max_seq.map_or(0, |s| s + 1);
        // Into the host map at once, so only the slots are kept, not the
        // URLs; then every host joins the turn.
        let (hosts, mut live_bytes, mut queued) = (&mut self.hosts, 0, 0);
        scan(&self.queue, |offset, record| {
            let Record::Queued(q) = record else { return };
            if done.contains(&q.seq) {
                return;
            }
            if let Ok(url) = Url::parse(&q.url) {
                live_bytes += u64::from(q.len);
                queued += 1;
                let host = host_of(&url);
                let turn = match hosts.get_mut(host.as_str()) {
                    Some(turn) => turn,
                    None => hosts.entry(host.into()).or_insert_with(HostTurn::idle),
                };
                insert_slot(&mut turn.queue, slot(q.depth, offset), false);
            }
        })?;
        self.live_bytes = live_bytes;
        self.queued = queued;
        let hosts: Vec<Host> = self.hosts.keys().cloned().collect();
        for host in hosts {
            self.join_turn(host, false);
        }
        Ok(())
    }

    /// Deletes queue files other than the current one (left by a rewrite).
    fn remove_stale_files(&mut self) {
        let current = format!("queue.{}", self.queue_gen);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("queue.") && name != current {
                let _ = std::fs::remove_file(e.path());
            }
        }
        self.stale = None;
    }

    /// Requests in flight per host at most, and hosts admitted at most
    /// (over every run).
    pub fn set_limits(&mut self, per_host_in_flight: u32, max_hosts: u64) {
        self.per_host_in_flight = per_host_in_flight.max(1);
        self.max_hosts = max_hosts;
    }

    /// Puts `s` in `host`'s queue (`first`: ahead of its depth), and the
    /// host in turn.
    fn enqueue(&mut self, host: &str, s: Slot, first: bool) {
        let host = self.intern(host);
        let turn = self.hosts.get_mut(&host).expect("interned");
        insert_slot(&mut turn.queue, s, first);
        self.queued += 1;
        self.join_turn(host, false);
    }

    /// `host`'s shared name, its turn made (idle) if it had none.
    fn intern(&mut self, host: &str) -> Host {
        if let Some((name, _)) = self.hosts.get_key_value(host) {
            return name.clone();
        }
        let name: Host = host.into();
        self.hosts.insert(name.clone(), HostTurn::idle());
        name
    }

    /// Joins the turn at the back, or with `first` at the front.
    fn join_turn(&mut self, host: Host, first: bool) {
        let Some(turn) = self.hosts.get_mut(&host) else {
            return;
        };
        if turn.place == Place::Idle {
            turn.place = Place::Ready;
            if first {
                self.ready.push_front(host);
            } else {
                self.ready.push_back(host);
            }
        }
    }

    /// `host` may be asked at `at`: now (the back of the turn) or later.
    fn wait(&mut self, host: Host, at: Instant, now: Instant) {
        let Some(turn) = self.hosts.get_mut(&host) else {
            return;
        };
        if at <= now {
            turn.place = Place::Ready;
            self.ready.push_back(host);
        } else {
            turn.place = Place::Waiting;
            self.seq_waiting(host, at);
        }
    }

    fn seq_waiting(&mut self, host: Host, at: Instant) {
        let tie = self.waiting.len() as u64;
        let mut key = (at, tie);
        while self.waiting.contains_key(&key) {
            key.1 += 1;
        }
        self.waiting.insert(key, host);
    }

    /// Hosts whose wait is over join the back of the turn.
    fn wake(&mut self, now: Instant) {
        while let Some(entry) = self.waiting.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let host = entry.remove();
            if let Some(turn) = self.hosts.get_mut(&host) {
                turn.place = Place::Ready;
            }
            self.ready.push_back(host);
        }
    }

    /// A host with nothing queued and nothing in flight is forgotten.
    fn settle_idle(&mut self, host: &str) {
        if let Some(turn) = self.hosts.get_mut(host) {
            turn.place = Place::Idle;
            if turn.in_flight == 0 {
                self.hosts.remove(host);
            }
        }
    }

    /// Whether `host` was ever admitted (or is in `adds`).
    fn is_known(&self, host: &str, adds: &Additions) -> Result<bool, StoreError> {
        Ok(self.hosts.contains_key(host)
            || adds.new_hosts.contains(host)
            || self.store.contains(&key(KNOWN, host.as_bytes()))?)
    }

    /// Queues `url` at `depth`, in `adds` (and a new host's record in
    /// `batch`), unless it was ever queued before (or is in `adds`). The
    /// caller canonicalizes and checks scope first, then commits `adds`:
    /// [`write`](Frontier::write), the batch, [`added`](Frontier::added).
    pub fn push(
        &mut self,
        batch: &mut Writes,
        adds: &mut Additions,
        url: &Url,
        depth: u32,
    ) -> Result<Pushed, StoreError> {
        if self.was_seen(url) {
            return Ok(Pushed::Seen);
        }
        self.queue_url(batch, adds, url, depth, true)
    }

    /// Queues `url` at `depth` again although it was seen (a URL a URL
    /// rule skipped, whose rule retired), in `adds`; its host was admitted
    /// when it was first queued.
    pub fn requeue(
        &mut self,
        batch: &mut Writes,
        adds: &mut Additions,
        url: &Url,
        depth: u32,
    ) -> Result<Pushed, StoreError> {
        self.queue_url(batch, adds, url, depth, false)
    }

    /// Queues `url` unless `adds` holds it. `first`: it was never queued
    /// before, so it becomes seen and a new host counts against
    /// `max_hosts`.
    fn queue_url(
        &mut self,
        batch: &mut Writes,
        adds: &mut Additions,
        url: &Url,
        depth: u32,
        first: bool,
    ) -> Result<Pushed, StoreError> {
        if adds.urls.contains(url.as_str()) {
            return Ok(Pushed::Seen);
        }
        let host = host_of(url);
        if !self.is_known(&host, adds)? {
            let room = self.known_hosts + (adds.new_hosts.len() as u64) < self.max_hosts;
            if first && !room {
                return Ok(Pushed::HostLimit);
            }
            batch.insert(key(KNOWN, host.as_bytes()), []);
            adds.new_hosts.insert(host.clone());
        }
        adds.urls.insert(url.as_str().to_string());
        if first {
            adds.seen.push(seen_fp(url));
        }
        adds.enqueue(host, depth, self.seq, url.as_str());
        self.seq += 1;
        Ok(Pushed::Queued)
    }

    /// Records `url` as seen without queueing it (a redirect target that
    /// was just fetched), in `adds`.
    pub fn mark_seen(&self, adds: &mut Additions, url: &Url) {
        // Most pages were not redirected: their URL is seen already.
        if !self.was_seen(url) {
            adds.seen.push(seen_fp(url));
        }
    }

    /// Appends `adds` to the frontier's files (not durably); the bytes
    /// appended, for the outbox. The batch that goes with `adds` must be
    /// applied next, then [`added`](Frontier::added) called.
    pub(crate) fn write(&mut self, adds: &mut Additions) -> io::Result<Vec<Tail>> {
        let mut tails = Vec::new();
        if !adds.records.is_empty() {
            let at = self.queue.append(&adds.records)?;
            adds.written_at = Some(at);
            tails.push(Tail {
                file: QUEUE_FILE,
                at,
                bytes: std::mem::take(&mut adds.records),
            });
        }
        if !adds.seen.is_empty() {
            let bytes: Vec<u8> = adds.seen.iter().flat_map(|fp| fp.to_be_bytes()).collect();
            match self.seen_file.append(&bytes) {
                Ok(at) => tails.push(Tail {
                    file: SEEN_FILE,
                    at,
                    bytes,
                }),
                Err(e) => {
                    self.unwrite(&tails)?;
                    return Err(e);
                }
            }
        }
        Ok(tails)
    }

    /// Undoes a [`write`](Frontier::write) whose group failed, so the
    /// files hold only what committed groups wrote (the outbox's tails
    /// must follow one another at the next open).
    pub(crate) fn unwrite(&mut self, tails: &[Tail]) -> io::Result<()> {
        for t in tails {
            match t.file {
                QUEUE_FILE => self.queue.cut_to(t.at)?,
                _ => self.seen_file.cut_to(t.at)?,
            }
        }
        Ok(())
    }

    /// Takes note of `adds`, written and with its batch applied.
    ///
    /// A host met for the first time goes to the front of the turn: its
    /// first request (robots.txt, then a page) starts the chain of delays
    /// its pages must wait through, so while the crawl is busy, every turn
    /// it waits behind hosts already under way makes the whole host finish
    /// that much later. Each new host is served first once; after that it
    /// takes its turns like the others.
    pub fn added(&mut self, adds: Additions) {
        self.seen.insert_all(&adds.seen);
        self.known_hosts += adds.new_hosts.len() as u64;
        let base = adds.written_at.unwrap_or(0);
        for (host, depth, at, len) in adds.pushes {
            self.live_bytes += u64::from(len);
            let first = adds.new_hosts.contains(&host);
            if first {
                // Joins at the front, before `enqueue` would join it at
                // the back.
                let name = self.intern(&host);
                self.join_turn(name, true);
            }
            self.enqueue(&host, slot(depth, base + at), false);
        }
        for seq in adds.done {
            if let Some(f) = self.in_flight.remove(&seq) {
                self.live_bytes = self.live_bytes.saturating_sub(u64::from(f.len));
            }
        }
    }

    /// Writes, applies and takes note of `batch` and `adds` at once, with
    /// no outbox (tools and tests: a crash may lose them).
    pub fn apply(&mut self, batch: Writes, mut adds: Additions) -> Result<(), StoreError> {
        self.write(&mut adds).map_err(io_error)?;
        self.store.apply(batch)?;
        self.added(adds);
        Ok(())
    }

    /// Queues and applies at once: true if `url` was new (tests).
    #[cfg(test)]
    pub fn push_now(&mut self, url: &Url, depth: u32) -> Result<bool, StoreError> {
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        let pushed = self.push(&mut writes, &mut adds, url, depth)?;
        self.apply(writes, adds)?;
        Ok(pushed == Pushed::Queued)
    }

    /// The next URL: the next host in turn that may be asked now, its
    /// lowest-depth URL. It is in flight until its [`Entry::finish`] is
    /// committed; call [`done`](Frontier::done) when its request is over.
    pub fn pop(&mut self, turns: &dyn Turns) -> Result<Popped, StoreError> {
        self.wake(Instant::now());
        while let Some(host) = self.ready.pop_front() {
            let Some(&head) = self.hosts.get(&host).and_then(|t| t.queue.front()) else {
                self.settle_idle(&host);
                continue;
            };
            let q = read_queued(&self.queue, slot_offset(head))?;
            let Ok(url) = Url::parse(&q.url) else {
                // Not written by us: drop it.
                self.take_head(&host);
                self.live_bytes = self.live_bytes.saturating_sub(u64::from(q.len));
                self.ready.push_front(host);
                continue;
            };
            let at = turns.ready_at(&url);
            // The clock is read after `ready_at` (which reads it too): an
            // older `now` would make a ready host look early, after a long
            // pass or a preempted thread.
            let now = Instant::now();
            let ready = at <= now + SLACK;
            // Checked only when it matters: it reads the robots.txt cache.
            if !ready && turns.needs_turn(&url) {
                tracing::trace!(
                    host = &*host,
                    wait_ms = (at - now).as_millis() as u64,
                    "not its turn"
                );
                self.wait(host, at, now);
                continue;
            }
            self.take_head(&host);
            let flight = InFlight {
                slot: head,
                len: q.len,
            };
            self.in_flight.insert(q.seq, flight);
            let turn = self.hosts.get_mut(&host).expect("a host in turn is known");
            turn.in_flight += 1;
            if turn.in_flight >= self.per_host_in_flight {
                turn.place = Place::Full;
            } else {
                // The host's next start: a gap after this one, unless this
                // URL asks nothing (then as the fetcher has it) or the next
                // one asks nothing (then now).
                let next = if !self.head_needs_turn(&host, turns) {
                    now
                } else if ready && turns.needs_turn(&url) {
                    at.max(now) + turns.gap(&url)
                } else {
                    at
                };
                self.wait(host, next, now);
            }
            let (depth, seq) = (q.depth, q.seq);
            return Ok(Popped::Entry(Entry { url, depth, seq }));
        }
        // Hosts whose last URL was taken still wait out their gap, with
        // nothing to hand out after it: the crawl would wait for them.
        if self.queued == 0 {
            return Ok(Popped::Empty);
        }
        Ok(match self.waiting.first_key_value() {
            Some(((at, _), _)) => Popped::WaitUntil(*at),
            None => Popped::Empty,
        })
    }

    /// Whether `host`'s next URL, if any, needs a turn of it (a URL that
    /// cannot be read is left to [`pop`](Frontier::pop) to drop).
    fn head_needs_turn(&self, host: &str, turns: &dyn Turns) -> bool {
        let Some(&head) = self.hosts.get(host).and_then(|t| t.queue.front()) else {
            return true;
        };
        let url = read_queued(&self.queue, slot_offset(head))
            .ok()
            .and_then(|q| Url::parse(&q.url).ok());
        url.is_none_or(|u| turns.needs_turn(&u))
    }

    fn take_head(&mut self, host: &str) {
        if let Some(turn) = self.hosts.get_mut(host) {
            turn.queue.pop_front();
            self.queued = self.queued.saturating_sub(1);
        }
    }

    /// The request for `entry` (popped from here) is over: its host may
    /// have its next turn.
    pub fn done(&mut self, entry: &Entry, turns: &dyn Turns) {
        let host = host_of(&entry.url);
        let Some((name, turn)) = self.hosts.get_key_value(host.as_str()) else {
            return;
        };
        let (name, place) = (name.clone(), turn.place);
        let turn = self.hosts.get_mut(&name).expect("just found");
        turn.in_flight = turn.in_flight.saturating_sub(1);
        match place {
            // Nothing queued: out of the turn (a URL found later joins it
            // at once, and the turn waits only if that URL needs one).
            Place::Full if turn.queue.is_empty() => {
                turn.place = Place::Idle;
                if turn.in_flight == 0 {
                    self.hosts.remove(&name);
                }
            }
            Place::Full => {
                let now = Instant::now();
                let at = if self.head_needs_turn(&name, turns) {
                    turns.ready_at(&entry.url)
                } else {
                    now
                };
                self.wait(name, at, now);
            }
            Place::Idle if turn.in_flight == 0 => {
                self.hosts.remove(&name);
            }
            _ => {}
        }
    }

    /// Puts a popped entry back at the head of its host's queue: its host
    /// turned out not to be ready (its robots.txt was fetched first).
    pub fn put_back(&mut self, entry: Entry, turns: &dyn Turns) -> Result<(), StoreError> {
        self.done(&entry, turns);
        let Some(f) = self.in_flight.remove(&entry.seq) else {
            return Ok(());
        };
        let host = self.intern(&host_of(&entry.url));
        let turn = self.hosts.get_mut(&host).expect("interned");
        insert_slot(&mut turn.queue, f.slot, true);
        self.queued += 1;
        // Back in turn if it had left it (its last URL was the one popped).
        self.join_turn(host, false);
        Ok(())
    }

    /// [`save`](Frontier::save), rewriting the queue file first when
    /// records of done URLs are most of it (a checkpoint); call
    /// [`saved`](Frontier::saved) once `batch` is durable.
    pub fn compact_and_save(&mut self, batch: &mut Writes) -> Result<(), StoreError> {
        let dead = self.queue.len() - self.live_bytes.min(self.queue.len());
        let nothing_live = self.queued == 0 && self.in_flight.is_empty();
        if (dead > self.live_bytes && dead >= COMPACT_MIN) || (nothing_live && dead > 0) {
            self.rewrite_queue().map_err(io_error)?;
        }
        self.save(batch)
    }

    /// Makes the frontier's files durable and records their lengths in
    /// `batch`.
    pub fn save(&mut self, batch: &mut Writes) -> Result<(), StoreError> {
        let mut queue = self.queue_gen.to_be_bytes().to_vec();
        queue.extend_from_slice(&self.queue.sync().map_err(io_error)?.to_be_bytes());
        batch.insert(key(FILES, b"queue"), queue);
        let seen = self.seen_file.sync().map_err(io_error)?;
        batch.insert(key(FILES, b"seen"), seen.to_be_bytes());
        Ok(())
    }

    /// The batch of [`save`](Frontier::save) is durable: a replaced queue
    /// file can go.
    pub fn saved(&mut self) {
        if let Some(path) = self.stale.take() {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Writes the records of URLs not done (in flight, then each host's
    /// queue in order) to the next queue file, which takes over.
    fn rewrite_queue(&mut self) -> io::Result<()> {
        let next_gen = self.queue_gen + 1;
        let mut next = AppendFile::open(&self.dir.join(format!("queue.{next_gen}")), 0, [])?;
        let mut out = Vec::new();
        let old = &self.queue;
        for f in self.in_flight.values_mut() {
            let at = copy_queued(old, slot_offset(f.slot), &mut out, &mut next)?;
            f.slot = slot(slot_depth(f.slot) as u32, at);
        }
        for turn in self.hosts.values_mut() {
            for s in turn.queue.iter_mut() {
                let at = copy_queued(old, slot_offset(*s), &mut out, &mut next)?;
                *s = slot(slot_depth(*s) as u32, at);
            }
        }
        next.append(&out)?;
        next.sync()?;
        self.queue = next;
        self.stale = Some(self.dir.join(format!("queue.{}", self.queue_gen)));
        self.queue_gen = next_gen;
        self.live_bytes = self.queue.len();
        Ok(())
    }
}

impl Frontier {
    /// Hosts with URLs queued or in flight, as the scheduler sees them.
    pub fn active_hosts(&self) -> usize {
        self.hosts.len()
    }

    /// Hosts ever admitted.
    pub fn known_hosts(&self) -> u64 {
        self.known_hosts
    }

    /// URLs waiting.
    pub fn len(&self) -> usize {
        self.queued
    }

    pub fn is_empty(&self) -> bool {
        self.queued == 0
    }

    /// Whether `url` was ever queued.
    pub fn was_seen(&self, url: &Url) -> bool {
        self.seen.contains(url)
    }

    /// A handle that answers [`was_seen`](Frontier::was_seen) without the
    /// frontier: a caller can drop links seen long ago before taking the
    /// lock it keeps the frontier under (and must ask `push` again for the
    /// rest, which decides).
    pub fn seen_set(&self) -> SeenSet {
        self.seen.clone()
    }

    /// URLs ever queued.
    pub fn seen(&self) -> usize {
        self.seen.len()
    }

    /// URLs popped and not done.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::store::tag::{OLD_IN_FLIGHT, OLD_QUEUE, OLD_SEEN, OLD_SEEN_URLS};

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    /// A store in a temporary database and an empty directory.
    struct Spot {
        t: Arc<dyn Store>,
        dir: PathBuf,
    }

    fn place() -> Spot {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let db = sled::Config::new().temporary(true).open().unwrap();
        let t = Arc::new(crate::embedded::store::SledStore::open_in(&db, "t").unwrap());
        let dir =
            std::env::temp_dir().join(format!("nearcrawl-frontier-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Spot { t, dir }
    }

    impl Spot {
        fn open(&self) -> Frontier {
            Frontier::open_in(self.t.clone(), &self.dir).unwrap()
        }
    }

    impl Drop for Spot {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// Makes `f`'s files durable and recorded, as a checkpoint does.
    fn save(f: &mut Frontier, compact: bool) {
        let mut batch = Writes::default();
        if compact {
            f.compact_and_save(&mut batch).unwrap();
        } else {
            f.save(&mut batch).unwrap();
        }
        f.store.apply(batch).unwrap();
        f.saved();
    }

    fn finish(f: &mut Frontier, e: &Entry) {
        let mut adds = Additions::default();
        e.finish(&mut adds);
        f.apply(Writes::default(), adds).unwrap();
        f.done(e, &Unpaced);
    }

    fn pop(f: &mut Frontier) -> Option<Entry> {
        match f.pop(&Unpaced).unwrap() {
            Popped::Entry(e) => Some(e),
            _ => None,
        }
    }

    fn drain(f: &mut Frontier) -> Vec<String> {
        std::iter::from_fn(|| pop(f))
            .map(|e| e.url.to_string())
            .collect()
    }

    #[test]
    fn a_frontier_kept_in_store_keys_moves_to_its_files_at_open() {
        let p = place();
        // As earlier versions kept them: whole URLs and fingerprints seen,
        // URLs queued and in flight (host 0x00 depth seq -> URL).
        let old_seen = ["https://a.example/x", "https://b.example/y?q=1"];
        for url in old_seen {
            p.t.insert(&key(OLD_SEEN_URLS, url.as_bytes()), &[])
                .unwrap();
        }
        let fp = seen_fp(&u("https://c.example/fp"));
        p.t.insert(&key(OLD_SEEN, &fp.to_be_bytes()), &[]).unwrap();
        let old_key = |tag: u8, host: &str, depth: u32, seq: u64| {
            let mut k = key(tag, host.as_bytes());
            k.push(0);
            k.extend_from_slice(&depth.to_be_bytes());
            k.extend_from_slice(&seq.to_be_bytes());
            k
        };
        let queued = [
            (OLD_QUEUE, 2, "https://d.example/deep"),
            (OLD_QUEUE, 1, "https://d.example/shallow"),
            (OLD_IN_FLIGHT, 1, "https://e.example/flying"),
        ];
        for (i, (tag, depth, url)) in queued.iter().enumerate() {
            let host = u(url).host_str().unwrap().to_string();
            let old = old_key(*tag, &host, *depth, i as u64);
            p.t.insert(&old, url.as_bytes()).unwrap();
            p.t.insert(&key(OLD_SEEN, &seen_fp(&u(url)).to_be_bytes()), &[])
                .unwrap();
        }
        for _ in 0..2 {
            // The second open reads what the first moved.
            let mut f = p.open();
            for tag in [OLD_SEEN, OLD_SEEN_URLS, OLD_QUEUE, OLD_IN_FLIGHT] {
                assert_eq!(p.t.scan_prefix(&[tag]).count(), 0, "old keys gone");
            }
            assert_eq!(f.seen(), 6);
            for url in old_seen.iter().chain(["https://c.example/fp"].iter()) {
                assert!(f.was_seen(&u(url)), "{url}");
                assert!(
                    !f.push_now(&u(url), 0).unwrap(),
                    "{url} is not queued again"
                );
            }
            assert_eq!(f.len(), 3);
            let mut got = Vec::new();
            while let Some(e) = pop(&mut f) {
                got.push((e.url.to_string(), e.depth));
            }
            got.sort();
            assert_eq!(
                got,
                [
                    ("https://d.example/deep".to_string(), 2),
                    ("https://d.example/shallow".to_string(), 1),
                    ("https://e.example/flying".to_string(), 1),
                ]
            );
        }
        let mut f = p.open();
        let d: Vec<String> = drain(&mut f)
            .into_iter()
            .filter(|u| u.starts_with("https://d."))
            .collect();
        assert_eq!(
            d,
            ["https://d.example/shallow", "https://d.example/deep"],
            "lowest depth first"
        );
    }

    #[test]
    fn hosts_take_turns_and_depth_comes_first() {
        let p = place();
        let mut f = p.open();
        for i in 0..5 {
            f.push_now(&u(&format!("https://big.example/{i}")), 2)
                .unwrap();
        }
        f.push_now(&u("https://big.example/shallow"), 1).unwrap();
        f.push_now(&u("https://small.example/a"), 1).unwrap();
        f.push_now(&u("https://small.example/b"), 1).unwrap();
        assert!(
            !f.push_now(&u("https://small.example/a"), 0).unwrap(),
            "seen before"
        );
        assert_eq!(f.len(), 8);
        // small.example, met last, is served first once (new hosts go to the
        // front of the turn); then the hosts alternate.
        assert_eq!(
            drain(&mut f),
            [
                "https://small.example/a",
                "https://big.example/shallow",
                "https://small.example/b",
                "https://big.example/0",
                "https://big.example/1",
                "https://big.example/2",
                "https://big.example/3",
                "https://big.example/4",
            ]
        );
        assert!(f.is_empty());
        assert_eq!(f.seen(), 8);
        assert_eq!(f.in_flight(), 8, "popped, not finished");
    }

    #[test]
    fn a_batch_adds_nothing_until_applied_and_dedupes_its_own_urls() {
        let p = place();
        let mut f = p.open();
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        let mut push = |f: &mut Frontier| {
            f.push(&mut writes, &mut adds, &u("https://a.example/1"), 1)
                .unwrap()
        };
        assert_eq!(push(&mut f), Pushed::Queued);
        assert_eq!(push(&mut f), Pushed::Seen);
        assert!(pop(&mut f).is_none());
        f.apply(writes, adds).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(drain(&mut f), ["https://a.example/1"]);
    }

    #[test]
    fn reopened_frontier_resumes_and_requeues_what_was_in_flight() {
        let p = place();
        {
            let mut f = p.open();
            f.push_now(&u("https://b.example/1"), 0).unwrap();
            f.push_now(&u("https://a.example/1"), 0).unwrap();
            f.push_now(&u("https://a.example/2"), 1).unwrap();
            let done = pop(&mut f).unwrap();
            assert_eq!(done.url.as_str(), "https://a.example/1");
            finish(&mut f, &done);
            // Popped and never finished: the run "crashed" with it in flight.
            assert_eq!(pop(&mut f).unwrap().url.as_str(), "https://b.example/1");
            save(&mut f, false);
            // Not saved: cut off at the next open.
            f.push_now(&u("https://c.example/lost"), 0).unwrap();
        }
        let mut f = p.open();
        assert_eq!(f.len(), 2);
        assert_eq!(f.in_flight(), 0);
        assert!(
            f.was_seen(&u("https://a.example/1")),
            "finished URLs stay seen"
        );
        assert!(!f.was_seen(&u("https://c.example/lost")));
        assert!(!f.push_now(&u("https://a.example/1"), 0).unwrap());
        assert!(f.push_now(&u("https://a.example/3"), 1).unwrap());
        let mut rest = drain(&mut f);
        rest.sort();
        assert_eq!(
            rest,
            [
                "https://a.example/2",
                "https://a.example/3",
                "https://b.example/1"
            ]
        );
    }

    #[test]
    fn a_checkpoint_rewrites_a_queue_file_of_mostly_done_urls() {
        let p = place();
        let mut f = p.open();
        let url = |i: usize| u(&format!("https://h{}.example/{i:0>40}", i % 7));
        for i in 0..20_000 {
            f.push_now(&url(i), 1).unwrap();
        }
        // Most are done; one is popped and still in flight.
        for _ in 0..19_000 {
            let e = pop(&mut f).unwrap();
            finish(&mut f, &e);
        }
        let flying = pop(&mut f).unwrap();
        let before = f.queue.len();
        save(&mut f, true);
        assert_eq!(f.queue_gen, 1);
        assert!(f.queue.len() < before / 10, "{} of {before}", f.queue.len());
        assert!(!p.dir.join("queue.0").exists(), "the old file is gone");
        // The one in flight finishes after the rewrite; the rest go on.
        finish(&mut f, &flying);
        let left = drain(&mut f);
        assert_eq!(left.len(), 999);
        save(&mut f, false);
        drop(f);
        {
            let mut f = p.open();
            assert_eq!(f.len(), 999, "popped, not finished: queued again");
            assert!(!drain(&mut f).contains(&flying.url.to_string()));
        }
        // Nothing left: the next checkpoint empties the file.
        let mut f = p.open();
        for e in std::iter::from_fn(|| pop(&mut f)).collect::<Vec<_>>() {
            finish(&mut f, &e);
        }
        save(&mut f, true);
        assert_eq!(f.queue.len(), 0);
        assert_eq!(f.seen(), 20_000);
    }

    /// Hosts ready at the times given; others now; a fixed gap.
    struct Clock(HashMap<String, Instant>, Duration);

    impl Turns for Clock {
        fn ready_at(&self, url: &Url) -> Instant {
            self.0
                .get(url.host_str().unwrap())
                .copied()
                .unwrap_or_else(Instant::now)
        }
        fn gap(&self, _: &Url) -> Duration {
            self.1
        }
    }

    #[test]
    fn a_host_that_must_wait_gives_its_turn_to_one_that_is_ready() {
        let p = place();
        let mut f = p.open();
        f.push_now(&u("https://slow.example/1"), 0).unwrap();
        f.push_now(&u("https://slow.example/2"), 0).unwrap();
        f.push_now(&u("https://fast.example/1"), 0).unwrap();
        f.push_now(&u("https://fast.example/2"), 0).unwrap();
        let later = Instant::now() + Duration::from_secs(60);
        let clock = Clock(
            HashMap::from([("slow.example".into(), later)]),
            Duration::ZERO,
        );
        let mut got = Vec::new();
        while let Popped::Entry(e) = f.pop(&clock).unwrap() {
            got.push(e.url.to_string());
        }
        assert_eq!(got, ["https://fast.example/1", "https://fast.example/2"]);
        assert!(
            matches!(f.pop(&clock).unwrap(), Popped::WaitUntil(at) if at == later),
            "the slow host waits for its time"
        );
        // A gap keeps a host out of turn for that long after a pop.
        let q = place();
        let mut f = q.open();
        f.push_now(&u("https://a.example/1"), 0).unwrap();
        f.push_now(&u("https://a.example/2"), 0).unwrap();
        let clock = Clock(HashMap::new(), Duration::from_secs(60));
        assert!(matches!(f.pop(&clock).unwrap(), Popped::Entry(_)));
        assert!(matches!(f.pop(&clock).unwrap(), Popped::WaitUntil(_)));
    }

    /// [`Clock`], and some URLs forbidden by their robots.txt.
    struct Forbidding(Clock, &'static [&'static str]);

    impl Turns for Forbidding {
        fn ready_at(&self, url: &Url) -> Instant {
            self.0.ready_at(url)
        }
        fn gap(&self, url: &Url) -> Duration {
            self.0.gap(url)
        }
        fn needs_turn(&self, url: &Url) -> bool {
            !self.1.contains(&url.as_str())
        }
    }

    #[test]
    fn a_url_that_asks_its_host_nothing_waits_for_no_turn() {
        let forbidden = &["https://a.example/private/1", "https://a.example/private/2"];
        let gap = Duration::from_secs(60);
        let now = Forbidding(Clock(HashMap::new(), gap), forbidden);
        // After a request the fetcher has the host's next start.
        let later = Instant::now() + gap;
        let after = Forbidding(
            Clock(HashMap::from([("a.example".into(), later)]), gap),
            forbidden,
        );
        let took = |f: &mut Frontier, turns: &Forbidding| match f.pop(turns).unwrap() {
            Popped::Entry(e) => e.url.to_string(),
            other => format!("{other:?}"),
        };
        // Queued behind a page: taken at once, not a gap later.
        let p = place();
        let mut f = p.open();
        f.push_now(&u("https://a.example/1"), 0).unwrap();
        f.push_now(&u(forbidden[0]), 0).unwrap();
        f.push_now(&u("https://a.example/2"), 0).unwrap();
        assert_eq!(took(&mut f, &now), "https://a.example/1");
        assert_eq!(took(&mut f, &after), forbidden[0]);
        assert!(matches!(f.pop(&after).unwrap(), Popped::WaitUntil(at) if at == later));
        // One request at a time: found while the host's page was in flight,
        // it is taken when that request is over.
        let q = place();
        let mut f = q.open();
        f.set_limits(1, u64::MAX);
        let take = |f: &mut Frontier, turns: &Forbidding| match f.pop(turns).unwrap() {
            Popped::Entry(e) => {
                f.done(&e, turns);
                e.url.to_string()
            }
            other => format!("{other:?}"),
        };
        f.push_now(&u("https://a.example/1"), 0).unwrap();
        let Popped::Entry(page) = f.pop(&now).unwrap() else {
            panic!("the page is ready")
        };
        f.push_now(&u(forbidden[0]), 1).unwrap();
        f.done(&page, &after);
        assert_eq!(take(&mut f, &after), forbidden[0]);
        // Found after that, with nothing else queued.
        assert_eq!(take(&mut f, &after), "Empty");
        f.push_now(&u(forbidden[1]), 1).unwrap();
        assert_eq!(take(&mut f, &after), forbidden[1]);
        // A page found then waits for the host's turn.
        f.push_now(&u("https://a.example/3"), 1).unwrap();
        assert!(matches!(f.pop(&after).unwrap(), Popped::WaitUntil(at) if at == later));
    }

    #[test]
    fn nothing_queued_is_nothing_to_wait_for() {
        let p = place();
        let mut f = p.open();
        f.push_now(&u("https://a.example/1"), 0).unwrap();
        let clock = Clock(HashMap::new(), Duration::from_secs(60));
        assert!(matches!(f.pop(&clock).unwrap(), Popped::Entry(_)));
        // The host waits out its gap, but has nothing left to hand out.
        assert!(matches!(f.pop(&clock).unwrap(), Popped::Empty));
    }

    #[test]
    fn a_new_host_is_served_before_hosts_under_way() {
        let p = place();
        let mut f = p.open();
        for host in ["a", "b", "c"] {
            for i in 0..3 {
                f.push_now(&u(&format!("https://{host}.example/{i}")), 1)
                    .unwrap();
            }
        }
        // a, b and c are all in turn with URLs left when d is met.
        let first: Vec<String> = (0..3)
            .map(|_| pop(&mut f).unwrap().url.to_string())
            .collect();
        assert_eq!(first.len(), 3);
        f.push_now(&u("https://d.example/1"), 2).unwrap();
        f.push_now(&u("https://d.example/2"), 2).unwrap();
        let next: Vec<String> = drain(&mut f);
        assert_eq!(next[0], "https://d.example/1", "{next:?}");
        // After its first turn d waits its turn like the others: its second
        // URL is not next.
        assert_ne!(next[1], "https://d.example/2", "{next:?}");
        // A host met again (its URLs all taken, then a new one found) is not
        // new: it joins at the back.
        let q = place();
        let mut f = q.open();
        f.push_now(&u("https://a.example/1"), 0).unwrap();
        assert_eq!(pop(&mut f).unwrap().url.as_str(), "https://a.example/1");
        f.push_now(&u("https://b.example/1"), 0).unwrap();
        f.push_now(&u("https://a.example/2"), 0).unwrap();
        assert_eq!(
            drain(&mut f),
            ["https://b.example/1", "https://a.example/2"]
        );
    }

    #[test]
    fn a_host_at_its_in_flight_limit_waits_for_a_request_to_finish() {
        let p = place();
        let mut f = p.open();
        f.set_limits(1, u64::MAX);
        for i in 0..3 {
            f.push_now(&u(&format!("https://a.example/{i}")), 0)
                .unwrap();
        }
        let first = pop(&mut f).unwrap();
        assert!(matches!(f.pop(&Unpaced).unwrap(), Popped::Empty));
        f.done(&first, &Unpaced);
        let second = pop(&mut f).unwrap();
        assert_eq!(second.url.as_str(), "https://a.example/1");
        assert!(pop(&mut f).is_none());
        f.done(&second, &Unpaced);
        assert_eq!(drain(&mut f), ["https://a.example/2"]);
        assert_eq!(f.active_hosts(), 1, "in flight");
    }

    #[test]
    fn hosts_beyond_max_hosts_are_refused_over_every_run() {
        let p = place();
        {
            let mut f = p.open();
            f.set_limits(1, 2);
            assert!(f.push_now(&u("https://a.example/1"), 0).unwrap());
            let mut writes = Writes::default();
            let mut adds = Additions::default();
            let mut push =
                |f: &mut Frontier, url: &str| f.push(&mut writes, &mut adds, &u(url), 1).unwrap();
            assert_eq!(push(&mut f, "https://b.example/1"), Pushed::Queued);
            assert_eq!(push(&mut f, "https://b.example/2"), Pushed::Queued);
            assert_eq!(push(&mut f, "https://c.example/1"), Pushed::HostLimit);
            assert_eq!(push(&mut f, "https://a.example/2"), Pushed::Queued);
            f.apply(writes, adds).unwrap();
            assert_eq!(f.known_hosts(), 2);
            save(&mut f, false);
        }
        let mut f = p.open();
        f.set_limits(1, 2);
        assert!(!f.push_now(&u("https://c.example/1"), 0).unwrap());
        assert!(f.push_now(&u("https://b.example/3"), 0).unwrap());
    }
}
