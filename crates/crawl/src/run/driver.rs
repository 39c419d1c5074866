//! The loop, in one task: take URLs whose turn has come up to the global
//! concurrency, fetch and judge each in its own task, hand each back to the
//! store when its request is over, commit the finished ones in groups,
//! checkpoint, and stop when the store says the crawl is over.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use super::fetch::fetch_claimed;
use super::{CrawlStore, Done, Stages};
use crate::phases::Phase;

/// Finished URLs are committed in groups of this many, or when the oldest
/// is [`CrawlStore::GROUP_AGE`] old, or when nothing else is in flight.
const GROUP_URLS: usize = 64;

/// Longest the loop waits before it looks at the store again.
const MAX_IDLE: Duration = Duration::from_millis(20);

/// Runs the crawl over `store` until it is over (see
/// [`CrawlStore::over`]); the caller finishes the store (a last
/// checkpoint, `stats.json`). A store error ends the run at once: what was
/// committed is consistent, and the next run goes on from it.
pub async fn run<S: CrawlStore>(store: &mut S, stages: &Arc<Stages>) -> Result<(), S::Error> {
    let pages = store.pages();
    let concurrency = stages.config.politeness.global_concurrency.0.max(1);
    let checkpoint_every = Duration::from_secs(stages.config.output.checkpoint_secs.0 as u64);
    let mut tasks = JoinSet::new();
    let mut group = Group::default();
    let mut checkpointed = Instant::now();
    loop {
        store.maintain().await?;
        let mut next = MAX_IDLE;
        let room = concurrency.saturating_sub(tasks.len());
        // A URL handed out may have to start at once: none is taken while
        // fetched bodies wait for extraction past their bounds.
        if room > 0 && !stages.is_stopping() && stages.extraction.has_room() {
            // Finished URLs not committed yet count against the budget too.
            let taken = store.take(room, tasks.len() + group.done.len()).await?;
            next = taken.next;
            for done in taken.done {
                store.finished(&done)?;
                group.push(done);
            }
            for claimed in taken.claims {
                tasks.spawn(fetch_claimed(stages.clone(), pages.clone(), claimed));
            }
        }
        stages.in_flight.store(tasks.len(), Ordering::Relaxed);
        store.show(tasks.len()).await?;
        for done in collect(&mut tasks, group.wait(next, S::GROUP_AGE), stages).await {
            store.finished(&done)?;
            group.push(done);
        }
        if group.is_due(S::GROUP_AGE, tasks.is_empty()) {
            store.commit(group.take()).await?;
        }
        if group.is_empty() && checkpointed.elapsed() >= checkpoint_every {
            store.checkpoint().await?;
            checkpointed = Instant::now();
        }
        if tasks.is_empty() && group.is_empty() && store.over(stages.is_stopping()).await? {
            stages.in_flight.store(0, Ordering::Relaxed);
            return Ok(());
        }
    }
}

/// Finished URLs waiting to be committed.
struct Group<C> {
    done: Vec<Done<C>>,
    since: Instant,
}

impl<C> Default for Group<C> {
    fn default() -> Self {
        Group {
            done: Vec::new(),
            since: Instant::now(),
        }
    }
}

impl<C> Group<C> {
    fn push(&mut self, done: Done<C>) {
        if self.done.is_empty() {
            self.since = Instant::now();
        }
        self.done.push(done);
    }

    fn is_empty(&self) -> bool {
        self.done.is_empty()
    }

    fn is_due(&self, age: Duration, nothing_in_flight: bool) -> bool {
        !self.done.is_empty()
            && (self.done.len() >= GROUP_URLS || self.since.elapsed() >= age || nothing_in_flight)
    }

    /// How long the loop may wait: `next`, unless the group comes due first.
    fn wait(&self, next: Duration, age: Duration) -> Duration {
        let due = if self.done.is_empty() {
            MAX_IDLE
        } else {
            age.saturating_sub(self.since.elapsed())
        };
        next.min(due).min(MAX_IDLE)
    }

    fn take(&mut self) -> Vec<Done<C>> {
        std::mem::take(&mut self.done)
    }
}

/// Waits up to `wait` for a task to finish, then takes every finished one.
async fn collect<C: Send + 'static>(
    tasks: &mut JoinSet<Done<C>>,
    wait: Duration,
    stages: &Stages,
) -> Vec<Done<C>> {
    let first = if tasks.is_empty() {
        let t = Instant::now();
        tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
        stages.phases.add(Phase::Idle, t);
        None
    } else if wait.is_zero() {
        None
    } else {
        tokio::select! {
            done = tasks.join_next() => done,
            () = tokio::time::sleep(wait) => None,
        }
    };
    let mut finished: Vec<_> = first.into_iter().collect();
    while let Some(done) = tasks.try_join_next() {
        finished.push(done);
    }
    finished
        .into_iter()
        .filter_map(|done| {
            done.map_err(|e| tracing::error!("a fetch task failed: {e}"))
                .ok()
        })
        .collect()
}
