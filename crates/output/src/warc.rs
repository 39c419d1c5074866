//! WARC 1.1 output: `crawl-NNNNN.warc.gz`, a `warcinfo` record at the
//! start of each file, then a `request` and a `response` record per fetched
//! URL, each record its own gzip member (so tools can seek to any record).
//!
//! A CDXJ index of each file's responses and revisits is written beside
//! it ([`crate::cdxj`]).
//!
//! The fetcher decodes `Content-Encoding` and chunking before anyone sees
//! the body, so the response record holds the decoded body with those two
//! headers dropped and `Content-Length` set to the body it holds: a
//! faithful HTTP message, not the bytes on the wire.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use serde_json::json;

use nearcrawl_crawl::sink::{Capture, DuplicateRecord, PageRecord, Position, Sink};

use crate::cdxj::{CdxjIndex, Entry};
pub use crate::date::warc_date;
use crate::payloads::Payloads;

/// Writes captures as WARC, and a duplicate's verdict as a `metadata`
/// record concurrent to its response; pages and errors are for other
/// sinks.
pub struct WarcSink {
    dir: PathBuf,
    file_bytes: u64,
    file_no: usize,
    len: u64,
    out: BufWriter<File>,
    software: String,
    ids: IdMaker,
    /// The last response written (its URI, record id and date): a
    /// duplicate's record follows its page's capture.
    last_response: Option<(String, String, String)>,
    /// The open file's CDXJ index.
    index: CdxjIndex,
    /// Where each payload was first archived; read from the CDXJ files
    /// when first needed (an open, then the crawl's rewind, would read
    /// them twice).
    payloads: Option<Payloads>,
}

impl std::fmt::Debug for WarcSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarcSink")
            .field("dir", &self.dir)
            .field("file_no", &self.file_no)
            .finish()
    }
}

impl WarcSink {
    /// The DOM a browser built from a response (WARC 1.1, 6.8: a
    /// `conversion` of the response it refers to). Replay tools index the
    /// response, not this.
    fn conversion(
        &mut self,
        c: &Capture,
        dom: &str,
        date: String,
        response_id: String,
    ) -> io::Result<()> {
        let digest = sha1_digest(dom.as_bytes());
        let headers = vec![
            ("WARC-Type", "conversion".to_string()),
            ("WARC-Record-ID", self.ids.next()),
            ("WARC-Date", date),
            ("WARC-Target-URI", c.url.clone()),
            ("WARC-Refers-To", response_id),
            ("Content-Type", "text/html; charset=utf-8".to_string()),
            ("WARC-Payload-Digest", digest.clone()),
            ("WARC-Block-Digest", digest),
        ];
        self.write_record(&headers, dom.as_bytes())
    }

    /// Opens `crawl-NNNNN.warc.gz` files in `dir`, continuing after the
    /// last, starting a new one past `file_bytes`.
    pub fn open(dir: &Path, file_bytes: u64) -> io::Result<WarcSink> {
        std::fs::create_dir_all(dir)?;
        let mut file_no = 0;
        while path(dir, file_no + 1).exists() {
            file_no += 1;
        }
        let (out, len) = open_append(&path(dir, file_no))?;
        let index = CdxjIndex::open(&path(dir, file_no), len)?;
        let mut sink = WarcSink {
            dir: dir.to_path_buf(),
            file_bytes: file_bytes.max(1),
            file_no,
            len,
            out,
            software: format!("nearcrawl/{}", env!("CARGO_PKG_VERSION")),
            ids: IdMaker::default(),
            last_response: None,
            index,
            payloads: None,
        };
        sink.start_file_if_empty()?;
        Ok(sink)
    }

    fn start_file_if_empty(&mut self) -> io::Result<()> {
        if self.len > 0 {
            return Ok(());
        }
        let body = format!(
            "software: {}\r\nformat: WARC File Format 1.1\r\nconformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
            self.software
        );
        let name = format!("crawl-{:05}.warc.gz", self.file_no);
        let headers = vec![
            ("WARC-Type", "warcinfo".to_string()),
            ("WARC-Record-ID", self.ids.next()),
            ("WARC-Date", warc_date(now_ms())),
            ("WARC-Filename", name),
            ("Content-Type", "application/warc-fields".to_string()),
        ];
        self.write_record(&headers, body.as_bytes())
    }

    fn write_record(&mut self, headers: &[(&str, String)], block: &[u8]) -> io::Result<()> {
        let mut head = String::from("WARC/1.1\r\n");
        for (k, v) in headers {
            head.push_str(k);
            head.push_str(": ");
            head.push_str(v);
            head.push_str("\r\n");
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
        let mut gz = GzEncoder::new(
            Vec::with_capacity(block.len() / 3 + 512),
            Compression::new(6),
        );
        gz.write_all(head.as_bytes())?;
        gz.write_all(block)?;
        gz.write_all(b"\r\n\r\n")?;
        let member = gz.finish()?;
        self.out.write_all(&member)?;
        self.len += member.len() as u64;
        Ok(())
    }
}

impl WarcSink {
    /// The index line of the response (or revisit) just written at
    /// `offset`; `digest`: its payload's.
    fn index_capture(&mut self, c: &Capture, offset: u64, revisit: bool, digest: &str) {
        let content_type = c
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        let mime = content_type.and_then(|(_, v)| v.split([';', ' ', '\t']).next());
        let filename = format!("crawl-{:05}.warc.gz", self.file_no);
        self.index.add(&Entry {
            url: &c.url,
            date_ms: c.fetched_at_ms,
            mime: if revisit {
                Some("warc/revisit")
            } else {
                mime.filter(|m| !m.is_empty())
            },
            status: c.status,
            digest,
            offset,
            length: self.len - offset,
            filename: &filename,
        });
    }

    /// Where each payload was first archived, read from the CDXJ files
    /// the first time it is asked for.
    fn payloads(&mut self) -> io::Result<&mut Payloads> {
        if self.payloads.is_none() {
            self.payloads = Some(Payloads::load(&self.dir, self.file_no)?);
        }
        Ok(self.payloads.as_mut().expect("just loaded"))
    }

    /// Starts the next file when this one is full.
    fn roll_if_full(&mut self) -> io::Result<()> {
        if self.len == 0 || self.len < self.file_bytes {
            return Ok(());
        }
        self.out.flush()?;
        self.index.save()?;
        self.file_no += 1;
        (self.out, self.len) = open_append(&path(&self.dir, self.file_no))?;
        self.index = CdxjIndex::open(&path(&self.dir, self.file_no), self.len)?;
        self.start_file_if_empty()
    }

    /// The earlier response whose payload `c` repeats, if any (a 304 and
    /// an empty body repeat nothing).
    fn original_of(&mut self, c: &Capture, digest: &str) -> io::Result<Option<Original>> {
        if c.status == 304 || c.body.is_empty() {
            return Ok(None);
        }
        let Some((file, offset)) = self.payloads()?.get(digest) else {
            return Ok(None);
        };
        if file as usize == self.file_no {
            self.out.flush()?;
        }
        let head = record_head(&path(&self.dir, file as usize), offset)?;
        let field = |name: &str| {
            let found = head.iter().find(|(k, _)| k.eq_ignore_ascii_case(name));
            found.map(|(_, v)| v.clone())
        };
        if field("WARC-Payload-Digest").as_deref() != Some(digest) {
            return Ok(None); // hashes of two digests collided
        }
        Ok(Some(Original {
            id: field("WARC-Record-ID").unwrap_or_default(),
            uri: field("WARC-Target-URI").unwrap_or_default(),
            date: field("WARC-Date").unwrap_or_default(),
        }))
    }
}

/// The response a later one with the same payload revisits.
struct Original {
    id: String,
    uri: String,
    date: String,
}

/// The WARC headers of the record whose gzip member starts at `offset`.
fn record_head(path: &Path, offset: u64) -> io::Result<Vec<(String, String)>> {
    use std::io::{Read, Seek};
    let mut file = File::open(path)?;
    file.seek(io::SeekFrom::Start(offset))?;
    let mut gz = flate2::read::GzDecoder::new(file);
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 1 << 16 {
        let n = gz.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let head = text.split("\r\n\r\n").next().unwrap_or("");
    Ok(head
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The request as the fetcher sent it.
fn request_block(c: &Capture) -> String {
    let url = url::Url::parse(&c.url).ok();
    let target = url.as_ref().map_or("/".to_string(), |u| {
        let mut t = u.path().to_string();
        if let Some(q) = u.query() {
            t.push('?');
            t.push_str(q);
        }
        t
    });
    let mut request = format!("GET {target} HTTP/1.1\r\n");
    if let Some(h) = url.as_ref().and_then(|u| u.host_str()) {
        match url.as_ref().and_then(|u| u.port()) {
            Some(p) => request.push_str(&format!("Host: {h}:{p}\r\n")),
            None => request.push_str(&format!("Host: {h}\r\n")),
        }
    }
    for (k, v) in &c.request_headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request
}

/// The response's status line and headers, as decoded: the transfer and
/// content encodings undone, `Content-Length` the body's.
fn response_head(c: &Capture) -> Vec<u8> {
    let reason = http::StatusCode::from_u16(c.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", c.status).into_bytes();
    for (k, v) in &c.headers {
        let lower = k.to_ascii_lowercase();
        if lower == "content-encoding" || lower == "transfer-encoding" || lower == "content-length"
        {
            continue;
        }
        head.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    head.extend_from_slice(format!("Content-Length: {}\r\n\r\n", c.body.len()).as_bytes());
    head
}

fn path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("crawl-{n:05}.warc.gz"))
}

fn open_append(p: &Path) -> io::Result<(BufWriter<File>, u64)> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)?;
    let len = f.metadata()?.len();
    Ok((BufWriter::with_capacity(64 << 10, f), len))
}

impl Sink for WarcSink {
    fn page(&mut self, _page: &PageRecord) -> io::Result<()> {
        self.last_response = None;
        Ok(())
    }

    /// The gate's verdict on the page just captured, in `warc-fields`: the
    /// lineage of a near duplicate, which archives otherwise lose.
    fn duplicate(&mut self, dup: &DuplicateRecord) -> io::Result<()> {
        let Some((uri, response_id, date)) = self.last_response.take() else {
            return Ok(());
        };
        let mut fields = format!(
            "duplicate-of: {}\r\nduplicate-kind: {}\r\ndistance: {}\r\nsimilarity: {:.4}\r\ncheck: {}\r\n",
            dup.duplicate_of, dup.kind, dup.distance, dup.similarity, dup.check
        );
        if let Some(crawl) = &dup.crawl {
            fields.push_str(&format!("duplicate-of-crawl: {crawl}\r\n"));
        }
        let headers = vec![
            ("WARC-Type", "metadata".to_string()),
            ("WARC-Record-ID", self.ids.next()),
            ("WARC-Date", date),
            ("WARC-Target-URI", uri),
            ("WARC-Concurrent-To", response_id),
            ("Content-Type", "application/warc-fields".to_string()),
            ("WARC-Block-Digest", sha1_digest(fields.as_bytes())),
        ];
        self.write_record(&headers, fields.as_bytes())
    }

    fn wants_captures(&self) -> bool {
        true
    }

    fn capture(&mut self, c: &Capture) -> io::Result<()> {
        self.roll_if_full()?;
        let date = warc_date(c.fetched_at_ms);
        let (head, payload) = (response_head(c), &c.body[..]);
        let digest = (c.digest.clone()).unwrap_or_else(|| sha1_digest(payload));
        let original = self.original_of(c, &digest)?;
        // Each names the other (WARC 1.1, 5.7: concurrent records).
        let (response_id, request_id) = (self.ids.next(), self.ids.next());
        let mut headers = vec![
            ("WARC-Type", "response".to_string()),
            ("WARC-Record-ID", response_id.clone()),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", c.url.clone()),
            ("WARC-Concurrent-To", request_id.clone()),
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
        ];
        let block = if c.status == 304 {
            // WARC 1.1, 6.7.2: a 304 is a revisit of the version it
            // confirms; it has no payload.
            headers[0].1 = "revisit".into();
            headers.push(("WARC-Profile", NOT_MODIFIED_PROFILE.into()));
            headers.push(("WARC-Refers-To-Target-URI", c.url.clone()));
            if let Some(ms) = c.not_modified_since_ms {
                headers.push(("WARC-Refers-To-Date", warc_date(ms)));
            }
            if let Some(digest) = &c.digest {
                // The version confirmed: replay finds its payload by it.
                headers.push(("WARC-Payload-Digest", digest.clone()));
            }
            head
        } else if let Some(original) = &original {
            // WARC 1.1, 6.7.1: the payload of an earlier response again;
            // the record keeps the HTTP headers and names that response.
            headers[0].1 = "revisit".into();
            headers.push(("WARC-Profile", IDENTICAL_PAYLOAD_PROFILE.into()));
            headers.push(("WARC-Refers-To", original.id.clone()));
            headers.push(("WARC-Refers-To-Target-URI", original.uri.clone()));
            headers.push(("WARC-Refers-To-Date", original.date.clone()));
            headers.push(("WARC-Payload-Digest", digest.clone()));
            head
        } else {
            headers.push(("WARC-Payload-Digest", digest.clone()));
            if c.truncated {
                // WARC 1.1, 5.13: the record is shorter than the resource.
                headers.push(("WARC-Truncated", "length".to_string()));
            }
            [head, payload.to_vec()].concat()
        };
        headers.push(("WARC-Block-Digest", sha1_digest(&block)));
        if let Some(ip) = &c.ip {
            headers.push(("WARC-IP-Address", ip.clone()));
        }
        let offset = self.len;
        self.write_record(&headers, &block)?;
        let revisit = c.status == 304 || original.is_some();
        // A 304's digest is the confirmed version's (replay finds that
        // version by it), or the empty payload's where none was known: what
        // the record says, and so what an indexer reads from it.
        self.index_capture(c, offset, revisit, &digest);
        if !revisit && !payload.is_empty() {
            let file = self.file_no as u32;
            self.payloads()?.insert(&digest, file, offset);
        }
        self.last_response = Some((c.url.clone(), response_id.clone(), date.clone()));
        let request = request_block(c);
        let headers = vec![
            ("WARC-Type", "request".to_string()),
            ("WARC-Record-ID", request_id),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", c.url.clone()),
            ("WARC-Concurrent-To", response_id.clone()),
            (
                "Content-Type",
                "application/http;msgtype=request".to_string(),
            ),
            ("WARC-Block-Digest", sha1_digest(request.as_bytes())),
        ];
        self.write_record(&headers, request.as_bytes())?;
        match &c.rendered {
            Some(dom) => self.conversion(c, dom, date, response_id),
            None => Ok(()),
        }
    }

    fn checkpoint(&mut self) -> io::Result<Position> {
        self.out.flush()?;
        self.out.get_ref().sync_data()?;
        self.index.save()?;
        Ok(json!({"file": self.file_no, "len": self.out.get_ref().metadata()?.len()}))
    }

    fn rewind(&mut self, position: &Position) -> io::Result<()> {
        let at = |key: &str| position.get(key).and_then(|v| v.as_u64()).unwrap_or(0);
        let file_no = at("file") as usize;
        self.out.flush()?;
        let mut later = file_no + 1;
        while path(&self.dir, later).exists() {
            std::fs::remove_file(path(&self.dir, later))?;
            let _ = std::fs::remove_file(crate::cdxj::path_of(&path(&self.dir, later)));
            later += 1;
        }
        self.file_no = file_no;
        self.last_response = None;
        (self.out, self.len) = open_append(&path(&self.dir, file_no))?;
        let keep = at("len");
        if self.len > keep {
            self.out.get_ref().set_len(keep)?;
            self.len = keep;
        }
        self.index = CdxjIndex::open(&path(&self.dir, file_no), self.len)?;
        self.start_file_if_empty()?;
        self.index.save()?;
        self.payloads = None;
        Ok(())
    }

    fn finish(&mut self, _stats: &nearcrawl_crawl::stats::StatsFile) -> io::Result<()> {
        self.checkpoint().map(|_| ())
    }
}

/// The revisit profile of a 304 to a conditional request.
const NOT_MODIFIED_PROFILE: &str = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
/// The revisit profile of a response whose payload an earlier one had.
const IDENTICAL_PAYLOAD_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

use nearcrawl_crawl::sink::payload_digest as sha1_digest;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `WARC-Record-ID`s: random version-4 UUIDs, from the standard library's
/// randomly keyed hasher (unique is what matters, not secrecy).
#[derive(Default)]
struct IdMaker {
    counter: u64,
    keys: std::hash::RandomState,
}

impl IdMaker {
    fn next(&mut self) -> String {
        self.counter += 1;
        let half = |salt: u64| {
            let mut h = self.keys.build_hasher();
            h.write_u64(self.counter);
            h.write_u64(salt);
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            h.finish()
        };
        let (a, b) = (half(1), half(2));
        let a = (a & !0xf000) | 0x4000; // version 4
        let b = (b & !(0b11 << 62)) | (0b10 << 62); // RFC 4122 variant
        format!(
            "<urn:uuid:{:08x}-{:04x}-{:04x}-{:04x}-{:012x}>",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn text_contains(text: &[u8], needle: &str) -> bool {
        text.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn digests_are_sha1_in_base32() {
        // The empty string's SHA-1, as CDX files and warcio write it.
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }

    #[test]
    fn dates() {
        assert_eq!(warc_date(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(warc_date(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(warc_date(1_795_305_600_123), "2026-11-22T00:00:00.123Z");
    }

    #[test]
    fn ids_are_v4_uuids_and_distinct() {
        let mut m = IdMaker::default();
        let a = m.next();
        let b = m.next();
        assert_ne!(a, b);
        assert_eq!(a.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&a[24..25], "4", "{a}");
        assert!("89ab".contains(&a[29..30]), "{a}");
    }

    /// Each record is one gzip member; together they read as one stream of
    /// records whose Content-Length matches the block.
    #[test]
    fn records_are_gzip_members_with_exact_lengths_and_rewind() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-warc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut sink = WarcSink::open(&dir, 1 << 30).unwrap();
        let capture = |i: usize| Capture {
            url: format!("http://127.0.0.1:8080/p/{i}?q=1"),
            fetched_at_ms: 1_795_305_600_000,
            request_headers: vec![("User-Agent".into(), "nearcrawl-test".into())],
            status: 200,
            headers: vec![
                ("content-type".into(), "text/html; charset=utf-8".into()),
                ("content-encoding".into(), "gzip".into()),
                ("content-length".into(), "9999".into()),
            ],
            body: format!("<html>page {i} \u{4e2d}\u{6587}</html>").into_bytes(),
            truncated: i == 1,
            ip: Some("127.0.0.1".into()),
            not_modified_since_ms: None,
            digest: None,
            rendered: (i == 2).then(|| "<html><p>built by script</p></html>".to_string()),
        };
        // A recrawl's 304 for the version first captured a week before.
        let not_modified = Capture {
            status: 304,
            body: Vec::new(),
            not_modified_since_ms: Some(1_795_305_600_000 - 7 * 86_400_000),
            ..capture(3)
        };
        sink.capture(&capture(0)).unwrap();
        sink.duplicate(&DuplicateRecord {
            url: "http://127.0.0.1:8080/p/0?q=1".into(),
            duplicate_of: "http://127.0.0.1:8080/original".into(),
            kind: "near".into(),
            distance: 3,
            similarity: 0.93,
            check: "sketch".into(),
            crawl: None,
            rule: None,
        })
        .unwrap();
        let pos = sink.checkpoint().unwrap();
        sink.capture(&capture(1)).unwrap();
        sink.rewind(&pos).unwrap();
        sink.capture(&capture(2)).unwrap();
        sink.capture(&not_modified).unwrap();
        // Capture 0's payload again, at another URL: a revisit of it.
        let again = Capture {
            url: "http://127.0.0.1:8080/p/9?q=1".into(),
            ..capture(0)
        };
        sink.capture(&again).unwrap();
        sink.finish(&nearcrawl_crawl::stats::StatsFile::default())
            .unwrap();

        let bytes = std::fs::read(dir.join("crawl-00000.warc.gz")).unwrap();
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .unwrap();
        // Walk the records by their Content-Length.
        let mut rest = &text[..];
        let mut kinds = Vec::new();
        let mut last_response_id = None;
        while !rest.is_empty() {
            let end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
            let head = std::str::from_utf8(&rest[..end]).unwrap();
            assert!(head.starts_with("WARC/1.1\r\n"), "{head}");
            let field = |name: &str| {
                head.lines()
                    .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                    .map(str::to_string)
            };
            let len: usize = field("Content-Length").unwrap().parse().unwrap();
            let block = &rest[end + 4..end + 4 + len];
            assert_eq!(&rest[end + 4 + len..end + 8 + len], b"\r\n\r\n");
            let kind = field("WARC-Type").unwrap();
            if kind == "metadata" {
                let fields = String::from_utf8_lossy(block);
                assert!(
                    fields.starts_with("duplicate-of: http://127.0.0.1:8080/original\r\n"),
                    "{fields}"
                );
                assert!(fields.contains("similarity: 0.9300\r\n"), "{fields}");
                let response = field("WARC-Concurrent-To").unwrap();
                assert_eq!(
                    Some(response),
                    last_response_id.take(),
                    "its page's response"
                );
            }
            if kind == "response" {
                last_response_id = field("WARC-Record-ID");
            }
            if kind == "conversion" {
                // The DOM a browser built, naming the response it came from.
                assert_eq!(field("WARC-Refers-To"), last_response_id.clone());
                assert_eq!(block, b"<html><p>built by script</p></html>");
                assert_eq!(field("WARC-Payload-Digest"), Some(sha1_digest(block)));
            }
            if kind != "warcinfo" {
                assert_eq!(field("WARC-Block-Digest"), Some(sha1_digest(block)));
            }
            if !matches!(kind.as_str(), "warcinfo" | "conversion") {
                let other = field("WARC-Concurrent-To").expect("names its pair");
                assert!(text_contains(&text, &format!("WARC-Record-ID: {other}")));
            }
            if kind == "response" {
                let payload =
                    &block[block.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
                assert_eq!(field("WARC-Payload-Digest"), Some(sha1_digest(payload)));
                assert_eq!(field("WARC-IP-Address").as_deref(), Some("127.0.0.1"));
                let block = String::from_utf8_lossy(block);
                assert!(block.starts_with("HTTP/1.1 200 OK\r\n"), "{block}");
                assert!(
                    !block.contains("gzip") && !block.contains("9999"),
                    "{block}"
                );
                assert!(block.ends_with(" \u{4e2d}\u{6587}</html>"), "{block}");
                assert!(!block.contains("page 1"), "rewound away: {block}");
                assert!(field("WARC-Truncated").is_none());
            }
            if kind == "revisit"
                && field("WARC-Profile").as_deref() == Some(IDENTICAL_PAYLOAD_PROFILE)
            {
                let original = "http://127.0.0.1:8080/p/0?q=1";
                assert_eq!(
                    field("WARC-Refers-To-Target-URI").as_deref(),
                    Some(original)
                );
                assert_eq!(
                    field("WARC-Refers-To-Date").as_deref(),
                    Some("2026-11-22T00:00:00.000Z")
                );
                assert!(field("WARC-Refers-To").unwrap().starts_with("<urn:uuid:"));
                let body = capture(0).body;
                assert_eq!(field("WARC-Payload-Digest"), Some(sha1_digest(&body)));
                let block = String::from_utf8_lossy(block);
                let length = format!("Content-Length: {}\r\n\r\n", body.len());
                assert!(
                    block.ends_with(&length),
                    "the headers, not the payload: {block}"
                );
            } else if kind == "revisit" {
                assert_eq!(field("WARC-Profile").as_deref(), Some(NOT_MODIFIED_PROFILE));
                assert_eq!(field("WARC-Refers-To-Target-URI"), field("WARC-Target-URI"));
                let date = field("WARC-Refers-To-Date");
                assert_eq!(date.as_deref(), Some("2026-11-15T00:00:00.000Z"));
                assert!(
                    field("WARC-Payload-Digest").is_none(),
                    "a 304 has no payload"
                );
                let block = String::from_utf8_lossy(block);
                assert!(
                    block.starts_with("HTTP/1.1 304 Not Modified\r\n"),
                    "{block}"
                );
                assert!(block.ends_with("Content-Length: 0\r\n\r\n"), "{block}");
            }
            if kind == "request" {
                let block = String::from_utf8_lossy(block);
                assert!(block.starts_with("GET /p/"), "{block}");
                assert!(
                    block.ends_with(
                        "?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: nearcrawl-test\r\n\r\n"
                    ),
                    "{block}"
                );
                assert!(field("WARC-Concurrent-To").is_some());
            }
            kinds.push(kind);
            rest = &rest[end + 8 + len..];
        }
        // Capture 1 was rewound away; 0 and 2 (rendered) remain.
        assert_eq!(
            kinds,
            [
                "warcinfo",
                "response",
                "request",
                "metadata",
                "response",
                "request",
                "conversion",
                "revisit",
                "request",
                "revisit",
                "request"
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
