//! Where the crawl's results go.
//!
//! The crawler *pushes* each outcome into a [`Sink`] as it happens, the way
//! ripgrep's searcher pushes matches: outputs (JSONL today, WARC next) stay
//! independent of the crawl loop, and the loop never buffers results for a
//! consumer. Only `page` is required; the other hooks default to doing
//! nothing.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

/// A page written to the corpus.
#[derive(Debug, Clone)]
pub struct PageRecord {
    pub url: String,
    pub final_url: String,
    pub status: u16,
    pub fetched_at: u64,
    pub depth: u32,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub text: String,
    pub simhash: String,
    pub content_hash: String,
    pub outlinks: usize,
    /// Set under the `record` policy for near duplicates.
    pub duplicate_of: Option<String>,
}

/// A page judged a duplicate of an earlier one.
#[derive(Debug, Clone)]
pub struct DuplicateRecord {
    pub url: String,
    pub duplicate_of: String,
    pub kind: &'static str,
    pub distance: u32,
    pub similarity: f32,
}

/// Receives the crawl's outcomes as they happen.
pub trait Sink: Send {
    fn page(&mut self, page: &PageRecord) -> std::io::Result<()>;

    fn duplicate(&mut self, _dup: &DuplicateRecord) -> std::io::Result<()> {
        Ok(())
    }

    fn error(&mut self, _url: &str, _kind: &str, _detail: &str) -> std::io::Result<()> {
        Ok(())
    }

    /// The crawl's statistics, at the end.
    fn finish(&mut self, _stats: &serde_json::Value) -> std::io::Result<()> {
        Ok(())
    }
}

/// `pages-NNNNN.jsonl` shards rolled by size, `duplicates.jsonl`,
/// `errors.jsonl`, `stats.json`.
pub struct JsonlSink {
    dir: PathBuf,
    shard_bytes: u64,
    shard: usize,
    written: u64,
    pages: BufWriter<File>,
    duplicates: BufWriter<File>,
    errors: BufWriter<File>,
}

fn append(path: &Path) -> std::io::Result<BufWriter<File>> {
    Ok(BufWriter::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?,
    ))
}

impl JsonlSink {
    /// Opens the outputs in `dir`, continuing after existing shards.
    pub fn open(dir: &Path, shard_bytes: u64) -> std::io::Result<JsonlSink> {
        std::fs::create_dir_all(dir)?;
        let mut shard = 0;
        while dir.join(format!("pages-{:05}.jsonl", shard + 1)).exists() {
            shard += 1;
        }
        let path = dir.join(format!("pages-{shard:05}.jsonl"));
        let written = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        Ok(JsonlSink {
            pages: append(&path)?,
            duplicates: append(&dir.join("duplicates.jsonl"))?,
            errors: append(&dir.join("errors.jsonl"))?,
            dir: dir.to_path_buf(),
            shard_bytes: shard_bytes.max(1),
            shard,
            written,
        })
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.pages.flush()?;
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
    fn page(&mut self, p: &PageRecord) -> std::io::Result<()> {
        let mut line = json!({
            "url": p.url, "final_url": p.final_url, "status": p.status, "fetched_at": p.fetched_at,
            "depth": p.depth, "title": p.title, "lang": p.lang, "text": p.text, "simhash": p.simhash,
            "content_hash": p.content_hash, "outlinks": p.outlinks,
        });
        if let Some(d) = &p.duplicate_of {
            line["duplicate_of"] = json!(d);
        }
        let line = line.to_string();
        if self.written > 0 && self.written + line.len() as u64 + 1 > self.shard_bytes {
            self.pages.flush()?;
            self.shard += 1;
            self.pages = append(&self.dir.join(format!("pages-{:05}.jsonl", self.shard)))?;
            self.written = 0;
        }
        writeln!(self.pages, "{line}")?;
        self.written += line.len() as u64 + 1;
        Ok(())
    }

    fn duplicate(&mut self, d: &DuplicateRecord) -> std::io::Result<()> {
        let line = json!({
            "url": d.url, "duplicate_of": d.duplicate_of, "kind": d.kind, "distance": d.distance,
            "similarity": (f64::from(d.similarity) * 1000.0).round() / 1000.0,
        });
        writeln!(self.duplicates, "{line}")
    }

    fn error(&mut self, url: &str, kind: &str, detail: &str) -> std::io::Result<()> {
        writeln!(
            self.errors,
            "{}",
            json!({"url": url, "kind": kind, "detail": detail})
        )
    }

    fn finish(&mut self, stats: &serde_json::Value) -> std::io::Result<()> {
        self.flush()?;
        std::fs::write(
            self.dir.join("stats.json"),
            serde_json::to_string_pretty(stats)? + "\n",
        )
    }
}
