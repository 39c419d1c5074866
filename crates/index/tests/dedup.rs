//! The duplicate gate on real text: exact, near, short, empty, persistence.

use nearcrawl_index::{Check, DedupConfig, Deduper, Doc, IndexConfig, IndexError, Verdict};

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("nearcrawl-dedup-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn articles() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/articles/ground-truth.json");
    let gt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<String> = gt
        .as_object()
        .unwrap()
        .values()
        .map(|v| v["articleBody"].as_str().unwrap().to_string())
        .filter(|b| b.split_whitespace().count() > 300)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn exact_near_and_new() {
    let dir = tempdir("kinds");
    let docs = articles();
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    for (i, text) in docs.iter().enumerate() {
        let dec = d.check_insert(i as u64, text).unwrap();
        assert_eq!(dec.verdict, Verdict::New, "article {i}");
        assert!(!dec.short);
    }
    // Same text with other whitespace, case and punctuation: exact.
    let shouty = docs[3]
        .to_uppercase()
        .replace(". ", " ... ")
        .replace('\n', "\n\n");
    assert_eq!(
        d.check_insert(1000, &shouty).unwrap().verdict,
        Verdict::Exact { of: 3 }
    );
    // A few words changed: near, with a high similarity.
    let mut words: Vec<&str> = docs[5].split_whitespace().collect();
    for i in (0..words.len()).step_by(40) {
        words[i] = "different";
    }
    match d.check_insert(1001, &words.join(" ")).unwrap().verdict {
        Verdict::Near {
            of: 5,
            distance,
            similarity,
            check,
        } => {
            assert!(
                distance <= 8 && similarity >= 0.5,
                "{distance} {similarity}"
            );
            assert_eq!(check, Check::Sketch);
        }
        other => panic!("expected near duplicate of 5, got {other:?}"),
    }
    // Two articles of about one length glued together are neither. (A
    // page that is three quarters one article, 7 and 8 glued, is as alike
    // to it as an edited copy, and is joined at 9 bits; it was within 8.)
    let glued = format!("{}\n{}", docs[2], docs[3]);
    assert_eq!(d.check_insert(1002, &glued).unwrap().verdict, Verdict::New);
    d.flush().unwrap();
    drop(d);

    // Reopened: the earlier documents are still there.
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    assert_eq!(
        d.check_insert(2000, &docs[9]).unwrap().verdict,
        Verdict::Exact { of: 9 }
    );
    // Only new documents are recorded: a copy of the near duplicate is
    // again near the original, not a duplicate of the duplicate.
    assert!(matches!(
        d.check_insert(2001, &words.join(" ")).unwrap().verdict,
        Verdict::Near { of: 5, .. }
    ));
    drop(d);

    // Other fingerprint settings would compare unlike with like.
    let other = DedupConfig {
        sketch_shingle: 2,
        ..DedupConfig::default()
    };
    assert!(matches!(
        Deduper::open(&dir, other),
        Err(IndexError::LayoutMismatch { .. })
    ));
    // k only bounds the verification, so it may change between runs.
    let other = DedupConfig {
        index: IndexConfig {
            k: 3,
            ..DedupConfig::default().index
        },
        ..DedupConfig::default()
    };
    let mut d = Deduper::open(&dir, other).unwrap();
    assert_eq!(
        d.indexed(),
        docs.len() + 1,
        "the articles and the glued pair"
    );
    assert_eq!(
        d.check_insert(3000, &docs[9]).unwrap().verdict,
        Verdict::Exact { of: 9 }
    );
    drop(d);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn short_texts_are_compared_word_by_word() {
    let dir = tempdir("short");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let base = "Contact us at the office on Main Street, open Monday to Friday \
                from nine to five, closed on public holidays; parking behind \
                the building, entrance through the courtyard on the left.";
    let a = d.check_insert(1, base).unwrap();
    assert!(a.short);
    assert_eq!(a.verdict, Verdict::New);
    // Same words, other case and punctuation: the same normalized text.
    let b = d.check_insert(2, base.to_uppercase().as_str()).unwrap();
    assert_eq!(b.verdict, Verdict::Exact { of: 1 });
    // Digits are content: other digits, another text.
    let c = d
        .check_insert(3, "Room 101 is on floor 1, room 205 on floor 2.")
        .unwrap();
    assert_eq!(c.verdict, Verdict::New);
    let c2 = d
        .check_insert(4, "Room 102 is on floor 1, room 206 on floor 2.")
        .unwrap();
    assert_eq!(c2.verdict.check(), None, "{:?}", c2.verdict);
    // A line added (a banner): a near duplicate, checked word by word.
    let banner = format!("Mirrored copy, updated daily.\n{base}");
    match d.check_insert(5, banner.as_str()).unwrap().verdict {
        Verdict::Near {
            of: 1,
            similarity,
            check: Check::ShortText,
            ..
        } => assert_eq!(similarity, 1.0),
        other => panic!("expected a short-text near duplicate of 1, got {other:?}"),
    }
    // Half the words replaced: another text.
    let other = "Contact us at the depot on Mill Road, open Saturday and Sunday \
                 from ten to four, closed in August; parking in front of \
                 the building, entrance through the courtyard on the left.";
    assert_eq!(d.check_insert(6, other).unwrap().verdict, Verdict::New);
    // Empty text says nothing and is not recorded.
    for doc in [7, 8] {
        let e = d.check_insert(doc, "  ... \n ").unwrap();
        assert_eq!(e.verdict, Verdict::New);
        assert_eq!(e.simhash.features, 0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A line added to a short page moves its fingerprint many bits; the same
/// non-empty name then stands in for the fingerprint, and nothing else does.
#[test]
fn a_short_page_with_a_line_added_is_a_copy_when_its_name_says_so() {
    let dir = tempdir("short-named");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    for i in 0..20 {
        let title = format!("module{i} (Example SE 17)");
        let text = format!("Module module{i} defines the API {i} of the example platform.");
        d.check_insert(100 + i, titled(&title, &text, "docs"))
            .unwrap();
    }
    let text = "Module jdk.charsets. Provides charsets that are not in java.base, \
                mostly double byte and IBM charsets. Packages: none exported.";
    let title = "jdk.charsets (Example SE 17)";
    // A line that moves the fingerprint past k (checked, so the test means
    // what it says).
    let copy = (1..40)
        .map(|n| format!("Mirrored at 12:{n:02} on day {n}.\n{text}"))
        .find(|c| {
            let a = d
                .judge(text, |_| true)
                .unwrap()
                .decision
                .simhash
                .fingerprint;
            let b = d
                .judge(c.as_str(), |_| true)
                .unwrap()
                .decision
                .simhash
                .fingerprint;
            a.distance(b) > 8
        })
        .expect("a line that moves the fingerprint more than 8 bits");
    assert_eq!(
        d.check_insert(1, titled(title, text, "docs"))
            .unwrap()
            .verdict,
        Verdict::New
    );
    // Another item's name: never.
    let other = "jdk.crypto.ec (Example SE 17)";
    assert_eq!(
        d.check_insert(2, titled(other, &copy, "docs"))
            .unwrap()
            .verdict,
        Verdict::New
    );
    // The same name: a copy, word by word.
    match d
        .check_insert(3, titled(title, &copy, "docs"))
        .unwrap()
        .verdict
    {
        Verdict::Near {
            of: 1,
            distance,
            check: Check::ShortText,
            ..
        } => assert!(distance > 8),
        other => panic!("expected a short-text near duplicate of 1, got {other:?}"),
    }
    // No titles: the fingerprint past k bits, the text must be near
    // identical word by word (the shorter all in the longer here).
    let _ = std::fs::remove_dir_all(&dir);
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    assert_eq!(d.check_insert(1, text).unwrap().verdict, Verdict::New);
    assert!(matches!(
        d.check_insert(2, copy.as_str()).unwrap().verdict,
        Verdict::Near { of: 1, distance, similarity, check: Check::ShortText }
            if distance > 8 && similarity == 1.0
    ));
    // One word in ten changed: a copy; three in twenty: not, without a
    // name to vouch for it (each edit chosen to move the fingerprint past
    // k bits, so the test means what it says).
    for (len, edits, copy) in [(30, 3, true), (20, 3, false)] {
        let words: Vec<String> = (0..len)
            .map(|i| format!("w{}", i * 7919 % 1000 + len))
            .collect();
        let base = words.join(" ");
        let edited = (0..500)
            .map(|seed: usize| {
                let mut w = words.clone();
                for j in 0..edits {
                    w[(seed * 7 + j * 11) % len] = format!("x{seed}y{j}");
                }
                w.join(" ")
            })
            .find(|e| {
                let mut fp = |t: &str| d.judge(t, |_| true).unwrap().decision.simhash.fingerprint;
                let a = fp(&base);
                a.distance(fp(e)) > 8
            })
            .expect("edits that move the fingerprint more than 8 bits");
        let doc = 10 + len as u64;
        assert_eq!(
            d.check_insert(doc, base.as_str()).unwrap().verdict,
            Verdict::New
        );
        let verdict = d.check_insert(doc + 1, edited.as_str()).unwrap().verdict;
        assert_eq!(
            verdict.duplicate_of().map(|d| d.0),
            copy.then_some(doc),
            "{verdict:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A line added to a page of a hundred-odd words can move its fingerprint
/// past k too (doxygen pages with a one-line banner): a near-identical
/// sketch (at least 0.9) stands in for it; a text changed more than that
/// still needs the fingerprint, and another item's name is never a copy.
#[test]
fn a_long_page_with_a_line_added_is_a_copy_when_near_identical() {
    let dir = tempdir("long-line");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let fp = |d: &mut Deduper, t: &str| d.judge(t, |_| true).unwrap().decision.simhash.fingerprint;
    // A page of 110 words, and a copy with a line that moves its
    // fingerprint past k (found, so the test means what it says).
    let (text, copy) = articles()
        .iter()
        .find_map(|doc| {
            let text = doc
                .split_whitespace()
                .take(110)
                .collect::<Vec<_>>()
                .join(" ");
            let base = fp(&mut d, &text);
            (0..400)
                .map(|n| {
                    format!(
                        "Mirrored on host{n} at {n}:{:02} by job{}.\n{text}",
                        n % 60,
                        n * 7
                    )
                })
                .find(|c| base.distance(fp(&mut d, c)) > 8)
                .map(|copy| (text, copy))
        })
        .expect("a line that moves the fingerprint more than 8 bits");
    let title = "binary_heap.hpp File Reference";
    assert_eq!(
        d.check_insert(1, titled(title, &text, "docs"))
            .unwrap()
            .verdict,
        Verdict::New
    );
    assert!(!d.judge(text.as_str(), |_| true).unwrap().decision.short);
    // Another item's name: never.
    let other = "pairing_heap.hpp File Reference";
    assert_eq!(
        d.check_insert(2, titled(other, &copy, "docs"))
            .unwrap()
            .verdict,
        Verdict::New
    );
    match d
        .check_insert(3, titled(title, &copy, "docs"))
        .unwrap()
        .verdict
    {
        Verdict::Near {
            of: 1,
            distance,
            similarity,
            check: Check::Sketch,
        } => assert!(distance > 8 && similarity >= 0.9, "{distance} {similarity}"),
        other => panic!("expected a sketch near duplicate of 1, got {other:?}"),
    }
    // One word in eight replaced (Jaccard of shingles ~0.6) and the
    // fingerprint past k: not near identical, not a copy.
    let words: Vec<&str> = text.split_whitespace().collect();
    let base = fp(&mut d, &text);
    let edited = (0..400)
        .map(|seed| {
            let w: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(i, w)| match (i + seed) % 8 {
                    0 => format!("z{seed}q{i}"),
                    _ => w.to_string(),
                })
                .collect();
            w.join(" ")
        })
        .find(|e| base.distance(fp(&mut d, e)) > 8)
        .expect("edits that move the fingerprint more than 8 bits");
    assert_eq!(
        d.check_insert(4, titled(title, &edited, "docs"))
            .unwrap()
            .verdict,
        Verdict::New
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn titled<'a>(title: &'a str, text: &'a str, host: &'a str) -> Doc<'a> {
    Doc {
        text,
        title: Some(title),
        host: Some(host),
        url: None,
    }
}

/// Pages from one template that name different items are kept however
/// alike their text; a copy with the same name is still caught, and so is
/// a copy on another host, whatever its title.
#[test]
fn different_names_are_never_duplicates() {
    let dir = tempdir("names");
    let docs = articles();
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let verdict = |d: &mut Deduper, id: u64, doc: Doc<'_>| d.check_insert(id, doc).unwrap().verdict;
    let (api, mirror) = ("docs.example", "mirror.example");
    let text = docs[0].as_str();
    assert_eq!(
        verdict(&mut d, 1, titled("Integer (Example API)", text, api)),
        Verdict::New
    );
    // The same text under another name: kept, exact or near.
    assert_eq!(
        verdict(&mut d, 2, titled("Long (Example API)", text, api)),
        Verdict::New
    );
    let mut words: Vec<&str> = text.split_whitespace().collect();
    for i in (0..words.len()).step_by(40) {
        words[i] = "changed";
    }
    let edited = words.join(" ");
    assert_eq!(
        verdict(&mut d, 3, titled("Short (Example API)", &edited, api)),
        Verdict::New
    );
    // The same name: exact, then near.
    assert_eq!(
        verdict(&mut d, 4, titled("Long (Example API)", text, api)),
        Verdict::Exact { of: 2 }
    );
    assert!(matches!(
        verdict(&mut d, 5, titled("Integer (Example API)", &edited, api)),
        Verdict::Near { of: 1 | 2, .. }
    ));
    // Another host's copy with its own title template: caught from the
    // first page on (two hosts' titles that differ are no evidence; the
    // text decides), exact or near.
    assert!(matches!(
        verdict(&mut d, 6, titled("Integer - Mirror", text, mirror)),
        Verdict::Exact { of: 1 | 2 | 4 }
    ));
    let edited_again = format!("{edited} again");
    assert!(matches!(
        verdict(&mut d, 7, titled("Integer - Mirror", &edited_again, mirror)),
        Verdict::Near { .. }
    ));
    // Digits name things too.
    for (i, title) in ["int8 (Example API)", "int16 (Example API)"]
        .iter()
        .enumerate()
    {
        assert_eq!(
            verdict(&mut d, 200 + i as u64, titled(title, &docs[20], api)),
            Verdict::New
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A section's first pages: its word is in few titles yet, but it names a
/// directory of the page's URL, so a re-export is caught from the first
/// page on; an item's name (the file's) swapped for a section word is
/// still another item.
#[test]
fn a_new_sections_word_counts_where_it_names_the_urls_directory() {
    let dir = tempdir("sections");
    let docs = articles();
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let host = "docs.example";
    let page = |title: &'static str, text: &'static str, url: Option<&'static str>| Doc {
        text,
        title: Some(title),
        host: Some(host),
        url,
    };
    // `std` and `iter` in every title: sections.
    for i in 0..300u64 {
        let title = format!("Item{i} in std::iter - Rust");
        let text = format!("{} item {i}", docs[i as usize % docs.len()]);
        d.check_insert(i, titled(&title, &text, host)).unwrap();
    }
    let sized: &'static str = Box::leak(docs[7].clone().into_boxed_str());
    let url = Some("https://docs.example/std/marker/trait.Sized.html");
    let first = page("Sized in std::marker - Rust", sized, url);
    assert_eq!(d.check_insert(1000, first).unwrap().verdict, Verdict::New);
    // `core` in no title yet: without the URL another item...
    let bare = page("Sized in core::marker - Rust", sized, None);
    assert_eq!(
        d.judge(bare, |_| true).unwrap().decision.verdict,
        Verdict::New
    );
    // ...with it, the same item under another path.
    let url = Some("https://docs.example/core/marker/trait.Sized.html");
    let reexport = page("Sized in core::marker - Rust", sized, url);
    assert_eq!(
        d.check_insert(1001, reexport).unwrap().verdict,
        Verdict::Exact { of: 1000 }
    );
    // `Values` swapped for `Iter` (a section word too): two items.
    let iter: &'static str = Box::leak(docs[9].clone().into_boxed_str());
    let url = Some("https://docs.example/std/iter/struct.Iter.html");
    let first = page("Iter in std::iter - Rust", iter, url);
    assert_eq!(d.check_insert(1002, first).unwrap().verdict, Verdict::New);
    let url = Some("https://docs.example/std/iter/struct.Values.html");
    let other = page("Values in std::iter - Rust", iter, url);
    assert_eq!(d.check_insert(1003, other).unwrap().verdict, Verdict::New);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Short texts that differ only in a path word swapped in place: by
/// characters `f64` for `f32` is little of the page, but it names another
/// item (the constant of another type); `std` for `core` is one item
/// re-exported. One item under two paths has one text word for word.
#[test]
fn a_path_word_swapped_in_a_short_text_is_another_item_unless_the_text_is_one() {
    let dir = tempdir("swapped");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let host = "docs.example";
    let constant = |krate: &str, ty: &str| {
        let title = format!("TAU in {krate}::{ty}::consts - Rust");
        let text = format!(
            "Constant {krate}::{ty}::consts::TAU\n1.47.0 · source · [−]\n\
             pub const TAU: {ty} = 6.28318530717958647692528676655900577_{ty};\n\
             Expand description\nThe full circle constant (τ)\nEqual to 2π."
        );
        let url = format!("https://docs.example/{krate}/{ty}/consts/constant.TAU.html");
        (title, text, url)
    };
    // `core`, `f64` and `consts` in every title: sections.
    let docs = articles();
    for i in 0..100u64 {
        let title = format!("ITEM{i} in core::f64::consts - Rust");
        let text = format!("{} item {i}", docs[i as usize % docs.len()]);
        d.check_insert(100 + i, titled(&title, &text, host))
            .unwrap();
    }
    let mut judge = |n: u64, (title, text, url): (String, String, String)| {
        let doc = Doc {
            text: &text,
            title: Some(&title),
            host: Some(host),
            url: Some(&url),
        };
        d.check_insert(n, doc).unwrap().verdict
    };
    assert_eq!(judge(0, constant("core", "f64")), Verdict::New);
    assert_eq!(
        judge(1, constant("core", "f32")),
        Verdict::New,
        "another type's constant"
    );
    let reexport = judge(2, constant("std", "f64"));
    assert!(
        matches!(
            reexport,
            Verdict::Near {
                of: 0,
                check: Check::ShortText,
                ..
            }
        ),
        "{reexport:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_settings_are_clear_errors() {
    let dir = tempdir("bad");
    for (config, word) in [
        (
            DedupConfig {
                sketch_shingle: 0,
                ..DedupConfig::default()
            },
            "sketch_shingle",
        ),
        (
            DedupConfig {
                min_similarity: 1.5,
                ..DedupConfig::default()
            },
            "min_similarity",
        ),
        (
            DedupConfig {
                short_similarity: -0.1,
                ..DedupConfig::default()
            },
            "short_similarity",
        ),
    ] {
        let err = Deduper::open(&dir, config).unwrap_err().to_string();
        assert!(err.contains(word), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The two halves the crawler uses: a judgement survives its byte form, a
/// dead document is not duplicated against, and recording twice is harmless.
#[test]
fn judge_then_record_and_replay() {
    use nearcrawl_index::Judgement;
    let dir = tempdir("judge");
    let docs = articles();
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let first = d.judge(&docs[0], |_| true).unwrap();
    assert_eq!(first.decision.verdict, Verdict::New);
    let bytes = first.to_bytes();
    assert_eq!(Judgement::from_bytes(&bytes).as_ref(), Some(&first));
    assert!(Judgement::from_bytes(&bytes[1..]).is_none());
    // Judged, not recorded: the same text is still new.
    assert_eq!(
        d.judge(&docs[0], |_| true).unwrap().decision.verdict,
        Verdict::New
    );
    d.record(7, &Judgement::from_bytes(&bytes).unwrap())
        .unwrap();
    d.record(7, &first).unwrap();
    assert_eq!(d.indexed(), 1, "recording again adds nothing");
    let again = d.judge(&docs[0], |_| true).unwrap();
    assert_eq!(again.decision.verdict, Verdict::Exact { of: 7 });
    assert_eq!(
        Judgement::from_bytes(&again.to_bytes()).as_ref(),
        Some(&again)
    );
    // Document 7 lost by the caller: neither an exact nor a near match.
    assert_eq!(
        d.judge(&docs[0], |doc| doc != 7).unwrap().decision.verdict,
        Verdict::New
    );
    let mut words: Vec<&str> = docs[0].split_whitespace().collect();
    for i in (0..words.len()).step_by(50) {
        words[i] = "other";
    }
    let edited = words.join(" ");
    assert!(matches!(
        d.judge(&edited, |_| true).unwrap().decision.verdict,
        Verdict::Near { of: 7, .. }
    ));
    assert_eq!(
        d.judge(&edited, |doc| doc != 7).unwrap().decision.verdict,
        Verdict::New
    );
    drop(d);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` made-up words, distinct for distinct `from..from + n`.
fn words(from: u64, n: u64) -> String {
    (from..from + n)
        .map(|i| format!("w{}", i.wrapping_mul(0x9e37_79b9) % 1_000_000))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A short page near the line (90 words) and its copy with a line added,
/// which takes it past the line (over 100 words): compared by their
/// sketches, a copy; a long text and a short one far from the line never.
#[test]
fn a_copy_past_the_short_line_is_still_a_copy() {
    let dir = tempdir("line");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let page = words(0, 90);
    let copy = format!(
        "Mirrored on another host at noon today for readers who asked where the original went. {page}"
    );
    assert_eq!(
        d.check_insert(1, page.as_str()).unwrap().verdict,
        Verdict::New
    );
    let verdict = d.check_insert(2, copy.as_str()).unwrap();
    assert!(!verdict.short, "the copy is past the line");
    assert!(
        matches!(verdict.verdict, Verdict::Near { of: 1, .. }),
        "{:?}",
        verdict.verdict
    );
    // Far from the line: 40 words and a 150-word page holding them.
    let small = words(1000, 40);
    let holder = format!("{small} {}", words(2000, 110));
    assert_eq!(
        d.check_insert(3, small.as_str()).unwrap().verdict,
        Verdict::New
    );
    assert_eq!(
        d.check_insert(4, holder.as_str()).unwrap().verdict,
        Verdict::New
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy with a paragraph added can move its fingerprint past k; when the
/// sketches say at most a fifth of it is its own, it is still a copy. A
/// page holding that text and as much again of its own is not.
#[test]
fn a_paragraph_added_past_k_is_still_a_copy() {
    let dir = tempdir("paragraph");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let page = words(0, 400);
    let original = d.check_insert(1, page.as_str()).unwrap();
    assert_eq!(original.verdict, Verdict::New);
    // Paragraphs of 40 to 70 words (a tenth to a seventh of the copy): those
    // that move the fingerprint past k are copies all the same.
    let mut past_k = 0;
    for (seed, n) in (0..40).flat_map(|s| (40..=70).step_by(10).map(move |n| (s, n))) {
        let copy = format!("{page}\n{}", words(10_000 + seed * 1_000, n));
        let j = d.judge(copy.as_str(), |_| true).unwrap();
        let distance = j
            .decision
            .simhash
            .fingerprint
            .distance(original.simhash.fingerprint);
        if distance <= 8 {
            continue;
        }
        past_k += 1;
        assert!(
            matches!(j.decision.verdict, Verdict::Near { of: 1, .. }),
            "{n} words added, {distance} bits: {:?}",
            j.decision.verdict
        );
    }
    assert!(past_k > 0, "no paragraph moved the fingerprint past k");
    let more = format!("{page}\n{}", words(900_000, 400));
    assert_eq!(
        d.check_insert(3, more.as_str()).unwrap().verdict,
        Verdict::New
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A gate that remembers another: documents of the other are found under
/// the ids they were given, as its own are, and the other is not changed.
#[test]
fn a_gate_remembers_another_gates_documents_under_new_ids() {
    let (dir_a, dir_b) = (tempdir("remembered-a"), tempdir("remembered-b"));
    let docs = articles();
    let mut a = Deduper::open(&dir_a, DedupConfig::default()).unwrap();
    for (i, text) in docs.iter().enumerate().take(10) {
        a.check_insert(i as u64, text).unwrap();
    }
    a.flush().unwrap();
    drop(a);
    let records = dir_a.join(nearcrawl_index::RECORDS_FILE);
    let before = std::fs::read(&records).unwrap();

    let mut b = Deduper::open(&dir_b, DedupConfig::default()).unwrap();
    let earlier = 1 << 63;
    assert_eq!(b.remember(&records, |d| earlier | d).unwrap(), 10);
    assert_eq!(b.indexed(), 10);
    assert_eq!(
        std::fs::read(&records).unwrap(),
        before,
        "the other gate is unchanged"
    );
    // A copy of a remembered document, and one of a document of its own.
    let copy = b.judge(docs[4].as_str(), |_| true).unwrap();
    assert_eq!(copy.decision.verdict, Verdict::Exact { of: earlier | 4 });
    assert_eq!(
        b.check_insert(100, docs[20].as_str()).unwrap().verdict,
        Verdict::New
    );
    let own = b.judge(docs[20].as_str(), |_| true).unwrap();
    assert_eq!(own.decision.verdict, Verdict::Exact { of: 100 });
    // A remembered document the caller rules out (a page's own earlier
    // version) is not a match.
    let not = b.judge(docs[4].as_str(), |d| d != earlier | 4).unwrap();
    assert_eq!(not.decision.verdict, Verdict::New);
    // Durable once flushed: reopened, the gate still holds them.
    b.flush().unwrap();
    drop(b);
    let mut b = Deduper::open(&dir_b, DedupConfig::default()).unwrap();
    assert_eq!(b.indexed(), 11);
    let copy = b.judge(docs[7].as_str(), |_| true).unwrap();
    assert_eq!(copy.decision.verdict, Verdict::Exact { of: earlier | 7 });
}

/// Template pages that differ in a word or two share every band key, which
/// keeps only its first 16 pages: a copy of a later one, on another host
/// (names there say nothing), is still found as the exact copy of its own
/// page, not as a near copy of an earlier item; and among pages with one
/// text, the one with the copy's name is its original.
#[test]
fn exact_copies_find_their_page_whatever_the_band_tables_hold() {
    let dir = tempdir("exact-table");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let base = words(1, 300);
    let texts: Vec<String> = (0..40)
        .map(|i| format!("{base} item{i} marker{i}"))
        .collect();
    for (i, text) in texts.iter().enumerate() {
        let title = format!("Item{i} in the docs");
        let v = d
            .check_insert(i as u64, titled(&title, text, "docs.a.test"))
            .unwrap();
        assert_eq!(
            v.verdict,
            Verdict::New,
            "item {i}: another name on one host"
        );
    }
    for i in [20, 33, 39] {
        let title = format!("Item{i} in the docs");
        let copy = d
            .judge(titled(&title, &texts[i], "mirror.b.test"), |_| true)
            .unwrap();
        assert_eq!(
            copy.decision.verdict,
            Verdict::Exact { of: i as u64 },
            "copy of {i}"
        );
    }
    // Three items with one text: each copy goes to its own name (once the
    // mirror's host has titles enough to tell its template words).
    for i in 0..10 {
        let (title, text) = (
            format!("Other{i} in the docs"),
            words(20_000 + i * 1000, 300),
        );
        d.check_insert(200 + i, titled(&title, &text, "mirror.b.test"))
            .unwrap();
    }
    let same = words(5_000, 300);
    for i in 100..103 {
        let title = format!("Widget{i} in the docs");
        d.check_insert(i, titled(&title, &same, "docs.a.test"))
            .unwrap();
    }
    let copy = d.judge(
        titled("Widget102 in the docs", &same, "mirror.b.test"),
        |_| true,
    );
    assert_eq!(copy.unwrap().decision.verdict, Verdict::Exact { of: 102 });
}

/// One shop template (400 words) around products' own text (60 words
/// each): texts at Jaccard 0.77 that, but for the template, share
/// nothing. Text alone cannot tell the first products apart (the first
/// pair is joined, and so is the next as long as only one of them is
/// kept: Jaccard 0.77 is where edited copies are, and these titleless
/// products are joined until one's fingerprint is far enough from the
/// first's, the eleventh here; titles keep a shop's products apart on one
/// host);
/// once two are kept, the template is text two kept pages hold, and
/// no later product is a copy of another for holding it, on the shop's
/// host or on a white-label shop's. A copy of a product with three words
/// changed still is, and so is a plain copy.
#[test]
fn text_two_kept_pages_share_makes_no_page_a_copy() {
    let dir = tempdir("template");
    let mut d = Deduper::open(&dir, DedupConfig::default()).unwrap();
    let template = words(500_000, 400);
    let product = |i: u64| format!("{}\n{template}", words(i * 1_000, 60));
    let mut kept = Vec::new();
    for i in 0..40 {
        let host = format!("shop{}.example", i % 2);
        let text = product(i);
        let doc = Doc {
            text: &text,
            title: None,
            host: Some(&host),
            url: None,
        };
        let verdict = d.check_insert(i, doc).unwrap().verdict;
        if kept.len() >= 2 {
            assert_eq!(verdict, Verdict::New, "product {i}, kept {kept:?}");
        }
        if verdict == Verdict::New {
            kept.push(i);
        }
    }
    assert!(kept.len() >= 30, "{kept:?}");
    let last = *kept.last().unwrap();
    let mut copy: Vec<String> = product(last).split(' ').map(String::from).collect();
    for i in [10, 30, 50] {
        copy[i] = "changed".into();
    }
    let copy = copy.join(" ");
    let v = d.check_insert(100, copy.as_str()).unwrap().verdict;
    assert!(matches!(v, Verdict::Near { of, .. } if of == last), "{v:?}");
    let v = d.check_insert(101, product(last).as_str()).unwrap().verdict;
    assert_eq!(v, Verdict::Exact { of: last });
    let _ = std::fs::remove_dir_all(&dir);
}
