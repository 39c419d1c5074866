//! PDFs read apart from HTML pages: a few at a time (so that a slow one
//! never holds up the pages), each in a child process with limits on its
//! memory, CPU time and wall time (so that one built to explode, or one
//! the parser loops on, ends that child, not the crawl).
//!
//! The child is `nearcrawl extract --json`, the PDF on its standard input
//! (`content.pdf_program`, which the `nearcrawl` binary sets to itself).
//! Without a program (the library used on its own) PDFs are read in the
//! crawl's process, on a blocking thread, with the time limit only.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nearcrawl_extract::{Input, MarkdownOptions, Page, page_from_json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use url::Url;

use crate::config::Content;

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

/// Reads PDFs, [`Content::pdf_readers`] at once.
#[derive(Debug)]
pub struct PdfReader {
    program: Option<PathBuf>,
    slots: tokio::sync::Semaphore,
    seconds: u64,
    memory_mb: u64,
    markdown: Option<MarkdownOptions>,
}

impl PdfReader {
    pub fn new(content: &Content) -> PdfReader {
        PdfReader {
            program: content.pdf_program.clone(),
            slots: tokio::sync::Semaphore::new(content.pdf_readers.0),
            seconds: content.max_pdf_seconds.0 as u64,
            memory_mb: content.max_pdf_memory_mb.0 as u64,
            markdown: content.markdown(),
        }
    }

    /// The page of the PDF `body` fetched from `url`.
    pub async fn read(&self, body: &[u8], url: &Url) -> Result<Page, PdfFailure> {
        let _slot = self.slots.acquire().await.expect("never closed");
        match &self.program {
            Some(program) => self.in_child(program, body, url).await,
            None => self.in_process(body.to_vec(), url.clone()).await,
        }
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
            nearcrawl_extract::extract_pdf(&body, &input)
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
}
