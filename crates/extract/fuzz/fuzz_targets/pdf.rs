//! Any bytes through the PDF reader: a page or an error, never a panic
//! out of `extract_pdf` (the parser's own panics are caught and reported
//! as a corrupt PDF).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_extract::{Input, extract_pdf};

fuzz_target!(|data: &[u8]| {
    let url = url::Url::parse("https://example.com/doc.pdf").unwrap();
    let input = Input { url: Some(&url), ..Input::default() };
    let _ = extract_pdf(data, &input);
});
