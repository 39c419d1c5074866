//! PDFs read apart from HTML pages: a few at a time (so that a slow one
//! never holds up the pages), each in a child process with limits on its
//! memory, CPU time and wall time (so that one built to explode, or one
//! the parser loops on, ends that child, not the crawl).
//!
//! The child is `nearcrawl extract --json`, the PDF on its standard input
//! (`content.pdf_program`, which the `nearcrawl` binary sets to itself).
//! Without a program (the library used on its own) PDFs are read in the
//! crawl's process, on a blocking thread, with the time limit only.
//!
//! Readers share a memory budget (`content.pdf_readers_memory_mb`): each
//! reserves what its PDF may take before it starts, [`reservation_mb`], and
//! one that needs more than the budget reads alone. A reader holds the
//! whole document's parse for the whole read (pdf_oxide's caches span the
//! document: its first page's text runs a pass over every page for running
//! headers), so what it takes grows with the PDF's size: on 23 Debian
//! manuals, 11-47 MiB below 1.3 MB and 117 MiB for a 4.6 MB manual of 1,158
//! pages; two of those at once held more than the rest of the crawl.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nearcrawl_extract::{Input, MarkdownOptions, Page, page_from_json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::SemaphorePermit;
use url::Url;

use crate::config::Content;
use crate::slots::Held;

/// Why a PDF gave no page: its kind in `errors.jsonl` (`pdf_encrypted`,
/// `pdf_corrupt`, `pdf_no_text`, `pdf_too_large`, `pdf_timeout`,
/// `pdf_failed`), and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfFailure {
    pub kind: String,
    pub detail: String,
}

impl PdfFailure {
    fn new(kind: &str, detail: impl Into<String>) -> PdfFailure {
        PdfFailure {
            kind: kind.into(),
            detail: detail.into(),
        }
    }
}

/// What a reader takes before it reads anything (the binary's pages, the
/// allocator), in MiB.
const READER_BASE_MB: usize = 20;
/// jemalloc's run-time settings for a reader (the variable is the one the
/// binary's prefixed jemalloc reads): freed pages go back to the system
/// after 10 ms, not the crawl's 200. A reader lives for one PDF and its
/// peak is what counts. On octave.pdf (4.7 MB, 1,158 pages) its peak goes
/// 117-118 -> 111-112 MiB for 0.3 s more system time (4% of its CPU); at
/// 0 ms 110 MiB for 1 s more.
const READER_MALLOC_CONF: (&str, &str) =
    ("_RJEM_MALLOC_CONF", "dirty_decay_ms:10,muzzy_decay_ms:0");
/// MiB a reader may take per MB of PDF beyond [`READER_BASE_MB`]: the most
/// seen on those manuals was 42 (a 180 KB manual, 27.5 MiB in all), 21-26
/// on the large ones.
const READER_MB_PER_PDF_MB: usize = 40;

/// The MiB a reader reserves for a PDF of `bytes` (at most `budget_mb`: a
/// PDF that needs more reads alone).
pub fn reservation_mb(bytes: usize, budget_mb: usize) -> usize {
    let per_pdf = (READER_MB_PER_PDF_MB * bytes).div_ceil(1 << 20);
    (READER_BASE_MB + per_pdf).min(budget_mb)
}

/// Reads PDFs, [`Content::pdf_readers`] at once within
/// [`Content::pdf_readers_memory_mb`].
#[derive(Debug)]
pub struct PdfReader {
    program: Option<PathBuf>,
    slots: tokio::sync::Semaphore,
    /// The readers' memory budget, a permit a MiB.
    memory: tokio::sync::Semaphore,
    budget_mb: usize,
    seconds: u64,
    memory_mb: u64,
    markdown: Option<MarkdownOptions>,
}

impl PdfReader {
    pub fn new(content: &Content) -> PdfReader {
        PdfReader {
            program: content.pdf_program.clone(),
            slots: tokio::sync::Semaphore::new(content.pdf_readers.0),
            memory: tokio::sync::Semaphore::new(content.pdf_readers_memory_mb.0),
            budget_mb: content.pdf_readers_memory_mb.0,
            seconds: content.max_pdf_seconds.0 as u64,
            memory_mb: content.max_pdf_memory_mb.0 as u64,
            markdown: content.markdown(),
        }
    }

    /// The page of the PDF `body` fetched from `url`; `waiting` counts the
    /// body in the crawl's backlog until its reader starts.
    pub async fn read(&self, body: &[u8], url: &Url, waiting: Held) -> Result<Page, PdfFailure> {
        let _turn = self.turn(body.len()).await;
        drop(waiting);
        match &self.program {
            Some(program) => self.in_child(program, body, url).await,
            None => self.in_process(body.to_vec(), url.clone()).await,
        }
    }

    /// Waits for a reader's slot and for the memory a PDF of `bytes` may
    /// take; both are given back when the turn is dropped.
    async fn turn(&self, bytes: usize) -> (SemaphorePermit<'_>, SemaphorePermit<'_>) {
        let slot = self.slots.acquire().await.expect("never closed");
        let reserved = reservation_mb(bytes, self.budget_mb) as u32;
        let memory = self
            .memory
            .acquire_many(reserved)
            .await
            .expect("never closed");
        (slot, memory)
    }

    async fn in_child(
        &self,
        program: &PathBuf,
        body: &[u8],
        url: &Url,
    ) -> Result<Page, PdfFailure> {
        let mut command = tokio::process::Command::new(program);
        command
            .args(["extract", "--json", "--url", url.as_str()])
            .args(["--max-memory-mb", &self.memory_mb.to_string()])
            .args(["--max-cpu-secs", &self.seconds.to_string()]);
        if let Some(m) = self.markdown {
            command.arg("--markdown");
            if m.links {
                command.arg("--markdown-links");
            }
        }
        command
            .arg("-")
            .env(READER_MALLOC_CONF.0, READER_MALLOC_CONF.1)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| PdfFailure::new("pdf_failed", format!("cannot start the reader: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped");
        let mut stdout = child.stdout.take().expect("piped");
        let talk = async {
            // Written while the output is read: a reader that answers
            // before it has read everything never blocks the writer.
            let write = async {
                let _ = stdin.write_all(body).await;
                drop(stdin);
            };
            let mut out = Vec::new();
            let read = stdout.read_to_end(&mut out);
            let ((), read) = tokio::join!(write, read);
            read.map(|_| out)
        };
        let limit = Duration::from_secs(self.seconds + 1);
        let out = match tokio::time::timeout(limit, talk).await {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => return Err(PdfFailure::new("pdf_failed", e.to_string())),
            Err(_) => {
                let _ = child.kill().await;
                return Err(PdfFailure::new(
                    "pdf_timeout",
                    format!("not read in {} s", limit.as_secs()),
                ));
            }
        };
        let status = child.wait().await.ok();
        page_of_json(&out, status)
    }

    async fn in_process(&self, body: Vec<u8>, url: Url) -> Result<Page, PdfFailure> {
        let markdown = self.markdown;
        let read = tokio::task::spawn_blocking(move || {
            let input = Input {
                url: Some(&url),
                markdown,
                ..Input::default()
            };
            nearcrawl_extract::extract_pdf(body, &input)
        });
        match tokio::time::timeout(Duration::from_secs(self.seconds), read).await {
            Ok(Ok(Ok(page))) => Ok(page),
            Ok(Ok(Err(e))) => Err(PdfFailure::new(e.kind(), e.to_string())),
            Ok(Err(_)) => Err(PdfFailure::new("pdf_failed", "the reader panicked")),
            Err(_) => Err(PdfFailure::new(
                "pdf_timeout",
                format!("not read in {} s", self.seconds),
            )),
        }
    }
}

/// The page `nearcrawl extract --json` printed, or why there is none: the
/// error it printed, or how it ended (killed at its memory or CPU limit).
fn page_of_json(out: &[u8], status: Option<std::process::ExitStatus>) -> Result<Page, PdfFailure> {
    let Ok(row) = serde_json::from_slice::<serde_json::Value>(out) else {
        let how = status.map_or("ended".into(), |s| s.to_string());
        // SIGXCPU: the CPU time limit; an abort: out of memory.
        let kind = if how.contains("24") {
            "pdf_timeout"
        } else {
            "pdf_failed"
        };
        return Err(PdfFailure::new(kind, format!("the reader {how}")));
    };
    if let Some(kind) = row["error"].as_str() {
        let detail = row["detail"].as_str().unwrap_or("").to_string();
        return Err(PdfFailure::new(kind, detail));
    }
    page_from_json(&row, "PDF")
        .ok_or_else(|| PdfFailure::new("pdf_failed", "the reader printed no page"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Positive;

    #[test]
    fn the_readers_answers_become_pages_or_failures() {
        let page = br#"{"title":"T","language":"de","lang":"de-DE","text":"Hallo","links":[{"url":"https://a.example/x","text":"x","nofollow":false},{"url":"not a url"}]}"#;
        let page = page_of_json(page, None).unwrap();
        assert_eq!(
            (page.title.as_deref(), page.language),
            (Some("T"), Some("de"))
        );
        assert_eq!(page.links.len(), 1);
        let error =
            br#"{"file":"-","error":"pdf_encrypted","detail":"encrypted: needs a password"}"#;
        assert_eq!(page_of_json(error, None).unwrap_err().kind, "pdf_encrypted");
        assert_eq!(page_of_json(b"", None).unwrap_err().kind, "pdf_failed");
    }

    #[test]
    fn a_reader_reserves_by_the_size_of_its_pdf_and_a_large_one_reads_alone() {
        assert_eq!(reservation_mb(100_000, 100), 24);
        assert_eq!(reservation_mb(1_026_000, 100), 60);
        assert_eq!(reservation_mb(4_707_275, 100), 100, "octave.pdf");
        assert_eq!(reservation_mb(0, 10), 10);
    }

    #[tokio::test]
    async fn readers_start_only_within_the_memory_budget() {
        let content = Content {
            pdf_readers: Positive(2),
            pdf_readers_memory_mb: Positive(100),
            ..Content::default()
        };
        let reader = std::sync::Arc::new(PdfReader::new(&content));
        let small = reader.turn(100_000).await;
        // A second small one fits beside it.
        drop(reader.turn(200_000).await);
        // A large one waits for the small one, and holds back those after it.
        let large = tokio::spawn({
            let reader = reader.clone();
            async move {
                let _turn = reader.turn(5_000_000).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!large.is_finished(), "read beside another");
        drop(small);
        large.await.unwrap();
        assert_eq!(reader.memory.available_permits(), 100);
    }
}
