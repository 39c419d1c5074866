//! Reads one PDF as the crawl's reader does, with the system allocator, so
//! a heap profiler (heaptrack) can say where its memory goes; `--text`
//! prints the text it read.
//!
//!     cargo run --release -p nearcrawl-extract --example pdf_memory -- FILE.pdf [--text]

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: pdf_memory FILE.pdf [--text]");
    let print_text = std::env::args().any(|a| a == "--text");
    let bytes = std::fs::read(&path).expect("reads the file");
    let input = nearcrawl_extract::Input::default();
    match nearcrawl_extract::extract_pdf(bytes, &input) {
        Ok(page) if print_text => println!("{}", page.text),
        Ok(page) => println!("{} characters of text", page.text.len()),
        Err(e) => eprintln!("error: {e}"),
    }
}
