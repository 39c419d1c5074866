//! PDF bytes in, a [`Page`] out: the text of every page in reading order
//! (pdf_oxide, chosen against pdftotext and pdf-extract by measurement:
//! `bench/pdf-peers`), paragraphs apart, the title from the document's
//! Info dictionary or else its first line, the links its URI actions
//! name, and its language (`/Lang` in the catalog, checked against the
//! text as a page's declaration is).
//!
//! A PDF the parser cannot open is [`PdfError::Corrupt`], one that needs
//! a password [`PdfError::Encrypted`], one with pages but no text (scanned
//! images) [`PdfError::NoText`]. The parser is not trusted with memory or
//! time: the crawl reads PDFs in a child process of its own with limits
//! (`nearcrawl extract --max-memory-mb`), so that one built to explode
//! takes down that child only.

use pdf_oxide::document::PdfDocument;
use pdf_oxide::object::Object;
use url::Url;

use crate::{ContentPath, EncodingSource, Input, Link, LinkKind, Page, Robots};

/// Why a PDF gave no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PdfError {
    #[error("not a PDF, or too damaged to read: {0}")]
    Corrupt(String),
    #[error("encrypted: needs a password")]
    Encrypted,
    #[error("no text on its {0} pages (scanned images?)")]
    NoText(usize),
    #[error("more than {0} pages")]
    TooManyPages(usize),
}

impl PdfError {
    /// The kind, as `errors.jsonl` records it.
    pub fn kind(&self) -> &'static str {
        match self {
            PdfError::Corrupt(_) => "pdf_corrupt",
            PdfError::Encrypted => "pdf_encrypted",
            PdfError::NoText(_) => "pdf_no_text",
            PdfError::TooManyPages(_) => "pdf_too_many_pages",
        }
    }
}

/// Pages read of one document, at most: a PDF with more is refused, not
/// cut (a crawl of a 5,000-page dump is better told than half-read).
pub const MAX_PDF_PAGES: usize = 2000;

/// Whether `bytes` are a PDF: its header within the first kilobyte (as
/// readers accept it after junk).
pub fn is_pdf(bytes: &[u8]) -> bool {
    memchr::memmem::find(&bytes[..bytes.len().min(1024)], b"%PDF-").is_some()
}

/// Reads a PDF's text, title, links and language. Never panics: the
/// parser's panics (on damaged files) are caught and reported as
/// [`PdfError::Corrupt`]. The parser keeps the bytes: give them as a
/// `Vec` when they are not needed after, and they are not copied (a
/// slice is).
pub fn extract_pdf(bytes: impl Into<Vec<u8>>, input: &Input<'_>) -> Result<Page, PdfError> {
    let bytes = bytes.into();
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_pdf(bytes, input)));
    read.unwrap_or_else(|panic| {
        let why = (panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(PdfError::Corrupt(format!(
            "the parser failed: {}",
            first_line(&why)
        )))
    })
}

fn read_pdf(bytes: Vec<u8>, input: &Input<'_>) -> Result<Page, PdfError> {
    let doc = PdfDocument::from_bytes(bytes)
        .map_err(|e| PdfError::Corrupt(first_line(&e.to_string())))?;
    if doc.is_encrypted() && !doc.authenticate(b"").unwrap_or(false) {
        return Err(PdfError::Encrypted);
    }
    let pages = doc
        .page_count()
        .map_err(|e| PdfError::Corrupt(first_line(&e.to_string())))?;
    if pages > MAX_PDF_PAGES {
        return Err(PdfError::TooManyPages(MAX_PDF_PAGES));
    }
    let (mut text, mut links) = (String::new(), Vec::new());
    for page in 0..pages {
        if let Ok(t) = doc.extract_text(page) {
            push_paragraphs(&t, &mut text);
        }
        links.extend(uri_links(&doc, page, input.url));
    }
    if text.trim().is_empty() {
        return Err(PdfError::NoText(pages));
    }
    let title = info_string(&doc, "Title").or_else(|| first_text_line(&text));
    let declared = catalog_string(&doc, "Lang").or(input.content_language.map(str::to_string));
    let (description, published) = (
        info_string(&doc, "Subject"),
        info_string(&doc, "CreationDate"),
    );
    // The parser's caches span the document (tens of MB on a manual of a
    // thousand pages): let go of them before the text is worked on.
    drop(doc);
    let decided = crate::language::decide(declared.as_deref(), &text);
    let markdown = input
        .markdown
        .map(|_| crate::markdown::MarkdownWriter::paragraphs(&text));
    Ok(Page {
        lang: declared.or_else(|| decided.detected.map(str::to_string)),
        language: decided.language,
        language_from_code: decided.from_code,
        heading: None,
        site_name: None,
        description,
        canonical: None,
        published,
        robots: Robots::default(),
        title,
        text,
        markdown,
        path: ContentPath::FullText,
        links,
        app_shell: false,
        encoding: "PDF",
        encoding_source: EncodingSource::Declared,
    })
}

/// Appends a page's text: its lines, a blank line between paragraphs
/// (where the extractor left one) and between pages, white space runs
/// made one space.
fn push_paragraphs(page: &str, out: &mut String) {
    let mut blank = !out.is_empty();
    for line in page.lines() {
        let line: Vec<&str> = line.split_whitespace().collect();
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str("\n\n");
        } else if !out.is_empty() {
            out.push('\n');
        }
        blank = false;
        out.push_str(&line.join(" "));
    }
}

/// The links of a page's link annotations whose action is a URI, resolved
/// against `base`; http(s) only, as a page's links.
fn uri_links(doc: &PdfDocument, page: usize, base: Option<&Url>) -> Vec<Link> {
    let Ok(annotations) = doc.get_annotations(page) else {
        return Vec::new();
    };
    let mut links = Vec::new();
    for a in annotations {
        let Some(pdf_oxide::annotations::LinkAction::Uri(uri)) = a.action else {
            continue;
        };
        let url = match base {
            Some(b) => b.join(uri.trim()),
            None => Url::parse(uri.trim()),
        };
        let Ok(url) = url else { continue };
        if matches!(url.scheme(), "http" | "https") {
            links.push(Link {
                url,
                text: a.contents.unwrap_or_default(),
                nofollow: false,
                kind: LinkKind::Anchor,
            });
        }
    }
    links
}

/// A string of the document's Info dictionary.
fn info_string(doc: &PdfDocument, key: &str) -> Option<String> {
    let info = resolve(doc, doc.trailer().as_dict()?.get("Info")?)?;
    text_string(&resolve(doc, info.as_dict()?.get(key)?)?)
}

/// A string of the document's catalog (`/Lang`).
fn catalog_string(doc: &PdfDocument, key: &str) -> Option<String> {
    let catalog = doc.catalog().ok()?;
    text_string(&resolve(doc, catalog.as_dict()?.get(key)?)?)
}

fn resolve(doc: &PdfDocument, obj: &Object) -> Option<Object> {
    match obj.as_reference() {
        Some(r) => doc.load_object(r).ok(),
        None => Some(obj.clone()),
    }
}

/// A PDF text string: UTF-16BE after its byte-order mark, else
/// PDFDocEncoding (Latin-1 for the characters that matter here).
fn text_string(obj: &Object) -> Option<String> {
    let bytes = obj.as_string()?;
    let s = match bytes {
        [0xFE, 0xFF, rest @ ..] => {
            let units: Vec<u16> = rest
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        _ => bytes.iter().map(|&b| char::from(b)).collect(),
    };
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!s.is_empty()).then_some(s)
}

fn first_text_line(text: &str) -> Option<String> {
    let line = text
        .lines()
        .find(|l| l.chars().any(char::is_alphanumeric))?;
    Some(line.chars().take(200).collect())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}
