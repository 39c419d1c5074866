//! The outbox: the outcomes of every batch applied since the last
//! checkpoint, in an append-only file beside the store.
//!
//! Why a file and not store keys: every page's text passes through the
//! outbox, and written as store keys then deleted at each checkpoint it
//! left the store's log full of dead data (4-6 KB per page on disk, most of
//! the state). Appended to a file that each checkpoint empties, it costs
//! nothing once the checkpoint is made.
//!
//! Each block also carries the documents its batch created, with their
//! judgements and URLs, and the bytes it appended to the frontier's files:
//! the duplicate index, the document URLs (see [`crate::doc_urls`]) and
//! the frontier's files (see [`crate::append_file`]) are made durable only
//! at checkpoints, and after a crash these restore them.
//!
//! How it stays exact: a group's outcomes are appended and made durable
//! *before* the group's batch is applied, and the batch records the
//! outbox's new length. So whatever batches made it into the store, the
//! outbox holds their outcomes up to the recorded length; bytes past it
//! belong to a batch that did not make it (its URLs are still in flight)
//! and are cut off at open.
//!
//! Why blocks are stored as they are, not compressed: the file lives
//! between two checkpoints (5 s by default) and is read only after a
//! crash, while compressing it (zstd, level 1) was 1.5-2% of a docs
//! crawl's CPU, 4-6% of one of small pages and 12% of one of 10 MB pages,
//! on the thread that applies every batch. A CRC-32 of each block tells a
//! damaged one. Blocks earlier versions compressed are still read.

use std::io::{self, Read};
use std::path::Path;

use crate::append_file::{AppendFile, Tail};
use crate::sink::{Outcome, outbox_checksum};

/// A block's head, as [`next_block`] reads it: the documents and the
/// tails; its outcomes follow ([`PackedOutcomes`]).
fn write_head(out: &mut Vec<u8>, docs: &[NewDoc], tails: &[Tail]) {
    out.extend_from_slice(&(docs.len() as u32 | WITH_URLS | WITH_TAILS).to_be_bytes());
    for d in docs {
        out.extend_from_slice(&d.doc.to_be_bytes());
        out.extend_from_slice(&(d.judgement.len() as u32).to_be_bytes());
        out.extend_from_slice(&d.judgement);
        let url = d.url.as_deref().unwrap_or("").as_bytes();
        out.extend_from_slice(&(url.len() as u32).to_be_bytes());
        out.extend_from_slice(url);
    }
    out.extend_from_slice(&(tails.len() as u32).to_be_bytes());
    for t in tails {
        out.push(t.file);
        out.extend_from_slice(&t.at.to_be_bytes());
        out.extend_from_slice(&(t.bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(&t.bytes);
    }
}

/// Outcomes encoded for the outbox: made before the store's lock is
/// taken, since fetch tasks wait for that lock to judge pages.
#[derive(Debug, Default)]
pub(crate) struct PackedOutcomes {
    encoded: Vec<u8>,
    /// The JSON of each page record packed, in order: the sink writes it
    /// as is ([`crate::sink::Sink::page_encoded`]) instead of encoding the
    /// record a second time.
    page_json: Vec<Vec<u8>>,
}

impl PackedOutcomes {
    pub(crate) fn pack<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> io::Result<Self> {
        let mut packed = PackedOutcomes::default();
        let mut json = Vec::new();
        for o in outcomes {
            o.encode_keeping_json(&mut packed.encoded, &mut json, &mut packed.page_json)?;
        }
        Ok(packed)
    }

    /// The JSON of the page records packed, in the order they came.
    pub(crate) fn take_page_json(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.page_json)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.encoded.is_empty()
    }
}

/// A block on disk: its length (4 bytes), the same length with [`STORED`]
/// set, the CRC-32 of its bytes, then the bytes. Blocks of earlier
/// versions hold the length of their bytes uncompressed, then the length
/// of the zstd frames that follow, without [`STORED`].
const STORED: u32 = 1 << 31;
const BLOCK_HEADER: usize = 12;

/// What one group of batches left in the outbox.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Block {
    pub docs: Vec<NewDoc>,
    /// None in blocks of earlier versions (the store held the frontier).
    pub tails: Vec<Tail>,
    pub outcomes: Vec<Outcome>,
}

/// A document a batch created.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewDoc {
    pub doc: u64,
    /// `Judgement::to_bytes`.
    pub judgement: Vec<u8>,
    /// None in blocks of earlier versions (the store held the URL).
    pub url: Option<String>,
}

/// Set in a block's document count when each document carries its URL
/// (blocks of earlier versions do not).
const WITH_URLS: u32 = 1 << 31;
/// Set in a block's document count when the block carries the frontier's
/// tails (after the documents).
const WITH_TAILS: u32 = 1 << 30;

#[derive(Debug)]
pub(crate) struct Outbox {
    file: AppendFile,
}

impl Outbox {
    /// Opens the outbox at `path`, cut to `recorded` bytes (what the
    /// store's applied batches name).
    pub(crate) fn open(path: &Path, recorded: u64) -> io::Result<Outbox> {
        let file = AppendFile::open(path, recorded, [])?;
        Ok(Outbox { file })
    }

    /// Appends a block of `docs`, `tails` and `outcomes`, in that order,
    /// durable on return; the outbox's length after.
    pub(crate) fn append(
        &mut self,
        docs: &[NewDoc],
        tails: &[Tail],
        outcomes: &[PackedOutcomes],
    ) -> io::Result<u64> {
        // The header is filled in once the block's length and CRC are known.
        let mut head = vec![0u8; BLOCK_HEADER];
        write_head(&mut head, docs, tails);
        let pieces = || {
            std::iter::once(&head[BLOCK_HEADER..]).chain(outcomes.iter().map(|p| &p.encoded[..]))
        };
        let len: usize = pieces().map(<[u8]>::len).sum();
        let len = u32::try_from(len)
            .ok()
            .filter(|l| l & STORED == 0)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("an outbox block of {len} bytes: at most 2 GiB"),
                )
            })?;
        let crc = outbox_checksum(pieces());
        head[..4].copy_from_slice(&len.to_be_bytes());
        head[4..8].copy_from_slice(&(len | STORED).to_be_bytes());
        head[8..12].copy_from_slice(&crc.to_be_bytes());
        self.file.append(&head)?;
        for packed in outcomes {
            self.file.append(&packed.encoded)?;
        }
        self.file.sync()
    }

    /// Every block, in order.
    pub(crate) fn read_all(&mut self) -> io::Result<Vec<Block>> {
        let mut bytes = Vec::with_capacity(self.file.len() as usize);
        self.file.reader().read_to_end(&mut bytes)?;
        let mut blocks = Vec::new();
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let block = next_block(&mut rest).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "outbox block at byte {} is unreadable",
                        bytes.len() - rest.len()
                    ),
                )
            })?;
            blocks.push(block);
        }
        Ok(blocks)
    }

    /// Empties the outbox (after the store recorded length 0).
    pub(crate) fn clear(&mut self) -> io::Result<()> {
        self.file.cut_to(0)?;
        self.file.sync().map(|_| ())
    }

    pub(crate) fn len(&self) -> u64 {
        self.file.len()
    }

    /// Drops every block past `len` (a block whose batch failed).
    pub(crate) fn cut_to(&mut self, len: u64) -> io::Result<()> {
        self.file.cut_to(len)
    }
}

/// Decodes the block at the head of `rest` and moves past it.
fn next_block(rest: &mut &[u8]) -> Option<Block> {
    let word = |at: usize| Some(u32::from_be_bytes(rest.get(at..at + 4)?.try_into().ok()?));
    let (len, stored) = (word(0)? as usize, word(4)?);
    let bytes = if stored & STORED != 0 {
        let crc = word(8)?;
        let bytes = rest.get(BLOCK_HEADER..BLOCK_HEADER + len)?;
        if outbox_checksum([bytes]) != crc || (stored & !STORED) as usize != len {
            return None;
        }
        *rest = &rest[BLOCK_HEADER + len..];
        std::borrow::Cow::Borrowed(bytes)
    } else {
        // An earlier version's block: zstd frames of `len` bytes in all.
        let frames = rest.get(8..8 + stored as usize)?;
        let bytes = zstd::bulk::decompress(frames, len).ok()?;
        *rest = &rest[8 + stored as usize..];
        std::borrow::Cow::Owned(bytes)
    };
    let mut b = &bytes[..];
    let take = |b: &mut &[u8], n: usize| -> Option<Vec<u8>> {
        let head = b.get(..n)?.to_vec();
        *b = &b[n..];
        Some(head)
    };
    let mut n = u32::from_be_bytes(take(&mut b, 4)?.try_into().ok()?);
    let with_urls = n & WITH_URLS != 0;
    let with_tails = n & WITH_TAILS != 0;
    n &= !(WITH_URLS | WITH_TAILS);
    let mut docs = Vec::new();
    for _ in 0..n {
        let doc = u64::from_be_bytes(take(&mut b, 8)?.try_into().ok()?);
        let len = u32::from_be_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
        let judgement = take(&mut b, len)?;
        let url = if with_urls {
            let len = u32::from_be_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
            Some(String::from_utf8(take(&mut b, len)?).ok()?)
        } else {
            None
        };
        docs.push(NewDoc {
            doc,
            judgement,
            url,
        });
    }
    let mut tails = Vec::new();
    if with_tails {
        let n = u32::from_be_bytes(take(&mut b, 4)?.try_into().ok()?);
        for _ in 0..n {
            let file = take(&mut b, 1)?[0];
            let at = u64::from_be_bytes(take(&mut b, 8)?.try_into().ok()?);
            let len = u32::from_be_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
            let bytes = take(&mut b, len)?;
            tails.push(Tail { file, at, bytes });
        }
    }
    let outcomes = Outcome::decode_all(b)?;
    Some(Block {
        docs,
        tails,
        outcomes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::ErrorRecord;

    /// A path in the temporary directory, for this process, with nothing
    /// there yet.
    fn temp_file(name: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("nearcrawl-outbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    fn pack(outcomes: &[Outcome]) -> [PackedOutcomes; 1] {
        [PackedOutcomes::pack(outcomes).unwrap()]
    }

    fn error(n: u32) -> Outcome {
        Outcome::Error(ErrorRecord {
            url: format!("http://a.example/{n}"),
            kind: "status".into(),
            detail: "404".into(),
        })
    }

    #[test]
    fn outcomes_packed_apart_read_back_as_one_block_in_order() {
        let path = temp_file("packs");
        let mut o = Outbox::open(&path, 0).unwrap();
        let docs = vec![NewDoc {
            doc: 4,
            judgement: vec![9; 40],
            url: None,
        }];
        let packs = [&[error(1), error(2)][..], &[], &[error(3)]]
            .map(|outcomes| PackedOutcomes::pack(outcomes).unwrap());
        o.append(&docs, &[], &packs).unwrap();
        o.append(&[], &[], &[]).unwrap();
        let blocks = o.read_all().unwrap();
        assert_eq!(blocks[0].docs[0].doc, 4);
        assert_eq!(blocks[0].outcomes, vec![error(1), error(2), error(3)]);
        assert_eq!(blocks[1], Block::default());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn blocks_past_the_recorded_length_are_cut_at_open() {
        let dir = temp_file("cut");
        let block = |docs: Vec<NewDoc>, outcomes: Vec<Outcome>| Block {
            docs,
            tails: vec![Tail {
                file: b'q',
                at: 3,
                bytes: b"queued".to_vec(),
            }],
            outcomes,
        };
        let doc = |doc: u64, judgement: &[u8]| NewDoc {
            doc,
            judgement: judgement.to_vec(),
            url: Some(format!("http://a.example/d{doc}")),
        };
        let mut o = Outbox::open(&dir, 0).unwrap();
        let a = block(vec![doc(7, b"judgement")], vec![error(1), error(2)]);
        let first = o.append(&a.docs, &a.tails, &pack(&a.outcomes)).unwrap();
        o.append(&[], &[], &pack(&[error(3)])).unwrap();
        drop(o);
        // The second block's batch never made it: the store names `first`.
        let mut o = Outbox::open(&dir, first).unwrap();
        assert_eq!(o.read_all().unwrap(), vec![a]);
        let d = block(vec![doc(8, &[]), doc(9, &[1, 2])], vec![]);
        let second = o.append(&d.docs, &d.tails, &pack(&d.outcomes)).unwrap();
        assert_eq!(o.read_all().unwrap()[1], d);
        o.clear().unwrap();
        assert!(o.read_all().unwrap().is_empty());
        drop(o);
        assert!(
            Outbox::open(&dir, second).is_err(),
            "a state naming more than the file holds is an error, not a silent loss"
        );
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn a_block_with_a_large_page_reads_back_whole() {
        use crate::sink::{Capture, PageRecord};
        let path = temp_file("big");
        // Megabytes, not all alike.
        let body: Vec<u8> = (0..3_000_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let text: String = (0..400_000).map(|i| format!("w{} ", i % 977)).collect();
        let outcomes = vec![
            error(1),
            Outcome::Capture(Capture {
                url: "http://a.example/big".into(),
                fetched_at_ms: 1,
                request_headers: vec![],
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body,
                truncated: false,
                ip: None,
                not_modified_since_ms: None,
                digest: None,
                rendered: None,
            }),
            Outcome::Page(PageRecord {
                url: "http://a.example/big".into(),
                final_url: "http://a.example/big".into(),
                status: 200,
                fetched_at: 1,
                depth: 0,
                title: None,
                lang: None,
                language: None,
                text,
                simhash: "00ff".into(),
                content_hash: "ab".into(),
                outlinks: 0,
                duplicate_of: None,
                replaces: None,
            }),
            error(2),
        ];
        let docs = vec![NewDoc {
            doc: 9,
            judgement: vec![1, 2, 3],
            url: Some("http://a.example/big".into()),
        }];
        let mut outbox = Outbox::open(&path, 0).unwrap();
        let first = outbox.append(&docs, &[], &pack(&outcomes)).unwrap();
        let end = outbox.append(&[], &[], &pack(&[error(3)])).unwrap();
        assert!(first < end);
        let blocks = outbox.read_all().unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].docs, docs);
        assert_eq!(blocks[0].outcomes, outcomes);
        assert_eq!(blocks[1].outcomes, [error(3)]);
        drop(outbox);
        std::fs::remove_file(&path).unwrap();
    }

    /// A block as earlier versions wrote it: its length, the length of
    /// its zstd frame, the frame.
    fn compressed_block(raw: &[u8]) -> Vec<u8> {
        let packed = zstd::bulk::compress(raw, 1).unwrap();
        let mut framed = (raw.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&(packed.len() as u32).to_be_bytes());
        framed.extend_from_slice(&packed);
        framed
    }

    #[test]
    fn compressed_blocks_of_earlier_versions_read_before_stored_ones() {
        let path = temp_file("mixed");
        let mut raw = Vec::new();
        write_head(&mut raw, &[], &[]);
        error(1).encode(&mut raw, &mut Vec::new()).unwrap();
        std::fs::write(&path, compressed_block(&raw)).unwrap();
        let earlier = std::fs::metadata(&path).unwrap().len();
        let mut o = Outbox::open(&path, earlier).unwrap();
        o.append(&[], &[], &pack(&[error(2)])).unwrap();
        let outcomes: Vec<_> = o
            .read_all()
            .unwrap()
            .into_iter()
            .flat_map(|b| b.outcomes)
            .collect();
        assert_eq!(outcomes, [error(1), error(2)]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_damaged_block_is_refused_not_read() {
        let path = temp_file("damaged");
        let mut o = Outbox::open(&path, 0).unwrap();
        let end = o.append(&[], &[], &pack(&[error(1), error(2)])).unwrap();
        drop(o);
        let mut bytes = std::fs::read(&path).unwrap();
        // A byte of the second record's URL: still well-formed JSON.
        let at = bytes.len() - 20;
        bytes[at] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let e = Outbox::open(&path, end).unwrap().read_all().unwrap_err();
        assert!(e.to_string().contains("byte 0 is unreadable"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn blocks_of_earlier_versions_read_without_urls() {
        // As earlier versions framed a block: documents with no URLs.
        let mut raw = 1u32.to_be_bytes().to_vec();
        raw.extend_from_slice(&5u64.to_be_bytes());
        raw.extend_from_slice(&2u32.to_be_bytes());
        raw.extend_from_slice(&[7, 8]);
        error(4).encode(&mut raw, &mut Vec::new()).unwrap();
        let block = next_block(&mut &compressed_block(&raw)[..]).unwrap();
        assert_eq!(
            block.docs,
            [NewDoc {
                doc: 5,
                judgement: vec![7, 8],
                url: None
            }]
        );
        assert_eq!(block.outcomes, [error(4)]);
    }
}
