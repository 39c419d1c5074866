//! The bytes of response bodies held at once, bounded: a body is admitted
//! (before it is read) while the bodies held leave room for the bytes it
//! is expected to take, and counted as it grows past them; it stops
//! counting when the response is dropped.
//!
//! Why a gauge and not a semaphore: most bodies on the web come chunked or
//! compressed, their size unknown until read. A body half read never waits
//! for others (two bodies each waiting for the other's bytes would wait
//! forever), so one that grows past its share is counted as it is, and
//! the next bodies wait until the bytes held are back under the bound.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

#[derive(Debug)]
pub(crate) struct BodyMemory {
    bound: u64,
    held: Mutex<u64>,
    freed: Notify,
}

/// One body's bytes in the gauge.
#[derive(Debug)]
pub(crate) struct BodyShare {
    memory: Arc<BodyMemory>,
    bytes: u64,
}

impl BodyMemory {
    pub(crate) fn new(bound: u64) -> Arc<BodyMemory> {
        Arc::new(BodyMemory {
            bound: bound.max(1),
            held: Mutex::new(0),
            freed: Notify::new(),
        })
    }

    /// Waits until a body of `expected` bytes fits beside the bodies held
    /// (a body larger than the bound waits until none is held), and counts
    /// it.
    pub(crate) async fn admit(self: &Arc<Self>, expected: u64) -> BodyShare {
        loop {
            let freed = self.freed.notified();
            {
                let mut held = self.held.lock().unwrap();
                if *held == 0 || *held + expected <= self.bound {
                    *held += expected;
                    return BodyShare {
                        memory: self.clone(),
                        bytes: expected,
                    };
                }
            }
            freed.await;
        }
    }

    #[cfg(test)]
    fn held(&self) -> u64 {
        *self.held.lock().unwrap()
    }
}

impl BodyShare {
    /// The body now takes `bytes` (its buffer's capacity), more or less
    /// than before; never waits.
    pub(crate) fn set(&mut self, bytes: u64) {
        if bytes == self.bytes {
            return;
        }
        let mut held = self.memory.held.lock().unwrap();
        *held = (*held + bytes).saturating_sub(self.bytes);
        let shrunk = bytes < self.bytes;
        self.bytes = bytes;
        drop(held);
        if shrunk {
            self.memory.freed.notify_waiters();
        }
    }
}

impl Drop for BodyShare {
    fn drop(&mut self) {
        let mut held = self.memory.held.lock().unwrap();
        *held = held.saturating_sub(self.bytes);
        drop(held);
        self.memory.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn waits<F: std::future::Future>(f: F) -> bool {
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

    fn now<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn bodies_wait_while_the_bodies_held_leave_no_room() {
        let memory = BodyMemory::new(100);
        let a = now(memory.admit(60));
        assert!(waits(memory.admit(50)), "60 + 50 > 100");
        assert!(!waits(memory.admit(40)), "60 + 40 fits");
        drop(a);
        assert_eq!(memory.held(), 0);
        // A body larger than the bound is admitted alone.
        let big = now(memory.admit(500));
        assert!(waits(memory.admit(1)));
        drop(big);
        assert!(!waits(memory.admit(1)));
    }

    #[test]
    fn a_body_that_grows_is_counted_and_never_waits() {
        let memory = BodyMemory::new(100);
        let mut a = now(memory.admit(10));
        a.set(90);
        assert_eq!(memory.held(), 90);
        a.set(300); // past the bound: counted, not refused
        assert_eq!(memory.held(), 300);
        assert!(waits(memory.admit(1)), "the next body waits");
        a.set(50);
        assert_eq!(memory.held(), 50);
        assert!(!waits(memory.admit(50)));
        drop(a);
        assert_eq!(memory.held(), 0);
    }
}
