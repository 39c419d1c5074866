use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use nearcrawl_extract::{
    Input, MarkdownOptions, Page, extract, extract_pdf, full_text, is_pdf, page_to_json,
};

use super::input::read_input;
use serde_json::json;
use url::Url;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The page's URL, to resolve relative links and the canonical URL.
    #[arg(long, value_name = "URL")]
    url: Option<Url>,
    /// One JSON object per file and line: file, title, lang, language, canonical,
    /// description, markdown (with --markdown),
    /// robots, text, links, ...
    #[arg(long)]
    json: bool,
    /// The full visible text instead of the main content.
    #[arg(long)]
    full: bool,
    /// The text as Markdown: headings, lists, tables, code blocks.
    #[arg(long, conflicts_with = "full")]
    markdown: bool,
    /// With --markdown: links as [text](url), and emphasis.
    #[arg(long, requires = "markdown")]
    markdown_links: bool,
    /// Address space this process may take, in MiB: a document built to
    /// explode ends it (out of memory) instead of the machine's memory.
    #[arg(long, value_name = "MIB")]
    max_memory_mb: Option<u64>,
    /// CPU seconds this process may take.
    #[arg(long, value_name = "SECS")]
    max_cpu_secs: Option<u64>,
    /// HTML or PDF files (`.gz` is decompressed); `-` for standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    limit_resources(&args)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let markdown = args.markdown.then_some(MarkdownOptions {
        links: args.markdown_links,
    });
    let input = Input {
        url: args.url.as_ref(),
        markdown,
        ..Input::default()
    };
    let mut failed = 0usize;
    for path in &args.files {
        let mut bytes = match read_input(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("nearcrawl: {}: {e:#}", path.display());
                failed += 1;
                continue;
            }
        };
        let name = path.display().to_string();
        let page = if is_pdf(&bytes) {
            // Given, not copied (unless --full reads them again): a
            // reader's memory holds the PDF once.
            let given = if args.full {
                bytes.clone()
            } else {
                std::mem::take(&mut bytes)
            };
            match extract_pdf(given, &input) {
                Ok(page) => page,
                Err(e) => {
                    eprintln!("nearcrawl: {name}: PDF {e}");
                    if args.json {
                        let error =
                            json!({"file": name, "error": e.kind(), "detail": e.to_string()});
                        writeln!(out, "{error}")?;
                    }
                    failed += 1;
                    continue;
                }
            }
        } else {
            extract(&bytes, &input)
        };
        if args.full {
            let text = full_text(&bytes, &input);
            if args.json {
                writeln!(out, "{}", page_json(&name, page, text))?;
            } else {
                writeln!(out, "{text}")?;
            }
            continue;
        }
        if !args.json {
            writeln!(out, "{}", page.markdown.as_ref().unwrap_or(&page.text))?;
            if args.files.len() > 1 {
                writeln!(out)?;
            }
            continue;
        }
        let text = page.text.clone();
        writeln!(out, "{}", page_json(&name, page, text))?;
    }
    out.flush()?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A page's JSON line, with `text` (the main or the full text).
fn page_json(name: &str, page: Page, text: String) -> serde_json::Value {
    let mut record = page_to_json(&page);
    record["file"] = json!(name);
    record["text"] = json!(text);
    record
}

/// The limits a process reading untrusted documents sets on itself: a
/// document built to explode ends this process, not its caller (the
/// crawl reads PDFs through `extract` with both).
fn limit_resources(args: &Args) -> anyhow::Result<()> {
    use rlimit::Resource;
    if let Some(mb) = args.max_memory_mb {
        let bytes = mb.saturating_mul(1 << 20);
        Resource::AS
            .set(bytes, bytes)
            .context("setting the memory limit")?;
    }
    if let Some(secs) = args.max_cpu_secs {
        Resource::CPU
            .set(secs, secs)
            .context("setting the CPU time limit")?;
    }
    Ok(())
}
