//! The page language rule against what pages declare of themselves.
//!
//! ```text
//! cargo run --release -p nearcrawl-extract --example language_check -- DIR [--list]
//! ```
//!
//! Reads every `*.html` (and `*.html.gz`) under DIR, extracts it, and
//! compares the language the crawl's language filter goes by
//! ([`page_language`]: detected when the detector is sure, else declared)
//! with the language the page declares (`<html lang>`). A filter keeping
//! only language L keeps the pages whose language is L: its precision
//! against the declarations is the share of those, among the ones that
//! declare a language, that declare L. A page without `<html lang>` is
//! taken to declare the language its file name gives (`ch01.de.html`), as
//! a server negotiating content sends it in Content-Language, and the
//! extractor is given that header. Printed per language, for all pages
//! and for the held-out part (3 pages in 10, by a hash of the file name);
//! `--list` prints each page whose language differs from its declaration.
//! `--undeclared` hides the declarations from the extractor (`<html lang>`
//! renamed, no Content-Language): the text alone decides, as on a site
//! that declares nothing; they are still what the rule is scored against.
//! DIR: `../shared/bench/wcxb-dev/html`, or Debian's translated manuals
//! (`/usr/share/debian-reference`, apt-get install -y debian-reference-de ...).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use nearcrawl_extract::{Input, extract, iso_639_1};

#[derive(Default)]
struct Tally {
    /// Pages the rule gave this language.
    kept: usize,
    /// Of those, pages that declare a language.
    declaring: usize,
    /// Of those, pages that declare this one.
    agreeing: usize,
    /// Pages that declare this language.
    declared: usize,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut dir, mut list, mut hide) = (None, false, false);
    for arg in args.by_ref() {
        match arg.as_str() {
            "--list" => list = true,
            "--undeclared" => hide = true,
            _ => dir = Some(PathBuf::from(arg)),
        }
    }
    let dir = dir.expect("usage: language_check DIR [--list]");
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    let (mut all, mut held) = (BTreeMap::new(), BTreeMap::new());
    let (mut undecided, mut undeclared) = (0, 0);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let negotiated = named_lang(&name);
        let input = Input {
            content_language: negotiated.filter(|_| !hide),
            ..Input::default()
        };
        let bytes = read(path);
        let page = match hide {
            true => extract(&without_lang(&bytes), &input),
            false => extract(&bytes, &input),
        };
        let declared = declared_lang(&read(path)).or(negotiated);
        if page.language.is_none() {
            undecided += 1;
        }
        if declared.is_none() {
            undeclared += 1;
        }
        let differs = (declared.zip(page.language)).filter(|(d, l)| d != l);
        if let (true, Some((declared, language))) = (list, differs) {
            println!(
                "{}: declared {declared:?}, text {language:?}: {:.80}",
                path.display(),
                page.text.replace('\n', " ")
            );
        }
        count(&mut all, page.language, declared);
        if held_out(&name) {
            count(&mut held, page.language, declared);
        }
    }
    println!(
        "{} pages under {}: {} with no language decided, {} declaring none",
        files.len(),
        dir.display(),
        undecided,
        undeclared
    );
    report("all pages", &all);
    report("held out (3 in 10)", &held);
}

fn count(
    tallies: &mut BTreeMap<&'static str, Tally>,
    language: Option<&'static str>,
    declared: Option<&'static str>,
) {
    if let Some(l) = language {
        let t = tallies.entry(l).or_default();
        t.kept += 1;
        if let Some(d) = declared {
            t.declaring += 1;
            t.agreeing += usize::from(d == l);
        }
    }
    if let Some(d) = declared {
        tallies.entry(d).or_default().declared += 1;
    }
}

fn report(what: &str, tallies: &BTreeMap<&'static str, Tally>) {
    println!("{what}:");
    println!("  lang    kept  declaring  agreeing  precision  recall");
    let (mut declaring, mut agreeing) = (0, 0);
    for (lang, t) in tallies {
        declaring += t.declaring;
        agreeing += t.agreeing;
        if t.kept + t.declared < 3 {
            continue;
        }
        println!(
            "  {lang:<5} {:>6} {:>10} {:>9} {:>10.4} {:>7.4}",
            t.kept,
            t.declaring,
            t.agreeing,
            t.agreeing as f64 / t.declaring.max(1) as f64,
            t.agreeing as f64 / t.declared.max(1) as f64,
        );
    }
    println!(
        "  all   {:>17} {:>9} {:>10.4}",
        declaring,
        agreeing,
        agreeing as f64 / declaring.max(1) as f64
    );
}

/// The `lang` of the page's `<html>` element, as an ISO 639-1 code.
fn declared_lang(bytes: &[u8]) -> Option<&'static str> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64 << 10)]).to_lowercase();
    let html = head.find("<html")?;
    let tag = &head[html..html + head[html..].find('>')?];
    let at = tag.find(" lang=").or_else(|| tag.find("\nlang="))? + 6;
    let value = tag[at..].trim_start_matches(['"', '\'']);
    let end = value.find(['"', '\'', ' ', '>']).unwrap_or(value.len());
    iso_639_1(&value[..end])
}

/// `bytes` with the `lang` attribute of `<html>` renamed.
fn without_lang(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let lower = bytes.to_ascii_lowercase();
    if let Some(html) = lower.windows(5).position(|w| w == b"<html") {
        let end = html + lower[html..].iter().position(|&b| b == b'>').unwrap_or(0);
        for at in html..end.saturating_sub(5) {
            if lower[at].is_ascii_whitespace() && &lower[at + 1..at + 6] == b"lang=" {
                out[at + 1..at + 5].copy_from_slice(b"data");
            }
        }
    }
    out
}

/// The language a file's name gives (`ch01.de.html`, `index.zh-cn.html`),
/// as a server negotiating content sends it in Content-Language.
fn named_lang(name: &str) -> Option<&'static str> {
    let mut parts = name.rsplit('.');
    let _html = parts.next()?;
    iso_639_1(parts.next()?)
}

/// 3 pages in 10, chosen by a hash of the name, as the extraction
/// benchmark holds them out.
fn held_out(name: &str) -> bool {
    let id = name.split('.').next().unwrap_or(name);
    let h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    h % 10 < 3
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            let name = path.to_string_lossy();
            if name.ends_with(".html") || name.ends_with(".html.gz") || name.contains(".html.") {
                out.push(path);
            }
        }
    }
}

fn read(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        bytes
    }
}
