//! The second crawl of a site: every crawl writes a visit per page
//! (`visits.jsonl`, [`VisitRecord`]); a crawl with `recrawl.from = DIR`
//! (`crawl --refresh DIR`) asks for DIR's pages again, most overdue
//! first, each with its earlier validators (a 304 costs no body), and
//! compares what comes back with what DIR saw ([`Change`]).
//!
//! - A 304, or a text whose numbers and date words are all that changed
//!   ([`stable_hash`]: a "last updated" line, a counter, a generated-on
//!   stamp), is **unchanged**: recorded, not written again. The rule is
//!   exact, not a distance: a one-word edit is a change, and a page whose
//!   only change is a number (a price, a version) is not; near copies of
//!   other pages are the gate's business.
//! - Any other change is a **new version**: judged by the gate like any
//!   page and written with the time of the version it replaces.
//! - A 404 or 410 is **gone**; any other failure carries the earlier visit
//!   forward, so the next crawl still knows the page.
//!
//! Each page's revisit interval comes from its history: halved when it
//! changed, doubled when it did not, within the configured bounds. The
//! earlier crawl's pages are queued by when they fall due (the frontier
//! is breadth-first, so within each depth), so a recrawl cut short by
//! `max_pages` or `--max-time` spends its budget where change is. A
//! recrawl names the crawl it refreshed ([`REFRESHED_FILE`]), and the next
//! one reads that chain back: the pages a cut-short recrawl did not reach
//! are still asked next time.
//!
//! ```
//! use nearcrawl_crawl::recrawl::stable_hash;
//!
//! let a = stable_hash("Release notes. Last updated 26 November 2026, 14:02.");
//! let b = stable_hash("Release notes. Last updated 3 December 2026, 09:15.");
//! assert_eq!(a, b, "a date line changed");
//! assert_ne!(a, stable_hash("Release notes. Last updated by Ann, 26 November 2026."));
//! ```

mod earlier;

pub use earlier::{Earlier, EarlierCrawl, REFRESHED_FILE, RecrawlError, VISITS_FILE};
use nearcrawl_fetch::Validators;
use url::Url;

use crate::config::Recrawl;
use crate::sink::VisitRecord;

/// What a fetch saw of a page: its answer's status and validators, its
/// text's [`stable_hash`] (none for a 304) and its body's bytes.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    pub status: u16,
    pub validators: Validators,
    pub text_hash: Option<u64>,
    pub bytes: u64,
    /// The payload's digest, when it was archived.
    pub digest: Option<String>,
}

/// The record of a visit of `url` at `depth`, at `at` (seconds since the
/// epoch), that found `change`; `seen`: what the fetch saw, none when no
/// answer came. What the visit did not see (a 304's text, a failed
/// visit's everything) is the earlier visit's, carried forward.
pub fn visit_record(
    config: &Recrawl,
    url: &Url,
    depth: u32,
    at: u64,
    change: Change,
    earlier: Option<&Earlier>,
    seen: Option<Seen>,
) -> VisitRecord {
    let seen = seen.unwrap_or_default();
    let kept = |e: &Earlier| e.version_at;
    let version_at = match change {
        Change::Unchanged | Change::Failed => earlier.map_or(at, kept),
        Change::New | Change::Changed | Change::Gone => at,
    };
    let validators = match earlier {
        Some(e) if seen.validators.is_empty() && change != Change::Changed => e.validators.clone(),
        _ => seen.validators,
    };
    let text_hash = seen.text_hash.or(earlier.and_then(|e| e.text_hash));
    let digest = match change {
        Change::Gone => None,
        _ => (seen.digest).or_else(|| earlier.and_then(|e| e.digest.clone())),
    };
    let bytes = match (seen.bytes, earlier) {
        (0, Some(e)) if change != Change::Gone => e.bytes,
        (b, _) => b,
    };
    VisitRecord {
        url: url.to_string(),
        depth,
        fetched_at: at,
        status: seen.status,
        change: change.name().into(),
        etag: validators.etag,
        last_modified: validators.last_modified,
        text_hash: text_hash.map(|h| format!("{h:016x}")).unwrap_or_default(),
        bytes,
        version_at,
        replaces: (change == Change::Changed).then(|| earlier.map_or(at, kept)),
        interval_secs: next_interval(config, earlier, change),
        digest,
    }
}

/// The earlier crawl `config` asks again, if any (from all its output
/// directories: a cluster crawl has one per worker).
pub fn open_earlier(config: &crate::config::Config) -> Result<Option<EarlierCrawl>, RecrawlError> {
    let dirs = &config.recrawl.from;
    if dirs.is_empty() {
        return Ok(None);
    }
    let absolute = |d: &std::path::Path| d.canonicalize().unwrap_or_else(|_| d.to_path_buf());
    let out = absolute(&config.output.dir);
    if let Some(same) = dirs.iter().find(|d| absolute(d) == out) {
        return Err(RecrawlError::SameDir(same.clone()));
    }
    let earlier = EarlierCrawl::read_all(dirs)?;
    tracing::info!(from = ?dirs, pages = earlier.len(), "recrawl: pages to ask again");
    // The next recrawl, of this one, reads the chain back through it.
    let named = config.output.dir.join(REFRESHED_FILE);
    let io = |source| RecrawlError::Read {
        path: named.clone(),
        source,
    };
    let lines: String = dirs
        .iter()
        .map(|d| format!("{}\n", absolute(d).display()))
        .collect();
    std::fs::create_dir_all(&config.output.dir).map_err(io)?;
    std::fs::write(&named, lines).map_err(io)?;
    Ok(Some(earlier))
}

/// The seeds a crawl queues: the configured ones the earlier crawl did not
/// visit (depth 0: never asked, so the most overdue), then the earlier
/// crawl's pages at their depths, longest overdue first.
pub fn seeds_to_queue(seeds: &[Url], earlier: Option<&EarlierCrawl>) -> Vec<(Url, u32)> {
    let known = |s: &Url| earlier.is_some_and(|e| e.get(s).is_some());
    let mut all: Vec<(Url, u32)> = (seeds.iter().filter(|s| !known(s)))
        .map(|s| (s.clone(), 0))
        .collect();
    all.extend(earlier.map(EarlierCrawl::seeds).unwrap_or_default());
    all
}

/// What a visit found, against the earlier crawl's visit of the URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Not in the earlier crawl (or no earlier crawl).
    New,
    /// A new version of the text.
    Changed,
    /// 304, or the same text but for numbers and date words.
    Unchanged,
    /// 404 or 410.
    Gone,
    /// No answer to compare (an error other than gone): the earlier
    /// visit is carried forward.
    Failed,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Changed => "changed",
            Change::Unchanged => "unchanged",
            Change::Gone => "gone",
            Change::Failed => "failed",
        }
    }

    /// The change a fetched text makes against the earlier visit.
    pub fn of_text(earlier: Option<&Earlier>, text_hash: u64) -> Change {
        match earlier {
            None => Change::New,
            Some(e) if e.text_hash == Some(text_hash) => Change::Unchanged,
            Some(_) => Change::Changed,
        }
    }
}

/// The seconds until a page is worth asking again: the configured
/// interval for a page seen for the first time; then halved when it
/// changed and doubled when it did not (an estimate of its rate of change
/// that needs no clock on the server), within the bounds.
pub fn next_interval(config: &Recrawl, earlier: Option<&Earlier>, change: Change) -> u64 {
    let hours = |h: u64| h * 3600;
    let (min, max) = (
        hours(config.min_interval_hours),
        hours(config.max_interval_hours),
    );
    let Some(e) = earlier else {
        return hours(config.interval_hours).clamp(min, max);
    };
    let next = match change {
        Change::Changed => e.interval_secs / 2,
        Change::Unchanged => e.interval_secs.saturating_mul(2),
        Change::New | Change::Gone | Change::Failed => e.interval_secs,
    };
    next.clamp(min, max)
}

/// A hash of `text` that no change in numbers or date words moves: a word
/// of digits (or an ordinal: `26th`) counts as one number, and month and
/// weekday names (English, full or short) as one date word. Words are what
/// the hash sees, so spacing and punctuation between them do not count
/// either; every other word does (`v2` and `v3` differ).
pub fn stable_hash(text: &str) -> u64 {
    // Words found byte by byte: this runs over the text of every page
    // fetched, and splitting by `char::is_alphanumeric` (a table search
    // for every character beyond ASCII) into FNV cost 7% of a fast crawl's
    // CPU.
    let mut h = WordHash(0xcbf2_9ce4_8422_2325);
    let mut i = 0;
    while i < text.len() {
        let start = i;
        i = word_end(text, i);
        if i > start {
            h.word(&text[start..i]);
        } else {
            // A separator.
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    h.0
}

/// Where the word that begins at byte `i` of `text` ends (`i` itself at a
/// separator): runs of ASCII letters and digits go by in a tight loop.
fn word_end(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        match bytes.get(i) {
            Some(b) if !b.is_ascii() => {
                let c = text[i..].chars().next().unwrap_or(' ');
                if is_separator(c) {
                    return i;
                }
                i += c.len_utf8();
            }
            _ => return i,
        }
    }
}

/// A multiply-rotate hash, eight bytes a step (FxHash's mix): FNV's
/// byte-at-a-time multiply chain was 4.5% of a fast crawl's CPU on its own.
/// Not for hash tables an adversary fills; a page that collided on purpose
/// would only be counted unchanged.
struct WordHash(u64);

impl WordHash {
    fn bytes(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes(c.try_into().unwrap());
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // The length tells `ab` from `ab\0`.
            let last = tail(rest) ^ (rest.len() as u64) << 56;
            self.0 = (self.0.rotate_left(5) ^ last).wrapping_mul(K);
        }
    }

    /// A word as the hash sees it, and where it ends.
    fn word(&mut self, word: &str) {
        const NUMBER: &[u8] = b"\x010";
        const DATE: &[u8] = b"\x01date";
        let b = word.as_bytes();
        let seen = if b[0].is_ascii_digit() && is_number(word) {
            NUMBER
        } else if is_date_word(word) {
            DATE
        } else {
            b
        };
        self.bytes(seen);
        // The end of the word: `ab c` is not `a bc`.
        self.0 = (self.0.rotate_left(5) ^ 0xff).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// The 1 to 7 bytes of `rest`, little-endian, as if copied into eight
/// zeros: read as two overlapping pieces, whose shared bytes OR into
/// themselves. Most words end in such a tail, and copying it called
/// `memcpy` for every word.
fn tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    let byte = |at: usize| u64::from(rest[at]) << (8 * at);
    if n >= 4 {
        let four = |at: usize| u64::from(u32::from_le_bytes(rest[at..at + 4].try_into().unwrap()));
        four(0) | four(n - 4) << (8 * (n - 4))
    } else {
        byte(0) | byte(n / 2) | byte(n - 1)
    }
}

/// Spaces and punctuation beyond ASCII, which separate words: Latin-1's,
/// the general punctuation block (dashes, quotes, spaces), CJK
/// punctuation and the full-width forms of ASCII punctuation. Every other
/// character (a letter, digit or mark of any script) is part of a word.
fn is_separator(c: char) -> bool {
    matches!(c,
        '\u{80}'..='\u{BF}' | '\u{D7}' | '\u{F7}'
        | '\u{2000}'..='\u{206F}'
        | '\u{3000}'..='\u{303F}'
        | '\u{FF00}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF40}'
        | '\u{FF5B}'..='\u{FF65}'
    )
}

/// Digits, or digits and an English ordinal suffix.
fn is_number(word: &str) -> bool {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &word[digits..];
    digits > 0
        && (rest.is_empty()
            || ["st", "nd", "rd", "th"]
                .iter()
                .any(|s| s.eq_ignore_ascii_case(rest)))
}

/// A month or weekday name, full or short (English), in any case.
fn is_date_word(word: &str) -> bool {
    // Most words are ruled out by their length or first letter, before any
    // copy: this runs for every word of every page fetched.
    let b = word.as_bytes();
    if !(3..=9).contains(&b.len()) {
        return false;
    }
    if !matches!(
        b[0] | 0x20,
        b'j' | b'f' | b'm' | b'a' | b's' | b'o' | b'n' | b'd' | b't' | b'w'
    ) {
        return false;
    }
    let mut lower = [0u8; 9];
    for (l, c) in lower.iter_mut().zip(b) {
        *l = c.to_ascii_lowercase();
    }
    matches!(
        &lower[..b.len()],
        b"january"
            | b"february"
            | b"march"
            | b"april"
            | b"may"
            | b"june"
            | b"july"
            | b"august"
            | b"september"
            | b"october"
            | b"november"
            | b"december"
            | b"jan"
            | b"feb"
            | b"mar"
            | b"apr"
            | b"jun"
            | b"jul"
            | b"aug"
            | b"sep"
            | b"sept"
            | b"oct"
            | b"nov"
            | b"dec"
            | b"monday"
            | b"tuesday"
            | b"wednesday"
            | b"thursday"
            | b"friday"
            | b"saturday"
            | b"sunday"
            | b"mon"
            | b"tue"
            | b"tues"
            | b"wed"
            | b"thu"
            | b"thurs"
            | b"fri"
            | b"sat"
            | b"sun"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_date_words_do_not_count_other_words_do() {
        let base = "Generated on Thu Nov 26 2026 by javadoc (17). Page views: 1,024.";
        let same = "Generated on Fri Nov 27 2026 by javadoc (17). Page views: 1,311.";
        assert_eq!(stable_hash(base), stable_hash(same));
        let edited = "Generated on Thu Nov 26 2026 by javadoc (21). Page views: 1,024 today.";
        assert_ne!(stable_hash(base), stable_hash(edited));
        assert_ne!(stable_hash("a b"), stable_hash("ab"));
        assert_ne!(
            stable_hash("version 2 is out"),
            stable_hash("version is out")
        );
        assert_eq!(stable_hash("on the 26th"), stable_hash("on the 3rd"));
        assert_ne!(
            stable_hash("w123 w456"),
            stable_hash("w789 w1"),
            "codes are words"
        );
    }

    #[test]
    fn a_words_tail_reads_as_its_bytes_copied_into_zeros() {
        let bytes: Vec<u8> = (1..=7u8).map(|i| i.wrapping_mul(37) | 0x80).collect();
        for n in 1..=7 {
            let mut copied = [0u8; 8];
            copied[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(tail(&bytes[..n]), u64::from_le_bytes(copied), "{n} bytes");
        }
    }

    /// [`stable_hash`] as first written, a character at a time: the
    /// hashes earlier crawls stored must not move.
    fn stable_hash_by_characters(text: &str) -> u64 {
        let mut h = WordHash(0xcbf2_9ce4_8422_2325);
        let mut start = None;
        for (i, c) in text.char_indices() {
            let word_char = if c.is_ascii() {
                c.is_ascii_alphanumeric()
            } else {
                !is_separator(c)
            };
            match (word_char, start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    h.word(&text[s..i]);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            h.word(&text[s..]);
        }
        h.0
    }

    #[test]
    fn words_are_found_as_character_by_character() {
        let texts = [
            "",
            " ",
            "a",
            "word",
            "  two words  ",
            "Generated on Thu Nov 26 2026 by javadoc (17). Page views: 1,024.",
            "naïve café — «quoted» 26th\u{a0}Sept…",
            "日本語の文章、句読点。全角！ＡＢＣ",
            "ภาษาไทย ok\u{2003}x\u{d7}y\u{f7}z",
            "end with é",
            "é",
            "\u{2014}",
            "Release notes, 3 December",
        ];
        for text in texts {
            assert_eq!(
                stable_hash(text),
                stable_hash_by_characters(text),
                "{text:?}"
            );
        }
        // And as stored: a change here would count every page changed.
        assert_eq!(
            stable_hash("Release notes, 3 December"),
            0xbc1a_47ee_a330_17a0
        );
    }

    #[test]
    fn intervals_halve_on_change_and_double_without_within_bounds() {
        let config = Recrawl::default();
        let first = next_interval(&config, None, Change::New);
        assert_eq!(first, config.interval_hours * 3600);
        let e = |interval_secs| Earlier {
            interval_secs,
            ..Earlier::default()
        };
        assert_eq!(
            next_interval(&config, Some(&e(first)), Change::Changed),
            first / 2
        );
        assert_eq!(
            next_interval(&config, Some(&e(first)), Change::Unchanged),
            first * 2
        );
        let min = config.min_interval_hours * 3600;
        assert_eq!(next_interval(&config, Some(&e(min)), Change::Changed), min);
        let max = config.max_interval_hours * 3600;
        assert_eq!(
            next_interval(&config, Some(&e(max)), Change::Unchanged),
            max
        );
    }
}
