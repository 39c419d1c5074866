//! The duplicate gate shared by all workers: a log in Redis, a replica of
//! the gate on every worker.

use std::fmt;

use nearcrawl_index::{Deduper, Judgement, Prepared};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;

use crate::ClusterError;

/// Log entries read per round trip.
const READ_BATCH: usize = 256;
/// The field of a log entry that holds the prepared document.
const FIELD: &str = "p";

/// A document's place in the log: the Redis Stream id `ms-seq`, which is
/// also its document id in every replica ([`doc`](LogId::doc)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogId {
    pub ms: u64,
    pub seq: u64,
}

/// Bits of a document id that hold the stream id's sequence number: more
/// than Redis hands out in one millisecond; the other 42 hold milliseconds
/// until the year 2109.
const SEQ_BITS: u32 = 22;

impl LogId {
    /// The document id the replicas record the entry under.
    pub fn doc(self) -> u64 {
        self.ms << SEQ_BITS | self.seq
    }

    fn parse(s: &str) -> Option<LogId> {
        let (ms, seq) = s.split_once('-')?;
        let id = LogId {
            ms: ms.parse().ok()?,
            seq: seq.parse().ok()?,
        };
        (id.seq < 1 << SEQ_BITS && id.ms < 1 << (64 - SEQ_BITS)).then_some(id)
    }
}

impl fmt::Display for LogId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// One gate for many workers: judging appends to a log in the cluster and
/// applies the log, up to that entry, to this worker's replica.
///
/// Every replica applies every entry with the embedded gate's
/// [`judge_prepared`](Deduper::judge_prepared) and
/// [`record`](Deduper::record), in log order, so all of them reach the
/// same verdicts: those of one machine judging the pages in that order.
/// Judging is microseconds a page, so judging all of the crawl's pages on
/// every worker costs little beside fetching and extracting them.
pub struct SharedGate {
    replica: Deduper,
    con: ClusterConnection,
    /// The log's key: one hash slot, so one node orders every append.
    log: String,
    /// The last entry applied to the replica.
    applied: LogId,
}

impl fmt::Debug for SharedGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedGate")
            .field("log", &self.log)
            .field("applied", &self.applied)
            .field("indexed", &self.replica.indexed())
            .finish()
    }
}

impl SharedGate {
    /// Connects to the cluster (any of its nodes) and shares the gate of the
    /// crawl named `crawl` through `replica`, an empty gate of this
    /// worker's.
    pub async fn open(
        nodes: &[&str],
        crawl: &str,
        replica: Deduper,
    ) -> Result<SharedGate, ClusterError> {
        let con = ClusterClient::new(nodes.to_vec())?
            .get_async_connection()
            .await?;
        Ok(SharedGate {
            replica,
            con,
            log: format!("{{{crawl}:gate}}:log"),
            applied: LogId::default(),
        })
    }

    /// Judges a document: appends it to the log and applies the log up to
    /// it. Returns its place and its judgement (duplicates name the
    /// original by its [`LogId::doc`]).
    pub async fn judge(&mut self, doc: &Prepared) -> Result<(LogId, Judgement), ClusterError> {
        let id: String = redis::cmd("XADD")
            .arg(&self.log)
            .arg("*")
            .arg(FIELD)
            .arg(doc.to_bytes())
            .query_async(&mut self.con)
            .await?;
        let place =
            LogId::parse(&id).ok_or_else(|| ClusterError::Corrupt(format!("stream id {id:?}")))?;
        let mut mine = None;
        self.apply(Some(place), |id, judgement| {
            if id == place {
                mine = Some(judgement.clone());
            }
        })
        .await?;
        let judgement = mine.ok_or_else(|| {
            ClusterError::Corrupt(format!("entry {place} was not in the log when read"))
        })?;
        Ok((place, judgement))
    }

    /// Applies every entry appended so far (by any worker) to the replica,
    /// calling `seen` with each one's place and judgement; returns how many.
    pub async fn catch_up(
        &mut self,
        seen: impl FnMut(LogId, &Judgement),
    ) -> Result<usize, ClusterError> {
        self.apply(None, seen).await
    }

    /// The last entry applied to this replica.
    pub fn applied(&self) -> LogId {
        self.applied
    }

    /// This worker's replica of the gate.
    pub fn replica(&self) -> &Deduper {
        &self.replica
    }

    /// Applies the entries after the last applied one, up to `until` (or
    /// all), in order.
    async fn apply(
        &mut self,
        until: Option<LogId>,
        mut seen: impl FnMut(LogId, &Judgement),
    ) -> Result<usize, ClusterError> {
        let end = until.map_or_else(|| "+".to_string(), |id| id.to_string());
        let mut applied = 0;
        loop {
            if until.is_some_and(|u| self.applied >= u) {
                return Ok(applied);
            }
            let entries: Vec<(String, Vec<Vec<u8>>)> = redis::cmd("XRANGE")
                .arg(&self.log)
                .arg(format!("({}", self.applied))
                .arg(&end)
                .arg("COUNT")
                .arg(READ_BATCH)
                .query_async(&mut self.con)
                .await?;
            if entries.is_empty() {
                return Ok(applied);
            }
            for (id, fields) in entries {
                let (place, doc) = decode(&id, &fields)?;
                let judgement = self.replica.judge_prepared(doc, |_| true)?;
                self.replica.record(place.doc(), &judgement)?;
                seen(place, &judgement);
                self.applied = place;
                applied += 1;
            }
        }
    }
}

/// A log entry: its place and the document it holds.
fn decode(id: &str, fields: &[Vec<u8>]) -> Result<(LogId, Prepared), ClusterError> {
    let bad = || ClusterError::Corrupt(format!("log entry {id}"));
    let place = LogId::parse(id).ok_or_else(bad)?;
    match fields {
        [name, value] if name == FIELD.as_bytes() => {
            Ok((place, Prepared::from_bytes(value).ok_or_else(bad)?))
        }
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ids_order_as_documents_and_parse_back() {
        let a = LogId::parse("1795620669872-0").unwrap();
        let b = LogId::parse("1795620669872-3").unwrap();
        let c = LogId::parse("1795620669873-0").unwrap();
        assert!(a < b && b < c);
        assert!(a.doc() < b.doc() && b.doc() < c.doc());
        assert_eq!(LogId::parse(&b.to_string()), Some(b));
        for bad in ["", "12", "x-1", "1-", "1-4194304"] {
            assert_eq!(LogId::parse(bad), None, "{bad:?}");
        }
    }
}
