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
        self.hash_from(text)
    }

    /// [`hash`](Simhasher::hash) of the text `tokens` were read from.
    pub fn hash_tokens(&mut self, tokens: &Tokens) -> Simhash {
        self.hash_from(tokens)
    }

    /// Reads the tokens of `text` into `tokens` (what was there before
    /// goes), for [`hash_tokens`](Simhasher::hash_tokens) and the other
    /// `_tokens` methods of this simhasher and of any other with the same
    /// tokenizer.
    pub fn read_tokens(&mut self, text: &str, tokens: &mut Tokens) {
        tokens.hashes.clear();
        tokens.chars.clear();
        tokens.text_bytes = text.len();
        self.tokenizer.tokenize_measured(text, |t, chars| {
            tokens.hashes.push(t);
            tokens.chars.push(chars);
        });
    }

    fn hash_from<S: TokenSource + ?Sized>(&mut self, source: &S) -> Simhash {
        match self.options.weighting {
            Weighting::Tf => {
                let mut votes = UnitVotes::new();
                let features = self.for_each_feature_batch(source, |fs| votes.add_all(fs));
                Simhash {
                    fingerprint: Fingerprint(votes.finish()),
                    features,
                }
            }
            Weighting::SublinearTf => {
                let mut counts = std::mem::replace(&mut self.counts, FeatureCounts::new());
                // About one distinct feature per 8 bytes of an article; far
                // fewer in a large text, whose words repeat (a 100 MB text
                // of articles has 1 in 160), so past that the table grows as
                // it fills instead of starting at its size for all-distinct.
                counts.reset((source.text_bytes() / 8).min(MAX_EXPECTED_FEATURES));
                let features = self.for_each_feature_batch(source, |fs| counts.add_all(fs));
                // Features of equal tf share a weight: count each class with
                // the cheap unit counter, then weigh the classes. Most
                // features have tf 1; only tf above the classes goes one by one.
                let mut classes: [UnitVotes; TF_CLASSES] =
                    std::array::from_fn(|_| UnitVotes::new());
                let mut votes = WeightedVotes::new();
                for (f, tf) in counts.iter() {
                    match classes.get_mut(tf as usize - 1) {
                        Some(class) => class.add(f),
                        None => votes.add(f, sublinear(tf)),
                    }
                }
                for (i, class) in classes.iter_mut().enumerate() {
                    votes.add_unit(class, sublinear(i as u32 + 1));
                }
                self.counts = counts;
                Simhash {
                    fingerprint: Fingerprint(votes.finish()),
                    features,
                }
            }
        }
    }

    /// Calls `sink` with the 64-bit hash of every feature of `text` (the
    /// unigrams or shingles the options ask for, finalized, in text order,
    /// stop words left out); returns how many. Other sketches of the same
    /// features (MinHash, exact-content hashes) build on this.
    pub fn features(&mut self, text: &str, sink: impl FnMut(u64)) -> u32 {
        self.features_from(text, sink)
    }

    /// [`features`](Simhasher::features) of the text `tokens` were read
    /// from.
    pub fn features_of_tokens(&mut self, tokens: &Tokens, sink: impl FnMut(u64)) -> u32 {
        self.features_from(tokens, sink)
    }

    fn features_from<S>(&mut self, source: &S, mut sink: impl FnMut(u64)) -> u32
    where
        S: TokenSource + ?Sized,
    {
        self.for_each_feature_batch(source, |fs| fs.iter().for_each(|&f| sink(f)))
    }

    /// [`features`](Simhasher::features), each with what it weighs: the
    /// token's length in characters for unigrams without stop words (see
    /// [`Tokenizer::tokenize_measured`]), 1 for shingles or with stop words.
    pub fn features_measured(&mut self, text: &str, sink: impl FnMut(u64, u32)) -> u32 {
        self.features_measured_from(text, sink)
    }

    /// [`features_measured`](Simhasher::features_measured) of the text
    /// `tokens` were read from.
    pub fn features_measured_of_tokens(
        &mut self,
        tokens: &Tokens,
        sink: impl FnMut(u64, u32),
    ) -> u32 {
        self.features_measured_from(tokens, sink)
    }

    fn features_measured_from<S>(&mut self, source: &S, mut sink: impl FnMut(u64, u32)) -> u32
    where
        S: TokenSource + ?Sized,
    {
        if self.options.shingle > 1 || !self.stop_tokens.is_empty() {
            return self.features_from(source, |f| sink(f, 1));
        }
        let mut n = 0;
        source.each_measured(&mut self.tokenizer, |t, chars| {
            n += 1;
            sink(fmix64(t), chars);
        });
        n
    }

    /// Calls `sink` with batches of finalized feature hashes, in text
    /// order; returns how many.
    ///
    /// Tokens are gathered in batches first: the tokenizer's loop stays small
    /// and branchy, the feature loop small and branch-free, and the table
    /// look-ups of one batch overlap instead of waiting on the tokenizer.
    #[inline]
    fn for_each_feature_batch<S>(&mut self, source: &S, mut sink: impl FnMut(&[u64])) -> u32
    where
        S: TokenSource + ?Sized,
    {
        let mut shingles = Shingles::new(self.options.shingle, &self.stop_tokens);
        let mut batch = [0u64; BATCH];
        let mut len = 0;
        source.each(&mut self.tokenizer, |t| {
            batch[len] = t;
            len += 1;
            if len == BATCH {
                shingles.push(&mut batch, &mut sink);
                len = 0;
            }
        });
        shingles.push(&mut batch[..len], &mut sink);
        shingles.finish(&mut sink)
    }
}

/// Tokens gathered before their features are made.
const BATCH: usize = 256;

/// A text's tokens as a [`Simhasher`]'s tokenizer read them
/// ([`Simhasher::read_tokens`]), each with its length in characters, for
/// several simhashers with the same tokenizer (a fingerprint of unigrams
/// and a sketch of shingles): reading the text is most of what making its
/// features costs, and this way it is read once. 12 bytes a token (about
/// twice the text's size): for texts of ordinary size, streaming the
/// largest instead.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    hashes: Vec<u64>,
    chars: Vec<u32>,
    /// The text's length in bytes, which sizes the table of its features
    /// as reading the text would.
    text_bytes: usize,
}

impl Tokens {
    /// How many tokens were read.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

/// Where a simhasher's tokens come from: a text its tokenizer reads, or
/// tokens read before.
trait TokenSource {
    fn text_bytes(&self) -> usize;
    fn each<T: Tokenizer>(&self, tokenizer: &mut T, emit: impl FnMut(u64));
    fn each_measured<T: Tokenizer>(&self, tokenizer: &mut T, emit: impl FnMut(u64, u32));
}

impl TokenSource for str {
    fn text_bytes(&self) -> usize {
        self.len()
    }

    #[inline]
    fn each<T: Tokenizer>(&self, tokenizer: &mut T, emit: impl FnMut(u64)) {
        tokenizer.tokenize(self, emit);
    }

    fn each_measured<T: Tokenizer>(&self, tokenizer: &mut T, emit: impl FnMut(u64, u32)) {
        tokenizer.tokenize_measured(self, emit);
    }
}

impl TokenSource for Tokens {
    fn text_bytes(&self) -> usize {
        self.text_bytes
    }

    #[inline]
    fn each<T: Tokenizer>(&self, _: &mut T, emit: impl FnMut(u64)) {
        self.hashes.iter().copied().for_each(emit);
    }

    fn each_measured<T: Tokenizer>(&self, _: &mut T, mut emit: impl FnMut(u64, u32)) {
        for (&t, &chars) in self.hashes.iter().zip(&self.chars) {
            emit(t, chars);
        }
    }
}

/// Turns token hashes into finalized feature hashes: unigrams, or n-token
/// shingles through a window of the last n tokens.
struct Shingles<'a> {
    n: usize,
    stop: &'a FnvHashSet<u64>,
    /// The tokens so far, the last at the end: the whole array shifts by
    /// one a token (a fixed move, inlined), and a shingle is its last `n`,
    /// read in one pass (a ring read in two parts, chained, cost more than
    /// the hash it fed).
    window: [u64; MAX_SHINGLE],
    seen: usize,
    features: u32,
}

impl<'a> Shingles<'a> {
    fn new(n: usize, stop: &'a FnvHashSet<u64>) -> Self {
        Shingles {
            n,
            stop,
            window: [0; MAX_SHINGLE],
            seen: 0,
            features: 0,
        }
    }

    /// Turns a batch of tokens into features (in place: there are never more
    /// features than tokens) and passes them on.
    #[inline]
    fn push(&mut self, tokens: &mut [u64], sink: &mut impl FnMut(&[u64])) {
        if self.n == 1 && self.stop.is_empty() {
            tokens.iter_mut().for_each(|t| *t = fmix64(*t));
            self.features += tokens.len() as u32;
            sink(tokens);
            return;
        }
        let mut out = 0;
        for k in 0..tokens.len() {
            let t = tokens[k];
            if !self.stop.is_empty() && self.stop.contains(&t) {
                continue;
            }
            if self.n == 1 {
                tokens[out] = fmix64(t);
                out += 1;
                continue;
            }
            self.window.copy_within(1.., 0);
            self.window[MAX_SHINGLE - 1] = t;
            self.seen += 1;
            if self.seen >= self.n {
                let shingle = &self.window[MAX_SHINGLE - self.n..];
                tokens[out] = fmix64(combine(shingle.iter().copied()));
                out += 1;
            }
        }
        self.features += out as u32;
        sink(&tokens[..out]);
    }

    /// A text shorter than one shingle gives one feature of all its tokens.
    fn finish(self, sink: &mut impl FnMut(&[u64])) -> u32 {
        if self.n > 1 && self.seen > 0 && self.seen < self.n {
            let tokens = &self.window[MAX_SHINGLE - self.seen..];
            sink(&[fmix64(combine(tokens.iter().copied()))]);
            return 1;
        }
        self.features
    }
}

/// The most distinct features a table is first sized for (256 KB of text).
const MAX_EXPECTED_FEATURES: usize = 1 << 15;

/// Term frequencies 1 to this many get a unit counter each.
const TF_CLASSES: usize = 4;

#[inline]
fn sublinear(tf: u32) -> f32 {
    1.0 + (tf as f32).ln()
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
    fn measured_features_are_the_features_with_each_tokens_characters() {
        let text = "Uses of java.io.ByteArrayOutputStream: 中文 Ünïcode ok, ภาษาไทย";
        let mut h = Simhasher::default();
        let mut plain = Vec::new();
        h.features(text, |f| plain.push(f));
        let mut measured = Vec::new();
        h.features_measured(text, |f, chars| measured.push((f, chars)));
        let features: Vec<u64> = measured.iter().map(|m| m.0).collect();
        assert_eq!(features, plain);
        let chars: Vec<u32> = measured.iter().map(|m| m.1).collect();
        // Thai gives a token per pair of adjacent letters.
        assert_eq!(chars[..9], [4, 2, 4, 2, 21, 1, 1, 7, 2]);
        assert!(chars[9..].iter().all(|&c| c == 2), "{chars:?}");
        // Shingles weigh 1 each.
        let mut h = Simhasher::new(Options {
            shingle: 3,
            weighting: Weighting::Tf,
        })
        .unwrap();
        h.features_measured(text, |_, chars| assert_eq!(chars, 1));
    }

    #[test]
    fn tokens_read_once_give_what_the_text_gives() {
        let texts = [
            "",
            "one",
            "Uses of java.io.ByteArrayOutputStream: 中文 Ünïcode ok, ภาษาไทย",
            "the the the cat sat on the mat, and the dog sat on the cat",
        ];
        let stop = |s: Simhasher| s.with_stop_words(["the"]);
        for options in [
            opts(1, Weighting::SublinearTf),
            opts(1, Weighting::Tf),
            opts(3, Weighting::Tf),
        ] {
            for with_stop in [false, true] {
                let mut h = Simhasher::new(options).unwrap();
                if with_stop {
                    h = stop(h);
                }
                let mut tokens = Tokens::default();
                for text in texts {
                    h.read_tokens(text, &mut tokens);
                    assert_eq!(h.hash_tokens(&tokens), h.hash(text), "{text}");
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let n = h.features(text, |f| a.push(f));
                    assert_eq!(h.features_of_tokens(&tokens, |f| b.push(f)), n);
                    assert_eq!(a, b);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let n = h.features_measured(text, |f, c| a.push((f, c)));
                    assert_eq!(
                        h.features_measured_of_tokens(&tokens, |f, c| b.push((f, c))),
                        n
                    );
                    assert_eq!(a, b);
                }
            }
        }
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
    fn shingle_window_matches_naive_shingles() {
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
            // Fewer tokens than a shingle: one feature of them all.
            let short = &words[..n - 1];
            let mut got = Vec::new();
            assert_eq!(s.features(&short.join(" "), |f| got.push(f)), 1);
            let hashes = toks[..n - 1].iter().copied();
            assert_eq!(got, vec![fmix64(combine(hashes))], "n={n}");
        }
    }

    #[test]
    fn features_are_the_shingle_hashes() {
        let mut s = Simhasher::new(opts(2, Weighting::Tf)).unwrap();
        let mut got = Vec::new();
        assert_eq!(s.features("a b c", |f| got.push(f)), 2);
        let t = |w: &str| crate::hash::fnv1a(w.as_bytes());
        assert_eq!(
            got,
            vec![
                fmix64(combine([t("a"), t("b")])),
                fmix64(combine([t("b"), t("c")]))
            ]
        );
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
