//! The store's one lock, timed: how long it was held, how long threads
//! were blocked on it and how long tasks queued for it, over the run, say
//! how much of the crawl is serial (`stats.json`, `this_run.core_lock`).
//!
//! Tasks take it in turn ([`TimedLock::lock_async`]): a task whose turn
//! has not come waits without holding its thread, which goes on with
//! other pages. With a plain mutex, one page judged on one core kept the
//! other core waiting for it: 1.2-1.4 s blocked in an 8 s crawl of the
//! Rust docs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::{Semaphore, SemaphorePermit};

pub(crate) struct TimedLock<T> {
    value: Mutex<T>,
    /// Tasks queue here, fairly, before they take the mutex.
    turns: Semaphore,
    held_ns: AtomicU64,
    waited_ns: AtomicU64,
    queued_ns: AtomicU64,
}

impl<T> TimedLock<T> {
    pub fn new(value: T) -> TimedLock<T> {
        TimedLock {
            value: Mutex::new(value),
            turns: Semaphore::new(1),
            held_ns: AtomicU64::new(0),
            waited_ns: AtomicU64::new(0),
            queued_ns: AtomicU64::new(0),
        }
    }

    /// The lock, for a task: it waits for the tasks before it without
    /// holding its thread, then for a thread that holds the lock without
    /// a turn ([`lock`](TimedLock::lock)).
    pub async fn lock_async(&self) -> TimedGuard<'_, T> {
        let asked = Instant::now();
        let turn = self
            .turns
            .acquire()
            .await
            .expect("the turns are never closed");
        let queued = asked.elapsed().as_nanos() as u64;
        self.queued_ns.fetch_add(queued, Ordering::Relaxed);
        let mut guard = self.lock();
        guard.turn = Some(turn);
        guard
    }

    /// The lock, for code that cannot wait as a task: it blocks the
    /// thread.
    pub fn lock(&self) -> TimedGuard<'_, T> {
        let asked = Instant::now();
        let value = self.value.lock().expect("a crawl thread panicked");
        let since = Instant::now();
        let waited = since.duration_since(asked).as_nanos() as u64;
        self.waited_ns.fetch_add(waited, Ordering::Relaxed);
        TimedGuard {
            value,
            turn: None,
            since,
            held_ns: &self.held_ns,
        }
    }

    /// Seconds held, seconds threads were blocked, and seconds tasks
    /// queued, so far.
    pub fn times(&self) -> serde_json::Value {
        let secs = |ns: &AtomicU64| (ns.load(Ordering::Relaxed) as f64 / 1e3).round() / 1e6;
        serde_json::json!({
            "held_secs": secs(&self.held_ns),
            "waited_secs": secs(&self.waited_ns),
            "queued_secs": secs(&self.queued_ns),
        })
    }
}

pub(crate) struct TimedGuard<'a, T> {
    value: MutexGuard<'a, T>,
    /// Released after the mutex (fields drop in order).
    turn: Option<SemaphorePermit<'a>>,
    since: Instant,
    held_ns: &'a AtomicU64,
}

impl<T> std::ops::Deref for TimedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> std::ops::DerefMut for TimedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T> Drop for TimedGuard<'_, T> {
    fn drop(&mut self) {
        let held = self.since.elapsed().as_nanos() as u64;
        self.held_ns.fetch_add(held, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    /// On one thread, a task queued for the lock lets the holder (and
    /// anything else) run: a lock that blocked the thread would never be
    /// released.
    #[test]
    fn a_task_waiting_for_its_turn_leaves_its_thread_to_other_tasks() {
        let (sent, got) = mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let local = tokio::task::LocalSet::new();
            let lock = Rc::new(TimedLock::new(Vec::new()));
            let (first, second) = (lock.clone(), lock.clone());
            local.block_on(&runtime, async move {
                let holder = tokio::task::spawn_local(async move {
                    let mut held = first.lock_async().await;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    held.push("first");
                });
                tokio::task::yield_now().await;
                let queued = tokio::task::spawn_local(async move {
                    second.lock_async().await.push("second");
                });
                holder.await.unwrap();
                queued.await.unwrap();
            });
            let times = lock.times();
            let order = lock.lock().clone();
            sent.send((order, times)).unwrap();
        });
        let (order, times) = got
            .recv_timeout(Duration::from_secs(10))
            .expect("the queued task blocked the thread the holder needed");
        assert_eq!(order, ["first", "second"]);
        assert!(times["queued_secs"].as_f64().unwrap() >= 0.04, "{times}");
        assert!(times["waited_secs"].as_f64().unwrap() < 0.04, "{times}");
        assert!(times["held_secs"].as_f64().unwrap() >= 0.05, "{times}");
    }
}
