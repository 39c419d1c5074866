//! How a worker commits a group of finished URLs, so that the union of the
//! workers' outputs holds every page once even when workers are killed:
//!
//! 1. the new pages' links go to the shared frontier (any partition);
//! 2. each URL's outcomes go to the local outbox, synced;
//! 3. each URL is acknowledged in the cluster (fenced by the partition's
//!    epoch); one whose lease lapsed is refused, and its outcomes dropped,
//!    since another fetch of it will count;
//! 4. the acknowledged outcomes go to the outputs.
//!
//! Links are added before the acknowledgement, so none is lost when a
//! worker dies between the two; the outbox comes before it, so an
//! acknowledged outcome is never lost ([`crate::outbox`]). Checkpoints make
//! the outputs, the outbox and the gate's replica durable.

use std::collections::{HashMap, HashSet};

use nearcrawl_crawl::run::{Done, Prediction};
use nearcrawl_crawl::sink::{Outcome, Sink, send_all};
use nearcrawl_crawl::stats::Stats;
use nearcrawl_crawl::traps::{Trap, trap_record};
use nearcrawl_fetch::politeness_key;
use url::Url;

use crate::error::ClusterError;
use crate::frontier::{Added, Link};
use crate::outbox::{Appending, Entry};
use crate::pages::ClusterClaim;
use crate::shared_gate::SharedGate;
use crate::store::{RedisStore, not_stale};

type Finished = Done<ClusterClaim>;

impl RedisStore {
    /// Steps 1 to 4 for a group of finished URLs; returns the partitions
    /// that got links.
    pub(crate) async fn commit_group(
        &mut self,
        mut group: Vec<Finished>,
    ) -> Result<HashSet<u32>, ClusterError> {
        self.note_delays(&group).await?;
        self.add_sitemaps(&mut group).await?;
        self.note_address_starts(&group).await;
        let (again, group): (Vec<Finished>, Vec<Finished>) =
            group.into_iter().partition(|f| f.again);
        for f in &again {
            let c = &f.claimed.claim;
            not_stale(self.frontier.give_back(&c.lease, &c.leased).await)?;
        }
        self.note_skipped(&group).await?;
        let mut touched = self.add_links(&group).await?;
        touched.extend(self.requeue_retired(false).await?);
        // An acknowledged URL frees its key: its partition may have a URL
        // ready at once.
        touched.extend((group.iter().chain(&again)).map(|f| f.claimed.claim.leased.partition));
        let page_json = self.outbox.append(group.iter().map(|f| Appending {
            partition: f.claimed.claim.leased.partition,
            id: f.claimed.claim.leased.id,
            stats: &f.stats,
            outcomes: &f.outcomes,
        }))?;
        self.acknowledge(group, page_json).await?;
        Ok(touched)
    }

    /// Steps 3 and 4 for URLs whose outcomes are in the outbox: each is
    /// acknowledged, and the outcomes of those acknowledged reach the
    /// outputs and the counts (with the record of a duplicate trap an
    /// acknowledgement made).
    /// `page_json`: the JSON of each URL's page records, as the outbox
    /// encoded them.
    async fn acknowledge(
        &mut self,
        group: Vec<Finished>,
        page_json: Vec<Vec<Vec<u8>>>,
    ) -> Result<(), ClusterError> {
        let acks = group.iter().map(|f| {
            let started = f.started.map(|t| t.elapsed());
            let c = &f.claimed.claim;
            let copies_neighbour = f.verdict.map(|v| v.copies_neighbour);
            self.frontier
                .ack(&c.lease, &c.leased, started, copies_neighbour)
        });
        let acked = futures_util::future::join_all(acks).await;
        let (mut counted, mut traps) = (0, Vec::new());
        for ((f, acked), json) in group.into_iter().zip(acked).zip(page_json) {
            match acked {
                Ok(a) if a.done => {
                    if let Some(duplicates) = a.trap {
                        traps.push(self.trap_entry(&f, duplicates));
                    }
                    send(&mut *self.sink, &f.outcomes, json)?;
                    counted += f.stats.fetched;
                    self.stats.merge(f.stats);
                }
                // Refused (lapsed, or the partition passed on): counted by
                // the fetch that is acknowledged.
                _ => self.lapsed += 1,
            }
        }
        if !traps.is_empty() {
            // The record of a trap follows the acknowledgement that made
            // it (the trap itself is in the cluster already).
            let page_json = self.outbox.append(traps.iter().map(Entry::appending))?;
            for (e, json) in traps.into_iter().zip(page_json) {
                send(&mut *self.sink, &e.outcomes, json)?;
                self.stats.merge(e.stats);
            }
        }
        if counted > 0 {
            self.frontier.count(counted).await?;
        }
        *self.shown.stats.lock().unwrap() = self.stats.clone();
        Ok(())
    }

    /// Queues the sitemaps the group found, and the pages the sitemaps it
    /// read list (counted `sitemap_urls` when new).
    async fn add_sitemaps(&mut self, group: &mut [Finished]) -> Result<(), ClusterError> {
        let sitemaps: Vec<(String, String, u32)> = group
            .iter()
            .flat_map(|f| &f.sitemaps)
            .map(|(url, level)| as_link(url, *level))
            .collect();
        if !sitemaps.is_empty() {
            let added = self.frontier.add_sitemaps(&as_links(&sitemaps)).await?;
            self.wake_owners(&added).await?;
        }
        for f in group.iter_mut().filter(|f| !f.listed.is_empty()) {
            let listed: Vec<_> = f.listed.iter().map(|c| as_link(c, 1)).collect();
            let added = self.frontier.add(&as_links(&listed)).await?;
            f.stats.sitemap_urls += added.queued as u64;
            self.count_refused(&added);
            self.wake_owners(&added).await?;
        }
        Ok(())
    }

    /// Tells the other workers whose partitions got URLs, one call per
    /// worker, all at once.
    pub(crate) async fn wake_owners(&mut self, added: &Added) -> Result<(), ClusterError> {
        let mut by_owner: HashMap<&str, Vec<u32>> = HashMap::new();
        for (p, owner) in &added.woken {
            if owner != &self.worker {
                by_owner.entry(owner).or_default().push(*p);
            }
        }
        let calls = by_owner
            .iter()
            .map(|(owner, partitions)| self.frontier.wake(owner, partitions));
        futures_util::future::try_join_all(calls).await?;
        Ok(())
    }

    /// Links refused for `max_hosts`, named as the embedded crawl names
    /// them.
    fn count_refused(&mut self, added: &Added) {
        if added.over_max_keys > 0 {
            let n = self
                .stats
                .out_of_scope
                .entry("host_limit".into())
                .or_default();
            *n += added.over_max_keys as u64;
        }
    }

    /// The record of a section cut off as a duplicate trap by `f`'s page:
    /// an outbox entry under `f`'s lease, so it is replayed with it.
    fn trap_entry(&self, f: &Finished, duplicates: u32) -> Entry {
        let window = self.stages.config.dedup.trap_window;
        let trap = Trap { duplicates, window };
        let mut stats = Stats::default();
        let (record, listed) = trap_record(&f.claimed.url, &trap);
        stats.duplicate_traps.push(listed);
        Entry {
            partition: f.claimed.claim.leased.partition,
            id: f.claimed.claim.leased.id,
            stats,
            outcomes: vec![record],
        }
    }

    /// Records the URLs of the group a URL rule skipped, in the replica
    /// (see [`SharedGate::note_skipped`]).
    async fn note_skipped(&mut self, group: &[Finished]) -> Result<(), ClusterError> {
        let skipped: Vec<(&Finished, &Prediction)> = (group.iter())
            .filter_map(|f| Some((f, f.predicted.as_ref()?)))
            .collect();
        if skipped.is_empty() {
            // The gate's lock is held across judges' round trips.
            return Ok(());
        }
        let mut gate = self.pages.gate.lock().await;
        for (f, p) in skipped {
            gate.note_skipped(p.rule, f.claimed.url.as_str(), f.claimed.depth)?;
        }
        Ok(())
    }

    /// Queues again the URLs this worker skipped by URL rules that retired
    /// (`all`: every retired rule's, at a start); the partitions touched.
    pub(crate) async fn requeue_retired(
        &mut self,
        all: bool,
    ) -> Result<HashSet<u32>, ClusterError> {
        // Asked every group: the gate's lock only when a rule retired.
        if !all && !self.pages.rules.read().unwrap().has_retired() {
            return Ok(HashSet::new());
        }
        let again = self.pages.gate.lock().await.take_requeued(all)?;
        if again.is_empty() {
            return Ok(HashSet::new());
        }
        tracing::info!(
            urls = again.len(),
            "URL rules retired: the URLs they skipped here are queued again"
        );
        let links: Vec<(String, String, u32)> = (again.iter())
            .filter_map(|r| Url::parse(&r.url).ok().map(|u| as_link(&u, r.depth)))
            .collect();
        let (touched, added) = self.queue(&links, true).await?;
        self.stats.predictions_requeued += added.queued as u64;
        self.pages.gate.lock().await.forget_requeued(&again)?;
        Ok(touched)
    }

    async fn add_links(&mut self, group: &[Finished]) -> Result<HashSet<u32>, ClusterError> {
        let links: Vec<(String, String, u32)> = group
            .iter()
            .flat_map(|f| f.links.iter().map(|c| as_link(c, f.claimed.depth + 1)))
            .collect();
        let (touched, added) = self.queue(&links, false).await?;
        self.count_refused(&added);
        Ok(touched)
    }

    /// Adds `links` to the shared frontier (`again`: although seen) and
    /// wakes the workers whose partitions got some; the partitions
    /// touched, and what was added.
    async fn queue(
        &mut self,
        links: &[(String, String, u32)],
        again: bool,
    ) -> Result<(HashSet<u32>, Added), ClusterError> {
        let links = as_links(links);
        let touched = (links.iter())
            .map(|l| self.frontier.partition_of(l.key))
            .collect();
        let added = match again {
            true => self.frontier.add_again(&links).await?,
            false => self.frontier.add(&links).await?,
        };
        self.wake_owners(&added).await?;
        Ok((touched, added))
    }

    /// Requests that took a server's turn: its next turn is a full delay
    /// after their real start. A failure is only logged: the turn taken
    /// already ends a delay after it was taken.
    async fn note_address_starts(&mut self, group: &[Finished]) {
        let notes = group.iter().filter_map(|f| {
            let (address, started) = (f.claimed.claim.address?, f.started?);
            Some(
                self.frontier
                    .address_paced(address, started.elapsed(), f.delay),
            )
        });
        for result in futures_util::future::join_all(notes).await {
            if let Err(e) = result {
                tracing::warn!("noting a request's start at its server failed: {e}");
            }
        }
    }

    /// Keys whose delay differs from the default (a Crawl-delay): the
    /// shared schedule follows it from their next lease on.
    async fn note_delays(&mut self, group: &[Finished]) -> Result<(), ClusterError> {
        let default = self.default_delay();
        let mut done = HashSet::new();
        for f in group {
            let key = &f.claimed.claim.leased.key;
            if f.delay != default && done.insert(key) {
                self.frontier.set_delay(key, f.delay).await?;
            }
        }
        Ok(())
    }

    /// Makes the outputs, the gate's replica and the outbox durable, in
    /// that order; answers a worker that asked for a copy of the replica.
    pub(crate) async fn make_durable(&mut self) -> Result<(), ClusterError> {
        let position = self.sink.checkpoint()?;
        let pages = self.pages.clone();
        let mut gate = pages.gate.lock().await;
        gate.flush()?;
        self.send_snapshot(&mut gate).await?;
        gate.trim().await?;
        drop(gate);
        self.outbox.checkpoint(position, &self.stats)?;
        Ok(())
    }

    /// Answers a worker that asked for a copy of a replica: one at a time,
    /// streamed in the background (this worker's replica may change
    /// meanwhile: the copy was taken first).
    async fn send_snapshot(&mut self, gate: &mut SharedGate) -> Result<(), ClusterError> {
        if self.sending.as_ref().is_some_and(|s| !s.is_finished()) {
            return Ok(());
        }
        let Some(joiner) = gate.snapshot_wanted().await? else {
            return Ok(());
        };
        let file = self.stages.config.output.dir.join("cluster/gate.sending");
        let at = gate.dump_for(&joiner, &file).await?;
        tracing::info!(joiner, %at, "sending a copy of the gate replica");
        let send = gate.send_snapshot(joiner.clone(), file.clone());
        self.sending = Some(tokio::spawn(async move {
            match send.await {
                Ok(()) => tracing::info!(joiner, "gate replica sent"),
                Err(e) => tracing::warn!(joiner, "sending the gate replica failed: {e}"),
            }
            let _ = std::fs::remove_file(&file);
        }));
        Ok(())
    }
}

/// A URL to queue at `depth`, with its politeness key.
pub(crate) fn as_link(url: &Url, depth: u32) -> (String, String, u32) {
    (politeness_key(url), url.to_string(), depth)
}

pub(crate) fn as_links(links: &[(String, String, u32)]) -> Vec<Link<'_>> {
    links
        .iter()
        .map(|(key, url, depth)| Link {
            key,
            url,
            depth: *depth,
        })
        .collect()
}

/// Sends a URL's outcomes to the outputs, with the JSON of its page
/// records if the outbox encoded them (`page_json`; else they are
/// encoded again).
pub(crate) fn send(
    sink: &mut dyn Sink,
    outcomes: &[Outcome],
    page_json: Vec<Vec<u8>>,
) -> std::io::Result<()> {
    let write = || send_all(sink, outcomes, page_json);
    nearcrawl_crawl::cpu::time(nearcrawl_crawl::cpu::Stage::Write, write)
}
