//! Pages built as a stack of sections (service and landing pages, page
//! builders): every section is content, not only the one with the most
//! paragraphs.

use nearcrawl_extract::{Input, extract};

const SENTENCE: &str = "We plan, build and run data platforms for companies of every size, \
    from the first workshop to the day the system runs on its own.";

fn section(class: &str, heading: &str, paragraphs: usize) -> String {
    let ps: String = (0..paragraphs)
        .map(|i| format!("<p>{heading} {i}: {SENTENCE}</p>"))
        .collect();
    format!("<section class={class}><div class=container><h2>{heading}</h2>{ps}</div></section>")
}

const HEADER: &str = "<header><nav><a href=/>Home</a> <a href=/services>Services</a> \
    <a href=/contact>Contact</a></nav></header>";
const FOOTER: &str = "<footer><a href=/privacy>Privacy</a> Copyright 2026</footer>";

#[test]
fn every_section_of_a_service_page_is_content() {
    let html = format!(
        "<html><body>{HEADER}{}{}{}{}{FOOTER}</body></html>",
        section("hero", "Data analytics services", 1),
        section("features", "What we do", 4),
        section("process", "How we work", 2),
        section("faq", "Questions and answers", 2),
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in [
        "Data analytics services 0:",
        "What we do 3:",
        "How we work 1:",
        "Questions and answers 1:",
    ] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Privacy"), "{}", page.text);
    assert!(!page.text.contains("Services"), "{}", page.text);
}

#[test]
fn an_article_does_not_take_in_the_blocks_beside_it() {
    // Two blocks of a couple of sentences beside a long article (too plain
    // to pass for more of the article by readability's sibling rule): three
    // sections, but the others hold less text than the article.
    let article: String = (0..8)
        .map(|i| format!("<p>Article paragraph {i}: {SENTENCE}</p>"))
        .collect();
    let block = |class: &str, text: &str| {
        format!(
            "<div class={class}><p>{text} and the team behind it writes here every week \
             about what it built and what it learned and what it would do again next time \
             and what the readers wrote back to it about all of that over the years</p></div>"
        )
    };
    let html = format!(
        "<html><body>{HEADER}<div class=wrap><article><h1>A story</h1>{article}</article>\
         {}{}</div>{FOOTER}</body></html>",
        block("block-two", "About the author"),
        block("block-three", "Our newsletter"),
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Article paragraph 7:"), "{}", page.text);
    assert!(!page.text.contains("About the author"), "{}", page.text);
    assert!(!page.text.contains("Our newsletter"), "{}", page.text);
}

#[test]
fn a_header_holding_the_post_is_read_as_content() {
    // Webflow's blog templates put the whole post in a <header>.
    let post: String = (0..5)
        .map(|i| format!("<p>Post paragraph {i}: {SENTENCE}</p>"))
        .collect();
    let html = format!(
        "<html><body>{HEADER}<main><header class=section_blog-post>\
         <div class=\"blog-rt w-richtext\">{post}</div></header></main>{FOOTER}</body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Post paragraph 4:"), "{}", page.text);
    assert!(!page.text.contains("Privacy"), "{}", page.text);
    // A header with a large menu is mostly links: still the page's header.
    let menu: String = (0..40)
        .map(|i| format!("<li><a href=/products/{i}>Product line number {i}</a></li>"))
        .collect();
    // Its promotions are a few paragraphs' worth, but most of it is links.
    let promo: String = (0..10)
        .map(|i| format!("<p>Offer {i}: free shipping on orders over fifty dollars, returns within a month.</p>"))
        .collect();
    let html = format!(
        "<html><body><header><div class=mega><ul>{menu}</ul></div>{promo}</header>\
         <article><h1>Short</h1><p>Story: {SENTENCE}</p></article>{FOOTER}</body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Story: We plan"), "{}", page.text);
    assert!(!page.text.contains("Offer 9"), "{}", page.text);
    assert!(!page.text.contains("Product line number"), "{}", page.text);
}
