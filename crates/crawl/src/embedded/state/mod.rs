//! The crawl's durable state: one [`Store`], so everything one URL changes
//! (frontier, documents, statistics, its pending outputs) is one atomic
//! batch.
//!
//! Why this shape: outputs are files, the store is not, and nothing makes a
//! file write and a store write atomic together. So a URL's outputs are
//! first written to the outbox (see [`crate::embedded::outbox`]), durably, with its
//! batch naming the outbox's new length, then to the files. A
//! checkpoint now and then makes the files durable, records how long they
//! are, and empties the outbox. After a crash the files are cut back to the
//! last checkpoint and the outbox, which holds exactly the outcomes of the
//! batches that made it to disk, is written again. A batch that did not make
//! it left its URL in flight, and it is fetched again.
//!
//! Keys, by first byte: `k`/`f` the frontier (see [`Frontier`]; `q`/`i`/`u`/`s`
//! as earlier versions kept it),
//! `h`/`g` pages per host and per domain, `p` per-host figures, `t` trap
//! sections, `x` origins whose sitemaps were read, `r` robots.txt files,
//! `n` URLs a URL rule skipped, `m` metadata; `d` documents' URLs and `o` the outbox as earlier versions
//! kept them (read in `upgrade.rs`). Beside the store: the outbox (see [`crate::embedded::outbox`]), the
//! documents' URLs (see [`crate::doc_urls`]), and the frontier's queue and
//! seen set (see [`crate::embedded::frontier`]).

mod upgrade;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use nearcrawl_index::Judgement;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::doc_urls::{DocUrls, Length};
use crate::embedded::frontier::{Additions, Frontier};
use crate::embedded::outbox::{Block, NewDoc, Outbox, PackedOutcomes};
use crate::embedded::store::{Store, StoreError, Writes, be_u64, io_error, key};
use crate::scope::{page_budget_spent, registrable_domain};
use crate::sink::Position;
use crate::stats::{HostFigures, Stats, TrappedHost};

use crate::embedded::store::tag::{
    DOMAIN, HOST, HOST_STATS, META, READ_TARGET, ROBOTS, SITEMAPS_READ, SKIPPED, TRAP, URL_RULES,
};

/// Bytes of URL rules a piece holds at most (whole lines; a longer line is
/// a piece of its own). Saved as one value, the table (half a megabyte
/// once a site has given 20,000 rules) shared a tree node with the counts
/// every commit writes, and sled wrote it out again with each commit: 435
/// copies, 1.6 KB of state a page, on a 100,000-page crawl.
const URL_RULES_PIECE: usize = 2048;

/// Document ids are handed out from blocks made durable before use, so an
/// id that a crash lost is never given to another page (the duplicate
/// index may still name it).
const DOC_BLOCK: u64 = 4096;

/// What a crawl did at one host, over every run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostStats {
    pub fetched: u64,
    pub written: u64,
    pub duplicates: u64,
    pub errors: u64,
    /// The host's delay at each fetch, summed (for the mean).
    pub delay_ms_total: u64,
}

impl HostStats {
    fn to_bytes(self) -> [u8; 40] {
        let mut b = [0u8; 40];
        let fields = [
            self.fetched,
            self.written,
            self.duplicates,
            self.errors,
            self.delay_ms_total,
        ];
        for (i, v) in fields.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
        }
        b
    }

    fn from_bytes(b: &[u8]) -> HostStats {
        let f = |i: usize| b.get(i * 8..i * 8 + 8).map_or(0, be_u64);
        HostStats {
            fetched: f(0),
            written: f(1),
            duplicates: f(2),
            errors: f(3),
            delay_ms_total: f(4),
        }
    }

    fn figures(self, host: &str) -> HostFigures {
        HostFigures {
            host: host.to_string(),
            fetched: self.fetched,
            written: self.written,
            duplicates: self.duplicates,
            errors: self.errors,
            mean_delay_ms: self.delay_ms_total.checked_div(self.fetched).unwrap_or(0),
        }
    }
}

/// Where the outputs stood at the last checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The sink's position.
    pub sink: Position,
    /// Every document below this is durable in the duplicate index.
    pub dedup_through: u64,
    /// When it was made (seconds since the Unix epoch); absent in
    /// checkpoints of earlier versions.
    #[serde(default)]
    pub at_unix: Option<u64>,
}

pub struct State {
    store: Arc<dyn Store>,
    pub frontier: Frontier,
    pub stats: Stats,
    next_doc: u64,
    doc_reserved: u64,
    outbox: Outbox,
    /// Pages taken per host and per registrable domain (fetches started,
    /// committed or not), by their state key.
    taken: HashMap<Vec<u8>, u64>,
    /// Per-host figures of hosts crawled in this run (on disk too).
    host_stats: HashMap<String, HostStats>,
    /// Sections cut off as duplicate traps (few: all kept in memory).
    trapped: std::collections::HashSet<String>,
    /// Every document's URL.
    docs: DocUrls,
    /// Whether the store holds documents' URLs (written by earlier versions).
    old_docs: bool,
    /// Documents made since the last [`commit`](State::commit),
    /// for the outbox.
    new_docs: Vec<NewDoc>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("next_doc", &self.next_doc)
            .finish_non_exhaustive()
    }
}

/// The keys of the page budget of `host` (a politeness key: the host,
/// with its port when not the scheme's default) and of its registrable
/// domain's.
fn budget_keys(host: &str) -> [Vec<u8>; 2] {
    let domain = registrable_domain(nearcrawl_fetch::host_of_key(host));
    [key(HOST, host.as_bytes()), key(DOMAIN, domain.as_bytes())]
}

fn meta(name: &str) -> Vec<u8> {
    key(META, name.as_bytes())
}

/// A state record that does not decode: not written by this version, or
/// damaged on disk.
fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt(what)
}

impl State {
    /// Opens (or resumes) the state kept in `store`, with its files (the
    /// outbox, the documents' URLs) in `dir`.
    pub fn open_in(store: Arc<dyn Store>, dir: &std::path::Path) -> Result<State, StoreError> {
        let recorded = store.get(&meta("outbox_len"))?.map_or(0, |v| be_u64(&v));
        let mut outbox = Outbox::open(&dir.join("outbox"), recorded).map_err(io_error)?;
        let tails: Vec<_> = (outbox.read_all().map_err(io_error)?)
            .into_iter()
            .flat_map(|b| b.tails)
            .collect();
        let frontier = Frontier::resume(store.clone(), dir, &tails)?;
        let trapped = store
            .scan_prefix(&[TRAP])
            .map(|kv| kv.map(|(k, _)| String::from_utf8_lossy(&k[1..]).into_owned()))
            .collect::<Result<_, _>>()?;
        let doc_reserved = store.get(&meta("doc_reserved"))?.map_or(0, |v| be_u64(&v));
        let stats = store
            .get(&meta("stats"))?
            .and_then(|v| serde_json::from_slice(&v).ok())
            .unwrap_or_default();
        let recorded = store.get(&meta("doc_urls"))?;
        let recorded = match recorded {
            None => Length::default(),
            Some(v) => Length::from_bytes(&v)
                .ok_or_else(|| corrupt(format!("the documents' URLs' length {v:?}")))?,
        };
        let docs = DocUrls::open(&dir.join("docs"), recorded).map_err(io_error)?;
        let old_docs = upgrade::has_old_docs(&*store);
        Ok(State {
            store,
            frontier,
            stats,
            next_doc: doc_reserved,
            doc_reserved,
            outbox,
            taken: HashMap::new(),
            trapped,
            host_stats: HashMap::new(),
            docs,
            old_docs,
            new_docs: Vec::new(),
        })
    }

    /// Records which outputs the crawl writes; if it wrote others before,
    /// returns those instead (positions of one set mean nothing to another).
    pub fn set_outputs(&self, outputs: &str) -> Result<Option<String>, StoreError> {
        match self.store.get(&meta("outputs"))? {
            Some(v) if v != outputs.as_bytes() => {
                Ok(Some(String::from_utf8_lossy(&v).into_owned()))
            }
            Some(_) => Ok(None),
            None => {
                self.store.insert(&meta("outputs"), outputs.as_bytes())?;
                Ok(None)
            }
        }
    }

    /// The earlier crawls whose gates this crawl's holds, once imported
    /// (see [`crate::remembered`]).
    pub fn remembered(&self) -> Result<Option<String>, StoreError> {
        let v = self.store.get(&meta("remembered"))?;
        Ok(v.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Records, durably, that the gate holds the earlier crawls `which`.
    pub fn set_remembered(&self, which: &str) -> Result<(), StoreError> {
        self.store.insert(&meta("remembered"), which.as_bytes())?;
        self.store.flush()
    }

    /// The last checkpoint, if the crawl has one.
    pub fn checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        Ok(self
            .store
            .get(&meta("checkpoint"))?
            .and_then(|v| serde_json::from_slice(&v).ok()))
    }

    /// Records a checkpoint: the sink is durable at `sink`, the duplicate
    /// index holds every document so far, the URL rules saw every commit
    /// so far. Saves the documents' URLs and empties the outbox; durable
    /// on return.
    pub fn set_checkpoint(&mut self, sink: Position, url_rules: &[u8]) -> Result<(), StoreError> {
        let mut batch = Writes::default();
        self.put_url_rules(&mut batch, url_rules)?;
        let docs = self.docs.save().map_err(io_error)?;
        batch.insert(meta("doc_urls"), docs.to_bytes());
        self.frontier.compact_and_save(&mut batch)?;
        upgrade::remove_old_outbox(&*self.store, &mut batch)?;
        let at_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs());
        let cp = Checkpoint {
            sink,
            dedup_through: self.next_doc,
            at_unix,
        };
        batch.insert(
            meta("checkpoint"),
            serde_json::to_vec(&cp).expect("serializes"),
        );
        batch.insert(meta("outbox_len"), 0u64.to_be_bytes());
        self.store.apply(batch)?;
        self.store.flush()?;
        self.frontier.saved();
        // Emptied once the store no longer names its contents.
        self.outbox.clear().map_err(io_error)?;
        Ok(())
    }

    /// The outcomes written since the last checkpoint, in order, and the
    /// judgements of the documents created since (to restore the index).
    pub(crate) fn outbox(&mut self) -> Result<Vec<Block>, StoreError> {
        let mut blocks = upgrade::old_outbox(&*self.store)?;
        blocks.extend(self.outbox.read_all().map_err(io_error)?);
        Ok(blocks)
    }

    /// A new document id.
    pub fn new_doc(&mut self) -> Result<u64, StoreError> {
        if self.next_doc >= self.doc_reserved {
            self.doc_reserved = self.next_doc + DOC_BLOCK;
            self.store
                .insert(&meta("doc_reserved"), &self.doc_reserved.to_be_bytes())?;
            self.store.flush()?;
        }
        self.next_doc += 1;
        Ok(self.next_doc - 1)
    }

    /// Records document `doc` with its URL: both go to the outbox with the
    /// group, and the next checkpoint keeps the URL (the index keeps the
    /// judgement).
    pub fn put_doc(&mut self, doc: u64, url: &str, judgement: &Judgement) {
        self.docs.add(doc, url);
        self.new_docs.push(NewDoc {
            doc,
            judgement: judgement.to_bytes(),
            url: Some(url.to_string()),
        });
    }

    /// Notes again the URL of a document the outbox holds (recovery).
    pub(crate) fn restore_doc_url(&mut self, doc: u64, url: &str) {
        self.docs.add(doc, url);
    }

    /// The URL of a document.
    pub fn doc_url(&self, doc: u64) -> Result<Option<String>, StoreError> {
        if let Some(url) = self.docs.get(doc).map_err(io_error)? {
            return Ok(Some(url));
        }
        if !self.old_docs {
            return Ok(None);
        }
        upgrade::old_doc_url(&*self.store, doc)
    }

    /// Whether document `doc` exists (was not lost in a crash).
    pub fn doc_exists(&self, doc: u64) -> bool {
        doc < self.next_doc
            && (self.docs.contains(doc)
                || self.old_docs && upgrade::old_doc_exists(&*self.store, doc))
    }

    /// Commits a group: appends what `adds` adds to the frontier's files,
    /// then its bytes, the documents put since the last commit (their
    /// judgements and URLs) and the group's outcomes (packed before the
    /// lock was taken) to the outbox, durably; then applies `batch`,
    /// naming the outbox's new length (see [`crate::embedded::outbox`]);
    /// then the frontier takes `adds` in. On an error the files are cut
    /// back to where they were: the group is gone (its URLs stay in
    /// flight, to be fetched again), and the next group's bytes follow the
    /// last committed group's.
    pub(crate) fn commit(
        &mut self,
        mut batch: Writes,
        mut adds: Additions,
        outcomes: &[PackedOutcomes],
    ) -> Result<(), StoreError> {
        let tails = self.frontier.write(&mut adds).map_err(io_error)?;
        let docs = std::mem::take(&mut self.new_docs);
        let outbox_was = self.outbox.len();
        let mut committed = Ok(());
        if !(docs.is_empty() && outcomes.iter().all(PackedOutcomes::is_empty) && tails.is_empty()) {
            committed = (self.outbox.append(&docs, &tails, outcomes))
                .map(|len| batch.insert(meta("outbox_len"), len.to_be_bytes()))
                .map_err(io_error);
        }
        committed = committed.and_then(|()| self.store.apply(batch));
        if let Err(e) = committed {
            // Best effort: the error to report is the first one.
            let _ = self.outbox.cut_to(outbox_was);
            let _ = self.frontier.unwrite(&tails);
            return Err(e);
        }
        self.frontier.added(adds);
        Ok(())
    }

    /// Writes the statistics, in `batch`.
    pub fn put_stats(&self, batch: &mut Writes) {
        batch.insert(
            meta("stats"),
            serde_json::to_vec(&self.stats).expect("serializes"),
        );
    }

    /// Takes one page of `host`'s budget and of its registrable domain's;
    /// when one is spent, or the page's `section` is a trap, takes nothing
    /// and names why.
    pub fn take_page(
        &mut self,
        host: &str,
        section: &str,
        max_per_host: u64,
        max_per_domain: u64,
    ) -> Result<Result<(), &'static str>, StoreError> {
        if self.trapped.contains(section) || self.trapped.contains(host) {
            return Ok(Err("duplicate_trap"));
        }
        let [host_key, domain_key] = budget_keys(host);
        let (host_pages, domain_pages) =
            (self.pages_taken(&host_key)?, self.pages_taken(&domain_key)?);
        if let Some(spent) =
            page_budget_spent(host_pages, domain_pages, max_per_host, max_per_domain)
        {
            return Ok(Err(spent));
        }
        for k in [host_key, domain_key] {
            *self.taken.entry(k).or_default() += 1;
        }
        Ok(Ok(()))
    }

    /// Gives back a page [`take_page`](State::take_page) took of `host`'s
    /// budget and its domain's (its request was not made after all).
    pub fn give_back_page(&mut self, host: &str) {
        for k in budget_keys(host) {
            if let Some(n) = self.taken.get_mut(&k) {
                *n = n.saturating_sub(1);
            }
        }
    }

    /// Cuts `trap.section` off as a duplicate trap: no more of its pages
    /// are taken, over every run. The record goes in `batch`.
    pub fn trap_section(&mut self, batch: &mut Writes, trap: TrappedHost) {
        if self.trapped.insert(trap.section.clone()) {
            batch.insert(key(TRAP, trap.section.as_bytes()), []);
            if self.stats.duplicate_traps.len() < crate::stats::MAX_TRAPS_LISTED {
                self.stats.duplicate_traps.push(trap);
            }
        }
    }

    fn pages_taken(&mut self, budget: &[u8]) -> Result<u64, StoreError> {
        if let Some(n) = self.taken.get(budget) {
            return Ok(*n);
        }
        let n = self.store.get(budget)?.map_or(0, |v| be_u64(&v));
        self.taken.insert(budget.to_vec(), n);
        Ok(n)
    }

    /// `host`'s figures, to update (read from disk the first time).
    pub fn host_stats(&mut self, host: &str) -> &mut HostStats {
        if !self.host_stats.contains_key(host) {
            let stored = self
                .store
                .get(&key(HOST_STATS, host.as_bytes()))
                .ok()
                .flatten();
            let stats = stored.map_or_else(HostStats::default, |v| HostStats::from_bytes(&v));
            self.host_stats.insert(host.to_string(), stats);
        }
        self.host_stats.get_mut(host).expect("just inserted")
    }

    /// The `n` hosts with the most pages fetched, as `stats.json` lists
    /// them (a scan of every host's figures: for the end of a run).
    pub fn top_hosts(&self, n: usize) -> Result<Vec<HostFigures>, StoreError> {
        let mut all: HashMap<String, HostStats> = HashMap::new();
        for item in self.store.scan_prefix(&[HOST_STATS]) {
            let (k, v) = item?;
            all.insert(
                String::from_utf8_lossy(&k[1..]).into_owned(),
                HostStats::from_bytes(&v),
            );
        }
        all.extend(self.host_stats.iter().map(|(h, s)| (h.clone(), *s)));
        let mut hosts: Vec<(String, HostStats)> = all.into_iter().collect();
        hosts.sort_by(|a, b| b.1.fetched.cmp(&a.1.fetched).then_with(|| a.0.cmp(&b.0)));
        Ok(hosts.iter().take(n).map(|(h, s)| s.figures(h)).collect())
    }

    /// Writes the page counts of `host` and its domain, in `batch`.
    pub fn put_host(&self, batch: &mut Writes, host: &str) {
        if let Some(s) = self.host_stats.get(host) {
            batch.insert(key(HOST_STATS, host.as_bytes()), s.to_bytes());
        }
        for k in budget_keys(host) {
            if let Some(n) = self.taken.get(&k) {
                batch.insert(k, n.to_be_bytes());
            }
        }
    }

    /// The URLs whose pages were read through redirects from other URLs
    /// (see [`put_read_target`](State::put_read_target)).
    pub fn read_targets(&self) -> Result<HashSet<String>, StoreError> {
        let urls = self.store.scan_prefix(&[READ_TARGET]);
        urls.map(|kv| kv.map(|(k, _)| String::from_utf8_lossy(&k[1..]).into_owned()))
            .collect()
    }

    /// Records, in `batch`, that the page of `url` was read through a
    /// redirect from another URL: it is not fetched again.
    pub fn put_read_target(&self, batch: &mut Writes, url: &Url) {
        batch.insert(key(READ_TARGET, url.as_str().as_bytes()), []);
    }

    /// Calls `f` with the URL of every document (the pages written).
    pub fn each_doc_url(&self, f: impl FnMut(&str)) -> Result<(), StoreError> {
        self.docs.each_url(f).map_err(io_error)
    }

    /// The URL rules as the last checkpoint saved them.
    pub fn url_rules(&self) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(count) = self.url_rule_pieces()? else {
            // As versions before the pieces saved them.
            return self.store.get(&meta("url_rules"));
        };
        let mut rules = Vec::new();
        for n in 0..count {
            let piece = self.store.get(&url_rules_key(n))?;
            rules.extend(piece.ok_or_else(|| corrupt(format!("URL rules piece {n} is missing")))?);
        }
        Ok(Some(rules))
    }

    fn url_rule_pieces(&self) -> Result<Option<u32>, StoreError> {
        let count = self.store.get(&meta("url_rule_pieces"))?;
        count
            .map(|c| {
                let c: [u8; 4] = c
                    .as_slice()
                    .try_into()
                    .map_err(|_| corrupt("URL rules count".into()))?;
                Ok(u32::from_be_bytes(c))
            })
            .transpose()
    }

    /// Puts `rules` (lines) in `batch` as pieces, and removes the pieces of
    /// the last save past their number.
    fn put_url_rules(&self, batch: &mut Writes, rules: &[u8]) -> Result<(), StoreError> {
        let mut count = 0u32;
        let mut rest = rules;
        while !rest.is_empty() {
            let mut end = rest.len().min(URL_RULES_PIECE);
            if end < rest.len() {
                // The last whole line that fits, or the first line whole.
                end = match rest[..end].iter().rposition(|&b| b == b'\n') {
                    Some(nl) => nl + 1,
                    None => rest
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(rest.len(), |nl| nl + 1),
                };
            }
            batch.insert(url_rules_key(count), &rest[..end]);
            rest = &rest[end..];
            count += 1;
        }
        for stale in count..self.url_rule_pieces()?.unwrap_or(0) {
            batch.remove(url_rules_key(stale));
        }
        batch.insert(meta("url_rule_pieces"), count.to_be_bytes());
        batch.remove(meta("url_rules"));
        Ok(())
    }

    /// Records, in `batch`, a URL at `depth` that URL rule `rule` skipped.
    pub fn put_skipped(&self, batch: &mut Writes, rule: usize, url: &Url, depth: u32) {
        batch.insert(skipped_key(rule, url.as_str()), depth.to_be_bytes());
    }

    /// Up to `most` of the URLs rule `rule` skipped, with their depths.
    pub fn skipped_by(&self, rule: usize, most: usize) -> Result<Vec<(String, u32)>, StoreError> {
        let prefix = skipped_key(rule, "");
        let skipped = self.store.scan_prefix(&prefix).take(most).map(|kv| {
            let (k, v) = kv?;
            let url = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
            let depth = v
                .get(..4)
                .map_or(0, |d| u32::from_be_bytes(d.try_into().unwrap()));
            Ok((url, depth))
        });
        skipped.collect()
    }

    /// Forgets, in `batch`, that rule `rule` skipped `url`.
    pub fn remove_skipped(&self, batch: &mut Writes, rule: usize, url: &str) {
        batch.remove(skipped_key(rule, url));
    }

    /// Whether the sitemaps of `origin` were read to the end.
    pub fn sitemaps_read(&self, origin: &str) -> bool {
        self.store
            .contains(&key(SITEMAPS_READ, origin.as_bytes()))
            .unwrap_or(false)
    }

    /// Records, in `batch`, that the sitemaps of `origin` were read.
    pub fn put_sitemaps_read(&self, batch: &mut Writes, origin: &str) {
        batch.insert(key(SITEMAPS_READ, origin.as_bytes()), []);
    }

    /// Applies `writes` as one atomic batch.
    pub fn apply(&mut self, writes: Writes) -> Result<(), StoreError> {
        self.store.apply(writes)
    }
}

fn url_rules_key(piece: u32) -> Vec<u8> {
    key(URL_RULES, &piece.to_be_bytes())
}

fn skipped_key(rule: usize, url: &str) -> Vec<u8> {
    let mut k = key(SKIPPED, &(rule as u64).to_be_bytes());
    k.extend_from_slice(url.as_bytes());
    k
}

/// The fetcher's robots.txt files, kept in the state store so a resumed
/// crawl does not fetch them again while they are fresh. A cache: written
/// outside the atomic batches, and a lost entry only costs a fetch.
#[derive(Debug, Clone)]
pub struct RobotsCache(pub Arc<dyn Store>);

impl nearcrawl_fetch::RobotsStore for RobotsCache {
    fn load(&self, origin: &str) -> Option<(std::time::SystemTime, Vec<u8>)> {
        let v = self.0.get(&key(ROBOTS, origin.as_bytes())).ok()??;
        let secs = be_u64(v.get(..8)?);
        Some((
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
            v[8..].to_vec(),
        ))
    }

    fn save(&self, origin: &str, expires: std::time::SystemTime, text: &[u8]) {
        let secs = expires
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut v = secs.to_be_bytes().to_vec();
        v.extend_from_slice(text);
        if let Err(e) = self.0.insert(&key(ROBOTS, origin.as_bytes()), &v) {
            tracing::warn!(origin, "robots.txt not kept: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::store::tag::{DOC, OLD_OUTBOX};

    /// A store in a temporary database, and an empty directory for the
    /// state's files (`name` keeps tests apart).
    fn store_and_dir(name: &str) -> (sled::Db, Arc<dyn Store>, std::path::PathBuf) {
        let db = sled::Config::new().temporary(true).open().unwrap();
        let store: Arc<dyn Store> =
            Arc::new(crate::embedded::store::SledStore::open_in(&db, "crawl").unwrap());
        let dir = std::env::temp_dir().join(format!("nearcrawl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        (db, store, dir)
    }

    #[test]
    fn outbox_entries_of_earlier_versions_are_read_then_gone() {
        use crate::sink::{ErrorRecord, Outcome};
        let (_db, store, dir) = store_and_dir("old-outbox");
        let error = |n: u32| {
            Outcome::Error(ErrorRecord {
                url: format!("http://a.example/{n}"),
                kind: "status".into(),
                detail: "404".into(),
            })
        };
        // As earlier versions wrote it: a store key per group, zstd inside.
        let mut raw = Vec::new();
        error(1).encode(&mut raw, &mut Vec::new()).unwrap();
        let mut value = (raw.len() as u32).to_be_bytes().to_vec();
        value.extend_from_slice(&zstd::bulk::compress(&raw, 1).unwrap());
        store
            .insert(&key(OLD_OUTBOX, &0u64.to_be_bytes()), &value)
            .unwrap();

        let mut state = State::open_in(store.clone(), &dir).unwrap();
        let outcomes = [PackedOutcomes::pack(&[error(2)]).unwrap()];
        (state.commit(Writes::default(), Additions::default(), &outcomes)).unwrap();
        let outcomes: Vec<Outcome> = state
            .outbox()
            .unwrap()
            .into_iter()
            .flat_map(|b| b.outcomes)
            .collect();
        assert_eq!(
            outcomes,
            [error(1), error(2)],
            "the old entry first, then the file's"
        );
        state.set_checkpoint(serde_json::Value::Null, &[]).unwrap();
        assert!(state.outbox().unwrap().is_empty());
        assert_eq!(store.scan_prefix(&[OLD_OUTBOX]).count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn document_urls_outlive_checkpoints_and_earlier_versions_records_are_read() {
        let (db, store, dir) = store_and_dir("doc-urls");
        let mut dedup = nearcrawl_index::Deduper::open_in(&db, &dir, Default::default()).unwrap();
        let judgement = dedup.judge("some text of a page", |_| true).unwrap();
        // Document 0 as an earlier version kept it: a store record.
        let mut old = 19u16.to_be_bytes().to_vec();
        old.extend_from_slice(b"http://a.example/0/");
        store.insert(&key(DOC, &0u64.to_be_bytes()), &old).unwrap();
        store
            .insert(&meta("doc_reserved"), &1u64.to_be_bytes())
            .unwrap();
        let (saved, unsaved) = {
            let mut state = State::open_in(store.clone(), &dir).unwrap();
            let saved = state.new_doc().unwrap();
            state.put_doc(saved, "http://a.example/1", &judgement);
            state.set_checkpoint(serde_json::Value::Null, &[]).unwrap();
            let unsaved = state.new_doc().unwrap();
            state.put_doc(unsaved, "http://a.example/2", &judgement);
            assert_eq!(
                state.doc_url(unsaved).unwrap().as_deref(),
                Some("http://a.example/2")
            );
            (saved, unsaved)
        };
        // A stop without a checkpoint: the later document is gone.
        let state = State::open_in(store, &dir).unwrap();
        assert_eq!(
            state.doc_url(0).unwrap().as_deref(),
            Some("http://a.example/0/")
        );
        assert!(state.doc_exists(0));
        assert_eq!(
            state.doc_url(saved).unwrap().as_deref(),
            Some("http://a.example/1")
        );
        assert!(state.doc_exists(saved));
        assert!(!state.doc_exists(unsaved));
        assert_eq!(state.doc_url(unsaved).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn url_rules_are_saved_in_pieces_of_whole_lines_and_read_back() {
        let (_db, store, dir) = store_and_dir("url-rules");
        let lines = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|i| format!("l\t1\t0\t0\t\trule {i} {}\n", "x".repeat(i % 300)))
                .collect::<String>()
                .into_bytes()
        };
        // As an earlier version saved them: one value.
        store.insert(&meta("url_rules"), &lines(3)).unwrap();
        let mut state = State::open_in(store.clone(), &dir).unwrap();
        assert_eq!(state.url_rules().unwrap(), Some(lines(3)));
        for n in [2000, 40, 0, 500] {
            state
                .set_checkpoint(serde_json::Value::Null, &lines(n))
                .unwrap();
            assert_eq!(state.url_rules().unwrap(), Some(lines(n)));
            // No piece past its number, none over the size but a lone line.
            let pieces = state.url_rule_pieces().unwrap().unwrap();
            assert_eq!(store.scan_prefix(&[URL_RULES]).count(), pieces as usize);
            for kv in store.scan_prefix(&[URL_RULES]) {
                let (_, v) = kv.unwrap();
                assert!(v.len() <= URL_RULES_PIECE && v.ends_with(b"\n"));
            }
        }
        assert!(store.get(&meta("url_rules")).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_frontier_after_a_crash_holds_exactly_what_the_applied_batches_made() {
        use crate::embedded::frontier::{Popped, Unpaced};
        let (_db, store, dir) = store_and_dir("frontier-tails");
        let url = |s: &str| url::Url::parse(s).unwrap();
        let push = |state: &mut State, adds: &mut Additions, u: &str| {
            let mut w = Writes::default();
            let _ = state.frontier.push(&mut w, adds, &url(u), 1).unwrap();
            w
        };
        {
            let mut state = State::open_in(store.clone(), &dir).unwrap();
            let mut adds = Additions::default();
            let w = push(&mut state, &mut adds, "http://a.example/1");
            state.commit(w, adds, &[]).unwrap();
            state.set_checkpoint(serde_json::Value::Null, &[]).unwrap();
            // After the checkpoint: one URL queued, one done.
            let mut adds = Additions::default();
            let w = push(&mut state, &mut adds, "http://a.example/2");
            state.commit(w, adds, &[]).unwrap();
            let Popped::Entry(first) = state.frontier.pop(&Unpaced).unwrap() else {
                panic!("a.example/1 is queued");
            };
            assert_eq!(first.url.as_str(), "http://a.example/1");
            let mut adds = Additions::default();
            first.finish(&mut adds);
            state.commit(Writes::default(), adds, &[]).unwrap();
            // A group written to the files whose batch never made it.
            let mut adds = Additions::default();
            let _ = push(&mut state, &mut adds, "http://a.example/3");
            state.frontier.write(&mut adds).unwrap();
        }
        let mut state = State::open_in(store, &dir).unwrap();
        let f = &mut state.frontier;
        assert_eq!(f.len(), 1);
        assert!(f.was_seen(&url("http://a.example/1")));
        assert!(f.was_seen(&url("http://a.example/2")));
        assert!(!f.was_seen(&url("http://a.example/3")));
        let Popped::Entry(e) = f.pop(&Unpaced).unwrap() else {
            panic!("a.example/2 is queued");
        };
        assert_eq!(e.url.as_str(), "http://a.example/2");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn page_budgets_per_host_and_per_domain_hold_over_runs() {
        let (_db, store, dir) = store_and_dir("budgets");
        {
            let mut state = State::open_in(store.clone(), &dir).unwrap();
            let mut take = |host: &str| state.take_page(host, "-", 2, 3).unwrap();
            assert_eq!(take("a.example.co.uk"), Ok(()));
            assert_eq!(take("a.example.co.uk"), Ok(()));
            assert_eq!(take("a.example.co.uk"), Err("host_page_limit"));
            assert_eq!(take("b.example.co.uk"), Ok(()));
            assert_eq!(
                take("c.example.co.uk"),
                Err("domain_page_limit"),
                "three pages of example.co.uk taken"
            );
            assert_eq!(take("other.co.uk"), Ok(()));
            let mut writes = Writes::default();
            for host in ["a.example.co.uk", "b.example.co.uk", "other.co.uk"] {
                state.put_host(&mut writes, host);
            }
            state.apply(writes).unwrap();
        }
        let mut state = State::open_in(store, &dir).unwrap();
        assert_eq!(
            state.take_page("d.example.co.uk", "-", 2, 3).unwrap(),
            Err("domain_page_limit")
        );
        assert_eq!(state.take_page("other.co.uk", "-", 2, 3).unwrap(), Ok(()));
        assert_eq!(
            state.take_page("other.co.uk", "-", 2, 3).unwrap(),
            Err("host_page_limit")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
