use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use nearcrawl_index::{DedupConfig, Deduper, Doc};
use serde_json::{Value, json};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSONL input, one document per line; `-` for standard input.
    #[arg(long, default_value = "-", value_name = "FILE")]
    input: PathBuf,
    /// Field holding each document's id (any JSON value).
    #[arg(long, default_value = "id", value_name = "NAME")]
    id_field: String,
    /// Field holding each document's text.
    #[arg(long, default_value = "text", value_name = "NAME")]
    text_field: String,
    /// Field holding each document's title, if any: two documents whose
    /// titles, without their hosts' template words, are not the same words
    /// in the same order are never duplicates.
    #[arg(long, default_value = "title", value_name = "NAME")]
    title_field: String,
    /// Field holding each document's host (or site, or any group sharing a
    /// template); without it, the host of the URL in `--url-field`.
    #[arg(long, default_value = "host", value_name = "NAME")]
    host_field: String,
    /// Field holding each document's URL, for its host and for which of
    /// its title's words name a directory (a section, not an item).
    #[arg(long, default_value = "url", value_name = "NAME")]
    url_field: String,
    /// A near duplicate's fingerprint is within this many bits (default 8).
    #[arg(short, long, value_name = "N")]
    k: Option<u32>,
    /// A candidate is a near duplicate at this estimated Jaccard similarity
    /// of word 3-shingles or more.
    #[arg(long, value_name = "X")]
    min_similarity: Option<f32>,
    /// Keep the index in DIR: a later run finds duplicates of this run's
    /// documents. Without it the index lives only for this run.
    #[arg(long, value_name = "DIR")]
    index: Option<PathBuf>,
}

/// Documents between flushes of a persistent index.
const FLUSH_EVERY: u64 = 100_000;

#[derive(Debug, Default)]
struct Counts {
    documents: u64,
    exact: u64,
    near: u64,
    short: u64,
    malformed: u64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut index = Index::open(&args)?;
    let mut reader = open_input(&args.input)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut counts = Counts::default();
    let start = Instant::now();
    let (mut line, mut lineno) = (Vec::new(), 0u64);
    loop {
        line.clear();
        // Bytes, not String: a line of invalid UTF-8 is one malformed line,
        // not the end of the run.
        if reader
            .read_until(b'\n', &mut line)
            .context("reading input")?
            == 0
        {
            break;
        }
        lineno += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(&line, &args) {
            Ok(parsed) => index.add(parsed, &mut counts, &mut out)?,
            Err(why) => {
                eprintln!("nearcrawl dedup: line {lineno}: {why}; skipped");
                counts.malformed += 1;
            }
        }
    }
    out.flush()?;
    index.dedup.flush()?;
    let elapsed = start.elapsed().as_secs_f64();
    eprintln!(
        "nearcrawl dedup: {} documents, {} exact, {} near, {} short, {} malformed lines, \
         {elapsed:.2} s, {:.0} docs/s",
        counts.documents,
        counts.exact,
        counts.near,
        counts.short,
        counts.malformed,
        counts.documents as f64 / elapsed.max(1e-9)
    );
    Ok(ExitCode::SUCCESS)
}

fn open_input(path: &std::path::Path) -> anyhow::Result<Box<dyn BufRead>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(BufReader::new(io::stdin().lock())));
    }
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(Box::new(BufReader::new(f)))
}

/// The duplicate index of a run, with the callers' ids of its documents.
struct Index {
    dedup: Deduper,
    /// Document numbers for the index, and the caller's ids behind them.
    ids: sled::Tree,
    next_doc: u64,
    /// Flushed every [`FLUSH_EVERY`] documents (an index kept after the run).
    kept: bool,
    _db: sled::Db,
    /// Removed at the end (dropped last).
    _temporary: Option<TemporaryDir>,
}

impl Index {
    fn open(args: &Args) -> anyhow::Result<Index> {
        let mut config = DedupConfig::default();
        if let Some(k) = args.k {
            config.index.k = k;
        }
        if let Some(s) = args.min_similarity {
            config.min_similarity = s;
        }
        // Without --index the index lives in a directory of its own under
        // the system's temporary directory, removed at the end.
        let temporary = match &args.index {
            Some(_) => None,
            None => Some(TemporaryDir::new()?),
        };
        let dir = match (&args.index, &temporary) {
            (Some(dir), _) => dir.clone(),
            (None, Some(t)) => t.0.clone(),
            (None, None) => unreachable!("a temporary directory when no index is given"),
        };
        let db =
            nearcrawl_index::open_sled(&sled::Config::new().path(&dir).cache_capacity(64 << 20))
                .with_context(|| format!("cannot open index {}", dir.display()))?;
        let dedup =
            Deduper::open_in(&db, &dir, config).context("cannot open the duplicate index")?;
        let ids = db.open_tree("cli.ids")?;
        let next_doc = match ids.last()? {
            Some((k, _)) => {
                u64::from_be_bytes(k.as_ref().try_into().context("corrupt id record")?) + 1
            }
            None => 0,
        };
        Ok(Index {
            dedup,
            ids,
            next_doc,
            kept: args.index.is_some(),
            _db: db,
            _temporary: temporary,
        })
    }

    /// Judges and indexes one document; a duplicate's line goes to `out`.
    fn add(
        &mut self,
        Line {
            id,
            text,
            title,
            host,
            url,
        }: Line,
        counts: &mut Counts,
        out: &mut impl Write,
    ) -> anyhow::Result<()> {
        let doc = self.next_doc;
        self.next_doc += 1;
        self.ids
            .insert(doc.to_be_bytes(), serde_json::to_vec(&id)?)?;
        counts.documents += 1;
        let decision = self.dedup.check_insert(
            doc,
            Doc {
                text: &text,
                title: title.as_deref(),
                host: host.as_deref(),
                url: url.as_deref(),
            },
        )?;
        counts.short += u64::from(decision.short);
        if self.kept && counts.documents.is_multiple_of(FLUSH_EVERY) {
            self.dedup.flush()?;
        }
        let Some((of, kind, distance, similarity)) = decision.verdict.duplicate_of() else {
            return Ok(());
        };
        let check = decision.verdict.check().map_or("", |c| c.name());
        if kind == "exact" {
            counts.exact += 1;
        } else {
            counts.near += 1;
        }
        // Ids are stored as JSON text; the fields are written in the
        // documented order.
        let original = match self.ids.get(of.to_be_bytes())? {
            Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            None => "null".to_string(),
        };
        writeln!(
            out,
            r#"{{"id":{},"duplicate_of":{original},"distance":{distance},"kind":"{kind}","similarity":{},"check":"{check}"}}"#,
            serde_json::to_string(&id)?,
            json!((f64::from(similarity) * 1000.0).round() / 1000.0),
        )?;
        Ok(())
    }
}

/// The id, text, title and host of one JSONL line, or why not.
fn parse_line(line: &[u8], args: &Args) -> Result<Line, String> {
    let value: Value = serde_json::from_slice(line).map_err(|e| format!("not JSON ({e})"))?;
    let Value::Object(mut obj) = value else {
        return Err("not a JSON object".into());
    };
    let (id_field, text_field) = (&args.id_field, &args.text_field);
    let id = obj
        .remove(id_field)
        .ok_or_else(|| format!("no {id_field:?} field"))?;
    let text = match obj.remove(text_field) {
        Some(Value::String(text)) => text,
        Some(_) => return Err(format!("{text_field:?} is not a string")),
        None => return Err(format!("no {text_field:?} field")),
    };
    let mut string = |field: &str| match obj.remove(field) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let title = string(&args.title_field);
    let url = match &id {
        Value::String(id) if args.id_field == args.url_field => Some(id.clone()),
        _ => string(&args.url_field),
    };
    let host = string(&args.host_field).or_else(|| {
        Some(
            url::Url::parse(url.as_deref()?)
                .ok()?
                .host_str()?
                .to_string(),
        )
    });
    Ok(Line {
        id,
        text,
        title,
        host,
        url,
    })
}

/// One document of the input.
struct Line {
    id: Value,
    text: String,
    title: Option<String>,
    host: Option<String>,
    url: Option<String>,
}

/// A directory removed when dropped.
struct TemporaryDir(std::path::PathBuf);

impl TemporaryDir {
    fn new() -> anyhow::Result<TemporaryDir> {
        let dir = std::env::temp_dir().join(format!("nearcrawl-dedup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create a temporary index in {}", dir.display()))?;
        Ok(TemporaryDir(dir))
    }
}

impl Drop for TemporaryDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
