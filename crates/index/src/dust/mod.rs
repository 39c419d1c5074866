//! Duplicates predicted from URLs ("Do not crawl in the DUST", Bar-Yossef,
//! Keidar and Schonfeld, WWW 2007): URL rewrite rules learned from the
//! duplicates the gate confirms, used to skip a URL whose page a proven
//! rule says was written already.
//!
//! [`DustRules`] watches the gate's verdicts in the order it gives them:
//! - a duplicate and its original are a pair of URLs with one text: every
//!   rule the pair differs by ([`rule::mine`]) gains a supporting pair;
//! - a page the gate keeps is a counterexample of every rule that maps its
//!   URL to a page already written (two pages the rule calls one are not);
//! - a rule is **proven** once it has [`MIN_SUPPORT`] supporting pairs and
//!   at most one counterexample per [`PAIRS_PER_COUNTEREXAMPLE`] of them
//!   (a parameter dropped with any value, once pairs with
//!   [`MIN_VALUES`] of its values agree); a proven rule whose
//!   counterexamples pass that share is **retired** for good, and the URLs
//!   it skipped are to be fetched after all ([`DustRules::retired`]);
//! - [`DustRules::predict`] names, for a URL about to be fetched, the
//!   written page a proven rule maps it to; one URL in as many as pairs
//!   support the rule (by its hash; at least [`CHECK_ONE_IN`], at most
//!   [`CHECK_ONE_IN_PROVEN`]) is fetched anyway, so a rule keeps being
//!   checked.
//!
//! Parameters that change the page (`page=2`, `id=7` of another story,
//! `lang=de`) never gather supporting pairs: their pages are not
//! duplicates. The gate's order decides everything, so every replica of a
//! shared gate that applies the same verdicts holds the same rules.
//!
//! ```
//! use nearcrawl_index::dust::{DustRules, Predicted};
//!
//! let mut rules = DustRules::default();
//! for n in 0..10 {
//!     rules.observe_new(&format!("http://h/story_{n}.html"));
//!     let (dup, original) = (format!("http://h/story?id={n}"), format!("http://h/story_{n}.html"));
//!     rules.observe_duplicate(&dup, &original);
//! }
//! rules.observe_new("http://h/story_40.html");
//! match rules.predict("http://h/story?id=40") {
//!     Predicted::Skip { target, .. } => assert_eq!(target, "http://h/story_40.html"),
//!     other => panic!("{other:?}"),
//! }
//! // No page written there: fetched.
//! assert_eq!(rules.predict("http://h/story?id=41"), Predicted::Fetch);
//! ```

pub mod rule;

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use url::Url;

pub use rule::{Change, Rule};

/// Supporting pairs a rule needs before it is used.
pub const MIN_SUPPORT: u64 = 8;
/// A proven rule allows one counterexample per this many supporting pairs
/// (2%): the gate itself keeps a few near copies apart, and a rule holding
/// for 49 pairs in 50 saves 49 fetches for one page not fetched.
pub const PAIRS_PER_COUNTEREXAMPLE: u64 = 50;
/// Distinct values a parameter dropped with any value needs: one value
/// seen (`page=1` ↔ no `page`) is no evidence for the others.
pub const MIN_VALUES: usize = 3;
/// A URL a rule would skip is fetched to check it once in as many URLs as
/// pairs agree with the rule, but never more often than once in this
/// many...
pub const CHECK_ONE_IN: u64 = 16;
/// ...nor less often than once in this many. The more pairs a rule holds for,
/// the better its share of counterexamples is known, so each check that
/// agrees makes the next one rarer (a step at one support would leave
/// most rules of a small site below it); a rule whose pages change still
/// meets a counterexample within a few hundred URLs, and the URLs it
/// skipped meanwhile are fetched once it retires.
pub const CHECK_ONE_IN_PROVEN: u64 = 64;
/// Rules kept at most (each pair mines at most two).
pub const MAX_RULES: usize = 50_000;

/// Where a rule stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Learning,
    Proven,
    Retired,
}

/// A rule and its evidence.
#[derive(Debug, Clone)]
pub struct RuleFigures {
    pub rule: Rule,
    pub support: u64,
    pub counterexamples: u64,
    /// URLs it was used to skip.
    pub skipped: u64,
    pub standing: Standing,
    /// Hashes of the distinct values a parameter rule saw (up to
    /// [`MIN_VALUES`]).
    values: Vec<u64>,
}

impl RuleFigures {
    fn earned(&self) -> bool {
        let any_value =
            matches!(&self.rule.change, Change::Drop { values, .. } if values.is_empty());
        self.support >= MIN_SUPPORT
            && self.counterexamples * PAIRS_PER_COUNTEREXAMPLE <= self.support
            && (!any_value || self.values.len() >= MIN_VALUES)
    }
}

/// What [`DustRules::predict`] says of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Predicted {
    /// Fetch it: no proven rule maps it to a page written.
    Fetch,
    /// Fetch it to check the proven rule that would skip it.
    Check { rule: usize },
    /// Do not fetch it: rule `rule` maps it to `target`, written.
    Skip { target: String, rule: usize },
}

#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type HashSet64 = HashSet<u64, BuildHasherDefault<IdentityHasher>>;

/// The rules learned so far, and the URLs of the pages written (by hash).
#[derive(Default)]
pub struct DustRules {
    rules: Vec<RuleFigures>,
    ids: HashMap<Rule, usize>,
    by_key: HashMap<String, Vec<usize>>,
    written: HashSet64,
    /// Rules proven and not retired: none, and nothing is predicted.
    proven: usize,
    /// Rules retired since [`retired`](DustRules::retired) was asked.
    retired: Vec<usize>,
}

impl std::fmt::Debug for DustRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DustRules")
            .field("rules", &self.rules.len())
            .field("written", &self.written.len())
            .finish()
    }
}

fn url_hash(url: &str) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(url.as_bytes());
    h.finish()
}

impl DustRules {
    /// A page written at `url` (a document of the gate): a target rules
    /// may name from now on, and a counterexample of every rule that maps
    /// `url` to another page written. True if a rule retired.
    pub fn observe_new(&mut self, url: &str) -> bool {
        let before = self.retired.len();
        let parsed = if self.rules.is_empty() {
            None
        } else {
            Url::parse(url).ok()
        };
        if let Some(u) = parsed {
            for id in self.candidates(&u) {
                let target = self.rules[id].rule.apply(&u);
                if target.is_some_and(|t| t.as_str() != url && self.is_written(t.as_str())) {
                    self.rules[id].counterexamples += 1;
                    self.settle(id);
                }
            }
        }
        self.written.insert(url_hash(url));
        self.retired.len() > before
    }

    /// A page written earlier (in a run before this one): only a target.
    pub fn add_written(&mut self, url: &str) {
        self.written.insert(url_hash(url));
    }

    /// A duplicate at `url` of the page at `original`: a supporting pair
    /// of every rule they differ by.
    pub fn observe_duplicate(&mut self, url: &str, original: &str) {
        let (Ok(u), Ok(o)) = (Url::parse(url), Url::parse(original)) else {
            return;
        };
        for rule in rule::mine(&u, &o) {
            // Only a rule that maps the pair (a guard: the first match of
            // a segment swap may be another place).
            if rule.apply(&u).is_none_or(|t| t != o) {
                continue;
            }
            let values = match &rule.change {
                Change::Drop { values, .. } => Some(url_hash(&values.join("\u{1e}"))),
                _ => None,
            };
            let Some(id) = self.id_of(rule) else { continue };
            self.rules[id].support += 1;
            self.settle(id);
            let (Some(v), Some(any)) = (values, self.any_value_of(id)) else {
                continue;
            };
            let figures = &mut self.rules[any];
            figures.support += 1;
            if figures.values.len() < MIN_VALUES && !figures.values.contains(&v) {
                figures.values.push(v);
            }
            self.settle(any);
        }
    }

    /// What to do with `url`, about to be fetched.
    pub fn predict(&self, url: &str) -> Predicted {
        if self.proven == 0 {
            return Predicted::Fetch;
        }
        let Ok(u) = Url::parse(url) else {
            return Predicted::Fetch;
        };
        let best = self
            .candidates(&u)
            .into_iter()
            .filter(|&id| self.rules[id].standing == Standing::Proven)
            .filter_map(|id| {
                let target = self.rules[id].rule.apply(&u)?;
                let ok = target.as_str() != url && self.is_written(target.as_str());
                ok.then_some((id, target))
            })
            .max_by_key(|(id, _)| self.rules[*id].support);
        match best {
            None => Predicted::Fetch,
            Some((rule, _)) if url_hash(url).is_multiple_of(self.check_one_in(rule)) => {
                Predicted::Check { rule }
            }
            Some((rule, target)) => Predicted::Skip {
                target: target.into(),
                rule,
            },
        }
    }

    /// How often a URL `rule` would skip is fetched to check it.
    fn check_one_in(&self, rule: usize) -> u64 {
        (self.rules[rule].support).clamp(CHECK_ONE_IN, CHECK_ONE_IN_PROVEN)
    }

    /// Counts a URL skipped by `rule`. A URL predicted while its rule
    /// retired (its fetch task asked before) is to be queued again too: the
    /// rule is named by [`retired`](DustRules::retired) once more.
    pub fn note_skipped(&mut self, rule: usize) {
        let Some(r) = self.rules.get_mut(rule) else {
            return;
        };
        r.skipped += 1;
        if r.standing == Standing::Retired && !self.retired.contains(&rule) {
            self.retired.push(rule);
        }
    }

    /// The rules retired since the last call (`all`: every retired rule,
    /// at a start after a crash): the URLs they skipped are to be fetched,
    /// unless [`still_skipped_by`](DustRules::still_skipped_by) another.
    pub fn retired(&mut self, all: bool) -> Vec<usize> {
        if !all {
            return std::mem::take(&mut self.retired);
        }
        self.retired.clear();
        let rules = self.rules.iter().enumerate();
        rules
            .filter(|(_, r)| r.standing == Standing::Retired)
            .map(|(id, _)| id)
            .collect()
    }

    /// Whether a rule retired since [`retired`](DustRules::retired) was
    /// last asked.
    pub fn has_retired(&self) -> bool {
        !self.retired.is_empty()
    }

    /// The proven rule that skips `url` still (a URL a retired rule
    /// skipped stays skipped by it, and is queued again if that one
    /// retires too), if any.
    pub fn still_skipped_by(&self, url: &str) -> Option<usize> {
        match self.predict(url) {
            Predicted::Skip { rule, .. } => Some(rule),
            Predicted::Check { .. } | Predicted::Fetch => None,
        }
    }

    /// Whether a page was written at `url`.
    pub fn is_written(&self, url: &str) -> bool {
        self.written.contains(&url_hash(url))
    }

    /// Every rule, by id.
    pub fn rules(&self) -> &[RuleFigures] {
        &self.rules
    }

    /// The rule of an id [`predict`](DustRules::predict) gave.
    pub fn rule(&self, id: usize) -> Option<&RuleFigures> {
        self.rules.get(id)
    }

    /// The rules and their figures, one line each (the pages written are
    /// not in it: see [`add_written`](DustRules::add_written)).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        for r in &self.rules {
            let standing = match r.standing {
                Standing::Learning => 'l',
                Standing::Proven => 'p',
                Standing::Retired => 'r',
            };
            let values: Vec<String> = r.values.iter().map(|v| format!("{v:x}")).collect();
            out.push_str(&format!(
                "{standing}\t{}\t{}\t{}\t{}\t{}\n",
                r.support,
                r.counterexamples,
                r.skipped,
                values.join(","),
                r.rule.encode()
            ));
        }
        out.into_bytes()
    }

    /// Rules read back from [`to_bytes`](DustRules::to_bytes); None if
    /// they do not parse.
    pub fn from_bytes(bytes: &[u8]) -> Option<DustRules> {
        let mut rules = DustRules::default();
        for line in std::str::from_utf8(bytes).ok()?.lines() {
            let mut f = line.splitn(6, '\t');
            let standing = match f.next()? {
                "l" => Standing::Learning,
                "p" => Standing::Proven,
                "r" => Standing::Retired,
                _ => return None,
            };
            let support = f.next()?.parse().ok()?;
            let counterexamples = f.next()?.parse().ok()?;
            let skipped = f.next()?.parse().ok()?;
            let values = f.next()?;
            let values = values
                .split(',')
                .filter(|v| !v.is_empty())
                .map(|v| u64::from_str_radix(v, 16).ok())
                .collect::<Option<Vec<u64>>>()?;
            let rule = Rule::decode(f.next()?)?;
            let id = rules.id_of(rule)?;
            rules.proven += usize::from(standing == Standing::Proven);
            rules.rules[id] = RuleFigures {
                support,
                counterexamples,
                skipped,
                standing,
                values,
                ..rules.rules[id].clone()
            };
        }
        Some(rules)
    }

    /// The rules that may apply to `u`.
    fn candidates(&self, u: &Url) -> Vec<usize> {
        let mut ids: Vec<usize> = rule::url_keys(u)
            .iter()
            .filter_map(|k| self.by_key.get(k))
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The id of `rule`, made if new (None once [`MAX_RULES`] are kept).
    fn id_of(&mut self, rule: Rule) -> Option<usize> {
        if let Some(&id) = self.ids.get(&rule) {
            return Some(id);
        }
        if self.rules.len() >= MAX_RULES {
            return None;
        }
        let id = self.rules.len();
        let mut keys = rule.keys();
        keys.sort();
        keys.dedup();
        for k in keys {
            self.by_key.entry(k).or_default().push(id);
        }
        self.ids.insert(rule.clone(), id);
        self.rules.push(RuleFigures {
            rule,
            support: 0,
            counterexamples: 0,
            skipped: 0,
            standing: Standing::Learning,
            values: Vec::new(),
        });
        Some(id)
    }

    /// The any-value rule of a parameter rule with values (made if new).
    fn any_value_of(&mut self, id: usize) -> Option<usize> {
        let Change::Drop { names, values } = &self.rules[id].rule.change else {
            return None;
        };
        if values.is_empty() {
            return None;
        }
        let any = Rule {
            change: Change::Drop {
                names: names.clone(),
                values: Vec::new(),
            },
            kind: self.rules[id].rule.kind.clone(),
        };
        self.id_of(any)
    }

    /// Moves a rule along: learning to proven once earned, proven to
    /// retired once it is not.
    fn settle(&mut self, id: usize) {
        let earned = self.rules[id].earned();
        let r = &mut self.rules[id];
        match r.standing {
            Standing::Learning if earned => {
                r.standing = Standing::Proven;
                self.proven += 1;
            }
            Standing::Proven if !earned => {
                r.standing = Standing::Retired;
                self.proven -= 1;
                self.retired.push(id);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` stories, each written at `story_N.html` and a duplicate at
    /// `story?id=N`.
    fn stories(rules: &mut DustRules, range: std::ops::Range<u32>) {
        for n in range {
            rules.observe_new(&format!("http://h/story_{n}.html"));
            rules.observe_duplicate(
                &format!("http://h/story?id={n}"),
                &format!("http://h/story_{n}.html"),
            );
        }
    }

    fn skipped(rules: &DustRules, url: &str) -> bool {
        matches!(
            rules.predict(url),
            Predicted::Skip { .. } | Predicted::Check { .. }
        )
    }

    #[test]
    fn a_rule_is_used_once_proven_and_only_for_pages_written() {
        let mut rules = DustRules::default();
        stories(&mut rules, 0..(MIN_SUPPORT as u32 - 1));
        rules.observe_new("http://h/story_100.html");
        assert!(!skipped(&rules, "http://h/story?id=100"), "not proven yet");
        stories(&mut rules, 50..51);
        assert!(skipped(&rules, "http://h/story?id=100"));
        assert!(
            !skipped(&rules, "http://h/story?id=101"),
            "no page written there"
        );
        // Both ways.
        rules.observe_new("http://h/story?id=200");
        assert!(skipped(&rules, "http://h/story_200.html"));
    }

    #[test]
    fn a_counterexample_past_the_share_retires_a_rule() {
        let mut rules = DustRules::default();
        stories(&mut rules, 0..40);
        assert!(rules.retired(false).is_empty());
        // A story kept at `?id=7`, whose `story_7.html` was written.
        let retired = rules.observe_new("http://h/story?id=7");
        assert!(retired, "1 in 40 is past one in 50");
        let ids = rules.retired(false);
        assert!(!ids.is_empty());
        assert!(
            ids.iter()
                .all(|&id| rules.rules()[id].standing == Standing::Retired)
        );
        rules.observe_new("http://h/story_300.html");
        assert!(!skipped(&rules, "http://h/story?id=300"));
        // Retired for good.
        stories(&mut rules, 100..300);
        assert!(!skipped(&rules, "http://h/story?id=300"));
    }

    #[test]
    fn a_skip_noted_after_its_rule_retired_names_the_rule_again() {
        let mut rules = DustRules::default();
        stories(&mut rules, 0..40);
        rules.observe_new("http://h/story_300.html");
        let Predicted::Skip { rule, .. } = rules.predict("http://h/story?id=300") else {
            panic!("skipped");
        };
        assert!(rules.observe_new("http://h/story?id=7"), "retired");
        assert!(rules.retired(false).contains(&rule));
        // The skip asked before the retirement is committed after it.
        rules.note_skipped(rule);
        assert_eq!(rules.retired(false), vec![rule]);
    }

    #[test]
    fn one_counterexample_in_fifty_pairs_is_allowed() {
        let mut rules = DustRules::default();
        stories(&mut rules, 0..100);
        assert!(!rules.observe_new("http://h/story?id=7"));
        rules.observe_new("http://h/story_500.html");
        assert!(skipped(&rules, "http://h/story?id=500"));
    }

    #[test]
    fn a_parameter_needs_three_values_before_any_value_is_dropped() {
        let mut rules = DustRules::default();
        // `page=1` is the thread itself: only that value becomes a rule.
        for n in 0..20 {
            rules.observe_new(&format!("http://h/thread/{n}"));
            rules.observe_duplicate(
                &format!("http://h/thread/{n}?page=1"),
                &format!("http://h/thread/{n}"),
            );
        }
        rules.observe_new("http://h/thread/99");
        assert!(skipped(&rules, "http://h/thread/99?page=1"));
        assert!(
            !skipped(&rules, "http://h/thread/99?page=2"),
            "page 2 is its own page"
        );
        // A session id takes any value once three values agree.
        for n in 0..20 {
            let sid = format!("s{}", n % 3);
            rules.observe_duplicate(
                &format!("http://h/thread/{n}?sid={sid}"),
                &format!("http://h/thread/{n}"),
            );
        }
        assert!(skipped(&rules, "http://h/thread/99?sid=fresh"));
    }

    #[test]
    fn checks_thin_out_as_a_rule_gains_support() {
        // Support 10: one in 16 (the most often); 32: one in 32; 200: one
        // in 64 (the least often). 1,600 URLs each.
        for (support, expected) in [(10u32, 100), (32, 50), (200, 25)] {
            let mut rules = DustRules::default();
            stories(&mut rules, 0..support);
            let mut checks = 0;
            for n in 1000..2600 {
                rules.observe_new(&format!("http://h/story_{n}.html"));
                match rules.predict(&format!("http://h/story?id={n}")) {
                    Predicted::Check { .. } => checks += 1,
                    Predicted::Skip { .. } => {}
                    Predicted::Fetch => panic!("{n}"),
                }
            }
            let (low, high) = (expected * 6 / 10, expected * 14 / 10);
            assert!(
                (low..=high).contains(&checks),
                "support {support}: {checks} of 1600, expected ~{expected}"
            );
        }
    }

    #[test]
    fn a_rule_between_two_numbered_directories_is_tried_on_their_urls_only() {
        let mut rules = DustRules::default();
        // Neighbouring trees found alike: a rule each, for their kind of
        // page (`x`) and for any.
        for n in 0..200 {
            rules.observe_new(&format!("http://h/d/{}/x", 2 * n));
            rules.observe_duplicate(
                &format!("http://h/d/{}/x", 2 * n + 1),
                &format!("http://h/d/{}/x", 2 * n),
            );
        }
        assert_eq!(rules.rules().len(), 400);
        let tried =
            |rules: &DustRules, url: &str| rules.candidates(&Url::parse(url).unwrap()).len();
        assert_eq!(tried(&rules, "http://h/d/100001/x"), 0);
        assert_eq!(tried(&rules, "http://h/d/33/y"), 2);
        // A number pattern is still found by its letters.
        stories(&mut rules, 0..3);
        assert!(tried(&rules, "http://h/story?id=77") >= 1);
    }

    #[test]
    fn pages_of_a_numbered_series_found_alike_make_no_rule() {
        let mut rules = DustRules::default();
        for (dup, original) in [
            ("http://h/p/33", "http://h/p/34"),
            ("http://h/a/story_7.html", "http://h/a/story_8.html"),
            ("http://h/a/7.html?x=1", "http://h/a/8.html?x=1"),
        ] {
            rules.observe_new(original);
            rules.observe_duplicate(dup, original);
        }
        assert!(rules.rules().is_empty());
        // Another file name is a rule.
        rules.observe_duplicate("http://h/a/print_7.html", "http://h/a/story_7.html");
        assert!(!rules.rules().is_empty());
    }

    #[test]
    fn rules_survive_a_round_trip() {
        let mut rules = DustRules::default();
        stories(&mut rules, 0..20);
        let id = match rules.predict("http://h/story?id=3") {
            Predicted::Skip { rule, .. } | Predicted::Check { rule } => rule,
            Predicted::Fetch => panic!(),
        };
        rules.note_skipped(id);
        let mut back = DustRules::from_bytes(&rules.to_bytes()).unwrap();
        assert_eq!(back.rules().len(), rules.rules().len());
        assert_eq!(back.rules()[id].skipped, 1);
        assert_eq!(
            back.predict("http://h/story?id=3"),
            Predicted::Fetch,
            "no page written known"
        );
        back.add_written("http://h/story_3.html");
        assert_eq!(
            back.predict("http://h/story?id=3"),
            rules.predict("http://h/story?id=3")
        );
    }
}
