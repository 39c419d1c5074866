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
/// Flat: a trigram's places are `places[start..start + len]`, so a walk
/// reads one array instead of a vector per trigram.
struct InvertedProfiles {
    ranges: HashMap<u64, (u32, u32)>,
    places: Vec<(u16, u16)>,
}

impl InvertedProfiles {
    #[inline]
    fn get(&self, trigram: u64) -> &[(u16, u16)] {
        match self.ranges.get(&trigram) {
            Some(&(start, len)) => &self.places[start as usize..(start + len) as usize],
            None => &[],
        }
    }
}

fn invert(list: LangProfileList) -> InvertedProfiles {
    let mut map: HashMap<u64, Vec<(u16, u16)>> = HashMap::new();
    for (l, &(_, profile)) in list.iter().enumerate() {
        for (rank, &trigram) in profile.iter().enumerate() {
            map.entry(pack(trigram))
                .or_default()
                .push((l as u16, rank as u16));
        }
    }
    let mut flat = InvertedProfiles {
        ranges: HashMap::with_capacity(map.len()),
        places: Vec::new(),
    };
    for (trigram, places) in map {
        let start = flat.places.len() as u32;
        flat.ranges.insert(trigram, (start, places.len() as u32));
        flat.places.extend(places);
    }
    flat
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
        for &(l, rank) in inverted.get(*trigram) {
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
