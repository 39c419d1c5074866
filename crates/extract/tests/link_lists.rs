//! Link lists inside the main content: navigation beside an article, but
//! the content itself on a category page, an index or a listing.

use nearcrawl_extract::{Input, extract};

const PARAGRAPH: &str = "This paragraph is real content, written for readers, with commas, \
    clauses and enough words to be taken for the main text of the page it sits on.";

const NAV: &str = "<nav><ul><li><a href=/>Home</a></li><li><a href=/about>About us</a></li>\
    <li><a href=/contact>Contact</a></li></ul></nav>";

/// `groups` lists of `items` links each, like a wiki's category columns.
fn link_groups(groups: usize, items: usize) -> String {
    (0..groups)
        .map(|g| {
            let lis: String = (0..items)
                .map(|i| {
                    format!("<li><a href=/wiki/Lang{g}x{i}>Language {g}-{i} (family)</a></li>")
                })
                .collect();
            format!("<div class=group><h3>Letter {g}</h3><ul>{lis}</ul></div>")
        })
        .collect()
}

#[test]
fn a_category_page_keeps_its_lists() {
    let html = format!(
        "<html><head><title>Category: Languages</title></head><body>{NAV}\
         <main><h1>Category: Languages</h1><p>{PARAGRAPH}</p><p>{PARAGRAPH}</p>\
         <p>{PARAGRAPH}</p><h2>Pages in this category</h2>{}</main>\
         <footer><a href=/privacy>Privacy</a></footer></body></html>",
        link_groups(8, 15)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert_eq!(page.path, nearcrawl_extract::ContentPath::MainContent);
    assert!(
        page.text.contains("This paragraph is real"),
        "{}",
        page.text
    );
    for item in ["Language 0-0 (family)", "Language 7-14 (family)"] {
        assert!(page.text.contains(item), "{item} missing: {}", page.text);
    }
    assert!(!page.text.contains("About us"), "{}", page.text);
}

#[test]
fn an_article_drops_its_related_links() {
    let paragraphs: String = (0..5)
        .map(|i| format!("<p>Part {i}: {PARAGRAPH}</p>"))
        .collect();
    let html = format!(
        "<html><head><title>A story</title></head><body>{NAV}\
         <main><article><h1>A story</h1>{paragraphs}\
         <h3>Related</h3><ul><li><a href=/s1>Another story about cats</a></li>\
         <li><a href=/s2>Yet another story about dogs</a></li>\
         <li><a href=/s3>A third story about birds</a></li></ul></article></main>\
         </body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("Part 4: This paragraph"),
        "{}",
        page.text
    );
    assert!(!page.text.contains("story about cats"), "{}", page.text);
}
