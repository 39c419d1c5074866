//! `visits.jsonl`: every page's visit, what the next crawl of it asks and
//! compares with (see `nearcrawl_crawl::recrawl`). Written whatever the
//! formats: it is the crawl's memory of its pages, not a corpus.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use nearcrawl_crawl::recrawl::VISITS_FILE;
use nearcrawl_crawl::sink::{PageRecord, Position, Sink, VisitRecord};
use serde_json::json;

use crate::jsonl::{append, cut, sync};

pub struct VisitsSink {
    file: BufWriter<File>,
}

impl VisitsSink {
    pub fn open(dir: &Path) -> io::Result<VisitsSink> {
        std::fs::create_dir_all(dir)?;
        Ok(VisitsSink {
            file: append(&dir.join(VISITS_FILE))?,
        })
    }
}

impl std::fmt::Debug for VisitsSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VisitsSink").finish_non_exhaustive()
    }
}

impl Sink for VisitsSink {
    fn page(&mut self, _: &PageRecord) -> io::Result<()> {
        Ok(())
    }

    fn visit(&mut self, v: &VisitRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(v)?;
        line.push(b'\n');
        self.file.write_all(&line)
    }

    fn checkpoint(&mut self) -> io::Result<Position> {
        Ok(json!({ "visits": sync(&mut self.file)? }))
    }

    fn rewind(&mut self, position: &Position) -> io::Result<()> {
        let at = position.get("visits").and_then(|v| v.as_u64()).unwrap_or(0);
        cut(&mut self.file, at)
    }

    fn finish(&mut self, _: &nearcrawl_crawl::stats::StatsFile) -> io::Result<()> {
        self.checkpoint().map(|_| ())
    }
}
