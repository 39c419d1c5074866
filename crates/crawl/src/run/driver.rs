//! The loop, in one task: take URLs whose turn has come up to the global
//! concurrency, fetch and judge each in its own task, hand each back to the
//! store when its request is over, commit the finished ones in groups,
//! checkpoint, and stop when the store says the crawl is over.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use super::fetch::fetch_claimed;
use super::{CrawlStore, Done, PageStore, Stages, Start};
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
    let checkpoint_every = Duration::from_secs(stages.config.output.checkpoint_secs.0 as u64);
    let mut l = Loop {
        pages: store.pages(),
        store,
        stages,
        concurrency: stages.config.politeness.global_concurrency.0.max(1),
        tasks: JoinSet::new(),
        group: Group::default(),
    };
    let mut checkpointed = Instant::now();
    loop {
        l.store.maintain().await?;
        let next = l.refill().await?;
        l.store.show(l.tasks.len()).await?;
        let wait = l.group.wait(next, S::GROUP_AGE);
        let finished = collect(&mut l.tasks, wait, stages).await;
        l.store.finished(&finished).await?;
        l.group.extend(finished);
        // Refilled before the commit, so that requests go on while it is
        // written.
        l.refill().await?;
        stages.in_flight.store(l.tasks.len(), Ordering::Relaxed);
        if l.group.is_due(S::GROUP_AGE, l.tasks.is_empty()) {
            l.store.commit(l.group.take()).await?;
        }
        if l.group.is_empty() && checkpointed.elapsed() >= checkpoint_every {
            l.store.checkpoint().await?;
            checkpointed = Instant::now();
        }
        let idle = l.tasks.is_empty() && l.group.is_empty();
        if idle && l.store.over(stages.is_stopping()).await? {
            return Ok(());
        }
    }
}

/// The loop's own state: the store, the tasks in flight, the group of
/// finished URLs waiting to be committed.
struct Loop<'a, S: CrawlStore> {
    store: &'a mut S,
    pages: Arc<S::Pages>,
    stages: &'a Arc<Stages>,
    concurrency: usize,
    tasks: JoinSet<Done<S::Claim>>,
    group: Group<S::Claim>,
}

impl<S: CrawlStore> Loop<'_, S> {
    /// Takes URLs up to the concurrency and starts a task for each; returns
    /// how long until the store has more to hand out.
    async fn refill(&mut self) -> Result<Duration, S::Error> {
        let room = self.concurrency.saturating_sub(self.tasks.len());
        let stages = self.stages;
        if room == 0 || stages.is_stopping() || !self.may_start() {
            return Ok(MAX_IDLE);
        }
        // Finished URLs not committed yet count against the budget too.
        let out = self.tasks.len() + self.group.done.len();
        let taken = self.store.take(room, out).await?;
        self.store.finished(&taken.done).await?;
        self.group.extend(taken.done);
        for claimed in taken.claims {
            let task = fetch_claimed(stages.clone(), self.pages.clone(), claimed);
            self.tasks.spawn(task);
        }
        Ok(taken.next)
    }

    /// While fetched bodies wait for extraction past their bounds, no
    /// request starts. A task waits for that itself before its request
    /// (one starts as each body's turn starts, as the backlog frees),
    /// unless a URL must start at once once handed out: then none is
    /// taken.
    fn may_start(&self) -> bool {
        match self.pages.start() {
            Start::WhenReady(_) => true,
            Start::AtOnce(_) => self.stages.extraction.has_room(),
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
    fn extend(&mut self, done: Vec<Done<C>>) {
        if self.done.is_empty() {
            self.since = Instant::now();
        }
        self.done.extend(done);
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
