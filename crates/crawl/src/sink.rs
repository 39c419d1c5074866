//! Where the crawl's results go.
//!
//! The crawler *pushes* each outcome into a [`Sink`] as it happens, the way
//! ripgrep's searcher pushes matches: outputs (JSONL, WARC) stay independent
//! of the crawl loop, and the loop never buffers results for a consumer.
//! Only `page` is required; the other hooks default to doing nothing, so a
//! sink that wants only pages is a few lines.
//!
//! Resume: the crawler keeps every outcome since the last checkpoint in its
//! state, asks the sink for a [`checkpoint`](Sink::checkpoint) (a durable
//! position) now and then, and after a crash [`rewind`](Sink::rewind)s the
//! sink to the last position and pushes the outcomes after it again. A sink
//! that cannot rewind (the default does nothing) sees those outcomes twice.

use std::io;

use serde::{Deserialize, Serialize};

/// A page written to the corpus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    pub url: String,
    pub final_url: String,
    pub status: u16,
    /// Seconds since the Unix epoch.
    pub fetched_at: u64,
    pub depth: u32,
    pub title: Option<String>,
    /// As the page declares it, else as detected (ISO 639-3).
    pub lang: Option<String>,
    /// The language its text is in (ISO 639-1; see
    /// [`nearcrawl_extract::page_language`]): what `content.languages`
    /// filters on.
    #[serde(default)]
    pub language: Option<String>,
    pub text: String,
    pub simhash: String,
    pub content_hash: String,
    pub outlinks: usize,
    /// Set under the `record` policy for duplicates.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duplicate_of: Option<String>,
    /// A new version of a page of the crawl refreshed: when the version it
    /// replaces was first fetched (seconds since the epoch; that crawl's
    /// record of the page has it as `fetched_at`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub replaces: Option<u64>,
}

/// A page judged a duplicate of an earlier one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DuplicateRecord {
    pub url: String,
    pub duplicate_of: String,
    /// `exact` or `near`.
    pub kind: String,
    pub distance: u32,
    pub similarity: f32,
    /// The check that decided: `exact-text`, `sketch` (similarity is the
    /// estimated shingle Jaccard) or `short-text` (similarity is the share
    /// of words kept). Both pages also passed the name check (their titles
    /// differ at most in their hosts' template words).
    #[serde(default)]
    pub check: String,
    /// The earlier crawl (its output directory) the original is from,
    /// when it is not this crawl's (see [`crate::remembered`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crawl: Option<String>,
    /// The URL rule that predicted a duplicate not fetched (`kind`
    /// `predicted`, see [`nearcrawl_index::dust`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// A URL that could not be crawled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorRecord {
    pub url: String,
    /// A short stable name (`timeout`, `status`, `robots`…).
    pub kind: String,
    pub detail: String,
}

/// One visit of a page: what the next crawl of it asks and compares with
/// (`visits.jsonl`, written by every crawl; `crawl --refresh` reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisitRecord {
    pub url: String,
    pub depth: u32,
    /// Seconds since the Unix epoch.
    pub fetched_at: u64,
    /// The answer's status (304 for a page not modified; 0 when no answer
    /// came and the earlier visit is carried forward).
    pub status: u16,
    /// What this visit found, against the earlier crawl's visit if any:
    /// `new`, `changed`, `unchanged`, `gone` or `failed` (the earlier
    /// visit's version is carried forward).
    pub change: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// The text's hash with its numbers and date words masked (see
    /// `recrawl::stable_hash`), hex; empty when no text was read.
    pub text_hash: String,
    /// Body bytes as served this time (0 for a 304).
    pub bytes: u64,
    /// When the version seen was first fetched (seconds since the epoch):
    /// an unchanged page keeps its version's time.
    pub version_at: u64,
    /// A changed page: when the version it replaces was first fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<u64>,
    /// How long until the page is worth asking again, from its history.
    pub interval_secs: u64,
    /// The payload digest of the version seen, when it was archived
    /// (WARC output): a later 304's revisit record carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// One HTTP exchange as fetched, for archival outputs (WARC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// The URL the response came from (after redirects).
    pub url: String,
    /// Milliseconds since the Unix epoch.
    pub fetched_at_ms: u64,
    /// The request as sent: header names and values (the fetcher's own).
    pub request_headers: Vec<(String, String)>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body after transfer and content decoding.
    #[serde(skip)]
    pub body: Vec<u8>,
    /// The body was cut at the configured maximum.
    pub truncated: bool,
    /// The server's address, when known.
    #[serde(default)]
    pub ip: Option<String>,
    /// A 304 to a conditional request: the version it confirms, first
    /// captured at this time (ms since the epoch); a WARC `revisit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_modified_since_ms: Option<u64>,
    /// The payload's digest ([`payload_digest`]), once computed; a 304's:
    /// that of the version it confirms, when the earlier crawl archived
    /// it (replay finds the payload by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The DOM a browser built from the body, when the page was rendered
    /// (a WARC `conversion` record of the response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendered: Option<String>,
}

/// A payload's digest as WARC and CDX tools write and check them: `sha1:`
/// and the SHA-1 in base32 (RFC 4648, upper case, 32 characters).
pub fn payload_digest(bytes: &[u8]) -> String {
    let sha1 = sha1_smol::Sha1::from(bytes).digest().bytes();
    format!("sha1:{}", data_encoding::BASE32.encode(&sha1))
}

/// A sink's durable place in its outputs, as it describes it (file lengths,
/// say); stored by the crawler and handed back to [`Sink::rewind`].
pub type Position = serde_json::Value;

/// Receives the crawl's outcomes as they happen.
pub trait Sink: Send {
    fn page(&mut self, page: &PageRecord) -> io::Result<()>;

    /// [`page`](Sink::page), with the record already encoded: `json` is
    /// `serde_json::to_vec(page)`. A sink that writes records as JSON
    /// writes these bytes instead of encoding the record again (the crawl
    /// encodes every page for its outbox first).
    fn page_encoded(&mut self, page: &PageRecord, json: &[u8]) -> io::Result<()> {
        let _ = json;
        self.page(page)
    }

    fn duplicate(&mut self, _dup: &DuplicateRecord) -> io::Result<()> {
        Ok(())
    }

    fn error(&mut self, _error: &ErrorRecord) -> io::Result<()> {
        Ok(())
    }

    /// A page's visit, for the next crawl of it.
    fn visit(&mut self, _visit: &VisitRecord) -> io::Result<()> {
        Ok(())
    }

    /// Whether [`capture`](Sink::capture) is wanted: building captures
    /// copies every body, so the crawler skips it when no one asks.
    fn wants_captures(&self) -> bool {
        false
    }

    /// A raw exchange, before extraction (every fetched response,
    /// duplicates included).
    fn capture(&mut self, _capture: &Capture) -> io::Result<()> {
        Ok(())
    }

    /// Makes everything written so far durable (flush, fsync) and says
    /// where it ends.
    fn checkpoint(&mut self) -> io::Result<Position> {
        Ok(Position::Null)
    }

    /// Throws away everything written after `position` (from an earlier
    /// [`checkpoint`](Sink::checkpoint), or `Null`: everything). Called when
    /// a crawl resumes, before the outcomes after that position are pushed
    /// again.
    fn rewind(&mut self, _position: &Position) -> io::Result<()> {
        Ok(())
    }

    /// The crawl's statistics, at the end of a run.
    fn finish(&mut self, _stats: &crate::stats::StatsFile) -> io::Result<()> {
        Ok(())
    }
}

/// Sends `outcomes` to `sink` in order, the page records with the JSON
/// encoding them for an outbox made (`page_json`: one per page record, in
/// order; records past its end are encoded again).
pub fn send_all(
    sink: &mut dyn Sink,
    outcomes: &[Outcome],
    page_json: Vec<Vec<u8>>,
) -> io::Result<()> {
    let mut page_json = page_json.into_iter();
    for o in outcomes {
        match (o, page_json.len()) {
            (Outcome::Page(p), 1..) => {
                let json = page_json.next().expect("one left");
                debug_assert_eq!(serde_json::to_vec(p).ok().as_deref(), Some(&json[..]));
                sink.page_encoded(p, &json)?;
            }
            _ => o.send(sink)?,
        }
    }
    Ok(())
}

/// The checksum of an outbox entry (both engines' outboxes), over its
/// `pieces` in order: CRC-32 (IEEE), which tells a torn or damaged entry
/// from a whole one a few bytes a cycle.
pub fn outbox_checksum<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    pieces.into_iter().for_each(|p| crc.update(p));
    crc.finalize()
}

/// One outcome of one URL, as the crawler keeps it between checkpoints.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Page(PageRecord),
    Duplicate(DuplicateRecord),
    Error(ErrorRecord),
    Capture(Capture),
    Visit(VisitRecord),
}

impl Outcome {
    /// Pushes the outcome into `sink`.
    pub fn send(&self, sink: &mut dyn Sink) -> io::Result<()> {
        match self {
            Outcome::Page(p) => sink.page(p),
            Outcome::Duplicate(d) => sink.duplicate(d),
            Outcome::Error(e) => sink.error(e),
            Outcome::Capture(c) => sink.capture(c),
            Outcome::Visit(v) => sink.visit(v),
        }
    }

    /// Writes a self-delimiting encoding: tag, lengths, JSON (and, for a
    /// capture, the body after the JSON). The JSON is written into `json`
    /// first, for its length; pass the same vector for each outcome.
    pub fn encode(
        &self,
        out: &mut (impl io::Write + ?Sized),
        json: &mut Vec<u8>,
    ) -> io::Result<()> {
        json.clear();
        let (tag, written) = match self {
            Outcome::Page(p) => (b'P', serde_json::to_writer(&mut *json, p)),
            Outcome::Duplicate(d) => (b'D', serde_json::to_writer(&mut *json, d)),
            Outcome::Error(e) => (b'E', serde_json::to_writer(&mut *json, e)),
            Outcome::Capture(c) => (b'C', serde_json::to_writer(&mut *json, c)),
            Outcome::Visit(v) => (b'V', serde_json::to_writer(&mut *json, v)),
        };
        written.expect("records serialize");
        let body: &[u8] = match self {
            Outcome::Capture(c) => &c.body,
            _ => &[],
        };
        out.write_all(&[tag])?;
        out.write_all(&(json.len() as u32).to_be_bytes())?;
        out.write_all(&(body.len() as u32).to_be_bytes())?;
        out.write_all(json)?;
        out.write_all(body)
    }

    /// [`encode`](Outcome::encode), keeping a page record's JSON in
    /// `page_json` for [`send_all`], so that the outputs need not encode it
    /// again. A copy of its length: `json`, reused, has the capacity of the
    /// largest record so far (megabytes after a large page).
    pub fn encode_keeping_json(
        &self,
        out: &mut (impl io::Write + ?Sized),
        json: &mut Vec<u8>,
        page_json: &mut Vec<Vec<u8>>,
    ) -> io::Result<()> {
        self.encode(out, json)?;
        if matches!(self, Outcome::Page(_)) {
            page_json.push(json.clone());
        }
        Ok(())
    }

    /// Reads every outcome [`encode`](Outcome::encode) appended to `bytes`.
    pub fn decode_all(mut bytes: &[u8]) -> Option<Vec<Outcome>> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            if bytes.len() < 9 {
                return None;
            }
            let tag = bytes[0];
            let json_len = u32::from_be_bytes(bytes[1..5].try_into().ok()?) as usize;
            let body_len = u32::from_be_bytes(bytes[5..9].try_into().ok()?) as usize;
            let rest = &bytes[9..];
            if rest.len() < json_len + body_len {
                return None;
            }
            let json = &rest[..json_len];
            out.push(match tag {
                b'P' => Outcome::Page(serde_json::from_slice(json).ok()?),
                b'D' => Outcome::Duplicate(serde_json::from_slice(json).ok()?),
                b'E' => Outcome::Error(serde_json::from_slice(json).ok()?),
                b'V' => Outcome::Visit(serde_json::from_slice(json).ok()?),
                b'C' => {
                    let mut c: Capture = serde_json::from_slice(json).ok()?;
                    c.body = rest[json_len..json_len + body_len].to_vec();
                    Outcome::Capture(c)
                }
                _ => return None,
            });
            bytes = &rest[json_len + body_len..];
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip() {
        let all = vec![
            Outcome::Capture(Capture {
                url: "http://a.example/".into(),
                fetched_at_ms: 1_700_000_000_123,
                request_headers: vec![("User-Agent".into(), "x".into())],
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body: b"<html>\x00\xff</html>".to_vec(),
                truncated: false,
                ip: None,
                not_modified_since_ms: None,
                digest: None,
                rendered: Some("<html><p>built</p></html>".into()),
            }),
            Outcome::Page(PageRecord {
                url: "http://a.example/".into(),
                final_url: "http://a.example/".into(),
                status: 200,
                fetched_at: 1,
                depth: 0,
                title: Some("T".into()),
                lang: None,
                language: None,
                text: "text \u{4e2d}".into(),
                simhash: "00ff".into(),
                content_hash: "ab".into(),
                outlinks: 3,
                duplicate_of: None,
                replaces: Some(1_700_000_000),
            }),
            Outcome::Duplicate(DuplicateRecord {
                url: "http://a.example/b".into(),
                duplicate_of: "http://a.example/".into(),
                kind: "near".into(),
                distance: 3,
                similarity: 0.75,
                check: "sketch".into(),
                crawl: Some("crawl-a.example".into()),
                rule: None,
            }),
            Outcome::Error(ErrorRecord {
                url: "http://a.example/c".into(),
                kind: "status".into(),
                detail: "404".into(),
            }),
            Outcome::Visit(VisitRecord {
                url: "http://a.example/".into(),
                depth: 0,
                fetched_at: 2,
                status: 200,
                change: "changed".into(),
                etag: Some("\"v2\"".into()),
                last_modified: None,
                text_hash: "ab".into(),
                bytes: 20,
                version_at: 2,
                replaces: Some(1),
                interval_secs: 86_400,
                digest: Some(payload_digest(b"<html></html>")),
            }),
        ];
        let (mut bytes, mut json) = (Vec::new(), Vec::new());
        for o in &all {
            o.encode(&mut bytes, &mut json).unwrap();
        }
        assert_eq!(Outcome::decode_all(&bytes).unwrap(), all);
        assert!(Outcome::decode_all(&bytes[..bytes.len() - 1]).is_none());
    }
}
