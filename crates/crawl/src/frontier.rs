//! The frontier: URLs waiting to be fetched, URLs being fetched, and every
//! URL ever queued (as a 64-bit fingerprint), all in the crawl's [`Store`]
//! (on disk).
//!
//! Per-host queues, lowest depth first within a host (breadth-first), and
//! hosts served in turn so one large host cannot starve the others. A
//! host is only handed out when its politeness allows a request now (asked
//! of [`Turns`], which the fetcher answers): hosts that must wait sleep in
//! a time-ordered set, and a host at its in-flight limit leaves the turn
//! until a request finishes. So workers are not parked on hosts that are
//! not ready while others are. Only hosts with pending or in-flight URLs
//! are kept in memory (about 150 bytes each); the URLs are on disk.
//!
//! The frontier lives in keys of the crawl's one state store (see
//! [`crate::state`]) so that what a page adds to it is written in the same
//! atomic batch as the page's other effects. [`Frontier::pop`] moves a URL
//! from the queue to the in-flight set, and [`Frontier::open_in`] puts
//! whatever is still in flight back in the queue: a crash loses no URL.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use std::sync::Arc;

use url::Url;

use crate::store::{Store, StoreError, Writes};

const QUEUE: u8 = b'q';
const IN_FLIGHT: u8 = b'i';
/// Every URL ever queued, as a 64-bit fingerprint (see [`seen_key`]).
const SEEN: u8 = b'u';
/// The seen set as earlier versions kept it: whole URLs (migrated at open).
const SEEN_URLS: u8 = b's';
/// Hosts ever admitted (for `max_hosts`).
const KNOWN: u8 = b'k';

/// A host this close to its turn is handed out: the fetcher waits the rest.
pub(crate) const SLACK: Duration = Duration::from_millis(2);

/// What the frontier asks about a host's politeness; the fetcher knows.
pub trait Turns {
    /// When a request to `url`'s host could start, were it asked now.
    fn ready_at(&self, url: &Url) -> Instant;
    /// Least time between the starts of two requests to `url`'s host.
    fn gap(&self, url: &Url) -> Duration;
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
    /// No URL known to be queued.
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
}

/// A URL to fetch and how many links it is from a seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub url: Url,
    pub depth: u32,
    /// host 0x00 depth(u32 BE) seq(u64 BE): the entry's place in the queue,
    /// and its key while in flight.
    key: Vec<u8>,
}

impl Entry {
    /// Removes the entry from the in-flight set, in `writes`: the URL is
    /// done.
    pub fn finish(&self, writes: &mut Writes) {
        writes.remove(prefixed(IN_FLIGHT, &self.key));
    }
}

#[derive(Debug)]
pub struct Frontier {
    store: Arc<dyn Store>,
    /// Hosts that may be asked now, in turn.
    ready: VecDeque<String>,
    /// Hosts that may be asked at the instant (the u64 breaks ties).
    waiting: BTreeMap<(Instant, u64), String>,
    hosts: HashMap<String, HostTurn>,
    per_host_in_flight: u32,
    max_hosts: u64,
    known_hosts: u64,
    seq: u64,
    queued: usize,
}

fn prefixed(tag: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(rest.len() + 1);
    k.push(tag);
    k.extend_from_slice(rest);
    k
}

/// The seen set's key of `url`: its 64-bit SipHash, not the URL.
///
/// Why: with whole URLs as keys the seen set was most of the store (a key
/// of ~80 bytes, and ~450 bytes of sled's log per key on disk); 9-byte
/// keys cost ~70. The price is that a URL whose fingerprint equals an
/// earlier URL's is taken as seen and never fetched: with n URLs, any such
/// pair occurs with probability about n²/2⁶⁵ (3·10⁻⁸ in a crawl of a
/// million URLs, 3·10⁻⁴ at 10⁸). Heritrix's seen set is made the same way
/// (64-bit fingerprints, `BdbUriUniqFilter`).
fn seen_key(url: &Url) -> [u8; 9] {
    let mut k = [SEEN; 9];
    let h = siphasher::sip::SipHasher13::new_with_keys(SEEN_KEY_0, SEEN_KEY_1)
        .hash(url.as_str().as_bytes());
    k[1..].copy_from_slice(&h.to_be_bytes());
    k
}

/// Fixed SipHash keys: fingerprints are stored, so they must not change
/// between runs or versions.
const SEEN_KEY_0: u64 = 0x6e65_6172_6372_6177; // "nearcraw"
const SEEN_KEY_1: u64 = 0x6c2d_7365_656e_2d31; // "l-seen-1"

/// Rewrites a seen set of whole URLs (earlier versions) as fingerprints,
/// in batches, each atomic: a crash midway leaves both kinds, and the next
/// open goes on.
fn migrate_seen_urls(store: &dyn Store) -> Result<(), StoreError> {
    loop {
        let mut batch = Writes::default();
        for item in store.scan_prefix(&[SEEN_URLS]).take(10_000) {
            let (key, _) = item?;
            // Keys that are not URLs any more cannot be looked up; drop them.
            if let Ok(url) = Url::parse(&String::from_utf8_lossy(&key[1..])) {
                batch.insert(seen_key(&url), []);
            }
            batch.remove(key);
        }
        if batch.is_empty() {
            return Ok(());
        }
        store.apply(batch)?;
    }
}

fn host_prefix(host: &str) -> Vec<u8> {
    let mut k = vec![QUEUE];
    k.extend_from_slice(host.as_bytes());
    k.push(0);
    k
}

/// See [`Frontier::seen_set`].
#[derive(Debug, Clone)]
pub struct SeenSet(Arc<dyn Store>);

impl SeenSet {
    pub fn contains(&self, url: &Url) -> bool {
        self.0.contains(&seen_key(url)).unwrap_or(false)
    }
}

/// The URLs added to the frontier by writes not yet applied.
#[derive(Debug, Default)]
pub struct Additions {
    urls: HashSet<String>,
    hosts: Vec<String>,
    new_hosts: HashSet<String>,
    queued: usize,
}

impl Frontier {
    /// Opens the frontier kept in `store`, resuming what is there: URLs
    /// that were in flight when the last run ended go back in the queue.
    pub fn open_in(store: Arc<dyn Store>) -> Result<Frontier, StoreError> {
        migrate_seen_urls(store.as_ref())?;
        let mut requeue = Writes::default();
        for item in store.scan_prefix(&[IN_FLIGHT]) {
            let (key, url) = item?;
            requeue.insert(prefixed(QUEUE, &key[1..]), url);
            requeue.remove(key);
        }
        if !requeue.is_empty() {
            store.apply(requeue)?;
        }
        let known_hosts = store.scan_prefix(&[KNOWN]).count() as u64;
        let mut f = Frontier {
            store,
            ready: VecDeque::new(),
            waiting: BTreeMap::new(),
            hosts: HashMap::new(),
            per_host_in_flight: u32::MAX,
            max_hosts: u64::MAX,
            known_hosts,
            seq: 0,
            queued: 0,
        };
        // One pass over the queue's keys: the hosts with pending URLs, and a
        // sequence number above every one in use.
        let queue: Vec<Vec<u8>> = f
            .store
            .scan_prefix(&[QUEUE])
            .map(|kv| kv.map(|(k, _)| k))
            .collect::<Result<_, _>>()?;
        for key in queue {
            f.queued += 1;
            let Some(nul) = key.iter().position(|&b| b == 0) else {
                continue;
            };
            let host = String::from_utf8_lossy(&key[1..nul]).into_owned();
            if key.len() == nul + 13 {
                let seq = u64::from_be_bytes(key[nul + 5..].try_into().unwrap());
                f.seq = f.seq.max(seq + 1);
            }
            f.schedule(host);
        }
        Ok(f)
    }

    /// Requests in flight per host at most, and hosts admitted at most
    /// (over every run).
    pub fn set_limits(&mut self, per_host_in_flight: u32, max_hosts: u64) {
        self.per_host_in_flight = per_host_in_flight.max(1);
        self.max_hosts = max_hosts;
    }

    /// A host that has URLs queued joins the turn, unless it is in it.
    fn schedule(&mut self, host: String) {
        self.join_turn(host, false);
    }

    /// Joins the turn at the back, or with `first` at the front.
    fn join_turn(&mut self, host: String, first: bool) {
        let turn = self.hosts.entry(host.clone()).or_insert(HostTurn {
            in_flight: 0,
            place: Place::Idle,
        });
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
    fn wait(&mut self, host: String, at: Instant, now: Instant) {
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

    fn seq_waiting(&mut self, host: String, at: Instant) {
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
            || self.store.contains(&prefixed(KNOWN, host.as_bytes()))?)
    }

    /// Queues `url` at `depth`, in `writes`, unless it was ever queued
    /// before (or is in `adds`); true if it was new. The caller
    /// canonicalizes and checks scope first, applies the writes, then calls
    /// [`added`](Frontier::added) with `adds`.
    pub fn push(
        &mut self,
        batch: &mut Writes,
        adds: &mut Additions,
        url: &Url,
        depth: u32,
    ) -> Result<Pushed, StoreError> {
        if adds.urls.contains(url.as_str()) || self.was_seen(url)? {
            return Ok(Pushed::Seen);
        }
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        if !self.is_known(&host, adds)? {
            if self.known_hosts + adds.new_hosts.len() as u64 >= self.max_hosts {
                return Ok(Pushed::HostLimit);
            }
            batch.insert(prefixed(KNOWN, host.as_bytes()), []);
            adds.new_hosts.insert(host.clone());
        }
        adds.urls.insert(url.as_str().to_string());
        batch.insert(seen_key(url), []);
        let mut key = host_prefix(&host);
        key.extend_from_slice(&depth.to_be_bytes());
        key.extend_from_slice(&self.seq.to_be_bytes());
        self.seq += 1;
        batch.insert(key, url.as_str());
        adds.hosts.push(host);
        adds.queued += 1;
        Ok(Pushed::Queued)
    }

    /// Records `url` as seen without queueing it (a redirect target that
    /// was just fetched), in `writes`.
    pub fn mark_seen(&self, batch: &mut Writes, url: &Url) {
        batch.insert(seen_key(url), []);
    }

    /// Takes note of URLs pushed in a batch that has now been applied.
    ///
    /// A host met for the first time goes to the front of the turn: its
    /// first request (robots.txt, then a page) starts the chain of delays
    /// its pages must wait through, so while the crawl is busy, every turn
    /// it waits behind hosts already under way makes the whole host finish
    /// that much later. Each new host is served first once; after that it
    /// takes its turns like the others.
    pub fn added(&mut self, adds: Additions) {
        self.queued += adds.queued;
        self.known_hosts += adds.new_hosts.len() as u64;
        for host in adds.hosts {
            let first = adds.new_hosts.contains(&host);
            self.join_turn(host, first);
        }
    }

    /// Queues and applies at once: true if `url` was new (tests).
    #[cfg(test)]
    pub fn push_now(&mut self, url: &Url, depth: u32) -> Result<bool, StoreError> {
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        let pushed = self.push(&mut writes, &mut adds, url, depth)?;
        self.store.apply(writes)?;
        self.added(adds);
        Ok(pushed == Pushed::Queued)
    }

    /// The next URL: the next host in turn that may be asked now, its
    /// lowest-depth URL. It moves to the in-flight set until
    /// [`Entry::finish`] is applied; call [`done`](Frontier::done) when its
    /// request is over.
    pub fn pop(&mut self, turns: &dyn Turns) -> Result<Popped, StoreError> {
        self.wake(Instant::now());
        while let Some(host) = self.ready.pop_front() {
            let Some((key, value)) = self
                .store
                .scan_prefix(&host_prefix(&host))
                .next()
                .transpose()?
            else {
                self.settle_idle(&host);
                continue;
            };
            let Ok(url) = Url::parse(&String::from_utf8_lossy(&value)) else {
                // Not written by us: drop it.
                self.store.remove(&key)?;
                self.queued = self.queued.saturating_sub(1);
                self.ready.push_front(host);
                continue;
            };
            let at = turns.ready_at(&url);
            // The clock is read after `ready_at` (which reads it too): an
            // older `now` would make a ready host look early, after a long
            // pass or a preempted thread.
            let now = Instant::now();
            if at > now + SLACK {
                tracing::trace!(
                    host,
                    wait_ms = (at - now).as_millis() as u64,
                    "not its turn"
                );
                self.wait(host, at, now);
                continue;
            }
            // In flight first, then out of the queue: a crash in between
            // leaves the same key in both, and reopening merges them. (Two
            // plain writes: a batch would take sled's global write lock.)
            self.store.insert(&prefixed(IN_FLIGHT, &key[1..]), &value)?;
            self.store.remove(&key)?;
            self.queued = self.queued.saturating_sub(1);
            let turn = self.hosts.get_mut(&host).expect("a host in turn is known");
            turn.in_flight += 1;
            if turn.in_flight >= self.per_host_in_flight {
                turn.place = Place::Full;
            } else {
                self.wait(host, at.max(now) + turns.gap(&url), now);
            }
            let depth_at = key.len() - 12;
            let depth =
                u32::from_be_bytes(key[depth_at..depth_at + 4].try_into().unwrap_or([0; 4]));
            let key = key[1..].to_vec();
            return Ok(Popped::Entry(Entry { url, depth, key }));
        }
        Ok(match self.waiting.first_key_value() {
            Some(((at, _), _)) => Popped::WaitUntil(*at),
            None => Popped::Empty,
        })
    }

    /// The request for `entry` (popped from here) is over: its host may
    /// have its next turn.
    pub fn done(&mut self, entry: &Entry, turns: &dyn Turns) {
        let host = entry.url.host_str().unwrap_or("").to_ascii_lowercase();
        let Some(turn) = self.hosts.get_mut(&host) else {
            return;
        };
        turn.in_flight = turn.in_flight.saturating_sub(1);
        match turn.place {
            Place::Full => {
                let at = turns.ready_at(&entry.url);
                self.wait(host, at, Instant::now());
            }
            Place::Idle if turn.in_flight == 0 => {
                self.hosts.remove(&host);
            }
            _ => {}
        }
    }

    /// Puts a popped entry back at the head of its host's queue: its host
    /// turned out not to be ready (its robots.txt was fetched first).
    pub fn put_back(&mut self, entry: Entry, turns: &dyn Turns) -> Result<(), StoreError> {
        let url = entry.url.as_str().as_bytes();
        self.store.insert(&prefixed(QUEUE, &entry.key), url)?;
        self.store.remove(&prefixed(IN_FLIGHT, &entry.key))?;
        self.queued += 1;
        self.done(&entry, turns);
        // Back in turn if it had left it (its last URL was the one popped).
        self.schedule(entry.url.host_str().unwrap_or("").to_ascii_lowercase());
        Ok(())
    }

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
    pub fn was_seen(&self, url: &Url) -> Result<bool, StoreError> {
        self.store.contains(&seen_key(url))
    }

    /// A handle that answers [`was_seen`](Frontier::was_seen) without the
    /// frontier: a caller can drop links seen long ago before taking the
    /// lock it keeps the frontier under (and must ask `push` again for the
    /// rest, which decides).
    pub fn seen_set(&self) -> SeenSet {
        SeenSet(self.store.clone())
    }

    /// URLs ever queued (a scan: for tests and reports, not the hot path).
    pub fn seen(&self) -> usize {
        self.store.scan_prefix(&[SEEN]).count()
    }

    /// URLs in flight (a scan: for tests and reports).
    pub fn in_flight(&self) -> usize {
        self.store.scan_prefix(&[IN_FLIGHT]).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn tree() -> Arc<dyn Store> {
        let db = sled::Config::new().temporary(true).open().unwrap();
        Arc::new(crate::store::SledStore::open_in(&db, "t").unwrap())
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
    fn a_seen_set_of_whole_urls_is_rewritten_as_fingerprints_at_open() {
        let t = tree();
        let old = ["https://a.example/x", "https://b.example/y?q=1"];
        for url in old {
            t.insert(&prefixed(SEEN_URLS, url.as_bytes()), &[]).unwrap();
        }
        let mut f = Frontier::open_in(t.clone()).unwrap();
        assert_eq!(t.scan_prefix(&[SEEN_URLS]).count(), 0, "old keys gone");
        assert_eq!(f.seen(), 2);
        for url in old {
            assert!(f.was_seen(&u(url)).unwrap(), "{url}");
            assert!(
                !f.push_now(&u(url), 0).unwrap(),
                "{url} is not queued again"
            );
        }
        assert!(!f.was_seen(&u("https://a.example/z")).unwrap());
        assert!(f.push_now(&u("https://a.example/z"), 0).unwrap());
    }

    #[test]
    fn hosts_take_turns_and_depth_comes_first() {
        let t = tree();
        let mut f = Frontier::open_in(t.clone()).unwrap();
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
        let t = tree();
        let mut f = Frontier::open_in(t.clone()).unwrap();
        let mut writes = Writes::default();
        let mut adds = Additions::default();
        let mut push = |f: &mut Frontier| {
            f.push(&mut writes, &mut adds, &u("https://a.example/1"), 1)
                .unwrap()
        };
        assert_eq!(push(&mut f), Pushed::Queued);
        assert_eq!(push(&mut f), Pushed::Seen);
        assert!(pop(&mut f).is_none());
        t.apply(writes).unwrap();
        f.added(adds);
        assert_eq!(f.len(), 1);
        assert_eq!(drain(&mut f), ["https://a.example/1"]);
    }

    #[test]
    fn reopened_frontier_resumes_and_requeues_what_was_in_flight() {
        let t = tree();
        {
            let mut f = Frontier::open_in(t.clone()).unwrap();
            f.push_now(&u("https://b.example/1"), 0).unwrap();
            f.push_now(&u("https://a.example/1"), 0).unwrap();
            f.push_now(&u("https://a.example/2"), 1).unwrap();
            let done = pop(&mut f).unwrap();
            assert_eq!(done.url.as_str(), "https://a.example/1");
            let mut writes = Writes::default();
            done.finish(&mut writes);
            t.apply(writes).unwrap();
            // Popped and never finished: the run "crashed" with it in flight.
            assert_eq!(pop(&mut f).unwrap().url.as_str(), "https://b.example/1");
        }
        let mut f = Frontier::open_in(t.clone()).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f.in_flight(), 0);
        assert!(
            f.was_seen(&u("https://a.example/1")).unwrap(),
            "finished URLs stay seen"
        );
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
        let t = tree();
        let mut f = Frontier::open_in(t.clone()).unwrap();
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
        let mut f = Frontier::open_in(tree()).unwrap();
        f.push_now(&u("https://a.example/1"), 0).unwrap();
        f.push_now(&u("https://a.example/2"), 0).unwrap();
        let clock = Clock(HashMap::new(), Duration::from_secs(60));
        assert!(matches!(f.pop(&clock).unwrap(), Popped::Entry(_)));
        assert!(matches!(f.pop(&clock).unwrap(), Popped::WaitUntil(_)));
    }

    #[test]
    fn a_new_host_is_served_before_hosts_under_way() {
        let mut f = Frontier::open_in(tree()).unwrap();
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
        let mut f = Frontier::open_in(tree()).unwrap();
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
        let t = tree();
        let mut f = Frontier::open_in(t.clone()).unwrap();
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
        let t = tree();
        {
            let mut f = Frontier::open_in(t.clone()).unwrap();
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
            t.apply(writes).unwrap();
            f.added(adds);
            assert_eq!(f.known_hosts(), 2);
        }
        let mut f = Frontier::open_in(t.clone()).unwrap();
        f.set_limits(1, 2);
        assert!(!f.push_now(&u("https://c.example/1"), 0).unwrap());
        assert!(f.push_now(&u("https://b.example/3"), 0).unwrap());
    }
}
