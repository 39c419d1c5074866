//! The gate's candidate stage: which earlier documents a new one is
//! compared with. In memory: one MinHash LSH table per band, a table of
//! rare name words, and the top half of every fingerprint (see the crate
//! docs).

use nearcrawl_simhash::Fingerprint;

use crate::key_table::KeyTable;
use crate::sketch::BANDS;

/// What a document is looked up by.
pub(crate) struct Keys {
    pub(crate) bands: Option<[u32; BANDS]>,
    /// A short text near the line is also filed by its shingle sketch, as
    /// a long text is, and looks long texts up by it.
    pub(crate) shingle_bands: Option<[u32; BANDS]>,
    /// The host and each of the two rarest words of the name (see
    /// [`TitleModel::rarest`](crate::names::TitleModel::rarest)): a
    /// document is looked up by both and filed under the first.
    pub(crate) name_words: [Option<u32>; 2],
    /// Bits of the text's hash: exact copies are found by it, whatever
    /// the band tables hold (a key many near-identical template pages
    /// share keeps only the first [`MAX_PER_KEY`] of them).
    pub(crate) text: u32,
}

/// An earlier document found by [`Keys`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) slot: u32,
    /// Band keys shared.
    pub(crate) bands: usize,
    /// The rarest word of its name is one of the two of this one's.
    pub(crate) named: bool,
}

/// What the gate keeps in memory to find candidates.
#[derive(Debug)]
pub(crate) struct Tables {
    /// One table per LSH band: band key -> slots.
    bands: Vec<KeyTable>,
    /// Rarest name word -> slots. On a site whose pages share most of their
    /// text (a template, a license header; rustdoc's intrinsics: 30 words,
    /// 25 in thousands of pages) a band key many pages share holds only
    /// the first [`MAX_PER_KEY`](crate::key_table::MAX_PER_KEY), and the
    /// closest candidates by bands may all be other items. A copy keeps its
    /// item's name, under its title or another path's (`vaddq_f32` under
    /// `arm` and `aarch64`), and finds its page here.
    name_words: KeyTable,
    /// Bits of the text's hash -> slots: the exact check's. Documents with
    /// the same text share every band, but on such a site every band key
    /// of a page may be full of other items' pages, and a copy on another
    /// host (another name model) may not find its page by name either.
    texts: KeyTable,
    /// The top 32 bits of each slot's fingerprint: a candidate more than k
    /// bits away there is passed over without reading its record.
    fingerprint_tops: Vec<u32>,
}

impl Tables {
    pub(crate) fn new(expected: u64) -> Tables {
        Tables {
            bands: (0..BANDS).map(|_| KeyTable::new(expected)).collect(),
            name_words: KeyTable::new(expected),
            texts: KeyTable::new(expected),
            fingerprint_tops: Vec::new(),
        }
    }

    /// Slots filed under a rare word of the name or sharing at least one
    /// band key: the named first, then by bands shared, then the earliest.
    pub(crate) fn candidates(&self, keys: &Keys) -> Vec<Candidate> {
        let mut touched = 0;
        for (table, &key) in self.bands.iter().zip(keys.bands.iter().flatten()) {
            touched ^= table.touch(key);
        }
        std::hint::black_box(touched);
        let mut slots = Vec::new();
        for bands in [&keys.bands, &keys.shingle_bands] {
            for (table, &key) in self.bands.iter().zip(bands.iter().flatten()) {
                table.get(key, &mut slots);
            }
        }
        slots.sort_unstable();
        let mut out: Vec<Candidate> = Vec::new();
        for slot in slots {
            match out.last_mut() {
                Some(c) if c.slot == slot => c.bands += 1,
                _ => out.push(Candidate {
                    slot,
                    bands: 1,
                    named: false,
                }),
            }
        }
        let mut named = Vec::new();
        for key in keys.name_words.iter().flatten() {
            self.name_words.get(*key, &mut named);
        }
        named.sort_unstable();
        named.dedup();
        for slot in named {
            match out.binary_search_by_key(&slot, |c| c.slot) {
                Ok(i) => out[i].named = true,
                Err(i) => out.insert(
                    i,
                    Candidate {
                        slot,
                        bands: 0,
                        named: true,
                    },
                ),
            }
        }
        // Unstable: no two candidates share a slot, so the order is the
        // stable sort's, without its scratch buffer (that sort was half
        // of this function's time).
        out.sort_unstable_by_key(|c| (!c.named, std::cmp::Reverse(c.bands), c.slot));
        out
    }

    /// [`index`](Tables::index) for many documents in slot order, the band
    /// tables filled on several threads (reopening a 10M-document gate
    /// is 160M inserts).
    pub(crate) fn index_all<T: Sync>(&mut self, docs: &[(u32, Fingerprint, Keys, T)]) {
        for (slot, fingerprint, keys, _) in docs {
            self.index_unbanded(*slot, *fingerprint, keys);
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_thread = BANDS.div_ceil(threads);
        std::thread::scope(|scope| {
            for (part, tables) in self.bands.chunks_mut(per_thread).enumerate() {
                scope.spawn(move || {
                    for (slot, _, keys, _) in docs {
                        for bands in [&keys.bands, &keys.shingle_bands].into_iter().flatten() {
                            let bands = &bands[part * per_thread..];
                            for (table, &key) in tables.iter_mut().zip(bands) {
                                table.insert(key, *slot);
                            }
                        }
                    }
                });
            }
        });
    }

    /// Adds a recorded document's fingerprint and keys to the tables.
    pub(crate) fn index(&mut self, slot: u32, fingerprint: Fingerprint, keys: &Keys) {
        self.index_unbanded(slot, fingerprint, keys);
        for bands in [&keys.bands, &keys.shingle_bands].into_iter().flatten() {
            for (table, &key) in self.bands.iter_mut().zip(bands) {
                table.insert(key, slot);
            }
        }
    }

    /// The fingerprint's top and the name word, all but the band tables.
    fn index_unbanded(&mut self, slot: u32, fingerprint: Fingerprint, keys: &Keys) {
        debug_assert_eq!(slot as usize, self.fingerprint_tops.len());
        self.fingerprint_tops.push((fingerprint.0 >> 32) as u32);
        if let Some(key) = keys.name_words[0] {
            self.name_words.insert(key, slot);
        }
        self.texts.insert(keys.text, slot);
    }

    /// Earlier documents that may have the same text as one with `keys`
    /// (the same bits of its hash), earliest first.
    pub(crate) fn maybe_same_text(&self, keys: &Keys) -> Vec<u32> {
        let mut out = Vec::new();
        self.texts.get(keys.text, &mut out);
        out
    }

    /// Bits by which the top halves of two fingerprints differ: at most
    /// their distance.
    pub(crate) fn top_distance(&self, slot: u32, fingerprint: Fingerprint) -> u32 {
        (self.fingerprint_tops[slot as usize] ^ (fingerprint.0 >> 32) as u32).count_ones()
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.bands
            .iter()
            .chain([&self.name_words, &self.texts])
            .map(KeyTable::memory_bytes)
            .sum::<usize>()
            + self.fingerprint_tops.capacity() * 4
    }
}
