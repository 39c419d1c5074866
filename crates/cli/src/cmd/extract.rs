use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use nearcrawl_extract::{ContentPath, Input, MarkdownOptions, extract, full_text};

use super::input::read_input;
use serde_json::json;
use url::Url;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The page's URL, to resolve relative links and the canonical URL.
    #[arg(long, value_name = "URL")]
    url: Option<Url>,
    /// One JSON object per file and line: file, title, lang, language, canonical,
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
    /// HTML files (`.gz` is decompressed); `-` for standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
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
        let bytes = match read_input(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("nearcrawl: {}: {e:#}", path.display());
                failed += 1;
                continue;
            }
        };
        let name = path.display().to_string();
        if !args.json {
            let text = if args.full {
                full_text(&bytes, &input)
            } else {
                let page = extract(&bytes, &input);
                page.markdown.unwrap_or(page.text)
            };
            writeln!(out, "{text}")?;
            if args.files.len() > 1 {
                writeln!(out)?;
            }
            continue;
        }
        let page = extract(&bytes, &input);
        let text = if args.full {
            full_text(&bytes, &input)
        } else {
            page.markdown.unwrap_or(page.text)
        };
        let links: Vec<_> = page
            .links
            .iter()
            .map(|l| json!({"url": l.url.as_str(), "text": l.text, "nofollow": l.nofollow}))
            .collect();
        let record = json!({
            "file": name,
            "title": page.title,
            "lang": page.lang,
            "language": page.language,
            "canonical": page.canonical.map(|u| u.to_string()),
            "published": page.published,
            "robots": {"noindex": page.robots.noindex, "nofollow": page.robots.nofollow},
            "path": match page.path { ContentPath::MainContent => "main", ContentPath::FullText => "full", ContentPath::Description => "description" },
            "encoding": page.encoding,
            "text": text,
            "links": links,
        });
        writeln!(out, "{record}")?;
    }
    out.flush()?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
