//! How many fetched pages are extracted at once, and how many bytes of
//! fetched bodies may wait for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Extraction is CPU work, and a page's parse holds many times its bytes
/// (a tree about 13×, the extractor's streamed pass for pages over 1 MiB
/// about 4×): so pages are judged one per core at most, and while their
/// bytes fit a budget, so that memory is bounded by bytes and not by the
/// requests in flight (64 large pages parsed at once took ~300 MB). And
/// while fetched bodies wait for their turn past a bound, no new request
/// starts (they were 36 MB on javadoc's large pages).
#[derive(Debug)]
pub(crate) struct ExtractionSlots {
    per_core: Arc<Semaphore>,
    /// In KiB.
    bytes: Arc<Semaphore>,
    budget_kib: u32,
    /// Bytes of fetched bodies not judged yet.
    backlog: AtomicUsize,
    room: tokio::sync::Notify,
}

/// Body bytes being extracted at once: a page larger than this is
/// extracted alone.
const EXTRACTION_BUDGET: usize = 8 << 20;

/// Bytes of fetched bodies waiting for extraction past which no request
/// starts.
const MAX_BACKLOG: usize = 4 << 20;

impl ExtractionSlots {
    pub(crate) fn new() -> ExtractionSlots {
        ExtractionSlots::with_cores(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    fn with_cores(cores: usize) -> ExtractionSlots {
        let budget_kib = (EXTRACTION_BUDGET >> 10) as u32;
        ExtractionSlots {
            per_core: Arc::new(Semaphore::new(cores)),
            bytes: Arc::new(Semaphore::new(budget_kib as usize)),
            budget_kib,
            backlog: AtomicUsize::new(0),
            room: tokio::sync::Notify::new(),
        }
    }

    /// Waits while the fetched bodies not judged yet are past the bound.
    pub(crate) async fn wait_for_room(&self) {
        loop {
            let room = self.room.notified();
            if self.backlog.load(Ordering::SeqCst) < MAX_BACKLOG {
                return;
            }
            room.await;
        }
    }

    /// A body of `len` bytes waits for extraction.
    pub(crate) fn waiting(&self, len: usize) {
        self.backlog.fetch_add(len, Ordering::SeqCst);
    }

    /// A body of `len` bytes was judged.
    pub(crate) fn done(&self, len: usize) {
        self.backlog.fetch_sub(len, Ordering::SeqCst);
        self.room.notify_waiters();
    }

    /// Waits for a turn to extract a page of `len` bytes.
    pub(crate) async fn enter(&self, len: usize) -> ExtractionTurn {
        let kib = u32::try_from(len.div_ceil(1024)).unwrap_or(u32::MAX);
        let bytes = self
            .bytes
            .clone()
            .acquire_many_owned(kib.clamp(1, self.budget_kib));
        let bytes = bytes.await.expect("never closed");
        let core = self.per_core.clone().acquire_owned().await;
        ExtractionTurn {
            _bytes: bytes,
            _core: core.expect("never closed"),
        }
    }
}

/// A turn to extract one page; it ends when dropped. It is owned, so the
/// thread that extracts gives it back the moment it is done; held by the
/// task that awaits the extraction, it stayed taken until the runtime
/// polled that task again.
pub(crate) struct ExtractionTurn {
    _bytes: OwnedSemaphorePermit,
    _core: OwnedSemaphorePermit,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn turn_waits<F: std::future::Future>(f: F) -> bool {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(50), f)
                .await
                .is_err()
        })
    }

    #[test]
    fn a_page_past_the_budget_is_extracted_alone() {
        let slots = ExtractionSlots::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let big = rt.block_on(slots.enter(EXTRACTION_BUDGET * 2));
        assert!(turn_waits(slots.enter(100)), "a small page waits");
        drop(big);
        assert!(!turn_waits(slots.enter(100)));
        // Pages that fit the budget together go together, one per core.
        let a = rt.block_on(slots.enter(EXTRACTION_BUDGET / 4));
        let b = rt.block_on(slots.enter(EXTRACTION_BUDGET / 4));
        assert!(turn_waits(slots.enter(100)), "both cores are busy");
        drop((a, b));
    }

    #[test]
    fn requests_wait_while_the_backlog_is_past_its_bound() {
        let slots = ExtractionSlots::with_cores(2);
        slots.waiting(MAX_BACKLOG);
        assert!(turn_waits(slots.wait_for_room()));
        slots.done(MAX_BACKLOG);
        assert!(!turn_waits(slots.wait_for_room()));
    }
}
