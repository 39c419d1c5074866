//! The crawl's outputs, as [`Sink`]s the crawl pushes its outcomes into
//! (the way ripgrep's printer implements its searcher's `Sink`):
//!
//! - [`jsonl`]: pages in size-bounded shards (plain or zstd, each
//!   checkpoint ending a zstd frame), `duplicates.jsonl`, `errors.jsonl`,
//!   `stats.json`.
//! - [`visits`]: `visits.jsonl`, every page's visit (validators, text
//!   hash, revisit interval), written whatever the formats: what the next
//!   crawl of the pages (`crawl --refresh`) asks and compares with.
//! - [`warc`]: every fetched exchange as WARC 1.1 request/response records,
//!   gzip per record, with a `metadata` record naming the page's fingerprint,
//!   and a CDXJ index beside each file.
//!
//! Both can rewind to a checkpoint, which is what makes a crawl's resume
//! exact: see [`Sink::rewind`].
//!
//! ```
//! use nearcrawl_crawl::config::Output;
//! use nearcrawl_crawl::sink::{ErrorRecord, Sink};
//!
//! let dir = std::env::temp_dir().join(format!("nearcrawl-output-doc-{}", std::process::id()));
//! let config = Output { dir: dir.clone(), ..Output::default() };
//! let mut outputs = nearcrawl_output::open(&config).unwrap();
//! outputs.error(&ErrorRecord {
//!     url: "http://a.example/x".into(),
//!     kind: "status".into(),
//!     detail: "404".into(),
//! }).unwrap();
//! outputs.checkpoint().unwrap();
//! let errors = std::fs::read_to_string(dir.join("errors.jsonl")).unwrap();
//! assert!(errors.contains("\"kind\":\"status\""));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::io;

use nearcrawl_crawl::config::{Compression, Format, Output};
use nearcrawl_crawl::sink::{
    Capture, DuplicateRecord, ErrorRecord, PageRecord, Position, Sink, VisitRecord,
};

mod cdxj;
mod date;
pub mod jsonl;
mod payloads;
pub mod visits;
pub mod warc;

/// The outputs `config` asks for, as one sink.
pub fn open(config: &Output) -> io::Result<Box<dyn Sink>> {
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if config.formats.contains(&Format::Jsonl) {
        let compression = match config.compression {
            Compression::None => jsonl::ShardCompression::None,
            Compression::Zstd => jsonl::ShardCompression::Zstd(config.zstd_level),
        };
        sinks.push(Box::new(jsonl::JsonlSink::open(
            &config.dir,
            config.shard_bytes,
            compression,
        )?));
    }
    if config.formats.contains(&Format::Warc) {
        sinks.push(Box::new(warc::WarcSink::open(
            &config.dir,
            config.shard_bytes,
        )?));
    }
    // Last: checkpoints of crawls from before it name the others by place.
    sinks.push(Box::new(visits::VisitsSink::open(&config.dir)?));
    Ok(Box::new(Outputs::new(sinks)))
}

/// Several sinks as one: each outcome goes to each, in order.
pub struct Outputs {
    sinks: Vec<Box<dyn Sink>>,
}

impl Outputs {
    pub fn new(sinks: Vec<Box<dyn Sink>>) -> Outputs {
        Outputs { sinks }
    }
}

impl std::fmt::Debug for Outputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outputs")
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

/// Runs `f` on every sink, returning the first error after trying all.
fn each(
    sinks: &mut [Box<dyn Sink>],
    mut f: impl FnMut(&mut dyn Sink) -> io::Result<()>,
) -> io::Result<()> {
    let mut first = Ok(());
    for s in sinks {
        if let Err(e) = f(s.as_mut()) {
            if first.is_ok() {
                first = Err(e);
            }
        }
    }
    first
}

impl Sink for Outputs {
    fn page(&mut self, page: &PageRecord) -> io::Result<()> {
        each(&mut self.sinks, |s| s.page(page))
    }

    fn page_encoded(&mut self, page: &PageRecord, json: &[u8]) -> io::Result<()> {
        each(&mut self.sinks, |s| s.page_encoded(page, json))
    }

    fn duplicate(&mut self, dup: &DuplicateRecord) -> io::Result<()> {
        each(&mut self.sinks, |s| s.duplicate(dup))
    }

    fn error(&mut self, error: &ErrorRecord) -> io::Result<()> {
        each(&mut self.sinks, |s| s.error(error))
    }

    fn visit(&mut self, visit: &VisitRecord) -> io::Result<()> {
        each(&mut self.sinks, |s| s.visit(visit))
    }

    fn wants_captures(&self) -> bool {
        self.sinks.iter().any(|s| s.wants_captures())
    }

    fn capture(&mut self, capture: &Capture) -> io::Result<()> {
        each(&mut self.sinks, |s| {
            if s.wants_captures() {
                s.capture(capture)
            } else {
                Ok(())
            }
        })
    }

    fn checkpoint(&mut self) -> io::Result<Position> {
        let mut all = Vec::with_capacity(self.sinks.len());
        for s in &mut self.sinks {
            all.push(s.checkpoint()?);
        }
        Ok(Position::Array(all))
    }

    fn rewind(&mut self, position: &Position) -> io::Result<()> {
        for (i, s) in self.sinks.iter_mut().enumerate() {
            s.rewind(position.get(i).unwrap_or(&Position::Null))?;
        }
        Ok(())
    }

    fn finish(&mut self, stats: &nearcrawl_crawl::stats::StatsFile) -> io::Result<()> {
        each(&mut self.sinks, |s| s.finish(stats))
    }
}
