//! Fingerprint behaviour on real text, with seeded edits: near copies land
//! close, unrelated texts far. Thresholds sit well outside the measured
//! figures (see `examples/feature_eval.rs`), so a failure means a real
//! regression, not noise.

#[path = "../examples/common/mod.rs"]
mod common;

use common::{Rng, edit_chars, edit_words, pairwise};
use nearcrawl_simhash::{Fingerprint, Options, Simhasher, Weighting, simhash};

fn english_articles() -> Vec<String> {
    common::article_bodies_in(&common::fixture_ground_truth_path())
        .into_iter()
        .map(|(_, b)| b)
        .filter(|b| common::is_english(b) && b.split_whitespace().count() >= 200)
        .collect()
}

fn zh_articles() -> Vec<String> {
    include_str!("data/zh-articles.txt")
        .split("\n=== ")
        .skip(1)
        .map(str::to_string)
        .collect()
}

#[test]
fn deterministic_across_hashers() {
    for text in english_articles().iter().take(5).chain(&zh_articles()) {
        let a = simhash(text);
        let b = Simhasher::default().hash(text);
        let mut reused = Simhasher::default();
        reused.hash("something else first");
        assert_eq!(a, b);
        assert_eq!(a, reused.hash(text));
        assert_eq!(a.fingerprint.distance(b.fingerprint), 0);
    }
}

#[test]
fn english_small_edits_stay_close_unrelated_stay_far() {
    let docs = english_articles();
    assert!(
        docs.len() >= 20,
        "only {} English articles found",
        docs.len()
    );
    let vocab_text = docs.join(" ");
    let vocab: Vec<&str> = vocab_text.split_whitespace().collect();
    let mut h = Simhasher::default();
    let fps: Vec<Fingerprint> = docs.iter().map(|d| h.hash(d).fingerprint).collect();
    let mut rng = Rng(1);
    let near: Vec<u32> = docs
        .iter()
        .zip(&fps)
        .map(|(d, fp)| {
            h.hash(&edit_words(d, 0.02, &vocab, &mut rng))
                .fingerprint
                .distance(*fp)
        })
        .collect();
    let within6 = near.iter().filter(|&&d| d <= 6).count() as f64 / near.len() as f64;
    assert!(
        within6 >= 0.9,
        "2% word edits: only {within6:.2} within distance 6: {near:?}"
    );

    let unrelated = pairwise(&fps);
    let mean = unrelated.iter().sum::<u32>() as f64 / unrelated.len() as f64;
    let min = *unrelated.iter().min().unwrap();
    // Word unigrams of one language share function words: ~25, not 32.
    assert!(
        (20.0..=34.0).contains(&mean),
        "mean unrelated distance {mean}"
    );
    assert!(min > 6, "unrelated articles at distance {min}");
    // Symmetry on real fingerprints.
    for (a, b) in fps.iter().zip(fps.iter().skip(1)) {
        assert_eq!(a.distance(*b), b.distance(*a));
    }
}

#[test]
fn shingled_unrelated_texts_are_about_32_apart() {
    let docs = english_articles();
    let mut h = Simhasher::new(Options {
        shingle: 3,
        weighting: Weighting::Tf,
    })
    .unwrap();
    let fps: Vec<Fingerprint> = docs.iter().map(|d| h.hash(d).fingerprint).collect();
    let unrelated = pairwise(&fps);
    let mean = unrelated.iter().sum::<u32>() as f64 / unrelated.len() as f64;
    assert!(
        (30.0..=34.0).contains(&mean),
        "mean unrelated distance {mean}"
    );
}

#[test]
fn chinese_small_edits_stay_close_unrelated_stay_far() {
    let docs = zh_articles();
    assert_eq!(docs.len(), 4);
    let han: Vec<char> = docs
        .concat()
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .collect();
    let mut h = Simhasher::default();
    for (i, d) in docs.iter().enumerate() {
        let base = h.hash(d);
        assert!(
            base.features > 300,
            "article {i}: {} features",
            base.features
        );
        let mut rng = Rng(i as u64);
        for _ in 0..5 {
            let edited = h.hash(&edit_chars(d, 0.02, &han, &mut rng));
            let dist = base.fingerprint.distance(edited.fingerprint);
            assert!(
                dist <= 8,
                "article {i}: 2% character edits moved {dist} bits"
            );
        }
    }
    let fps: Vec<Fingerprint> = docs.iter().map(|d| h.hash(d).fingerprint).collect();
    for d in pairwise(&fps) {
        assert!(d >= 12, "unrelated Chinese articles at distance {d}");
    }
}

#[test]
fn cjk_text_never_gives_zero_features() {
    for t in ["中", "。中。", "（注）", "ー", "カ", "１"] {
        let h = simhash(t);
        assert!(h.features >= 1, "{t:?}");
    }
}

#[test]
fn empty_whitespace_and_symbols_give_no_features() {
    for t in [
        "",
        " ",
        "\n\t\r ",
        "!?!?",
        "---***",
        "→ ★ ©",
        "\u{3000}。、",
    ] {
        let h = simhash(t);
        assert_eq!(h.features, 0, "{t:?}");
        assert_eq!(h.fingerprint, Fingerprint(0), "{t:?}");
    }
}

mod properties {
    use nearcrawl_simhash::{Options, Simhasher, Weighting, simhash};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_text_never_panics(s in any::<String>(), shingle in 1usize..=8, tf in any::<bool>()) {
            let weighting = if tf { Weighting::Tf } else { Weighting::SublinearTf };
            let mut h = Simhasher::new(Options { shingle, weighting }).unwrap();
            let a = h.hash(&s);
            prop_assert_eq!(a, h.hash(&s));
        }

        #[test]
        fn any_han_character_gives_a_feature(prefix in "[ -~]{0,20}", c in proptest::char::range('\u{4e00}', '\u{9fff}'), suffix in "\\PC{0,20}") {
            let text = format!("{prefix}{c}{suffix}");
            prop_assert!(simhash(&text).features >= 1);
        }

        #[test]
        fn unicode_path_matches_ascii_path(s in "[a-zA-Z0-9 .,;!-]{0,200}") {
            // Ideographic spaces send everything down the Unicode path.
            let slow = s.replace(' ', "\u{3000}");
            prop_assert_eq!(simhash(&s), simhash(&slow));
        }

        #[test]
        fn distance_is_a_metric(a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
            use nearcrawl_simhash::Fingerprint as F;
            let (a, b, c) = (F(a), F(b), F(c));
            prop_assert_eq!(a.distance(b), b.distance(a));
            prop_assert_eq!(a.distance(a), 0);
            prop_assert!(a.distance(c) <= a.distance(b) + b.distance(c));
        }
    }
}
