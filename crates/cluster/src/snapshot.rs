//! A copy of a gate replica for a worker that joins after the shared log
//! was trimmed: it cannot apply the log from the start, so a running worker
//! sends it its own replica, passed through the cluster in chunks.
//!
//! The joiner asks (`{CRAWL:gate}:snap:want`); a running worker takes the
//! ask at its next checkpoint, writes its flushed replica to a file (the
//! sled trees and the records file: [`dump`]), registers the joiner at
//! the replica's position so the log is kept from there, and streams the
//! file into `{CRAWL:gate}:snap:JOINER` at most [`AHEAD`] chunks ahead of
//! the joiner, so Redis holds a few MiB whatever the replica's size. The
//! joiner checks the length and hash, and [`restore`]s the copy into its
//! replica directory; it then applies the log from the copy's position.

use std::hash::Hasher;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redis::cluster_async::ClusterConnection;

use crate::error::ClusterError;
use crate::retry::query_retrying;

const MAGIC: &[u8] = b"nearcrawl gate replica 1\n";
/// Frames of a snapshot file: a tree's name, one of its entries, the
/// records file, the end.
const TREE: u8 = 1;
const ENTRY: u8 = 2;
const RECORDS: u8 = 3;
const END: u8 = 0;
/// Bytes per chunk in the cluster, and chunks pushed ahead of the joiner.
const CHUNK: usize = 1 << 20;
const AHEAD: usize = 8;
/// How long either side waits for the other's next chunk.
const STALL: Duration = Duration::from_secs(60);
/// How long a joiner that asked has to take the header.
const TAKEN: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(20);

/// Writes the replica whose database is `db` and whose records file is
/// `records` (both flushed) to the file `to`.
pub(crate) fn dump(db: &sled::Db, records: &Path, to: &Path) -> Result<(), ClusterError> {
    let mut out = BufWriter::new(std::fs::File::create(to)?);
    out.write_all(MAGIC)?;
    for name in db.tree_names() {
        frame(&mut out, TREE, &name)?;
        let tree = db.open_tree(&name).map_err(sled_error)?;
        for kv in tree.iter() {
            let (k, v) = kv.map_err(sled_error)?;
            frame(&mut out, ENTRY, &k)?;
            out.write_all(&(v.len() as u32).to_be_bytes())?;
            out.write_all(&v)?;
        }
    }
    let mut file = match std::fs::File::open(records) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let len = match &file {
        Some(f) => f.metadata()?.len(),
        None => 0,
    };
    out.write_all(&[RECORDS])?;
    out.write_all(&len.to_be_bytes())?;
    if let Some(f) = &mut file {
        let copied = std::io::copy(&mut f.take(len), &mut out)?;
        if copied != len {
            return Err(ClusterError::Corrupt(
                "the records file shrank while copied".into(),
            ));
        }
    }
    out.write_all(&[END])?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(())
}

fn frame(out: &mut impl Write, kind: u8, bytes: &[u8]) -> std::io::Result<()> {
    out.write_all(&[kind])?;
    out.write_all(&(bytes.len() as u32).to_be_bytes())?;
    out.write_all(bytes)
}

/// Makes the replica directory `dir` (which must not exist) from the
/// snapshot file `from`; `finish` writes what the replica adds of its own
/// (its name) before it is made durable.
pub(crate) fn restore(
    from: &Path,
    dir: &Path,
    records: &str,
    finish: impl FnOnce(&sled::Db) -> Result<(), ClusterError>,
) -> Result<(), ClusterError> {
    let bad = |what: &str| ClusterError::Corrupt(format!("gate snapshot: {what}"));
    let mut input = BufReader::new(std::fs::File::open(from)?);
    let mut magic = vec![0; MAGIC.len()];
    input.read_exact(&mut magic)?;
    if magic != MAGIC {
        return Err(bad("not a snapshot of this version"));
    }
    let db = nearcrawl_index::open_sled(&sled::Config::new().path(dir)).map_err(sled_error)?;
    let mut tree: Option<sled::Tree> = None;
    loop {
        match read_u8(&mut input)? {
            TREE => tree = Some(db.open_tree(read_bytes(&mut input)?).map_err(sled_error)?),
            ENTRY => {
                let k = read_bytes(&mut input)?;
                let v = read_bytes(&mut input)?;
                let tree = tree
                    .as_ref()
                    .ok_or_else(|| bad("an entry before its tree"))?;
                tree.insert(k, v).map_err(sled_error)?;
            }
            RECORDS => {
                let mut len = [0u8; 8];
                input.read_exact(&mut len)?;
                let len = u64::from_be_bytes(len);
                let mut file = std::fs::File::create(dir.join(records))?;
                if std::io::copy(&mut (&mut input).take(len), &mut file)? != len {
                    return Err(bad("the records file is cut short"));
                }
                file.sync_all()?;
            }
            END => break,
            _ => return Err(bad("an unknown frame")),
        }
    }
    finish(&db)?;
    db.flush().map_err(sled_error)?;
    Ok(())
}

fn read_u8(input: &mut impl Read) -> std::io::Result<u8> {
    let mut b = [0u8; 1];
    input.read_exact(&mut b)?;
    Ok(b[0])
}

fn read_bytes(input: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    input.read_exact(&mut len)?;
    let mut bytes = vec![0; u32::from_be_bytes(len) as usize];
    input.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn sled_error(e: sled::Error) -> ClusterError {
    ClusterError::Gate(e.into())
}

/// Where one crawl's snapshots pass: `{CRAWL:gate}:snap:…`.
#[derive(Clone)]
pub(crate) struct Channel {
    pub(crate) con: ClusterConnection,
    /// `{CRAWL:gate}`: the log's slot.
    pub(crate) base: String,
}

impl Channel {
    fn want(&self) -> String {
        format!("{}:snap:want", self.base)
    }

    fn chunks(&self, joiner: &str) -> String {
        format!("{}:snap:{joiner}", self.base)
    }

    /// Asks for a snapshot for `joiner`.
    pub(crate) async fn ask(&self, joiner: &str) -> Result<(), ClusterError> {
        let mut con = self.con.clone();
        let mut del = redis::cmd("DEL");
        del.arg(self.chunks(joiner));
        let _: u64 = query_retrying(&mut con, &del).await?;
        let mut push = redis::cmd("RPUSH");
        push.arg(self.want()).arg(joiner);
        let _: u64 = query_retrying(&mut con, &push).await?;
        Ok(())
    }

    /// The next worker that asked for a snapshot, if any.
    pub(crate) async fn next_ask(&self) -> Result<Option<String>, ClusterError> {
        let mut pop = redis::cmd("LPOP");
        pop.arg(self.want());
        Ok(query_retrying(&mut self.con.clone(), &pop).await?)
    }

    /// Streams the snapshot file `file` to `joiner`: a header (length and
    /// hash), then chunks, never more than [`AHEAD`] waiting.
    pub(crate) async fn send(&self, joiner: &str, file: &Path) -> Result<(), ClusterError> {
        // Read twice, a chunk at a time: the hash goes first.
        let mut hash = fnv::FnvHasher::default();
        let len = for_chunks(file, |c| hash.write(c))?;
        let key = self.chunks(joiner);
        let mut con = self.con.clone();
        let header = format!("{len} {:016x}", hash.finish());
        self.push(&mut con, &key, header.as_bytes()).await?;
        // A joiner that is still waiting takes the header at once; one that
        // gave up (or died) since it asked is not sent the rest.
        self.wait_for_room(&mut con, &key, joiner, 1, TAKEN).await?;
        let mut input = std::fs::File::open(file)?;
        let mut chunk = vec![0; CHUNK];
        loop {
            let n = read_full(&mut input, &mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            self.wait_for_room(&mut con, &key, joiner, AHEAD, STALL)
                .await?;
            self.push(&mut con, &key, &chunk[..n]).await?;
        }
    }

    async fn wait_for_room(
        &self,
        con: &mut ClusterConnection,
        key: &str,
        joiner: &str,
        below: usize,
        stall: Duration,
    ) -> Result<(), ClusterError> {
        let since = Instant::now();
        loop {
            let mut len = redis::cmd("LLEN");
            len.arg(key);
            let waiting: usize = query_retrying(con, &len).await?;
            if waiting < below {
                return Ok(());
            }
            if since.elapsed() > stall {
                let mut del = redis::cmd("DEL");
                del.arg(key);
                let _: u64 = query_retrying(con, &del).await?;
                return Err(ClusterError::Corrupt(format!(
                    "gate snapshot: {joiner} took nothing for {stall:?}"
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn push(
        &self,
        con: &mut ClusterConnection,
        key: &str,
        bytes: &[u8],
    ) -> Result<(), ClusterError> {
        let mut push = redis::cmd("RPUSH");
        push.arg(key).arg(bytes);
        let _: u64 = query_retrying(con, &push).await?;
        // An abandoned transfer does not stay.
        let mut expire = redis::cmd("PEXPIRE");
        expire.arg(key).arg(STALL.as_millis() as u64 * 2);
        let _: u64 = query_retrying(con, &expire).await?;
        Ok(())
    }

    /// Receives `joiner`'s snapshot into the file `to`, waiting up to
    /// `first` for it to start and [`STALL`] for each chunk after.
    pub(crate) async fn receive(
        &self,
        joiner: &str,
        to: &Path,
        first: Duration,
    ) -> Result<(), ClusterError> {
        let key = self.chunks(joiner);
        let mut con = self.con.clone();
        let header = pop(&mut con, &key, first).await?.ok_or_else(|| {
            ClusterError::Corrupt(format!(
                "no running worker sent a copy of its gate replica within {first:?}"
            ))
        })?;
        let bad = || ClusterError::Corrupt("gate snapshot: a bad header".into());
        let header = String::from_utf8(header).map_err(|_| bad())?;
        let (len, hash) = header.split_once(' ').ok_or_else(bad)?;
        let len: usize = len.parse().map_err(|_| bad())?;
        let hash = u64::from_str_radix(hash, 16).map_err(|_| bad())?;
        let mut out = BufWriter::new(std::fs::File::create(to)?);
        let (mut got, mut sum) = (0, fnv::FnvHasher::default());
        while got < len {
            let chunk = pop(&mut con, &key, STALL).await?.ok_or_else(|| {
                ClusterError::Corrupt(format!("gate snapshot: nothing came for {STALL:?}"))
            })?;
            sum.write(&chunk);
            out.write_all(&chunk)?;
            got += chunk.len();
        }
        if got != len || sum.finish() != hash {
            return Err(ClusterError::Corrupt(
                "gate snapshot: damaged in transit".into(),
            ));
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        Ok(())
    }
}

/// Calls `f` on each chunk of `file`; its length.
fn for_chunks(file: &Path, mut f: impl FnMut(&[u8])) -> std::io::Result<usize> {
    let mut input = std::fs::File::open(file)?;
    let (mut chunk, mut len) = (vec![0; CHUNK], 0);
    loop {
        let n = read_full(&mut input, &mut chunk)?;
        if n == 0 {
            return Ok(len);
        }
        f(&chunk[..n]);
        len += n;
    }
}

/// Reads until `buf` is full or the input ends; how much was read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The first element of list `key`, waiting up to `wait` for one.
async fn pop(
    con: &mut ClusterConnection,
    key: &str,
    wait: Duration,
) -> Result<Option<Vec<u8>>, ClusterError> {
    let since = Instant::now();
    loop {
        let mut pop = redis::cmd("LPOP");
        pop.arg(key);
        let got: Option<Vec<u8>> = query_retrying(con, &pop).await?;
        if got.is_some() || since.elapsed() > wait {
            return Ok(got);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// A file beside `dir` for a snapshot on its way.
pub(crate) fn scratch(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map_or("gate".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{name}.{what}"))
}
