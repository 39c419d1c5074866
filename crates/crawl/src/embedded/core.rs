//! What the embedded store's lock guards: the state (frontier, documents,
//! counts) and the duplicate index, which move together; and the recovery
//! and checkpoints that keep them in line with the outputs. The outputs
//! (the sink) are the loop's alone: it writes a group's outcomes after the
//! group's batch, outside the lock, while fetch tasks judge pages.

use std::collections::HashMap;
use std::time::Instant;

use nearcrawl_index::{Deduper, IndexError, Judgement, Prepared};

use crate::embedded::error::CrawlError;
use crate::embedded::state::State;
use crate::embedded::store::StoreError;
use crate::embedded::timed_lock::{TimedGuard, TimedLock};
use crate::remembered::Remembered;
use crate::sink::Sink;
use crate::traps::TrapDetector;

pub(crate) struct Core {
    pub state: State,
    pub dedup: Deduper,
    pub traps: TrapDetector,
    /// Documents judged new whose pages are not committed yet, by id: the
    /// gate counts them (the next page is judged against them), and their
    /// URLs name them as originals. They reach the state with their pages.
    pub pending_docs: HashMap<u64, String>,
    /// Earlier crawls whose documents the gate holds too.
    pub remembered: Remembered,
    /// The URL rules learned from the committed verdicts.
    pub dust: crate::run::SharedRules,
    /// Retired rules whose skipped URLs may not all be queued again yet.
    pub requeuing: crate::embedded::url_rules::Requeuing,
}

impl Core {
    pub fn doc_url(&self, doc: u64) -> Option<String> {
        if Remembered::split(doc).is_some() {
            return self.remembered.url_of(doc);
        }
        let pending = self.pending_docs.get(&doc).cloned();
        pending.or_else(|| self.state.doc_url(doc).ok().flatten())
    }

    /// Judges a page of `url` against the documents that may be its
    /// original: those that exist (not lost in a crash), but not `url`'s
    /// own earlier version in a remembered crawl (a recrawled page is
    /// compared with that by [`crate::recrawl`], not judged a copy of it).
    pub fn judge(&mut self, prepared: Prepared, url: &str) -> Result<Judgement, IndexError> {
        let Core {
            state,
            dedup,
            pending_docs,
            remembered,
            ..
        } = self;
        dedup.judge_prepared(prepared, |doc| {
            if Remembered::split(doc).is_some() {
                return remembered.url_of(doc).is_some_and(|u| u != url);
            }
            // Committed, or judged in this run and on its way (a document
            // a crash lost is in neither).
            pending_docs.contains_key(&doc) || state.doc_exists(doc)
        })
    }

    /// Imports the remembered crawls into the gate when the crawl starts
    /// (once: the state records it).
    pub fn remember(&mut self) -> Result<(), CrawlError> {
        let recorded = self.state.remembered()?;
        let imported = (self.remembered).bring_into(&mut self.dedup, recorded.as_deref(), false)?;
        if let Some(names) = imported {
            self.state.set_remembered(&names)?;
        }
        Ok(())
    }

    /// Brings the outputs and the index in line with the state after an
    /// unclean stop, then checkpoints: the outputs are cut back to the last
    /// checkpoint and the outcomes committed since are written again; the
    /// index gets the documents committed since its last flush.
    pub fn recover(&mut self, sink: &mut dyn Sink) -> Result<(), CrawlError> {
        let Core {
            state, dedup, dust, ..
        } = self;
        let Some(cp) = state.checkpoint()? else {
            sink.rewind(&serde_json::Value::Null)?;
            return self.checkpoint(sink);
        };
        sink.rewind(&cp.sink)?;
        let (mut replayed, mut restored) = (0usize, 0usize);
        // Documents whose records still carry their judgements (written by
        // earlier versions), then the outbox's.
        for doc in state.docs_from(cp.dedup_through) {
            let (doc, judgement) = doc?;
            dedup.record(doc, &judgement)?;
            restored += 1;
        }
        let blocks = state.outbox()?;
        super::url_rules::replay(&mut dust.write().unwrap(), &blocks);
        for block in blocks {
            for new in block.docs {
                let judgement = Judgement::from_bytes(&new.judgement).ok_or_else(|| {
                    StoreError::Corrupt(format!("the outbox's judgement of document {}", new.doc))
                })?;
                dedup.record(new.doc, &judgement)?;
                if let Some(url) = &new.url {
                    state.restore_doc_url(new.doc, url);
                }
                restored += 1;
            }
            for o in block.outcomes {
                o.send(sink)?;
                replayed += 1;
            }
        }
        tracing::info!(
            queued = state.frontier.len(),
            fetched = state.stats.fetched,
            replayed,
            restored,
            "resuming: outputs cut back to the last checkpoint, {replayed} outcomes written again, \
             {restored} documents restored to the index"
        );
        self.checkpoint(sink)
    }

    /// Makes the outputs durable, then the index, then the state that says
    /// both are: a crash in between leaves the previous checkpoint in
    /// charge. Call with nothing waiting to be committed, and every
    /// committed outcome sent to `sink`.
    pub fn checkpoint(&mut self, sink: &mut dyn Sink) -> Result<(), CrawlError> {
        let t = Instant::now();
        let position = sink.checkpoint()?;
        self.dedup.flush()?;
        // The rules saw the commits this checkpoint covers, no more.
        let rules = self.dust.read().unwrap().to_bytes();
        self.state.set_checkpoint(position, &rules)?;
        tracing::debug!(ms = t.elapsed().as_millis() as u64, "checkpoint");
        Ok(())
    }
}

/// The lock every commit and verdict takes (see [`TimedLock`]).
pub(crate) type CoreLock = TimedLock<Core>;

/// A guard of [`CoreLock`].
pub(crate) type CoreGuard<'a> = TimedGuard<'a, Core>;
