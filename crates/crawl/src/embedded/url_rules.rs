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

/// Queues again, in `batch` and `adds`, the URLs skipped by the rules
/// retired since the last call (or, at `start`, by every retired rule):
/// a URL another proven rule still skips moves to that rule's records.
pub(super) fn requeue_retired(
    core: &mut Core,
    batch: &mut Writes,
    adds: &mut Additions,
    start: bool,
) -> Result<(), StoreError> {
    let shared = core.dust.clone();
    let mut rules = shared.write().unwrap();
    for rule in rules.retired(start) {
        let skipped = core.state.skipped_by(rule)?;
        if !skipped.is_empty() {
            let shown = &rules.rules()[rule].rule;
            tracing::info!(rule = %shown, urls = skipped.len(), "a URL rule retired: the URLs it skipped are queued again");
        }
        for (url, depth) in skipped {
            core.state.remove_skipped(batch, rule, &url);
            let Ok(parsed) = Url::parse(&url) else {
                continue;
            };
            if let Some(still) = rules.still_skipped_by(&url) {
                core.state.put_skipped(batch, still, &parsed, depth);
            } else if core.state.frontier.requeue(batch, adds, &parsed, depth)? == Pushed::Queued {
                core.state.stats.predictions_requeued += 1;
            }
        }
    }
    Ok(())
}
