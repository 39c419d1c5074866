//! A worker's share of the crawl: the partitions it holds, hands back or
//! gives away as workers join, die or run out of work, and when each is
//! next asked for URLs.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::error::ClusterError;
use crate::frontier::SharedFrontier;
use crate::lease::{Lease, Partitions};

/// How often a worker looks at how many workers there are, to take or
/// hand back partitions: a joining worker gets its share within about two
/// of these.
const BALANCE_EVERY: Duration = Duration::from_millis(500);
/// A worker with nothing to do asks for work at most this often; a
/// partition it was given is not taken back by the giver for this long.
const ASK_EVERY: Duration = Duration::from_secs(1);
const GIVEN_FOR: Duration = Duration::from_secs(5);
/// Links other workers add to a partition wake it at once (they tell this
/// worker, which looks every this long).
const WAKE_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, Default)]
pub(crate) struct Share {
    pub held: Vec<Lease>,
    /// Beyond this worker's share, or given to a worker that asked for
    /// work: no new leases; released (or given) once nothing is in flight.
    pub draining: Vec<(Lease, Option<String>)>,
    /// Whether a partition's last lease call found work (URLs, or a key
    /// waiting for its turn).
    pub has_work: HashMap<u32, bool>,
    /// Partitions given away lately: not taken back by `balance`.
    given: HashMap<u32, Instant>,
    /// Partitions received lately: not handed back as surplus.
    received: HashMap<u32, Instant>,
    /// When this worker last asked for work.
    asked: Option<Instant>,
    /// Partitions given to and received from other workers that asked.
    pub gave: u64,
    pub got: u64,
    /// When each partition is next asked for URLs.
    pub due: HashMap<u32, Instant>,
    /// URLs in flight per partition.
    pub in_flight: HashMap<u32, usize>,
    /// When this worker last looked at what other workers woke.
    wakes: Option<Instant>,
    balanced: Option<Instant>,
}

impl Share {
    /// Rebalances every [`BALANCE_EVERY`] (the leases are renewed every
    /// third of their term); releases drained partitions once nothing of
    /// theirs is in flight.
    pub async fn keep(
        &mut self,
        partitions: &mut Partitions,
        count: u32,
    ) -> Result<(), ClusterError> {
        if self.balanced.is_some_and(|t| t.elapsed() < BALANCE_EVERY) {
            return Ok(());
        }
        self.balanced = Some(Instant::now());
        let before: HashSet<u32> = self.held.iter().map(|l| l.partition).collect();
        for gift in partitions.gifts().await? {
            self.received.insert(gift.partition, Instant::now());
            self.got += 1;
            self.held.push(gift);
        }
        // Surplus is handed back from the end: never a partition just
        // received (it came with work); otherwise in the order taken.
        self.received.retain(|_, t| t.elapsed() < GIVEN_FOR);
        let received = &self.received;
        self.held
            .sort_by_key(|l| !received.contains_key(&l.partition));
        self.given.retain(|_, t| t.elapsed() < GIVEN_FOR);
        let skip: HashSet<u32> = self.given.keys().copied().collect();
        let surplus = partitions
            .balance_skipping(&mut self.held, count, &skip)
            .await?;
        self.draining.extend(surplus.into_iter().map(|l| (l, None)));
        for l in &self.held {
            if !before.contains(&l.partition) {
                self.due.insert(l.partition, Instant::now());
            }
        }
        self.give_work(partitions).await?;
        self.release_drained(partitions).await
    }

    /// Partitions of this worker's that others added URLs to are asked at
    /// once (looked at every [`WAKE_EVERY`]).
    pub async fn take_wakes(
        &mut self,
        frontier: &SharedFrontier,
        worker: &str,
    ) -> Result<(), ClusterError> {
        if self.wakes.is_some_and(|t| t.elapsed() < WAKE_EVERY) {
            return Ok(());
        }
        self.wakes = Some(Instant::now());
        let woken: HashSet<u32> = frontier.woken(worker).await?.into_iter().collect();
        self.wake(&woken);
        Ok(())
    }

    /// `partitions` of this worker's are asked at once.
    pub fn wake(&mut self, partitions: &HashSet<u32>) {
        let now = Instant::now();
        for p in partitions {
            if let Some(d) = self.due.get_mut(p) {
                *d = now;
            }
        }
    }

    /// Answers another worker's ask for work: with work in two partitions
    /// or more, one of them goes to it once drained.
    async fn give_work(&mut self, partitions: &mut Partitions) -> Result<(), ClusterError> {
        let with_work = |s: &Share, l: &Lease| s.has_work.get(&l.partition) == Some(&true);
        if self.held.iter().filter(|l| with_work(self, l)).count() < 2 {
            return Ok(());
        }
        let Some(to) = partitions.claim_hungry().await? else {
            return Ok(());
        };
        if let Some(i) = self.held.iter().position(|l| with_work(self, l)) {
            let lease = self.held.remove(i);
            tracing::debug!(
                partition = lease.partition,
                to,
                "giving a partition with work"
            );
            self.draining.push((lease, Some(to)));
        }
        Ok(())
    }

    /// Releases (or gives) drained partitions once nothing of theirs is in
    /// flight. Until then their leases are renewed like held ones: a page
    /// may take longer than a lease (a render, a PDF), and a lapsed lease
    /// would let another worker fetch it again.
    async fn release_drained(&mut self, partitions: &mut Partitions) -> Result<(), ClusterError> {
        let mut kept = Vec::new();
        for (mut lease, to) in std::mem::take(&mut self.draining) {
            if self.in_flight.get(&lease.partition).copied().unwrap_or(0) > 0 {
                if partitions.keep_alive(&mut lease).await? {
                    kept.push((lease, to));
                }
                continue;
            }
            match to {
                Some(to) => {
                    self.given.insert(lease.partition, Instant::now());
                    self.gave += 1;
                    partitions.give(lease, &to).await?;
                }
                None => partitions.release(lease).await?,
            }
        }
        self.draining = kept;
        Ok(())
    }

    /// Nothing in flight here, none of this worker's partitions has work,
    /// and the crawl has: ask another worker for a partition (once a
    /// second at most).
    pub async fn ask_for_work(&mut self, partitions: &Partitions) -> Result<(), ClusterError> {
        let idle = self
            .held
            .iter()
            .all(|l| self.has_work.get(&l.partition) == Some(&false));
        if idle && self.asked.is_none_or(|t| t.elapsed() >= ASK_EVERY) {
            self.asked = Some(Instant::now());
            partitions.ask_for_work().await?;
        }
        Ok(())
    }

    /// Partitions held whose lease has more than `margin` left and whose
    /// time to be asked has come, the longest due first.
    pub fn due_now(&self, margin: Duration) -> Vec<Lease> {
        let now = Instant::now();
        let mut due: Vec<Lease> = self
            .held
            .iter()
            .filter(|l| l.usable(margin) && self.due.get(&l.partition).is_none_or(|&d| d <= now))
            .cloned()
            .collect();
        due.sort_by_key(|l| self.due.get(&l.partition).copied());
        due
    }

    /// How long until a held partition is due.
    pub fn next_due(&self) -> Option<Duration> {
        let now = Instant::now();
        (self.held.iter())
            .filter_map(|l| self.due.get(&l.partition))
            .min()
            .map(|d| d.saturating_duration_since(now))
    }

    /// Every partition held or draining, to release at the end.
    pub fn into_leases(self) -> impl Iterator<Item = Lease> {
        (self.held.into_iter()).chain(self.draining.into_iter().map(|(l, _)| l))
    }
}
