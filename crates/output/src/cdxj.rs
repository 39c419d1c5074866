//! A CDXJ index beside each WARC file (`crawl-NNNNN.cdxj`): a line per
//! response and revisit record, `SURT TIMESTAMP {json}`, sorted, as
//! `cdxj-indexer --sort` (webrecorder, on warcio) writes it and pywb reads
//! it: url, mime, status, digest, length and offset of the gzip member,
//! filename.
//!
//! Kept exact the way the WARC file is: the lines of the open file are
//! held in memory and the sorted file is written whole (to a temporary
//! name, then renamed) at each checkpoint and when the WARC file rolls;
//! a rewind drops the lines of records past the WARC file's new end.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

/// The index of one WARC file.
#[derive(Debug)]
pub(crate) struct CdxjIndex {
    path: PathBuf,
    /// (offset of the record, line), in writing order.
    lines: Vec<(u64, String)>,
    /// Lines added since the file was last written.
    dirty: bool,
}

/// What the index line of a record says.
pub(crate) struct Entry<'a> {
    pub url: &'a str,
    pub date_ms: u64,
    pub mime: Option<&'a str>,
    pub status: u16,
    pub digest: &'a str,
    pub offset: u64,
    pub length: u64,
    pub filename: &'a str,
}

impl CdxjIndex {
    /// The index of WARC file `warc` (`crawl-NNNNN.warc.gz`), `len` bytes
    /// long: the lines a previous run wrote of the records before `len`.
    pub(crate) fn open(warc: &Path, len: u64) -> io::Result<CdxjIndex> {
        let path = path_of(warc);
        let mut lines = Vec::new();
        match std::fs::File::open(&path) {
            Ok(f) => {
                for line in io::BufReader::new(f).lines() {
                    let line = line?;
                    if let Some(offset) = offset_of(&line) {
                        lines.push((offset, line));
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        lines.sort_by_key(|(offset, _)| *offset);
        let mut index = CdxjIndex {
            path,
            lines,
            dirty: false,
        };
        index.cut(len);
        Ok(index)
    }

    pub(crate) fn add(&mut self, e: &Entry) {
        let (status, length, offset) = (
            e.status.to_string(),
            e.length.to_string(),
            e.offset.to_string(),
        );
        let fields = [
            ("url", Some(e.url)),
            ("mime", e.mime),
            ("status", Some(status.as_str())),
            ("digest", Some(e.digest)),
            ("length", Some(length.as_str())),
            ("offset", Some(offset.as_str())),
            ("filename", Some(e.filename)),
        ];
        let json: Vec<String> = (fields.iter())
            .filter_map(|(k, v)| Some(format!("\"{k}\": {}", python_str((*v)?))))
            .collect();
        let line = format!(
            "{} {} {{{}}}",
            surt(e.url),
            timestamp(e.date_ms),
            json.join(", ")
        );
        self.lines.push((e.offset, line));
        self.dirty = true;
    }

    /// Drops the lines of records at or past `len` (a rewound WARC file).
    fn cut(&mut self, len: u64) {
        let before = self.lines.len();
        self.lines.retain(|(offset, _)| *offset < len);
        self.dirty |= self.lines.len() != before;
    }

    /// Writes the sorted index, durably, if lines changed.
    pub(crate) fn save(&mut self) -> io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let mut sorted: Vec<&str> = self.lines.iter().map(|(_, l)| l.as_str()).collect();
        sorted.sort_unstable();
        let tmp = self.path.with_extension("cdxj.tmp");
        let mut out = io::BufWriter::new(std::fs::File::create(&tmp)?);
        for line in sorted {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_data()?;
        std::fs::rename(&tmp, &self.path)?;
        self.dirty = false;
        Ok(())
    }
}

/// `crawl-NNNNN.cdxj` beside `crawl-NNNNN.warc.gz`.
pub(crate) fn path_of(warc: &Path) -> PathBuf {
    let name = warc.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name.strip_suffix(".warc.gz").unwrap_or(name);
    warc.with_file_name(format!("{stem}.cdxj"))
}

fn offset_of(line: &str) -> Option<u64> {
    let json = line.splitn(3, ' ').nth(2)?;
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v["offset"].as_str()?.parse().ok()
}

/// A JSON string as Python's `json.dumps` writes it (non-ASCII escaped),
/// so lines equal cdxj-indexer's.
fn python_str(s: &str) -> String {
    let json = serde_json::to_string(s).expect("a string serializes");
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// The 14-digit CDX timestamp of `ms` since the epoch.
fn timestamp(ms: u64) -> String {
    let date = crate::date::warc_date(ms);
    date.chars().filter(char::is_ascii_digit).take(14).collect()
}

/// The SURT form of `url`, as Python's `surt.surt` writes it by default:
/// lower case; scheme, fragment, `www` labels, a default port, an empty
/// query and a trailing slash left out; host labels reversed and joined by
/// commas, then `)`; the query's arguments sorted; escapes of unreserved
/// characters decoded. (Session-id parameters, which it also strips, are
/// kept here.)
pub(crate) fn surt(url: &str) -> String {
    let Ok(u) = url::Url::parse(url) else {
        return url.to_lowercase();
    };
    let host = u.host_str().unwrap_or("").to_lowercase();
    let host = strip_www(&host);
    let mut key = if host.starts_with('[') {
        host.trim_matches(|c| c == '[' || c == ']').to_string()
    } else {
        host.split('.').rev().collect::<Vec<_>>().join(",")
    };
    if let Some(port) = u.port() {
        key.push_str(&format!(":{port}"));
    }
    key.push(')');
    let mut path = decode_unreserved(u.path()).to_lowercase();
    if path.len() > 1 && path.ends_with('/') {
        path.pop();
    }
    key.push_str(&path);
    if let Some(q) = u.query().filter(|q| !q.is_empty()) {
        let q = decode_unreserved(q).to_lowercase();
        let mut args: Vec<&str> = q.split('&').collect();
        args.sort_unstable();
        key.push('?');
        key.push_str(&args.join("&"));
    }
    key
}

fn strip_www(host: &str) -> &str {
    let Some(rest) = host.strip_prefix("www") else {
        return host;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    match rest[digits..].strip_prefix('.') {
        Some(stripped) if !stripped.is_empty() => stripped,
        _ => host,
    }
}

/// `%7E` and the like back to `~`: escapes of characters that need none.
fn decode_unreserved(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                if v.is_ascii_alphanumeric() || b"-._~".contains(&v) {
                    out.push(v as char);
                    i += 3;
                    continue;
                }
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surts_as_python_surt_writes_them() {
        // Each pair checked against `surt.surt` 0.3.1.
        for (url, want) in [
            (
                "http://127.0.0.1:8080/p/1?b=2&a=1",
                "1,0,0,127:8080)/p/1?a=1&b=2",
            ),
            ("https://www.Example.com/A/b.html", "com,example)/a/b.html"),
            (
                "http://example.com:80/x?Z=1&a=2#frag",
                "com,example)/x?a=2&z=1",
            ),
            ("http://sub.example.co.uk/", "uk,co,example,sub)/"),
            ("http://example.com/a/", "com,example)/a"),
            ("http://example.com", "com,example)/"),
            ("https://example.com:443/x?", "com,example)/x"),
            (
                "http://www2.example.com/a?c=3&b=2&a=1&a=0",
                "com,example)/a?a=0&a=1&b=2&c=3",
            ),
            ("http://example.com/a%20b?q=%7E", "com,example)/a%20b?q=~"),
            ("http://[::1]:8080/x", "::1:8080)/x"),
            ("http://localhost:8080/x", "localhost:8080)/x"),
            ("http://example.com/a?b&a=", "com,example)/a?a=&b"),
            ("http://example.com/%7Efoo", "com,example)/~foo"),
        ] {
            assert_eq!(surt(url), want, "{url}");
        }
    }

    #[test]
    fn lines_are_sorted_cut_back_and_read_again() {
        let dir = std::env::temp_dir().join(format!("nearcrawl-cdxj-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let warc = dir.join("crawl-00000.warc.gz");
        let mut index = CdxjIndex::open(&warc, 0).unwrap();
        for (i, url) in ["http://b.test/", "http://a.test/x", "http://c.test/"]
            .iter()
            .enumerate()
        {
            index.add(&Entry {
                url,
                date_ms: 1_795_305_600_000,
                mime: Some("text/html"),
                status: 200,
                digest: "sha1:AAAA",
                offset: 100 * i as u64,
                length: 90,
                filename: "crawl-00000.warc.gz",
            });
        }
        index.save().unwrap();
        let text = std::fs::read_to_string(path_of(&warc)).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            "test,a)/x 20261122000000 {\"url\": \"http://a.test/x\", \"mime\": \"text/html\", \
             \"status\": \"200\", \"digest\": \"sha1:AAAA\", \"length\": \"90\", \"offset\": \"100\", \
             \"filename\": \"crawl-00000.warc.gz\"}"
        );
        let mut again = CdxjIndex::open(&warc, 150).unwrap();
        again.save().unwrap();
        let text = std::fs::read_to_string(path_of(&warc)).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(!text.contains("c.test"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
