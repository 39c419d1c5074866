//! How many of a host's titles hold each word: Lossy Counting (Manku and
//! Motwani, VLDB 2002) over titles, each title counting a word once.
//!
//! A count is never above the truth and at most [`TitleCounts::error`]
//! below it: a word is dropped only when even its largest possible count
//! is at the floor, and the floor rises only when the table is full. The
//! table holds at most [`MAX_WORDS`] words, so the error is what a host's
//! variety of title words makes it: a few titles on a documentation site
//! of 30,000 pages (rust-doc, floor 6). The error is a share of titles,
//! not of title words as a Misra-Gries summary's would be (16 counters
//! over news titles of ten words lost more than half of every count).

/// Bits of a title word's hash: stored in 3 bytes. Two names that differ
/// in one word compare the same by chance 1 time in 16.8 million.
pub(crate) const TITLE_WORD_BITS: u32 = 24;
const TITLE_WORD_MASK: u32 = (1 << TITLE_WORD_BITS) - 1;

/// A title word's hash as the gate compares it; hashes of earlier versions
/// (32 bits) are cut to it when read.
pub(crate) fn title_word(hash: u32) -> u32 {
    hash & TITLE_WORD_MASK
}

/// Words a host's table holds at most (12 bytes each in memory).
pub(crate) const MAX_WORDS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    word: u32,
    /// Titles holding the word since it entered the table.
    count: u32,
    /// The floor when it entered: titles it may have been in before.
    missed: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TitleCounts {
    titles: u32,
    /// A word whose count plus `missed` is at or below this was dropped.
    floor: u32,
    /// By word.
    entries: Vec<Entry>,
}

impl TitleCounts {
    pub(crate) fn titles(&self) -> u32 {
        self.titles
    }

    /// Titles holding `word`, at most [`error`](Self::error) short.
    pub(crate) fn count(&self, word: u32) -> u32 {
        match self.entries.binary_search_by_key(&word, |e| e.word) {
            Ok(i) => self.entries[i].count,
            Err(_) => 0,
        }
    }

    /// How far below the truth a count can be.
    #[cfg(test)]
    pub(crate) fn error(&self) -> u32 {
        self.floor
    }

    /// Counts one title's words (each once).
    pub(crate) fn add(&mut self, words: &[u32]) {
        self.titles += 1;
        for (n, &word) in words.iter().enumerate() {
            if words[..n].contains(&word) {
                continue;
            }
            match self.entries.binary_search_by_key(&word, |e| e.word) {
                Ok(i) => self.entries[i].count += 1,
                Err(i) => self.entries.insert(
                    i,
                    Entry {
                        word,
                        count: 1,
                        missed: self.floor,
                    },
                ),
            }
        }
        // A small host keeps every word; a large one drops its rarest
        // (raising the floor) until a quarter of the table is free.
        let room = MAX_WORDS.min(64 + 4 * self.titles as usize);
        while self.entries.len() > room {
            self.floor += 1;
            let floor = self.floor;
            self.entries.retain(|e| e.count + e.missed > floor);
            if self.entries.len() <= room * 3 / 4 {
                break;
            }
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 + self.entries.len() * 6);
        put_varint(&mut b, u64::from(self.titles));
        put_varint(&mut b, u64::from(self.floor));
        let mut last = 0;
        for e in &self.entries {
            put_varint(&mut b, u64::from(e.word - last));
            put_varint(&mut b, u64::from(e.count));
            put_varint(&mut b, u64::from(e.missed));
            last = e.word;
        }
        b
    }

    pub(crate) fn from_bytes(mut b: &[u8]) -> Option<TitleCounts> {
        let mut next = || get_varint(&mut b).and_then(|v| u32::try_from(v).ok());
        let titles = next()?;
        let floor = next()?;
        let mut entries = Vec::new();
        let mut word = 0u32;
        while let Some(gap) = next() {
            word = word.checked_add(gap)?;
            entries.push(Entry {
                word,
                count: next()?,
                missed: next()?,
            });
        }
        Some(TitleCounts {
            titles,
            floor,
            entries,
        })
    }

    /// Counts of an earlier version's Misra-Gries summary (titles, then
    /// word and count pairs): underestimates, as these are.
    pub(crate) fn from_summary(b: &[u8]) -> Option<TitleCounts> {
        if b.len() < 4 || !(b.len() - 4).is_multiple_of(8) {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let mut entries: Vec<Entry> = (4..b.len())
            .step_by(8)
            .map(|i| Entry {
                word: title_word(u32_at(i)),
                count: u32_at(i + 4),
                missed: 0,
            })
            .collect();
        entries.sort_by_key(|e| e.word);
        entries.dedup_by_key(|e| e.word);
        Some(TitleCounts {
            titles: u32_at(0),
            floor: 0,
            entries,
        })
    }
}

fn put_varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

fn get_varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b.split_first()?;
        *b = rest;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_never_over_and_at_most_the_floor_under() {
        let mut c = TitleCounts::default();
        let mut truth = std::collections::HashMap::new();
        // 30,000 titles: a template word in all, a section word in one in
        // 64, a word in one in 500, and two words of their own each.
        for i in 0..30_000u32 {
            let mut words = vec![1, 1_000_000 + 2 * i, 1_000_001 + 2 * i];
            if i % 64 == 0 {
                words.push(2);
            }
            if i % 500 == 0 {
                words.push(3);
            }
            for w in &words {
                *truth.entry(*w).or_insert(0u32) += 1;
            }
            c.add(&words);
        }
        assert_eq!(c.titles(), 30_000);
        assert!(c.entries.len() <= MAX_WORDS);
        assert!(c.error() < 30_000 / 500, "floor {}", c.error());
        for (w, n) in truth {
            assert!(c.count(w) <= n);
            assert!(c.count(w) + c.error() >= n, "{w}: {} of {n}", c.count(w));
        }
        assert_eq!(TitleCounts::from_bytes(&c.to_bytes()), Some(c.clone()));
        assert_eq!(TitleCounts::from_bytes(&[0x80]), None);
    }

    #[test]
    fn a_small_host_keeps_every_word() {
        let mut c = TitleCounts::default();
        for i in 0..50u32 {
            c.add(&[7, 7, 100 + i, 200 + i, 300 + i]);
        }
        assert_eq!(c.error(), 0);
        assert_eq!(c.count(7), 50);
        assert_eq!(c.count(120), 1);
    }

    #[test]
    fn an_earlier_summary_reads_as_counts() {
        let mut b = 20u32.to_le_bytes().to_vec();
        for (w, n) in [(9u32, 20u32), (4, 3)] {
            b.extend_from_slice(&w.to_le_bytes());
            b.extend_from_slice(&n.to_le_bytes());
        }
        let c = TitleCounts::from_summary(&b).unwrap();
        assert_eq!(
            (c.titles(), c.count(9), c.count(4), c.count(5)),
            (20, 20, 3, 0)
        );
        assert_eq!(TitleCounts::from_summary(&b[..7]), None);
    }
}
