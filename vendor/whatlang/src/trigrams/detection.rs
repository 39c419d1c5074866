use std::sync::LazyLock;

use hashbrown::HashMap;

#[cfg(debug_assertions)]
use super::LangProfile;
use super::LangProfileList;
use super::utils::{pack, ranked_trigrams};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
#[cfg(debug_assertions)]
use super::Trigram;
use super::{MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE};
use crate::Lang;
use crate::core::{FilterList, Info, InternalQuery, Text, calculate_confidence};
use crate::scripts::grouping::MultiLangScript;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    #[allow(dead_code)]
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    calculate_scores_in_profiles(&iquery.text, iquery.filter_list, iquery.multi_lang_script)
}

fn script_to_lang_profile_list(script: MultiLangScript) -> LangProfileList {
    use MultiLangScript as MLS;
    match script {
        MLS::Latin => LATIN_LANGS,
        MLS::Cyrillic => CYRILLIC_LANGS,
        MLS::Arabic => ARABIC_LANGS,
        MLS::Devanagari => DEVANAGARI_LANGS,
        MLS::Hebrew => HEBREW_LANGS,
    }
}

/// Every trigram of a script's profiles with the places it holds in them:
/// (index of the profile in its list, rank in the profile).
///
/// nearcrawl's change: the upstream loop looked every trigram of every
/// profile up in the text's map (~35 profiles x 300 lookups for Latin, most of
/// them misses), a fixed ~50 us per call whatever the text's length. Walking
/// the text's trigrams through this index gives the same distances while
/// touching only the trigrams the text has.
///
/// Laid out for lookups that can be asked for ahead
/// ([`InvertedProfiles::prefetch`]): a table of offsets, open addressed (4
/// bytes a slot), each to a record in one flat array that holds the
/// trigram, the count of its places and the places. A hash map to (start,
/// length) in a second array of places missed cache twice a trigram, on
/// the map's entry and on the places: the two were half of detection's
/// time in a crawl.
struct InvertedProfiles {
    /// Offsets into `records`, or [`EMPTY`]; a power of two long.
    slots: Vec<u32>,
    /// 64 less the bits of a slot's index.
    shift: u32,
    /// Per trigram: its low and high 32 bits, its count of places n,
    /// then n places, each `profile << 16 | rank`.
    records: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

/// How far ahead of a lookup its slot and its record are asked for
/// ([`InvertedProfiles::prefetch`]): a few lookups' time is about one
/// trip to memory.
const SLOTS_AHEAD: usize = 16;
const RECORDS_AHEAD: usize = 8;

#[inline(always)]
fn prefetch(at: &u32) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch reads nothing and faults on nothing; the
        // address is a reference's.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((at as *const u32).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

impl InvertedProfiles {
    #[inline]
    fn slot(&self, trigram: u64) -> usize {
        (trigram.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Asks the cache for what the lookups of the trigrams `ahead` of the
    /// next will read: the slot of one [`SLOTS_AHEAD`] on, the record of
    /// one [`RECORDS_AHEAD`] on (its slot asked for before). The lookups
    /// are in no order the hardware could foresee, and the tables leave the
    /// cache between two pages: looked up as they came, each missed.
    #[inline]
    fn prefetch(&self, ahead: &[u64]) {
        if let Some(&t) = ahead.get(SLOTS_AHEAD) {
            prefetch(&self.slots[self.slot(t)]);
        }
        if let Some(&t) = ahead.get(RECORDS_AHEAD) {
            let at = self.slots[self.slot(t)];
            if at != EMPTY {
                prefetch(&self.records[at as usize]);
            }
        }
    }

    /// The places of `trigram`, as `profile << 16 | rank`.
    #[inline]
    fn get(&self, trigram: u64) -> &[u32] {
        let mask = self.slots.len() - 1;
        let mut slot = self.slot(trigram);
        loop {
            let at = self.slots[slot];
            if at == EMPTY {
                return &[];
            }
            let r = &self.records[at as usize..];
            if u64::from(r[0]) | u64::from(r[1]) << 32 == trigram {
                return &r[3..3 + r[2] as usize];
            }
            slot = (slot + 1) & mask;
        }
    }
}

fn invert(list: LangProfileList) -> InvertedProfiles {
    let mut map: HashMap<u64, Vec<u32>> = HashMap::new();
    for (l, &(_, profile)) in list.iter().enumerate() {
        for (rank, &trigram) in profile.iter().enumerate() {
            map.entry(pack(trigram))
                .or_default()
                .push((l as u32) << 16 | rank as u32);
        }
    }
    #[cfg(debug_assertions)]
    let expected = map.clone();
    // At most half full: probes stay short.
    let len = (map.len() * 2).next_power_of_two().max(2);
    let mut inverted = InvertedProfiles {
        slots: vec![EMPTY; len],
        shift: 64 - len.trailing_zeros(),
        records: Vec::new(),
    };
    for (trigram, places) in map {
        let mut slot = inverted.slot(trigram);
        while inverted.slots[slot] != EMPTY {
            slot = (slot + 1) & (len - 1);
        }
        inverted.slots[slot] = inverted.records.len() as u32;
        let r = &mut inverted.records;
        r.extend([trigram as u32, (trigram >> 32) as u32, places.len() as u32]);
        r.extend(places);
    }
    // Debug builds (the tests) check every trigram's places.
    #[cfg(debug_assertions)]
    {
        for (trigram, places) in expected {
            assert_eq!(inverted.get(trigram), &places[..]);
        }
        assert!(inverted.get(0).is_empty());
    }
    inverted
}

fn inverted_profiles(script: MultiLangScript) -> &'static InvertedProfiles {
    use MultiLangScript as MLS;
    static LATIN: LazyLock<InvertedProfiles> = LazyLock::new(|| invert(LATIN_LANGS));
    static CYRILLIC: LazyLock<InvertedProfiles> = LazyLock::new(|| invert(CYRILLIC_LANGS));
    static ARABIC: LazyLock<InvertedProfiles> = LazyLock::new(|| invert(ARABIC_LANGS));
    static DEVANAGARI: LazyLock<InvertedProfiles> = LazyLock::new(|| invert(DEVANAGARI_LANGS));
    static HEBREW: LazyLock<InvertedProfiles> = LazyLock::new(|| invert(HEBREW_LANGS));
    match script {
        MLS::Latin => &LATIN,
        MLS::Cyrillic => &CYRILLIC,
        MLS::Arabic => &ARABIC,
        MLS::Devanagari => &DEVANAGARI,
        MLS::Hebrew => &HEBREW,
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    script: MultiLangScript,
) -> RawOutcome {
    let lang_profile_list = script_to_lang_profile_list(script);
    let mut lang_distances: Vec<(Lang, u32)> = vec![];

    let ranked = ranked_trigrams(&text.lowercase());
    let unique_trigrams_count = ranked.len();

    // A profile trigram the text lacks costs MAX_TRIGRAM_DISTANCE; one it has
    // costs |position - rank| instead: start every profile at "none found"
    // and correct it for the trigrams the text has.
    let mut found_delta = vec![0i64; lang_profile_list.len()];
    let inverted = inverted_profiles(script);
    for (position, trigram) in ranked.iter().enumerate() {
        inverted.prefetch(&ranked[position..]);
        for &place in inverted.get(*trigram) {
            let (l, rank) = (place >> 16, place & 0xffff);
            let dist = (position as i64 - rank as i64).abs();
            found_delta[l as usize] += dist - MAX_TRIGRAM_DISTANCE as i64;
        }
    }
    #[cfg(debug_assertions)]
    let trigram_positions = super::utils::positions_of(&ranked);

    for (l, &(lang, lang_trigrams)) in lang_profile_list.iter().enumerate() {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        let none_found = lang_trigrams.len() as i64 * MAX_TRIGRAM_DISTANCE as i64;
        let total_dist = (none_found + found_delta[l]) as u32;
        let dist = adjust_distance(total_dist, unique_trigrams_count as u32);
        #[cfg(debug_assertions)]
        assert_eq!(dist, calculate_distance(lang_trigrams, &trigram_positions));
        lang_distances.push(((lang), dist));
    }

    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

/// The upstream distance of one profile: kept to check the inverted walk
/// against in debug builds.
#[cfg(debug_assertions)]
fn calculate_distance(lang_trigrams: LangProfile, text_trigrams: &HashMap<Trigram, u32>) -> u32 {
    let mut total_dist = 0u32;

    for (i, &trigram) in lang_trigrams.iter().enumerate() {
        let dist = match text_trigrams.get(&trigram) {
            Some(&n) => (n as i32 - i as i32).unsigned_abs(),
            None => MAX_TRIGRAM_DISTANCE,
        };
        total_dist += dist;
    }

    adjust_distance(total_dist, text_trigrams.len() as u32)
}

fn adjust_distance(mut total_dist: u32, count: u32) -> u32 {
    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}
