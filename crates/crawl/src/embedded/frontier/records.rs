//! The queue file's records: "queued" (sequence number, depth, URL) and
//! "done" (sequence number), appended in the order made.
//!
//! Layout: a tag byte, then for "queued" the URL's length (u32), the
//! sequence number (u64), the depth (u32) and the URL; for "done" the
//! sequence number. Big-endian.

use std::io::{self, Read};

use crate::append_file::AppendFile;
use crate::embedded::store::StoreError;

use super::{be_u64, io_error};

const QUEUED: u8 = 1;
const DONE: u8 = 2;
const QUEUED_HEAD: usize = 1 + 4 + 8 + 4;
const DONE_LEN: usize = 1 + 8;

/// Appends a "queued" record to `out`; its length.
pub(super) fn encode_queued(out: &mut Vec<u8>, seq: u64, depth: u32, url: &str) -> u32 {
    let start = out.len();
    out.push(QUEUED);
    out.extend_from_slice(&(url.len() as u32).to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(&depth.to_be_bytes());
    out.extend_from_slice(url.as_bytes());
    (out.len() - start) as u32
}

/// Appends a "done" record to `out`.
pub(super) fn encode_done(out: &mut Vec<u8>, seq: u64) {
    out.push(DONE);
    out.extend_from_slice(&seq.to_be_bytes());
}

/// A "queued" record read back.
pub(super) struct Queued {
    pub seq: u64,
    pub depth: u32,
    pub url: String,
    /// The record's length in bytes.
    pub len: u32,
}

/// Why a record did not decode.
enum Bad {
    /// Cut short: more bytes may complete it.
    Short,
    Invalid(String),
}

/// Decodes the record at the head of `b`: Ok(None) at a clean end.
fn decode(b: &[u8]) -> Result<Option<(Record, usize)>, Bad> {
    match b.first() {
        None => Ok(None),
        Some(&QUEUED) => {
            let head = b.get(..QUEUED_HEAD).ok_or(Bad::Short)?;
            let url_len = u32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
            let seq = be_u64(&head[5..13]);
            let depth = u32::from_be_bytes(head[13..17].try_into().unwrap());
            let len = QUEUED_HEAD + url_len;
            let url = b.get(QUEUED_HEAD..len).ok_or(Bad::Short)?;
            let url = String::from_utf8(url.to_vec())
                .map_err(|_| Bad::Invalid("a URL that is not UTF-8".into()))?;
            let q = Queued {
                seq,
                depth,
                url,
                len: len as u32,
            };
            Ok(Some((Record::Queued(q), len)))
        }
        Some(&DONE) => {
            let seq = b.get(1..DONE_LEN).ok_or(Bad::Short)?;
            Ok(Some((Record::Done(be_u64(seq)), DONE_LEN)))
        }
        Some(tag) => Err(Bad::Invalid(format!("a record of unknown kind {tag}"))),
    }
}

pub(super) enum Record {
    Queued(Queued),
    Done(u64),
}

/// Every record of `file`, in order, to `each` (with its offset).
pub(super) fn scan(file: &AppendFile, mut each: impl FnMut(u64, Record)) -> Result<(), StoreError> {
    let corrupt =
        |at: u64, why: &str| StoreError::Corrupt(format!("the queue file at byte {at}: {why}"));
    let mut reader = file.reader();
    let (mut buf, mut chunk) = (Vec::new(), vec![0; 1 << 16]);
    let mut offset = 0u64;
    loop {
        let n = reader.read(&mut chunk).map_err(io_error)?;
        buf.extend_from_slice(&chunk[..n]);
        let mut used = 0;
        loop {
            match decode(&buf[used..]) {
                Ok(Some((record, len))) => {
                    each(offset, record);
                    offset += len as u64;
                    used += len;
                }
                Ok(None) | Err(Bad::Short) => break,
                Err(Bad::Invalid(why)) => return Err(corrupt(offset, &why)),
            }
        }
        buf.drain(..used);
        if n == 0 {
            return match buf.is_empty() {
                true => Ok(()),
                false => Err(corrupt(offset, "the file ends inside a record")),
            };
        }
    }
}

/// Copies the "queued" record at `offset` of `old` to `out`, to be
/// appended to `next` (in chunks); its offset in `next`.
pub(super) fn copy_queued(
    old: &AppendFile,
    offset: u64,
    out: &mut Vec<u8>,
    next: &mut AppendFile,
) -> io::Result<u64> {
    let mut head = [0; QUEUED_HEAD];
    old.read_at(&mut head, offset)?;
    let len = QUEUED_HEAD + u32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
    let at = next.len() + out.len() as u64;
    let start = out.len();
    out.resize(start + len, 0);
    old.read_at(&mut out[start..], offset)?;
    if out.len() >= 1 << 20 {
        next.append(out)?;
        out.clear();
    }
    Ok(at)
}

/// Reads the "queued" record at `offset` of `file`.
pub(super) fn read_queued(file: &AppendFile, offset: u64) -> Result<Queued, StoreError> {
    let mut buf = vec![0; 512];
    let n = file.read_at(&mut buf, offset).map_err(io_error)?;
    buf.truncate(n);
    if let Some(head) = buf.get(..QUEUED_HEAD) {
        let len = QUEUED_HEAD + u32::from_be_bytes(head[1..5].try_into().unwrap()) as usize;
        if len > buf.len() {
            buf.resize(len, 0);
            let n = file.read_at(&mut buf, offset).map_err(io_error)?;
            buf.truncate(n);
        }
    }
    match decode(&buf) {
        Ok(Some((Record::Queued(q), _))) => Ok(q),
        Ok(_) => Err(StoreError::Corrupt(format!(
            "the queue file has no queued URL at byte {offset}"
        ))),
        Err(Bad::Short) => Err(StoreError::Corrupt(format!(
            "the queue file ends inside the record at byte {offset}"
        ))),
        Err(Bad::Invalid(why)) => Err(StoreError::Corrupt(format!(
            "the queue file at byte {offset}: {why}"
        ))),
    }
}
