//! Features, weights and votes: text to [`Simhash`].

use fnv::FnvHashSet;

use crate::accumulate::{UnitVotes, WeightedVotes};
use crate::counts::FeatureCounts;
use crate::fingerprint::Fingerprint;
use crate::hash::{combine, fmix64};
use crate::tokenize::{StandardTokenizer, Tokenizer};

/// The longest shingle (in tokens) a [`Simhasher`] accepts.
pub const MAX_SHINGLE: usize = 8;

/// How much one feature's vote counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Weighting {
    /// Each occurrence votes once: weight = term frequency. Streams, with no
    /// per-document table.
    #[default]
    Tf,
    /// Weight = 1 + ln(tf): repeated features (menus, repeated phrases) count
    /// less. Needs one sort of the document's feature hashes.
    SublinearTf,
}

/// What features a [`Simhasher`] builds and how it weighs them.
///
/// The defaults were chosen by measurement on real article text with planted
/// edits (`examples/feature_eval.rs`; figures in the crate docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Tokens per feature: 1 = unigrams, n > 1 = overlapping n-token shingles.
    /// A text with fewer than n tokens gives one feature of all its tokens.
    pub shingle: usize,
    /// Weight of each feature.
    pub weighting: Weighting,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            shingle: 1,
            weighting: Weighting::SublinearTf,
        }
    }
}

/// The options were out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// `shingle` must be 1 to [`MAX_SHINGLE`].
    #[error("shingle size must be 1 to {MAX_SHINGLE} tokens, got {0}")]
    ShingleSize(usize),
}

/// A fingerprint and how many features voted for it.
///
/// Simhash is unreliable for short texts: with few features a handful of
/// edits flips many bits, and unrelated short texts land close by chance.
/// Callers should treat a small `features` count (below a few dozen)
/// differently, e.g. by exact matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Simhash {
    /// The 64-bit fingerprint.
    pub fingerprint: Fingerprint,
    /// Feature occurrences that voted (0 for text with no tokens, whose
    /// fingerprint is 0).
    pub features: u32,
}

/// Computes simhash fingerprints; reuse one per thread to reuse its buffers.
///
/// Generic over the [`Tokenizer`] so another segmentation can be plugged in.
#[derive(Debug, Clone)]
pub struct Simhasher<T = StandardTokenizer> {
    tokenizer: T,
    options: Options,
    /// Token hashes (as the tokenizer gives them) left out of features.
    stop_tokens: FnvHashSet<u64>,
    /// Feature counts of the current document, for sublinear tf.
    counts: FeatureCounts,
}

impl Simhasher<StandardTokenizer> {
    /// A simhasher with the standard tokenizer.
    pub fn new(options: Options) -> Result<Self, OptionsError> {
        Self::with_tokenizer(StandardTokenizer::new(), options)
    }
}

impl Default for Simhasher<StandardTokenizer> {
    fn default() -> Self {
        Self::new(Options::default()).expect("default options are valid")
    }
}

impl<T: Tokenizer> Simhasher<T> {
    /// A simhasher with a tokenizer of your own.
    pub fn with_tokenizer(tokenizer: T, options: Options) -> Result<Self, OptionsError> {
        if options.shingle == 0 || options.shingle > MAX_SHINGLE {
            return Err(OptionsError::ShingleSize(options.shingle));
        }
        Ok(Simhasher {
            tokenizer,
            options,
            stop_tokens: FnvHashSet::default(),
            counts: FeatureCounts::new(),
        })
    }

    /// Leaves these words out of every feature (stop-word suppression). Each
    /// word is normalized and tokenized like text, so `"The"` drops `the`.
    pub fn with_stop_words<'a>(mut self, words: impl IntoIterator<Item = &'a str>) -> Self {
        for w in words {
            let stop = &mut self.stop_tokens;
            self.tokenizer.tokenize(w, |t| {
                stop.insert(t);
            });
        }
        self
    }

    /// The options in use.
    pub fn options(&self) -> Options {
        self.options
    }

    /// Fingerprints `text`.
    pub fn hash(&mut self, text: &str) -> Simhash {
        match self.options.weighting {
            Weighting::Tf => {
                let mut votes = UnitVotes::new();
                let features = self.for_each_feature(text, |f| votes.add(f));
                Simhash {
                    fingerprint: Fingerprint(votes.finish()),
                    features,
                }
            }
            Weighting::SublinearTf => {
                let mut counts = std::mem::replace(&mut self.counts, FeatureCounts::empty());
                counts.clear();
                let features = self.for_each_feature(text, |f| counts.add(f));
                // Most features occur once: count those with the cheap unit
                // counter and weigh only the repeated ones.
                let mut once = UnitVotes::new();
                let mut votes = WeightedVotes::new();
                for (f, tf) in counts.iter() {
                    if tf == 1 {
                        once.add(f);
                    } else {
                        votes.add(f, 1.0 + (tf as f32).ln());
                    }
                }
                votes.add_unit(&mut once);
                self.counts = counts;
                Simhash {
                    fingerprint: Fingerprint(votes.finish()),
                    features,
                }
            }
        }
    }

    /// Calls `sink` with every finalized feature hash; returns how many.
    #[inline]
    fn for_each_feature(&mut self, text: &str, mut sink: impl FnMut(u64)) -> u32 {
        let n = self.options.shingle;
        let stop = &self.stop_tokens;
        let mut features = 0u32;
        if n == 1 {
            self.tokenizer.tokenize(text, |t| {
                if stop.is_empty() || !stop.contains(&t) {
                    sink(fmix64(t));
                    features += 1;
                }
            });
            return features;
        }
        // Ring buffer of the last n tokens; `next` is the slot to write, which
        // after a write holds the oldest token.
        let mut ring = [0u64; MAX_SHINGLE];
        let mut next = 0usize;
        let mut seen = 0usize;
        self.tokenizer.tokenize(text, |t| {
            if !stop.is_empty() && stop.contains(&t) {
                return;
            }
            ring[next] = t;
            next += 1;
            if next == n {
                next = 0;
            }
            seen += 1;
            if seen >= n {
                let (older, newer) = ring[..n].split_at(next);
                sink(fmix64(combine(newer.iter().chain(older).copied())));
                features += 1;
            }
        });
        if seen > 0 && seen < n {
            sink(fmix64(combine(ring[..seen].iter().copied())));
            features = 1;
        }
        features
    }
}

/// Fingerprints `text` with the default options.
///
/// Builds a fresh [`Simhasher`] per call; to fingerprint many texts, keep
/// one.
pub fn simhash(text: &str) -> Simhash {
    Simhasher::default().hash(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(shingle: usize, weighting: Weighting) -> Options {
        Options { shingle, weighting }
    }

    #[test]
    fn rejects_bad_shingle_sizes() {
        assert_eq!(
            Simhasher::new(opts(0, Weighting::Tf)).unwrap_err(),
            OptionsError::ShingleSize(0)
        );
        assert!(Simhasher::new(opts(MAX_SHINGLE + 1, Weighting::Tf)).is_err());
        assert!(Simhasher::new(opts(MAX_SHINGLE, Weighting::Tf)).is_ok());
    }

    #[test]
    fn feature_counts() {
        for w in [Weighting::Tf, Weighting::SublinearTf] {
            let mut u = Simhasher::new(opts(1, w)).unwrap();
            assert_eq!(u.hash("a b c d").features, 4);
            let mut s = Simhasher::new(opts(3, w)).unwrap();
            assert_eq!(s.hash("a b c d").features, 2);
            assert_eq!(s.hash("a b").features, 1);
            assert_eq!(s.hash("").features, 0);
            assert_eq!(s.hash("").fingerprint, Fingerprint(0));
        }
    }

    #[test]
    fn single_feature_text_is_that_feature_hash() {
        let mut s = Simhasher::new(opts(1, Weighting::Tf)).unwrap();
        let h = fmix64(crate::hash::fnv1a(b"word"));
        assert_eq!(s.hash("Word").fingerprint, Fingerprint(h));
        let mut w = Simhasher::new(opts(1, Weighting::SublinearTf)).unwrap();
        assert_eq!(w.hash("word word").fingerprint, Fingerprint(h));
    }

    #[test]
    fn shingles_follow_token_order() {
        let mut s = Simhasher::new(opts(2, Weighting::Tf)).unwrap();
        // Same bag of words, different order: unigrams agree, bigrams not.
        let a = "alpha beta gamma delta epsilon zeta eta theta";
        let b = "theta eta zeta epsilon delta gamma beta alpha";
        assert_ne!(s.hash(a).fingerprint, s.hash(b).fingerprint);
        let mut u = Simhasher::new(opts(1, Weighting::Tf)).unwrap();
        assert_eq!(u.hash(a).fingerprint, u.hash(b).fingerprint);
    }

    #[test]
    fn ring_buffer_matches_naive_shingles() {
        let words: Vec<String> = (0..40u32)
            .map(|i| format!("w{}x", char::from(b'a' + (i * 7 % 13) as u8)))
            .collect();
        let text = words.join(" ");
        for n in 2..=MAX_SHINGLE {
            let toks: Vec<u64> = words
                .iter()
                .map(|w| crate::hash::fnv1a(w.as_bytes()))
                .collect();
            let mut votes = UnitVotes::new();
            for win in toks.windows(n) {
                votes.add(fmix64(combine(win.iter().copied())));
            }
            let mut s = Simhasher::new(opts(n, Weighting::Tf)).unwrap();
            assert_eq!(
                s.hash(&text).fingerprint,
                Fingerprint(votes.finish()),
                "n={n}"
            );
        }
    }

    #[test]
    fn stop_words_are_left_out() {
        let mut plain = Simhasher::new(opts(1, Weighting::Tf)).unwrap();
        let mut stop = Simhasher::new(opts(1, Weighting::Tf))
            .unwrap()
            .with_stop_words(["The", "of"]);
        let with = stop.hash("the history of the world");
        assert_eq!(with.features, 2);
        assert_eq!(with.fingerprint, plain.hash("history world").fingerprint);
    }
}
