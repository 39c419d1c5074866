//! The JSONL outputs: `pages-NNNNN.jsonl` shards (or `.jsonl.zst`),
//! `duplicates.jsonl`, `errors.jsonl`, `stats.json`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use nearcrawl_crawl::sink::{DuplicateRecord, ErrorRecord, PageRecord, Position, Sink};

/// How page shards are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardCompression {
    None,
    /// zstd at this level. Each checkpoint ends a frame, so a shard cut
    /// back to a checkpoint is still a valid (multi-frame) zstd file.
    Zstd(i32),
}

enum PagesWriter {
    Plain(BufWriter<File>),
    /// zstd, between frames (right after a checkpoint).
    ZstdIdle(BufWriter<File>),
    /// zstd, a frame open: the encoder owns the file until the frame ends.
    ZstdFrame(zstd::stream::write::Encoder<'static, BufWriter<File>>),
}

/// `pages-NNNNN.jsonl` shards rolled by size (of the uncompressed lines),
/// `duplicates.jsonl`, `errors.jsonl`, `stats.json`.
pub struct JsonlSink {
    dir: PathBuf,
    shard_bytes: u64,
    compression: ShardCompression,
    shard: usize,
    /// Uncompressed bytes in the current shard (this run's share, for
    /// rolling).
    written: u64,
    pages: Option<PagesWriter>,
    duplicates: BufWriter<File>,
    errors: BufWriter<File>,
}

pub(crate) fn append(path: &Path) -> io::Result<BufWriter<File>> {
    Ok(BufWriter::with_capacity(
        64 << 10,
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?,
    ))
}

/// Flushes and fsyncs, returning the file's length.
pub(crate) fn sync(w: &mut BufWriter<File>) -> io::Result<u64> {
    w.flush()?;
    w.get_ref().sync_data()?;
    Ok(w.get_ref().metadata()?.len())
}

pub(crate) fn cut(w: &mut BufWriter<File>, len: u64) -> io::Result<()> {
    w.flush()?;
    if w.get_ref().metadata()?.len() > len {
        w.get_ref().set_len(len)?;
    }
    Ok(())
}

impl JsonlSink {
    /// Opens the outputs in `dir`, continuing after existing shards.
    pub fn open(
        dir: &Path,
        shard_bytes: u64,
        compression: ShardCompression,
    ) -> io::Result<JsonlSink> {
        std::fs::create_dir_all(dir)?;
        let mut sink = JsonlSink {
            duplicates: append(&dir.join("duplicates.jsonl"))?,
            errors: append(&dir.join("errors.jsonl"))?,
            dir: dir.to_path_buf(),
            shard_bytes: shard_bytes.max(1),
            compression,
            shard: 0,
            written: 0,
            pages: None,
        };
        while sink.shard_path(sink.shard + 1).exists() {
            sink.shard += 1;
        }
        sink.open_shard()?;
        Ok(sink)
    }

    fn shard_path(&self, shard: usize) -> PathBuf {
        let ext = match self.compression {
            ShardCompression::None => "jsonl",
            ShardCompression::Zstd(_) => "jsonl.zst",
        };
        self.dir.join(format!("pages-{shard:05}.{ext}"))
    }

    fn open_shard(&mut self) -> io::Result<()> {
        let file = append(&self.shard_path(self.shard))?;
        self.written = file.get_ref().metadata()?.len();
        self.pages = Some(match self.compression {
            ShardCompression::None => PagesWriter::Plain(file),
            ShardCompression::Zstd(_) => PagesWriter::ZstdIdle(file),
        });
        Ok(())
    }

    /// Ends the current zstd frame, if any, and returns the file writer.
    fn pages_file(&mut self) -> io::Result<&mut BufWriter<File>> {
        if let Some(PagesWriter::ZstdFrame(_)) = &self.pages {
            let Some(PagesWriter::ZstdFrame(e)) = self.pages.take() else {
                unreachable!()
            };
            self.pages = Some(PagesWriter::ZstdIdle(e.finish()?));
        }
        match self.pages.as_mut().expect("a shard is open") {
            PagesWriter::Plain(f) | PagesWriter::ZstdIdle(f) => Ok(f),
            PagesWriter::ZstdFrame(_) => unreachable!("the frame was just ended"),
        }
    }

    fn write_page_line(&mut self, line: &[u8]) -> io::Result<()> {
        if let (Some(PagesWriter::ZstdIdle(_)), ShardCompression::Zstd(level)) =
            (&self.pages, self.compression)
        {
            let Some(PagesWriter::ZstdIdle(f)) = self.pages.take() else {
                unreachable!()
            };
            self.pages = Some(PagesWriter::ZstdFrame(zstd::stream::write::Encoder::new(
                f, level,
            )?));
        }
        match self.pages.as_mut().expect("a shard is open") {
            PagesWriter::Plain(f) => f.write_all(line),
            PagesWriter::ZstdFrame(e) => e.write_all(line),
            PagesWriter::ZstdIdle(_) => unreachable!("a frame was just opened"),
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.pages_file()?.flush()?;
        self.duplicates.flush()?;
        self.errors.flush()
    }
}

impl std::fmt::Debug for JsonlSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlSink")
            .field("dir", &self.dir)
            .field("shard", &self.shard)
            .finish()
    }
}

impl Sink for JsonlSink {
    fn page(&mut self, p: &PageRecord) -> io::Result<()> {
        self.page_encoded(p, &serde_json::to_vec(p)?)
    }

    fn page_encoded(&mut self, _: &PageRecord, json: &[u8]) -> io::Result<()> {
        let len = json.len() as u64 + 1;
        if self.written > 0 && self.written + len > self.shard_bytes {
            self.pages_file()?.flush()?;
            self.shard += 1;
            self.open_shard()?;
        }
        self.write_page_line(json)?;
        self.write_page_line(b"\n")?;
        self.written += len;
        Ok(())
    }

    fn duplicate(&mut self, d: &DuplicateRecord) -> io::Result<()> {
        let mut line = json!({
            "url": d.url, "duplicate_of": d.duplicate_of, "kind": d.kind, "distance": d.distance,
            "similarity": (f64::from(d.similarity) * 1000.0).round() / 1000.0, "check": d.check,
        });
        if let Some(crawl) = &d.crawl {
            line["crawl"] = crawl.as_str().into();
        }
        writeln!(self.duplicates, "{line}")
    }

    fn error(&mut self, e: &ErrorRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(e)?;
        line.push(b'\n');
        self.errors.write_all(&line)
    }

    fn checkpoint(&mut self) -> io::Result<Position> {
        let pages = sync(self.pages_file()?)?;
        Ok(json!({
            "shard": self.shard,
            "pages": pages,
            "duplicates": sync(&mut self.duplicates)?,
            "errors": sync(&mut self.errors)?,
        }))
    }

    fn rewind(&mut self, position: &Position) -> io::Result<()> {
        let at = |key: &str| position.get(key).and_then(|v| v.as_u64()).unwrap_or(0);
        let shard = at("shard") as usize;
        self.pages_file()?.flush()?;
        // Shards started after the checkpoint go entirely.
        let mut later = shard + 1;
        while self.shard_path(later).exists() {
            std::fs::remove_file(self.shard_path(later))?;
            later += 1;
        }
        self.shard = shard;
        self.open_shard()?;
        cut(self.pages_file()?, at("pages"))?;
        self.written = at("pages");
        cut(&mut self.duplicates, at("duplicates"))?;
        cut(&mut self.errors, at("errors"))?;
        Ok(())
    }

    fn finish(&mut self, stats: &nearcrawl_crawl::stats::StatsFile) -> io::Result<()> {
        self.checkpoint()?;
        std::fs::write(
            self.dir.join("stats.json"),
            serde_json::to_string_pretty(stats)? + "\n",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(i: usize) -> PageRecord {
        PageRecord {
            url: format!("http://a.example/{i}"),
            final_url: format!("http://a.example/{i}"),
            status: 200,
            fetched_at: 1,
            depth: 1,
            title: None,
            lang: None,
            language: None,
            text: "words ".repeat(50),
            simhash: "0".into(),
            content_hash: "0".into(),
            outlinks: 0,
            duplicate_of: None,
            replaces: None,
        }
    }

    fn lines(dir: &Path) -> Vec<String> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("pages-")
            })
            .collect();
        names.sort();
        let mut out = Vec::new();
        for n in names {
            let bytes = std::fs::read(&n).unwrap();
            let text = if n.extension().unwrap() == "zst" {
                String::from_utf8(zstd::decode_all(&bytes[..]).unwrap()).unwrap()
            } else {
                String::from_utf8(bytes).unwrap()
            };
            out.extend(text.lines().map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
                    .as_str()
                    .unwrap()
                    .to_string()
            }));
        }
        out
    }

    fn rewind_cuts_back_to_the_checkpoint(compression: ShardCompression, tag: &str) {
        let dir =
            std::env::temp_dir().join(format!("nearcrawl-jsonl-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut sink = JsonlSink::open(&dir, 2_000, compression).unwrap();
        for i in 0..10 {
            sink.page(&page(i)).unwrap();
        }
        let pos = sink.checkpoint().unwrap();
        for i in 10..25 {
            sink.page(&page(i)).unwrap();
        }
        sink.error(&ErrorRecord {
            url: "u".into(),
            kind: "k".into(),
            detail: "d".into(),
        })
        .unwrap();
        sink.flush().unwrap();
        drop(sink);
        // A new run rewinds to the checkpoint and writes on from there.
        let mut sink = JsonlSink::open(&dir, 2_000, compression).unwrap();
        sink.rewind(&pos).unwrap();
        for i in 100..103 {
            sink.page(&page(i)).unwrap();
        }
        sink.finish(&nearcrawl_crawl::stats::StatsFile::default())
            .unwrap();
        let want: Vec<String> = (0..10)
            .chain(100..103)
            .map(|i| format!("http://a.example/{i}"))
            .collect();
        assert_eq!(lines(&dir), want);
        assert_eq!(std::fs::read(dir.join("errors.jsonl")).unwrap().len(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_record_encoded_before_is_written_as_one_encoded_here() {
        let dir = |tag: &str| {
            let d =
                std::env::temp_dir().join(format!("nearcrawl-jsonl-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            d
        };
        let (here, before) = (dir("encoded-here"), dir("encoded-before"));
        let mut a = JsonlSink::open(&here, 2_000, ShardCompression::None).unwrap();
        let mut b = JsonlSink::open(&before, 2_000, ShardCompression::None).unwrap();
        // Past a shard's 2,000 bytes: both roll over at the same record.
        for i in 0..25 {
            a.page(&page(i)).unwrap();
            let json = serde_json::to_vec(&page(i)).unwrap();
            b.page_encoded(&page(i), &json).unwrap();
        }
        a.flush().unwrap();
        b.flush().unwrap();
        let files = |d: &Path| {
            let mut names: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .filter(|n| n.to_string_lossy().starts_with("pages-"))
                .collect();
            names.sort();
            names
                .iter()
                .map(|n| std::fs::read(d.join(n)).unwrap())
                .collect::<Vec<_>>()
        };
        assert!(files(&here).len() > 1, "several shards");
        assert_eq!(files(&here), files(&before));
        let _ = std::fs::remove_dir_all(&here);
        let _ = std::fs::remove_dir_all(&before);
    }

    #[test]
    fn plain_shards_rewind() {
        rewind_cuts_back_to_the_checkpoint(ShardCompression::None, "plain");
    }

    #[test]
    fn zstd_shards_rewind_to_a_frame_boundary() {
        rewind_cuts_back_to_the_checkpoint(ShardCompression::Zstd(3), "zstd");
    }
}
