//! Text -> fingerprint throughput on real article text.
//!
//! ```text
//! cargo bench -p nearcrawl-simhash
//! ```
//!
//! English: the English article bodies of `../shared/bench/extraction` (one
//! fingerprint per article, as the crawler does). Japanese: that set's
//! Japanese articles. Chinese: the articles in `tests/data/zh-articles.txt`,
//! and, when `NEARCRAWL_ZH_DIR` names a directory of `.txt` files (see
//! `examples/make-zh-corpus.sh`), those too.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nearcrawl_simhash::Simhasher;

#[path = "../examples/common/mod.rs"]
mod common;

fn bench(c: &mut Criterion) {
    for (name, docs) in common::throughput_corpora() {
        let bytes: usize = docs.iter().map(|d| d.len()).sum();
        eprintln!("{name}: {} documents, {bytes} bytes", docs.len());
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::BytesDecimal(bytes as u64));
        for (label, options) in common::throughput_settings() {
            let mut hasher = Simhasher::new(options).unwrap();
            group.bench_function(label, |b| {
                b.iter(|| {
                    let mut acc = 0u64;
                    for d in &docs {
                        acc ^= hasher.hash(std::hint::black_box(d)).fingerprint.0;
                    }
                    acc
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
