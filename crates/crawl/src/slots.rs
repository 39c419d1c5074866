//! How many fetched pages are extracted at once, and how many bytes of
//! fetched bodies may wait for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Extraction is CPU work, and a page's parse holds many times its bytes
/// (a tree up to 14×, the extractor's streamed pass for pages over 1 MiB
/// about 4×): so pages are extracted one per core at most (and one more,
/// [`SPARE_TURNS`]), and large pages while their parses fit a budget, so
/// that memory is bounded by bytes and not by the requests in flight (64
/// large pages parsed at once took ~300 MB). And while fetched bodies wait
/// for their turn past a bound, in bytes or in bodies, no new request
/// starts: then extraction, not the network, is what the crawl waits for,
/// and more requests would only add bodies to the wait (they were 36 MB on
/// javadoc's large pages, and 64 bodies of up to 3 MB, 62 MB, on
/// rust-doc's). A body in extraction is the budget's, not the backlog's:
/// counted until its turn ended, one page of 4 MiB or more stopped every
/// request while it was read, and the other core sat idle. Both engines
/// use them.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use nearcrawl_crawl::slots::ExtractionSlots;
///
/// let slots = ExtractionSlots::new();
/// slots.wait_for_room().await; // before a request starts
/// let body = b"<html>...</html>";
/// let turn = slots.enter(body.len()).await; // its body is in
/// // ... extract and judge it ...
/// drop(turn); // and judged
/// # });
/// ```
#[derive(Debug)]
pub struct ExtractionSlots {
    /// Pages extracted at once: one per core and [`SPARE_TURNS`].
    turns: Arc<Semaphore>,
    /// In KiB.
    bytes: Arc<Semaphore>,
    budget_kib: u32,
    backlog: Arc<Backlog>,
    /// Fetched bodies not judged yet past which requests wait: enough to
    /// keep every core busy while the next ones arrive.
    max_bodies: usize,
}

/// Fetched bodies waiting for a turn: from the moment one asks for its
/// turn until the turn starts.
#[derive(Debug, Default)]
struct Backlog {
    bytes: AtomicUsize,
    bodies: AtomicUsize,
    room: tokio::sync::Notify,
}

impl Backlog {
    fn add(&self, len: usize) {
        self.bytes.fetch_add(len, Ordering::SeqCst);
        self.bodies.fetch_add(1, Ordering::SeqCst);
    }

    fn remove(&self, len: usize) {
        self.bytes.fetch_sub(len, Ordering::SeqCst);
        self.bodies.fetch_sub(1, Ordering::SeqCst);
        self.room.notify_waiters();
    }
}

/// A body counted in the backlog until this is dropped (its turn started,
/// or the wait for it was given up).
#[derive(Debug)]
pub struct Held {
    backlog: Arc<Backlog>,
    len: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.backlog.remove(self.len);
    }
}

/// Memory that the large pages being extracted at once may take, as
/// estimated by [`parse_memory`]: two pages of up to 1 MiB go side by
/// side (one per core), a streamed page of 8 MiB or more without another
/// large one. (A budget of 1 MiB of *body* kept a page of 1 MiB or more
/// alone: during javadoc's burst of large index pages one core sat idle,
/// 36-44% of the machine.)
const EXTRACTION_BUDGET: usize = 32 << 20;

/// A page whose parse may take at most this much is small: it needs a
/// turn, not a share of [`EXTRACTION_BUDGET`] (pages up to 256 KiB, the
/// bulk of every site). The budget's queue is first come, first served,
/// so small pages in it waited behind a large page waiting for room:
/// while javadoc's 1-6 MB index pages waited for each other (30-260 ms),
/// one core sat idle, the crawl at 80-130% CPU. Beside the budget, small
/// pages add at most this a turn: the worst case is the budget and two of
/// these.
const SMALL_PARSE: usize = EXTRACTION_BUDGET / 8;

/// What extracting a body of `len` bytes may take at its peak: a tree of
/// up to 16 times the markup, for markup up to the 1 MiB past which the
/// extractor reads without a tree (see `nearcrawl_extract`), and about
/// four times the body for a page read so (its decoded text, the text
/// kept, the links). Peak RSS of `extract_bench` on one page, less the
/// program's own, over 231 pages of 200 KiB to 1.1 MiB (javadoc,
/// rust-doc, Python docs): 5-10 times the page, 14 at most (rustdoc's
/// source views, a span per token), body and decoded copy included;
/// 1-9 times on 88 web pages of 400 KiB or more (wcxb-dev, news). Our
/// tree's nodes are 64 bytes; scraper's, 140, took up to 25 times, and
/// with that estimate two javadoc index pages of 1 MiB never went side
/// by side: one core sat idle during their burst (the crawl at 113-139%
/// CPU for a quarter of a second).
fn parse_memory(len: usize) -> usize {
    const TREE_TIMES: usize = 16;
    const TREE_ABOVE: usize = 1 << 20;
    (TREE_TIMES * len.min(TREE_ABOVE)).max(4 * len)
}

/// Turns past one per core. A turn's page is not on a core every moment
/// of it (it waits for a blocking thread, or for the runtime to poll its
/// task again on a thread busy with another page), and with one turn per
/// core the machine sat 14% idle on javadoc, the crawl at 167% CPU; with
/// one more, 177% and 8-10% more pages/s on javadoc and a generated site,
/// the same CPU per page and peak RSS (memory is bounded by
/// [`EXTRACTION_BUDGET`], not by turns).
const SPARE_TURNS: usize = 1;

/// Bytes of fetched bodies waiting for extraction past which no request
/// starts.
const MAX_BACKLOG: usize = 4 << 20;

/// Fetched bodies waiting for a turn, per core, past which no request
/// starts: three ready for the next turns.
const BODIES_PER_CORE: usize = 3;

impl Default for ExtractionSlots {
    fn default() -> Self {
        ExtractionSlots::new()
    }
}

impl ExtractionSlots {
    /// One extraction per core of this machine, and [`SPARE_TURNS`].
    pub fn new() -> ExtractionSlots {
        ExtractionSlots::with_cores(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    fn with_cores(cores: usize) -> ExtractionSlots {
        let budget_kib = (EXTRACTION_BUDGET >> 10) as u32;
        ExtractionSlots {
            turns: Arc::new(Semaphore::new(cores + SPARE_TURNS)),
            bytes: Arc::new(Semaphore::new(budget_kib as usize)),
            budget_kib,
            backlog: Arc::default(),
            max_bodies: BODIES_PER_CORE * cores,
        }
    }

    /// Whether a new request may start: the fetched bodies waiting for a
    /// turn are within their bounds.
    pub fn has_room(&self) -> bool {
        self.backlog.bytes.load(Ordering::SeqCst) < MAX_BACKLOG
            && self.backlog.bodies.load(Ordering::SeqCst) < self.max_bodies
    }

    /// Waits until a new request may start.
    pub async fn wait_for_room(&self) {
        loop {
            let room = self.backlog.room.notified();
            if self.has_room() {
                return;
            }
            room.await;
        }
    }

    /// Counts a fetched body of `len` bytes that waits for a turn of
    /// another stage (a PDF for its reader) in the backlog, until the
    /// guard is dropped: while such bodies pile up, requests wait before
    /// they start, not with their responses half read (a server gives up
    /// on a client that does not read: nginx after 60 s).
    pub fn hold(&self, len: usize) -> Held {
        self.backlog.add(len);
        Held {
            backlog: self.backlog.clone(),
            len,
        }
    }

    /// Waits for a turn to extract a fetched page of `len` bytes (and, for
    /// a large page, its share of the budget); the body counts as waiting
    /// from this call until the turn starts.
    pub async fn enter(&self, len: usize) -> ExtractionTurn {
        let held = self.hold(len);
        let memory = parse_memory(len);
        let bytes = if memory > SMALL_PARSE {
            let kib = u32::try_from(memory.div_ceil(1024)).unwrap_or(u32::MAX);
            let share = self
                .bytes
                .clone()
                .acquire_many_owned(kib.min(self.budget_kib));
            Some(share.await.expect("never closed"))
        } else {
            None
        };
        let turn = self.turns.clone().acquire_owned().await;
        drop(held);
        ExtractionTurn {
            _bytes: bytes,
            _turn: turn.expect("never closed"),
        }
    }
}

/// A turn to extract one page; it ends when dropped. It is owned, so the
/// thread that extracts gives it back the moment it is done; held by the
/// task that awaits the extraction, it stayed taken until the runtime
/// polled that task again.
#[derive(Debug)]
pub struct ExtractionTurn {
    _bytes: Option<OwnedSemaphorePermit>,
    _turn: OwnedSemaphorePermit,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A runtime on this thread, with timers.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    fn turn_waits<F: std::future::Future>(f: F) -> bool {
        runtime().block_on(async {
            tokio::time::timeout(Duration::from_millis(50), f)
                .await
                .is_err()
        })
    }

    #[test]
    fn a_large_page_waits_for_room_and_small_pages_go_past_it() {
        let slots = ExtractionSlots::with_cores(2);
        let rt = runtime();
        // A page whose streamed read would take the whole budget: no
        // other large page goes beside it, a small one does.
        let huge = rt.block_on(slots.enter(EXTRACTION_BUDGET / 4 + 1));
        assert!(turn_waits(slots.enter(300 << 10)), "a large page waits");
        let small = rt.block_on(slots.enter(100 << 10));
        drop((huge, small));
        // A 1 MiB page (a tree of up to 16 MiB) goes beside another like
        // it, not beside two; and while a large page waits for room, a
        // small page still goes (first come, first served held it behind
        // the large one).
        let large = rt.block_on(slots.enter(1 << 20));
        let beside = rt
            .block_on(async {
                tokio::time::timeout(Duration::from_millis(50), slots.enter(1 << 20)).await
            })
            .expect("two 1 MiB trees go side by side");
        rt.block_on(async {
            let waiting = slots.enter(512 << 10);
            tokio::pin!(waiting);
            let polled = tokio::time::timeout(Duration::from_millis(50), &mut waiting).await;
            assert!(polled.is_err(), "a third large tree waits");
            let small = tokio::time::timeout(Duration::from_millis(50), slots.enter(100 << 10));
            assert!(
                small.await.is_ok(),
                "a small page goes past the waiting one"
            );
            drop((large, beside));
            let turn = tokio::time::timeout(Duration::from_millis(50), waiting).await;
            assert!(turn.is_ok(), "the waiting page goes once there is room");
        });
        // Pages go one per core and one more, whatever their size.
        let a = rt.block_on(slots.enter(400 << 10));
        let b = rt.block_on(slots.enter(100));
        let c = rt.block_on(slots.enter(100));
        assert!(turn_waits(slots.enter(100)), "every turn is taken");
        drop((a, b, c));
    }

    #[test]
    fn requests_wait_while_the_backlog_is_past_its_bound() {
        let slots = ExtractionSlots::with_cores(2);
        slots.backlog.add(MAX_BACKLOG);
        assert!(turn_waits(slots.wait_for_room()));
        slots.backlog.remove(MAX_BACKLOG);
        assert!(!turn_waits(slots.wait_for_room()));
    }

    #[test]
    fn requests_wait_while_bodies_past_their_count_wait() {
        let slots = ExtractionSlots::with_cores(2);
        for _ in 0..2 * BODIES_PER_CORE {
            slots.backlog.add(100);
        }
        assert!(!slots.has_room());
        assert!(turn_waits(slots.wait_for_room()));
        slots.backlog.remove(100);
        assert!(slots.has_room());
        assert!(!turn_waits(slots.wait_for_room()));
    }

    #[test]
    fn a_body_counts_in_the_backlog_until_its_turn_starts() {
        let slots = ExtractionSlots::with_cores(2);
        let rt = runtime();
        // Extracted, a body past the backlog's bound holds no request back.
        let large = rt.block_on(slots.enter(MAX_BACKLOG + 1));
        assert!(slots.has_room());
        // Waiting for room, it does.
        rt.block_on(async {
            let waiting = slots.enter(MAX_BACKLOG + 1);
            tokio::pin!(waiting);
            let polled = tokio::time::timeout(Duration::from_millis(50), &mut waiting).await;
            assert!(polled.is_err());
            assert!(!slots.has_room());
            drop(large);
            let turn = waiting.await;
            assert!(slots.has_room());
            drop(turn);
        });
    }

    #[test]
    fn bodies_waiting_for_another_stage_hold_requests_back() {
        let slots = ExtractionSlots::with_cores(2);
        let pdfs: Vec<Held> = (0..2).map(|_| slots.hold(3 << 20)).collect();
        assert!(!slots.has_room(), "6 MiB of PDFs wait for their reader");
        drop(pdfs);
        assert!(slots.has_room());
    }
}
