//! The embedded store's side of the URL rules (see
//! [`nearcrawl_index::dust`]): the rules learn from verdicts as their URLs
//! are committed, so the rules a checkpoint saves saw exactly the commits
//! before it, and recovery gives them the outbox's; a URL a rule skipped is
//! recorded with its group, and queued again by the group after its rule
//! retired (or at the next start, after a crash in between).

use nearcrawl_index::dust::DustRules;
use url::Url;

use super::core::Core;
use super::frontier::{Additions, Pushed};
use super::outbox::Block;
use super::state::State;
use super::store::{StoreError, Writes};
use crate::run::Prediction;
use crate::sink::Outcome;

/// The rules the last checkpoint saved, with the pages written since the
/// crawl began as their targets.
pub(super) fn open(state: &State) -> Result<DustRules, StoreError> {
    let mut rules = match state.url_rules()? {
        Some(bytes) => DustRules::from_bytes(&bytes)
            .ok_or_else(|| StoreError::Corrupt("the URL rules do not read".into()))?,
        None => DustRules::default(),
    };
    state.each_doc_url(|url| rules.add_written(url))?;
    Ok(rules)
}

/// A URL committed, as the rules see it.
pub(super) struct Committed<'a> {
    pub url: &'a Url,
    pub depth: u32,
    /// Its page is a new document (written).
    pub new_doc: bool,
    pub outcomes: &'a [Outcome],
    /// Not fetched: a rule's duplicate.
    pub predicted: Option<&'a Prediction>,
}

/// Tells the rules what a committed URL was, under one lock: a page
/// written, a duplicate's pair, or a URL a rule skipped (recorded in
/// `batch`, to be queued again if the rule retires).
pub(super) fn commit(core: &mut Core, batch: &mut Writes, page: Committed<'_>) {
    let shared = core.dust.clone();
    let mut rules = shared.write().unwrap();
    let url = page.url;
    if page.new_doc {
        rules.observe_new(url.as_str());
    }
    observe(&mut rules, page.outcomes);
    if let Some(p) = page.predicted {
        rules.note_skipped(p.rule);
        core.state.put_skipped(batch, p.rule, url, page.depth);
    }
}

/// What a committed URL's outcomes tell the rules: a duplicate's pair. Its
/// page, if written, is told first, with [`DustRules::observe_new`]; a
/// URL a rule skipped, with [`DustRules::note_skipped`].
pub(super) fn observe(rules: &mut DustRules, outcomes: &[Outcome]) {
    for outcome in outcomes {
        // An earlier crawl's original is not this site's URL pair.
        if let Outcome::Duplicate(d) = outcome {
            if d.rule.is_none() && d.crawl.is_none() {
                rules.observe_duplicate(&d.url, &d.duplicate_of);
            }
        }
    }
}

/// The outbox's commits, for the rules: each block's new documents, then
/// its duplicates (recovery).
pub(super) fn replay(rules: &mut DustRules, blocks: &[Block]) {
    for block in blocks {
        for url in block.docs.iter().filter_map(|d| d.url.as_deref()) {
            rules.observe_new(url);
        }
        observe(rules, &block.outcomes);
        for outcome in &block.outcomes {
            let Outcome::Duplicate(d) = outcome else {
                continue;
            };
            let Some(shown) = &d.rule else { continue };
            let id = rules
                .rules()
                .iter()
                .position(|r| r.rule.to_string() == *shown);
            id.into_iter().for_each(|id| rules.note_skipped(id));
        }
    }
}

/// URLs of retired rules queued again in one batch, at most; the rest
/// wait for the next batches. sled kept about 3 KB for every key one
/// batch removed, past about a thousand keys (8,000 in one batch: +23 MB
/// that stayed; in batches of 256: +4 MB), and a rule that retired on
/// rust-doc had skipped 4,782 URLs: its one batch took the crawl's peak
/// RSS from ~87 MB to 122-134 MB. Enough for a commit to keep every
/// request busy (a group is 64 URLs).
const REQUEUED_PER_BATCH: usize = 256;

/// URLs a rule skipped, with their depths.
type Skipped = Vec<(String, u32)>;

/// Retired rules whose skipped URLs may not all be queued again yet, in
/// the order they retired.
#[derive(Debug, Default)]
pub(crate) struct Requeuing {
    rules: Vec<usize>,
}

impl Requeuing {
    /// Adds `rule`; false if it is in already.
    fn add(&mut self, rule: usize) -> bool {
        let new = !self.rules.contains(&rule);
        if new {
            self.rules.push(rule);
        }
        new
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The next batch of skipped URLs to queue again, by rule: up to
    /// [`REQUEUED_PER_BATCH`], asked of `skipped_by(rule, most)` rule by
    /// rule (which must no longer give the URLs of earlier batches). A
    /// rule that gives fewer than asked has none left.
    fn next_batch<E>(
        &mut self,
        mut skipped_by: impl FnMut(usize, usize) -> Result<Skipped, E>,
    ) -> Result<Vec<(usize, Skipped)>, E> {
        let (mut batch, mut room) = (Vec::new(), REQUEUED_PER_BATCH);
        while let Some(&rule) = self.rules.first() {
            let skipped = skipped_by(rule, room)?;
            if skipped.len() < room {
                self.rules.remove(0);
            }
            room -= skipped.len();
            batch.push((rule, skipped));
            if room == 0 {
                break;
            }
        }
        Ok(batch)
    }
}

/// Queues again, in `batch` and `adds`, a batch of the URLs skipped by the
/// rules retired since the last call (or, at `start`, by every retired
/// rule) and by those retired before whose URLs are not all queued yet: a
/// URL another proven rule still skips moves to that rule's records.
pub(super) fn requeue_retired(
    core: &mut Core,
    batch: &mut Writes,
    adds: &mut Additions,
    start: bool,
) -> Result<(), StoreError> {
    let shared = core.dust.clone();
    let mut rules = shared.write().unwrap();
    for rule in rules.retired(start) {
        if core.requeuing.add(rule) {
            let r = &rules.rules()[rule];
            tracing::info!(rule = %r.rule, skipped = r.skipped, "a URL rule retired: the URLs it skipped are queued again");
        }
    }
    let state = &mut core.state;
    for (rule, skipped) in core
        .requeuing
        .next_batch(|rule, most| state.skipped_by(rule, most))?
    {
        for (url, depth) in skipped {
            state.remove_skipped(batch, rule, &url);
            let Ok(parsed) = Url::parse(&url) else {
                continue;
            };
            if let Some(still) = rules.still_skipped_by(&url) {
                state.put_skipped(batch, still, &parsed, depth);
            } else if state.frontier.requeue(batch, adds, &parsed, depth)? == Pushed::Queued {
                state.stats.predictions_requeued += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::convert::Infallible;

    use super::*;

    /// Rules' skipped URLs, as the store holds them: a batch's are removed
    /// before the next batch is asked for.
    fn drain(requeuing: &mut Requeuing, store: &mut BTreeMap<usize, Vec<String>>) -> Vec<usize> {
        let mut sizes = Vec::new();
        while !requeuing.is_empty() {
            let batch = requeuing
                .next_batch(|rule, most| {
                    let urls = store.get(&rule).map_or(&[][..], |u| &u[..]);
                    Ok::<_, Infallible>(urls.iter().take(most).map(|u| (u.clone(), 1)).collect())
                })
                .unwrap();
            for (rule, urls) in &batch {
                store.get_mut(rule).unwrap().drain(..urls.len());
            }
            sizes.push(batch.iter().map(|(_, urls)| urls.len()).sum());
        }
        sizes
    }

    #[test]
    fn a_retired_rules_urls_are_queued_again_a_batch_at_a_time_and_all_of_them() {
        let mut store = BTreeMap::new();
        store.insert(
            3,
            (0..600)
                .map(|i| format!("http://a/{i}"))
                .collect::<Vec<_>>(),
        );
        store.insert(5, (0..10).map(|i| format!("http://b/{i}")).collect());
        store.insert(7, Vec::new());
        let mut requeuing = Requeuing::default();
        for rule in [3, 7, 5] {
            assert!(requeuing.add(rule));
        }
        assert!(!requeuing.add(3), "a rule is in once");
        // 600 of rule 3 in three batches, then the empty rule 7 and rule 5.
        assert_eq!(drain(&mut requeuing, &mut store), [256, 256, 98]);
        assert!(store.values().all(Vec::is_empty), "{store:?}");
        // A rule named again (a URL it predicted as it retired) comes back.
        store.get_mut(&3).unwrap().push("http://a/late".into());
        assert!(requeuing.add(3));
        assert_eq!(drain(&mut requeuing, &mut store), [1]);
    }
}
