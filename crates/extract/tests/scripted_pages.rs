//! Pages built for a browser running scripts, read as a client without
//! them: content in `<noscript>`, in streamed React segments, behind a
//! wrapper hidden until the scripts reveal it, inside a boilerplate element
//! left open; and forum threads, whose posts are all content.

use nearcrawl_extract::{Input, extract};
use url::Url;

const PARAGRAPH: &str = "This paragraph is real content, written for readers, with commas, \
    clauses and enough words to be taken for the main text of the page it sits on.";

fn paragraphs(name: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("<p>{name} {i}: {PARAGRAPH}</p>"))
        .collect()
}

#[test]
fn a_page_empty_without_scripts_is_read_from_its_noscript_markup() {
    // Discourse serves its thread to script-less clients in <noscript>.
    let html = format!(
        "<html><head><title>Thread</title></head><body>\
         <noscript><style>html {{ overflow: auto }}</style></noscript>\
         <section id=main></section>\
         <noscript data-path=\"/t/thread/1\"><div id=main-outlet>\
         <h1><a href=\"/t/thread/1\">Thread</a></h1>{}\
         <a href=\"/t/next-thread/2\">Next thread</a></div></noscript></body></html>",
        paragraphs("post", 3)
    );
    let url = Url::parse("https://forum.example/t/thread/1").unwrap();
    let page = extract(
        html.as_bytes(),
        &Input {
            url: Some(&url),
            ..Input::default()
        },
    );
    assert!(
        page.text.contains("post 2: This paragraph"),
        "{}",
        page.text
    );
    assert!(!page.text.contains("overflow"), "{}", page.text);
    assert!(
        page.links
            .iter()
            .any(|l| l.url.as_str() == "https://forum.example/t/next-thread/2"),
        "links inside noscript are followed: {:?}",
        page.links
    );
}

#[test]
fn noscript_notices_stay_out_of_a_page_that_shows_its_text() {
    let html = format!(
        "<html><body><noscript><div>Please enable JavaScript to use this site.</div></noscript>\
         <article>{}</article></body></html>",
        paragraphs("article", 3)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("article 2:"), "{}", page.text);
    assert!(!page.text.contains("enable JavaScript"), "{}", page.text);
}

#[test]
fn streamed_react_segments_are_content_and_other_hidden_elements_are_not() {
    // React streams a suspended part as <div hidden id="S:0"> and a script
    // puts it in place of the skeleton at <template id="B:0">.
    let html = format!(
        "<html><body><header>Site</header><main><template id=\"B:0\"></template>\
         <div class=\"animate-pulse h-4\"></div></main>\
         <div hidden>Hidden menu entry that no reader sees</div>\
         <div hidden id=\"S:0\"><article>{}</article></div>\
         <script>$RC(\"B:0\",\"S:0\")</script></body></html>",
        paragraphs("segment", 3)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("segment 2:"), "{}", page.text);
    assert!(!page.text.contains("Hidden menu"), "{}", page.text);
}

#[test]
fn a_page_hidden_until_its_scripts_reveal_it_is_read_whole() {
    // Next.js and others hide the page until it has loaded.
    let html = format!(
        "<html><body><div style=\"visibility:hidden;min-height:100vh\">\
         <article>{}</article></div></body></html>",
        paragraphs("wrapped", 3)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("wrapped 2:"), "{}", page.text);
    // A page that shows its text keeps its hidden parts out.
    let html = format!(
        "<html><body><article>{}</article>\
         <div style=\"display: none\">A dialog nobody opened</div></body></html>",
        paragraphs("shown", 3)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("shown 2:"), "{}", page.text);
    assert!(!page.text.contains("dialog"), "{}", page.text);
}

#[test]
fn a_boilerplate_element_left_open_around_main_does_not_take_the_page() {
    // The announcement <aside> is never closed: the parser puts the whole
    // page inside it, a browser shows it all the same.
    let html = format!(
        "<html><body><aside class=\"announcement-banner\"><div><a href=/news>News!</a>\
         <span>spin</div></a><main><article>{}</article></main>\
         <footer>Footer links</footer></body></html>",
        paragraphs("inside", 3)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("inside 2:"), "{}", page.text);
}

#[test]
fn every_post_of_a_thread_is_content() {
    // One long post wins the scoring; the short replies beside it, of the
    // same markup, are as much the page's content.
    let post = |who: &str, body: String| {
        format!(
            "<div class=\"topic-body crawler-post\"><div class=meta><span>{who}</span>\
             <time>May 3, 2024</time></div><div class=post>{body}</div></div>"
        )
    };
    let html = format!(
        "<html><body><nav><a href=/>Home</a> <a href=/latest>Latest</a></nav>\
         <div id=main-outlet><h1>A question</h1>{}{}{}{}</div>\
         <footer><a href=/about>About</a></footer></body></html>",
        post("asker", paragraphs("question", 1)),
        post("helper", paragraphs("long answer", 8)),
        post(
            "asker",
            "<p>Thanks, that fixed it, the service starts again now.</p>".into()
        ),
        post("third", paragraphs("follow-up", 1)),
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in [
        "question 0:",
        "long answer 7:",
        "Thanks, that fixed it",
        "follow-up 0:",
    ] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("About"), "{}", page.text);
}

#[test]
fn popovers_are_closed_until_opened() {
    // Invision forums put an app-install prompt in an element with the
    // `popover` attribute before the thread; the prompt's text is longer
    // than each post, and a browser shows none of it until a button opens it.
    let prompt = "<i-card popover id=install><div class=iCard><p>A full-screen app on your \
        home screen with push notifications, badges and more, for you to install.</p>\
        <ol><li>Tap the Share icon, then scroll the menu, then tap Add to Home Screen, \
        then tap Add in the top-right corner of the screen.</li>\
        <li>Tap the three-dot menu in the top-right corner of the browser, then Install, \
        then confirm by tapping Install once more in the dialog.</li></ol></div></i-card>";
    let post = |i: usize| {
        format!(
            "<article class=\"ipsEntry\"><div class=author>member{i}</div>\
             <div class=\"ipsRichText\"><p>Reply {i}, short but real, about the topic.</p>\
             </div></article>"
        )
    };
    let html = format!(
        "<html><body>{prompt}<div id=main>{}</div></body></html>",
        (0..4).map(post).collect::<String>()
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Reply 3, short"), "{}", page.text);
    assert!(!page.text.contains("home screen"), "{}", page.text);
}

#[test]
fn a_page_that_shows_nothing_is_read_from_its_description() {
    // Discourse without its noscript view: an empty shell, the opening post
    // cut short in `description` and whole in `og:description`.
    let opening = "I am new to astronomy and would like advice on a first telescope: \
        refractor or reflector, which brands, and what to spend on eyepieces first.";
    let html = format!(
        "<html><head><title>First telescope?</title>\
         <meta name=description content=\"{}&hellip;\">\
         <meta property=og:description content=\"{opening}\"></head>\
         <body><header><a href=/>forum</a> <a href=/donate>donate</a></header>\
         <section id=main></section></body></html>",
        &opening[..60]
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert_eq!(page.text, opening);
    assert_eq!(page.path, nearcrawl_extract::ContentPath::Description);
    // A page with text of its own keeps it, however long its description.
    let html = format!(
        "<html><head><meta property=og:description content=\"{opening} {opening}\"></head>\
         <body><article>{}</article></body></html>",
        paragraphs("own", 2)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("own 1:"), "{}", page.text);
    assert!(!page.text.contains("telescope"), "{}", page.text);
}

#[test]
fn utility_classes_that_hide_an_element_hide_it() {
    // A hidden block of comma-separated data scores like a paragraph full
    // of commas; Bootstrap's and Tailwind's `hidden` is display: none.
    let domains: String = (0..40).map(|i| format!("partner{i}.example,")).collect();
    let html = format!(
        "<html><body><div class=\"partner-domains hidden\">{domains}</div>\
         <div class=\"d-none\">Bootstrap 4 hides this, one, two, three, four.</div>\
         <div class=\"hidden md:block\">Desktop readers see this line.</div>\
         <div class=\"d-none d-lg-block\">Wide screens see this line too.</div>\
         <div class=body>{}</div></body></html>",
        paragraphs("essay", 2)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("essay 1:"), "{}", page.text);
    assert!(!page.text.contains("partner"), "{}", page.text);
    assert!(!page.text.contains("Bootstrap 4 hides"), "{}", page.text);
    let full = nearcrawl_extract::full_text(html.as_bytes(), &Input::default());
    assert!(full.contains("Desktop readers"), "{full}");
    assert!(full.contains("Wide screens"), "{full}");
    assert!(!full.contains("partner"), "{full}");
    // A page hidden whole by a class until its scripts run is read whole.
    let html = format!(
        "<html><body><div class=\"hidden\" id=app><article>{}</article></div></body></html>",
        paragraphs("revealed", 3)
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("revealed 2:"), "{}", page.text);
}
