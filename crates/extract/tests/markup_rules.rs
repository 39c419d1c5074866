//! Markup that looks like boilerplate by one rule and is content by what
//! it holds: the words of a link, accordions marked up as tab lists,
//! page builders' class names.

use nearcrawl_extract::{Input, extract};

const SENTENCE: &str = "Logging is a means of tracking events that happen when some software \
    runs, and the developer adds logging calls to the code to note that they occurred.";

/// Four numbered paragraphs of [`SENTENCE`]: a body that scores.
fn paragraphs() -> String {
    (0..4).map(|i| format!("<p>{i}: {SENTENCE}</p>")).collect()
}

fn page(body: &str) -> String {
    format!(
        "<html><body><nav><a href=/>Home</a> <a href=/docs>Docs</a></nav>\
         <div class=body role=main>{body}</div>\
         <footer><a href=/privacy>Privacy</a> Copyright 2026</footer></body></html>"
    )
}

#[test]
fn the_words_of_an_inline_link_stay_in_its_sentence() {
    // Sphinx wraps a reference's words in a span, and a method name in
    // code and span: each is all link text, but not a list of links.
    let ps = paragraphs();
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}\
         <p>For a logging cookbook, please see <a class=\"reference internal\" \
         href=\"#tutorial-ref-links\"><span class=\"std std-ref\">Other resources</span></a>.</p>\
         <p>Create a logger and call the logger's <a class=\"reference internal\" \
         href=\"../library/logging.html#logging.Logger.debug\"><code class=\"xref py py-meth \
         docutils literal notranslate\"><span class=\"pre\">debug()</span></code></a> and \
         <a class=\"reference internal\" href=\"../library/logging.html#logging.Logger.info\">\
         <code class=\"xref py py-meth docutils literal notranslate\"><span class=\"pre\">info()\
         </span></code></a> methods.</p>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("please see Other resources."),
        "{}",
        page.text
    );
    assert!(
        page.text
            .contains("call the logger's debug() and info() methods."),
        "{}",
        page.text
    );
    assert!(!page.text.contains("Privacy"), "{}", page.text);
}

#[test]
fn a_list_of_links_in_the_content_is_still_dropped() {
    let ps = paragraphs();
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}<div class=related><span><a href=/a><span>Previous topic\
         </span></a> <a href=/b><span>Next topic</span></a></span></div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("3: Logging"), "{}", page.text);
    assert!(!page.text.contains("Next topic"), "{}", page.text);
}

#[test]
fn an_accordion_marked_up_as_a_tab_list_is_read_with_its_answers() {
    let item = |i: usize| {
        format!(
            "<div class=accordion-item><h3><button aria-controls=c{i}>Question {i}?</button></h3>\
             <div id=c{i} class=\"accordion-collapse collapse\" role=tabpanel>\
             <p>Answer {i}: {SENTENCE}</p></div></div>"
        )
    };
    let items: String = (0..4).map(item).collect();
    let html = page(&format!(
        "<h1>Rebates</h1><p>Here are the questions people ask most, with their answers, \
         in the order people ask them.</p>\
         <div class=accordion role=tablist>{items}</div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    for i in 0..4 {
        assert!(
            page.text.contains(&format!("Answer {i}: Logging")),
            "{}",
            page.text
        );
    }
}

#[test]
fn a_tab_strip_without_its_panels_is_dropped() {
    let ps = paragraphs();
    let html = page(&format!(
        "<h1>Pricing</h1><div role=tablist><span role=tab>Monthly plans for small teams\
         </span><span role=tab>Yearly plans for large teams</span></div>\
         <div role=tabpanel>{ps}</div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("3: Logging"), "{}", page.text);
    assert!(!page.text.contains("Yearly plans"), "{}", page.text);
}

#[test]
fn a_heading_a_page_builder_calls_adv_is_text_but_an_ad_slot_is_not() {
    // Kadence names its headings and paragraphs "kt-adv-heading..." (an
    // advanced heading); an ad is a slot, not a paragraph.
    let html = page(&format!(
        "<h2 class=\"kt-adv-heading356_98 wp-block-kadence-advancedheading\">Repairs for \
         local gyms</h2>\
         <p class=\"kt-adv-heading356_63 wp-block-kadence-advancedheading\">{SENTENCE}</p>\
         <p>{SENTENCE}</p><p>{SENTENCE}</p>\
         <div class=\"adv\">Buy the best running shoes today, at half price, only this \
         week, while the stock lasts, in every size and colour.</div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("Repairs for local gyms"),
        "{}",
        page.text
    );
    assert_eq!(
        page.text.matches("Logging is a means").count(),
        3,
        "{}",
        page.text
    );
    assert!(!page.text.contains("running shoes"), "{}", page.text);
}

#[test]
fn a_page_shown_because_it_hides_everything_keeps_its_class_words() {
    // The wrapper is hidden until scripts run, so the extractor shows what
    // the page hides; a credit line hidden by class is shown too, but it
    // is still a credit line.
    let ps = paragraphs();
    let html = format!(
        "<html><body><div class=lockdown style=\"display:none\"><article><h1>Logging</h1>{ps}\
         <p class=\"credit hidden\">Photograph by Jane Doe for the Example Agency</p>\
         </article></div></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("3: Logging"), "{}", page.text);
    assert!(!page.text.contains("Jane Doe"), "{}", page.text);
}

#[test]
fn hidden_tab_panels_are_read_like_the_open_one() {
    // One code sample per language tab: only the first is shown, the
    // others are a click away.
    let panel = |lang: &str, hidden: &str| {
        format!(
            "<div role=tabpanel {hidden}><p>Install the {lang} library, then send your first \
             message with the client it gives you, as the sample below shows.</p></div>"
        )
    };
    let ps: String = (0..3).map(|i| format!("<p>{i}: {SENTENCE}</p>")).collect();
    let html = page(&format!(
        "<h1>Quickstart</h1>{ps}<div class=tabs><div role=tablist><button role=tab>Python\
         </button><button role=tab>Java</button></div>{}{}{}</div>",
        panel("Python", ""),
        panel("Java", "hidden"),
        panel("Go", "style=\"display:none\""),
    ));
    let page = extract(html.as_bytes(), &Input::default());
    for lang in ["Python", "Java", "Go"] {
        assert!(
            page.text.contains(&format!("Install the {lang} library")),
            "{}",
            page.text
        );
    }
}

#[test]
fn a_posts_author_panel_is_not_its_text() {
    // XenForo marks each post's user panel as microdata's author.
    let post = |i: usize, user: &str| {
        format!(
            "<article class=\"message message--post\"><div class=message-inner>\
             <section class=message-user itemprop=author itemscope \
             itemtype=\"https://schema.org/Person\"><h4 class=message-name>\
             <span itemprop=name>{user}</span></h4><h5 class=message-userTitle>Ultra Member</h5>\
             <dl><dt>Messages</dt><dd>1,234</dd></dl></section>\
             <div class=message-main><div class=bbWrapper>Post {i}: {SENTENCE}</div></div>\
             </div></article>"
        )
    };
    let posts: String = ["slow-poke", "Aarknoid", "mickeyf", "PeterT"]
        .iter()
        .enumerate()
        .map(|(i, u)| post(i, u))
        .collect();
    let html = page(&format!("<h1>Proxmox or Ubuntu?</h1>{posts}"));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Post 3: Logging"), "{}", page.text);
    assert!(page.text.contains("Post 0: Logging"), "{}", page.text);
    assert!(!page.text.contains("Aarknoid"), "{}", page.text);
    assert!(!page.text.contains("Ultra Member"), "{}", page.text);
}

#[test]
fn a_posts_signature_is_not_its_text() {
    // vBulletin's signature under each post, and Stack Exchange's author
    // card.
    let post = |i: usize| {
        format!(
            "<div class=postbody><div class=content>Post {i}: {SENTENCE}</div>\
             <div class=signaturecontainer>220 gallon cichlid tank. 90 gallon planted.</div>\
             <div class=\"post-signature owner\">answered Feb 4, 2014 at 13:02</div></div>"
        )
    };
    let posts: String = (0..4).map(post).collect();
    let html = page(&format!(
        "<h1>What to look for before buying fish</h1>{posts}"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Post 0: Logging"), "{}", page.text);
    assert!(page.text.contains("Post 3: Logging"), "{}", page.text);
    assert!(!page.text.contains("cichlid"), "{}", page.text);
    assert!(!page.text.contains("answered Feb"), "{}", page.text);
}

#[test]
fn a_products_reviews_are_not_its_description_but_a_services_are_its_pitch() {
    // Customers' reviews are to a product page what comments are to an
    // article: other people's words about the content. The page says it
    // is a product's (og:type, or JSON-LD as shops give search engines).
    let reviews: String = (0..4)
        .map(|i| format!("<div class=review-card><p>Review {i}: {SENTENCE}</p></div>"))
        .collect();
    let page_with = |head: &str| {
        format!(
            "<html><head>{head}</head><body><nav><a href=/>Home</a></nav><div class=product>\
             <h1>Studio condenser microphone</h1><div class=product-description>\
             <p>About: {SENTENCE}</p><p>Sound: {SENTENCE}</p><p>Build: {SENTENCE}</p>\
             <p>Use: {SENTENCE}</p></div>\
             <div class=\"product-reviews js-reviews\"><h2>51 Reviews</h2>{reviews}</div></div>\
             <footer>Copyright 2026</footer></body></html>"
        )
    };
    let json_ld = "<script type=\"application/ld+json\">{\"@context\": \"https://schema.org\", \
        \"@graph\": [{\"@type\": [\"Product\"], \"name\": \"Microphone\"}]}</script>";
    for head in ["<meta property=\"og:type\" content=\"product\">", json_ld] {
        let page = extract(page_with(head).as_bytes(), &Input::default());
        assert!(page.text.contains("Use: Logging"), "{}", page.text);
        assert!(!page.text.contains("Review 0:"), "{head}: {}", page.text);
    }

    // A service's landing page puts its clients' reviews forward: they
    // are its pitch, and read.
    let page = extract(page_with("").as_bytes(), &Input::default());
    assert!(page.text.contains("Use: Logging"), "{}", page.text);
    assert!(page.text.contains("Review 0:"), "{}", page.text);
}

#[test]
fn form_controls_built_from_divs_are_not_text() {
    // A product's variant pickers: ARIA widget roles on plain elements,
    // whose words are the choices, not the description.
    let html = page(&format!(
        "<h1>Rambler 30 oz Tumbler</h1><p>{SENTENCE}</p><p>{SENTENCE}</p>\
         <div role=radiogroup aria-label=Color><div role=radio>Black Forest Green</div>\
         <div role=radio>Cherry Blossom</div></div>\
         <ul role=listbox><li role=option>Medium</li><li role=option>Extra Large</li></ul>\
         <div role=tooltip>Free shipping over $75</div><p>Made of steel. {SENTENCE}</p>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Made of steel."), "{}", page.text);
    for control in ["Forest Green", "Extra Large", "Free shipping"] {
        assert!(!page.text.contains(control), "{control}: {}", page.text);
    }
}

#[test]
fn closed_accordion_panels_are_read_like_open_ones() {
    // WAI-ARIA's accordion: a button names its panel (aria-controls) and
    // says whether it is open (aria-expanded); closed panels are hidden.
    // Sites leave out aria-expanded as often as not, on a heading link
    // acting as the button (energysage.com).
    let item = |i: usize, style: &str| {
        let button = if i == 4 {
            format!("<a role=button aria-controls=c{i}><h4>Course {i}</h4></a>")
        } else {
            format!("<button aria-expanded=false aria-controls=c{i}><h4>Course {i}</h4></button>")
        };
        format!(
            "<div class=accordion__item>{button}<div id=c{i} role=region {style}>\
             <p>Course {i} teaches how to plan a project, estimate it and run it, with \
             exercises on real projects from the class.</p></div></div>"
        )
    };
    let ps: String = (0..3).map(|i| format!("<p>{i}: {SENTENCE}</p>")).collect();
    let html = page(&format!(
        "<h1>Project management</h1>{ps}<div class=courses>{}{}{}{}</div>\
         <div id=menu hidden><a href=/a>Not controlled by any button, and hidden</a></div>",
        item(1, "style=\"visibility: hidden; height: 0px\""),
        item(2, "hidden"),
        item(3, "class=\"panel hidden\""),
        item(4, "style=\"display:none;\""),
    ));
    let page = extract(html.as_bytes(), &Input::default());
    for i in 1..=4 {
        assert!(
            page.text.contains(&format!("Course {i} teaches")),
            "{}",
            page.text
        );
    }
    assert!(!page.text.contains("Not controlled"), "{}", page.text);
}

#[test]
fn a_page_built_from_widgets_keeps_all_of_them() {
    // Elementor names every block a widget: the text widgets around the
    // largest one (an FAQ toggle, 40% of the text) are the page too.
    let widget = |kind: &str, body: &str| {
        format!(
            "<div class=\"elementor-element e-con e-parent\"><div class=e-con-inner>\
             <div class=\"elementor-element elementor-widget elementor-widget-{kind}\">\
             <div class=elementor-widget-container>{body}</div></div></div></div>"
        )
    };
    let text = |topic: &str| {
        widget(
            "text-editor",
            &format!(
                "<h2>{topic}</h2><p>{topic}: we help entrepreneurs set up their businesses, file \
                 the papers and choose the right entity.</p><p>Our lawyers work with clients \
                 across the five boroughs and advise on taxes, licences and rules.</p>"
            ),
        )
    };
    let faq: String = (0..4)
        .map(|i| format!("<div class=elementor-tab-content><p>Answer {i}: {SENTENCE}</p></div>"))
        .collect();
    let html = format!(
        "<html><body><header><nav><a href=/>Home</a></nav></header>\
         <div class=\"elementor elementor-44902\">{}{}{}{}</div>\
         <footer>Copyright 2026</footer></body></html>",
        text("Formation"),
        text("Contracts"),
        text("Disputes"),
        widget("toggle", &faq),
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in [
        "Formation: we help",
        "Contracts: we help",
        "Disputes: we help",
        "Answer 3:",
    ] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
}

#[test]
fn a_landing_page_keeps_the_sections_it_names_teasers() {
    // Its declared main is a stack of sections, most of them named
    // "teaser-…" (a word that names links to other stories on a news
    // page). The strict pass keeps only the one section with another name:
    // more than 500 characters, but under half of main.
    let features: String = (0..5)
        .map(|i| format!("<p>Feature {i}: {SENTENCE}</p>"))
        .collect();
    let teasers: String = (0..6)
        .map(|i| {
            format!(
                "<section class=\"sc-91c lfLxMo\" id=teaser-{i}f41><h2>Part {i}</h2>\
                 <p>Teaser {i}: {SENTENCE} {SENTENCE}</p></section>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><header><nav><a href=/>Home</a></nav></header><main>\
         <section id=benefits><h2>Benefits</h2>{features}</section>{teasers}</main>\
         <footer>Copyright 2026</footer></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Feature 4:", "Teaser 0:", "Teaser 5:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Copyright"), "{}", page.text);
}

#[test]
fn a_span_around_one_link_stays_in_its_sentence() {
    // ArchWiki's man page template: <span class="plainlinks ..."><a>..</a></span>.
    let ps = paragraphs();
    let html = page(&format!(
        "<h1>systemd</h1>{ps}<p>A daemon waits for events and offers services. For more \
         information see <span class=\"plainlinks archwiki-template-man\" title=\"man 7 daemon\">\
         <a class=\"external text\" href=\"https://man.archlinux.org/man/daemon.7\">daemon(7)</a>\
         </span>.</p><p>Related: <span class=share><a href=/x>Share on X</a> \
         <a href=/f>Share on F</a></span></p>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("For more information see daemon(7)."),
        "{}",
        page.text
    );
    assert!(!page.text.contains("Share on"), "{}", page.text);
}

#[test]
fn a_documentation_pages_introduction_before_its_body_is_kept() {
    // MDN's layout: main holds a header (the title and the page's
    // introduction) and, beside it, the body that scoring picks. The
    // introduction is far less than a third of the body.
    let body: String = (0..12)
        .map(|i| format!("<h2>Section {i}</h2><p>Body {i}: {SENTENCE}, {SENTENCE}</p>"))
        .collect();
    let html = format!(
        "<html><body><header><nav><a href=/>Home</a></nav></header><main>\
         <div class=layout__header><h1>Using promises</h1><section>\
         <p>Introduction: {SENTENCE} {SENTENCE}</p></section></div>\
         <aside><nav><a href=#a>On this page</a></nav></aside>\
         <div class=layout__body>{body}</div>\
         <div class=meta><p>Last modified: 2026.</p></div></main>\
         <footer>Copyright 2026</footer></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Introduction:", "Body 0:", "Body 11:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Copyright"), "{}", page.text);

    // Without the introduction, what main adds (a date line after the
    // body) is not enough to take main whole.
    let intro = format!("<p>Introduction: {SENTENCE} {SENTENCE}</p>");
    let html = html.replace(&intro, "");
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Body 11:"), "{}", page.text);
    assert!(!page.text.contains("Last modified"), "{}", page.text);
}

#[test]
fn a_section_its_heading_links_to_is_read_whatever_its_id_says() {
    // Sphinx names each section by its heading and gives the heading a
    // permalink: a guide's section on cookies is `id="cookies"`. A cookie
    // notice and a comments block, named the same way but without a link
    // to themselves, are still boilerplate.
    let section = |id: &str, title: &str| {
        format!(
            "<section id=\"{id}\"><h3>{title}<a class=headerlink href=\"#{id}\">¶</a></h3>\
             <p>{title} text: {SENTENCE}</p></section>"
        )
    };
    let html = page(&format!(
        "<h1>Quickstart</h1>{}{}{}\
         <div id=cookies><h3>Cookies</h3><p>Cookie notice: we use cookies to improve \
         your experience, and by browsing on you accept them all.</p></div>\
         <div id=comments><h3>Comments</h3><p>Reader comment: this guide helped me a lot, \
         thank you for writing it all down.</p></div>",
        section("routing", "Routing"),
        section("cookies", "Cookies"),
        section("sessions", "Sessions"),
    ));
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Routing text:", "Cookies text:", "Sessions text:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    for part in ["Cookie notice:", "Reader comment:"] {
        assert!(!page.text.contains(part), "{part} kept: {}", page.text);
    }
}

#[test]
fn a_landing_pages_hero_opens_its_content_but_an_articles_standfirst_does_not() {
    // The hero (the page's h1 and its pitch) sits apart from the body that
    // scoring picks, inside one page container.
    let body: String = (0..8)
        .map(|i| format!("<p>Body {i}: {SENTENCE}, {SENTENCE}</p>"))
        .collect();
    let html = |head: &str| {
        format!(
            "<html><head>{head}</head><body><header><nav><a href=/>Home</a></nav></header>\
             <div class=wrap><div class=hero><h1>Cybersecurity consulting</h1>\
             <p>Pitch: {SENTENCE} {SENTENCE}</p><a href=/contact>Contact us</a></div>\
             <div class=cols><div class=copy>{body}</div></div></div>\
             <footer>Copyright 2026</footer></body></html>"
        )
    };
    let page = extract(html("").as_bytes(), &Input::default());
    for part in ["Pitch:", "Body 0:", "Body 7:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Copyright"), "{}", page.text);

    // The same layout on a page that declares itself an article: the
    // paragraph under the headline is its standfirst, not its text.
    let article = html("<meta property=\"og:type\" content=\"article\">");
    let page = extract(article.as_bytes(), &Input::default());
    assert!(page.text.contains("Body 7:"), "{}", page.text);
    assert!(!page.text.contains("Pitch:"), "{}", page.text);
}

#[test]
fn a_post_in_widgets_is_read_but_sidebar_widgets_stay_out() {
    // An Elementor post: its body is three text widgets, none with 40% of
    // the page's text (no wrapper is named a widget), beside a grid of
    // teasers for other posts.
    let part = |n: usize| {
        format!(
            "<div class=\"elementor-element elementor-widget elementor-widget-text-editor\">\
             <div class=elementor-widget-container><p>Body {n}: {SENTENCE}, {SENTENCE}</p>\
             <p>More {n}: {SENTENCE}</p></div></div>"
        )
    };
    let teasers: String = (0..4)
        .map(|i| {
            format!(
                "<article class=\"elementor-post elementor-grid-item\">\
                 <h3><a href=/p{i}>Other post {i}</a></h3><p>Teaser {i}: {SENTENCE}</p></article>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><div class=\"elementor elementor-3902\"><h1>Getting hurt at a gym</h1>\
         <div class=\"elementor-element e-con\">{}{}{}</div>\
         <div class=elementor-posts-container>{teasers}</div></div></body></html>",
        part(0),
        part(1),
        part(2)
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Body 0:", "More 1:", "Body 2:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }

    // An article beside a sidebar of widgets that hold more text than it:
    // the widgets are still boilerplate.
    let body: String = (0..5)
        .map(|i| format!("<p>Article {i}: {SENTENCE}, {SENTENCE}</p>"))
        .collect();
    let sidebar: String = (0..14)
        .map(|i| format!("<div class=\"widget widget_text\"><p>Widget {i}: {SENTENCE}</p></div>"))
        .collect();
    let html = format!(
        "<html><body><div class=site><div class=entry>{body}</div>\
         <div class=aside-col>{sidebar}</div></div></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Article 4:"), "{}", page.text);
    assert!(!page.text.contains("Widget 0:"), "{}", page.text);
}

#[test]
fn links_listed_under_a_paragraph_between_paragraphs_are_text_but_not_in_an_article() {
    // A tutorial index: under each heading a sentence and the links it
    // introduces. The list after the last paragraph is the site's.
    let section = |i: usize| {
        format!(
            "<h2>Topic {i}</h2><p>Topic {i} text: {SENTENCE}, {SENTENCE}</p>\
             <ul><li><a href=/t{i}a>Lesson {i}a</a></li><li><a href=/t{i}b>Lesson {i}b</a></li></ul>"
        )
    };
    let sections: String = (0..4).map(section).collect();
    let html = |head: &str| {
        format!(
            "<html><head>{head}</head><body><div class=tutorial>{sections}\
             <p>Closing: {SENTENCE}, {SENTENCE}</p>\
             <ul><li><a href=/x>Trending now</a></li><li><a href=/y>Most viewed</a></li></ul>\
             </div></body></html>"
        )
    };
    let page = extract(html("").as_bytes(), &Input::default());
    for part in ["Topic 0 text:", "Lesson 0a", "Lesson 3b", "Closing:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Trending now"), "{}", page.text);

    // In a page that declares itself an article, such lists are inserts
    // pointing to other stories.
    let article = html("<meta property=\"og:type\" content=\"article\">");
    let page = extract(article.as_bytes(), &Input::default());
    assert!(page.text.contains("Topic 3 text:"), "{}", page.text);
    assert!(!page.text.contains("Lesson 0a"), "{}", page.text);
}

#[test]
fn a_sections_header_is_its_text_but_the_sites_and_a_storys_are_not() {
    let sections: String = (0..4)
        .map(|i| {
            format!(
                "<section><header><h2>Feature {i}</h2><p>Intro {i}: {SENTENCE}</p></header>\
                 <div><p>Detail {i}: {SENTENCE}, {SENTENCE}</p></div></section>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><header><p>Site banner: free shipping on all orders this week.</p>\
         <nav><a href=/>Home</a></nav></header><main>{sections}</main></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Intro 0:", "Intro 3:", "Detail 3:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Site banner"), "{}", page.text);

    // A story's header holds its byline.
    let body: String = (0..5)
        .map(|i| format!("<p>Story {i}: {SENTENCE}, {SENTENCE}</p>"))
        .collect();
    let html = format!(
        "<html><body><main><article><header><h1>Headline</h1>\
         <p>By Jane Doe, staff writer, reporting from the city hall this morning.</p></header>\
         {body}</article></main></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Story 4:"), "{}", page.text);
    assert!(!page.text.contains("Jane Doe"), "{}", page.text);
}

#[test]
fn a_threads_replies_in_a_block_named_comments_are_its_text_but_a_blogs_comments_are_not() {
    // A forum names the block of replies "comments" (warriorforum.com);
    // the replies are the thread.
    let replies: String = (0..6)
        .map(|i| {
            format!(
                "<li class=DiscussionBoard-item><div class=DiscussionBoard-content>\
                 <p>Reply {i}: {SENTENCE} {SENTENCE}</p></div></li>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href=/>Home</a></nav><main><article><h1>Will this method work?</h1>\
         <div id=main-post><p>Opening post: {SENTENCE} {SENTENCE}</p></div>\
         <section id=comments class=DiscussionBoard><ul>{replies}</ul></section>\
         </article></main></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Opening post:", "Reply 0:", "Reply 5:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }

    // A blog engine names each comment: the comments are still dropped,
    // however much of the page they hold.
    let body: String = (0..3)
        .map(|i| format!("<p>Post {i}: {SENTENCE}</p>"))
        .collect();
    let comments: String = (0..8)
        .map(|i| {
            format!(
                "<li class=comment><div class=comment-author>Reader {i}</div>\
                 <div class=comment-content><p>Comment {i}: {SENTENCE} {SENTENCE}</p></div></li>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><main><article><h1>Logging</h1><div class=entry-content>{body}</div>\
         </article><div id=comments class=comments-area><ol class=comment-list>{comments}</ol>\
         </div></main></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Post 2:"), "{}", page.text);
    assert!(!page.text.contains("Comment 0:"), "{}", page.text);
}

#[test]
fn a_stack_inside_one_section_of_a_larger_stack_is_read_with_the_larger() {
    // A buying guide: its methodology, in an accordion's pane, is a stack
    // of paragraphs and a list (scoring picks the list), set among the
    // reviews of the products: more text, in plainer paragraphs that
    // score less each.
    let review = "It writes every event to a file and rotates the files each night so that \
        the disk never fills up with old records from last year.";
    let items: String = (0..9)
        .map(|i| format!("<li><strong>Criterion {i}:</strong> {SENTENCE} {SENTENCE}</li>"))
        .collect();
    let cards: String = (0..6)
        .map(|i| {
            let ps: String = (0..5).map(|j| format!("<p>Review {i}.{j}: {review}</p>")).collect();
            format!("<div class=card><div class=inner><div class=copy><h3>Product {i}</h3>{ps}</div></div></div>")
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href=/>Home</a> <a href=/docs>Docs</a></nav>\
         <h1>The best logging tools</h1><div class=post><div class=accordion><div class=pane>\
         <button>How we test</button><div class=panel><p>Method: {SENTENCE} {SENTENCE}</p>\
         <p>{SENTENCE} {SENTENCE}</p><ul>{items}</ul></div></div></div>{cards}</div>\
         <footer><a href=/privacy>Privacy</a> Copyright 2026</footer></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for part in ["Method:", "Criterion 8:", "Review 0.0:", "Review 5.4:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    assert!(!page.text.contains("Privacy"), "{}", page.text);
}

#[test]
fn teasers_of_other_posts_beside_a_post_are_not_part_of_it() {
    // Each teaser is an <article> of its own, and scores close to the
    // post: they are other compositions, not parts of this one.
    let claim = "If you were hurt at work, at home, on the road, or in a store, you may, \
        in some cases, have a claim, and a lawyer can help you, quickly, to find out.";
    let body: String = (0..3)
        .map(|i| format!("<p>Body {i}: {SENTENCE} {SENTENCE}</p>"))
        .collect();
    let teasers: String = (0..4)
        .map(|i| {
            format!(
                "<article class=grid-item><div class=inner><h3><a href=/n{i}>News {i}</a></h3>\
                 <div class=excerpt><p>Teaser {i}: {claim} Call us today.</p></div></div></article>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href=/>Home</a></nav><div class=wrap><div class=col-a>\
         <h1>Getting hurt at a gym</h1><div class=copy>{body}</div></div><div class=col-b>\
         <h2>Latest news</h2><div class=grid>{teasers}</div></div></div></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Body 2:"), "{}", page.text);
    assert!(!page.text.contains("Teaser"), "{}", page.text);

    // A thread's posts are articles of one kind: they are its content.
    let posts: String = (0..4)
        .map(|i| {
            format!(
                "<article class=message><div class=inner><div class=author>user{i}</div>\
                 <div class=excerpt><p>Post {i}: {claim} Call us today.</p></div></div></article>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href=/>Home</a></nav><div class=wrap><h1>Thread</h1>\
         <div class=posts>{posts}</div></div></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Post 0:"), "{}", page.text);
    assert!(page.text.contains("Post 3:"), "{}", page.text);
}

#[test]
fn a_tab_list_holding_the_panels_its_labels_control_is_read() {
    // Bootstrap's accordion marked up as tabs, with the panels' role
    // misspelled: the labels still name their panels (aria-controls).
    let faq: String = (0..3)
        .map(|i| {
            format!(
                "<div class=panel><div class=panel-heading role=tab><h4><a role=button \
                 href=#c{i} aria-controls=c{i}>Question {i}?</a></h4></div>\
                 <div id=c{i} class=\"panel-collapse collapse\" role=tabpane-{i}>\
                 <p>Answer {i}: {SENTENCE}</p></div></div>"
            )
        })
        .collect();
    let ps: String = (0..3).map(|i| format!("<p>{i}: {SENTENCE}</p>")).collect();
    let html = page(&format!(
        "<h1>Logging course</h1>{ps}<h2>FAQ</h2><div role=tablist>{faq}</div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    for i in 0..3 {
        assert!(page.text.contains(&format!("Answer {i}:")), "{}", page.text);
    }
}

#[test]
fn a_paragraph_that_is_one_link_is_a_line_of_text_but_not_in_an_article() {
    // A blog's index: each entry's title is a paragraph holding one link
    // (its date, named so, is dropped), then its summary.
    let entries: String = (0..4)
        .map(|i| {
            format!(
                "<p class=blogtitle><a href=/post-{i}>Allocating on the stack, part {i}</a>, \
                 <span class=date>27 February 2026</span></p><p class=blogsummary>{SENTENCE}</p>"
            )
        })
        .collect();
    let html = format!(
        "<html><body><nav><a href=/>Home</a> <a href=/blog>Blog</a></nav><h1>The Go Blog</h1>\
         <div id=blogindex>{entries}</div></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for i in 0..4 {
        let title = format!("Allocating on the stack, part {i}");
        assert!(page.text.contains(&title), "{title} missing: {}", page.text);
    }

    // In a story, such a line points to another story.
    let body: String = (0..4)
        .map(|i| format!("<p>Story {i}: {SENTENCE}</p>"))
        .collect();
    let html = format!(
        "<html><head><meta property=og:type content=article></head><body><article>\
         <h1>Headline</h1>{body}<p><a href=/other>Read more: the other story of the day</a></p>\
         <p>Story 5: {SENTENCE}</p></article></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("Story 5:"), "{}", page.text);
    assert!(!page.text.contains("Read more"), "{}", page.text);
}

#[test]
fn a_page_heading_each_item_with_an_h1_keeps_them_but_its_title() {
    // A news list gives each entry an <h1>: they are the entries' titles.
    let entries: String = (0..4)
        .map(|i| {
            format!(
                "<article class=list-item><h1 class=title><a href=/news/{i}>Headline number {i} \
                 of the day</a></h1><p>{SENTENCE}</p></article>"
            )
        })
        .collect();
    let html = format!(
        "<html><head><title>Latest news</title></head><body><nav><a href=/>Home</a></nav>\
         <main><h1>Latest news</h1>{entries}</main></body></html>"
    );
    let page = extract(html.as_bytes(), &Input::default());
    for i in 0..4 {
        let title = format!("Headline number {i} of the day");
        assert!(page.text.contains(&title), "{title} missing: {}", page.text);
    }
    assert!(!page.text.starts_with("Latest news"), "{}", page.text);
}

#[test]
fn a_declared_threads_comments_are_its_replies() {
    // A forum that names each reply a comment (Vanilla) and says what the
    // page is: a DiscussionForumPosting. Without the declaration they are
    // readers' comments, and dropped.
    let replies: String = (0..4)
        .map(|i| {
            format!(
                "<li class=\"Item ItemComment\"><div class=Comment><div class=Author>user{i}</div>\
                 <div class=Message><p>Reply {i}: {SENTENCE}</p></div></div></li>"
            )
        })
        .collect();
    let page_with = |head: &str| {
        format!(
            "<html><head>{head}</head><body><nav><a href=/>Home</a></nav><div class=thread>\
             <h1>Higher Logic has terminated the forum</h1><div class=Discussion>\
             <p>Opening post: {SENTENCE} {SENTENCE}</p></div>\
             <ul class=Comments>{replies}</ul></div></body></html>"
        )
    };
    let json_ld = "<script type=\"application/ld+json\">{\"@context\": \"https://schema.org\", \
        \"@type\": \"DiscussionForumPosting\", \"headline\": \"Higher Logic\"}</script>";
    let page = extract(page_with(json_ld).as_bytes(), &Input::default());
    for part in ["Opening post:", "Reply 0:", "Reply 3:"] {
        assert!(page.text.contains(part), "{part} missing: {}", page.text);
    }
    let page = extract(page_with("").as_bytes(), &Input::default());
    assert!(page.text.contains("Opening post:"), "{}", page.text);
    assert!(!page.text.contains("Reply 0:"), "{}", page.text);
}

#[test]
fn a_legal_disclaimer_after_the_content_is_dropped() {
    // An investment firm's page ends in numbered disclosures, in a block
    // its CMS names as a disclaimer.
    let ps = paragraphs();
    let html = page(&format!(
        "<h1>Index funds</h1>{ps}<div class=\"richtext cmp-richtext--disclaimer\">\
         <p><sup>1</sup>Average expense ratio as of December 31, all funds and share \
         classes, weighted by assets; past performance is no guarantee of future \
         returns.</p></div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(page.text.contains("3: Logging"), "{}", page.text);
    assert!(!page.text.contains("expense ratio"), "{}", page.text);
}

#[test]
fn a_landing_pages_h1_is_its_pitch_but_a_storys_is_its_headline() {
    let sections: String = (0..4)
        .map(|i| format!("<section><h2>Part {i}</h2><p>{i}: {SENTENCE}</p></section>"))
        .collect();
    let body = format!(
        "<div class=hero><h1>Push your ideas to the web</h1>\
         <p>Deploy sites and apps in minutes, from one place, for the whole team: \
         previews for every change, rollbacks in one click, and the edge network \
         serving your pages close to every reader.</p></div>\
         <div class=sections>{sections}</div>"
    );
    let landing = format!(
        "<html><head><title>Acme: the platform for web developers</title></head>\
         <body><main>{body}</main></body></html>"
    );
    let page = extract(landing.as_bytes(), &Input::default());
    assert!(page.text.contains("3: Logging"), "{}", page.text);
    assert!(page.text.contains("Deploy sites and apps"), "{}", page.text);
    assert!(
        page.text.contains("Push your ideas to the web"),
        "{}",
        page.text
    );

    // The same markup declared a story (JSON-LD at the top, or in its
    // @graph): the `<h1>` is the headline, reported as the title only.
    for ld in [
        r#"{"@context":"https://schema.org","@type":"NewsArticle","headline":"Ideas"}"#,
        r#"{"@context":"https://schema.org","@graph":[{"@type":"WebPage"},{"@type":["BlogPosting"]}]}"#,
    ] {
        let story = landing.replace(
            "</title>",
            &format!("</title><script type=\"application/ld+json\">{ld}</script>"),
        );
        let page = extract(story.as_bytes(), &Input::default());
        assert!(page.text.contains("3: Logging"), "{}", page.text);
        assert!(
            !page.text.contains("Push your ideas"),
            "{ld}: {}",
            page.text
        );
    }

    // A listing naming its entries' types inside an ItemList declares no
    // story of its own.
    let ld = r#"{"@type":"ItemList","itemListElement":[{"@type":"ListItem","item":{"@type":"NewsArticle"}}]}"#;
    let listing = landing.replace(
        "</title>",
        &format!("</title><script type=\"application/ld+json\">{ld}</script>"),
    );
    let page = extract(listing.as_bytes(), &Input::default());
    assert!(
        page.text.contains("Push your ideas to the web"),
        "{}",
        page.text
    );
}

#[test]
fn a_hidden_answer_after_a_question_is_opened() {
    // An FAQ's accordion with no ARIA: a script shows the answer when the
    // question is clicked.
    let ps = paragraphs();
    let faq: String = (0..3)
        .map(|i| {
            format!(
                "<div class=faq><div class=faq__question>Question {i}, is logging slow? \
                 <span class=reveal></span></div><div class=faq__answer style=\"display: none;\">\
                 <div>Answer {i}: no, a disabled level costs one comparison.</div></div></div>"
            )
        })
        .collect();
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}<h2>Frequently asked questions</h2>{faq}\
         <div class=note>Where next</div><div style=\"display:none\">A hidden note.</div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("Question 2, is logging slow?"),
        "{}",
        page.text
    );
    assert!(page.text.contains("Answer 2: no"), "{}", page.text);
    assert!(!page.text.contains("A hidden note"), "{}", page.text);
}

#[test]
fn an_accordions_button_heads_its_panel_but_a_read_more_button_does_not() {
    // ARIA's accordion: each header a heading holding a button that
    // opens the panel it names.
    let ps = paragraphs();
    let faq: String = (0..3)
        .map(|i| {
            format!(
                "<h3><button aria-expanded=false aria-controls=a{i}>Can I log from threads \
                 {i}</button></h3><div id=a{i} hidden><p>Answer {i}: yes, handlers take a \
                 lock.</p></div>"
            )
        })
        .collect();
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}{faq}<button aria-controls=more>Read more</button>\
         <div id=more hidden><p>The rest of the guide.</p></div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("Can I log from threads 2"),
        "{}",
        page.text
    );
    assert!(page.text.contains("Answer 2: yes"), "{}", page.text);
    assert!(
        page.text.contains("The rest of the guide."),
        "{}",
        page.text
    );
    assert!(!page.text.contains("Read more"), "{}", page.text);
}

#[test]
fn a_marquees_copies_of_its_items_are_read_once_but_recurring_items_stay() {
    let ps = paragraphs();
    let round: String = [
        "Simple, straightforward and powerful",
        "The best list app on the market",
    ]
    .iter()
    .map(|q| format!("<div class=quote>{q}</div>"))
    .collect();
    let days: String = (1..=4)
        .map(|w| {
            format!(
                "<tr><td>Week {w}: tempo run of {w} miles</td></tr>\
                 <tr><td>Rest day and easy stretching</td></tr>"
            )
        })
        .collect();
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}<div class=scroller>{round}{round}{round}</div>\
         <table>{days}</table>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert_eq!(
        page.text.matches("The best list app").count(),
        1,
        "{}",
        page.text
    );
    assert_eq!(page.text.matches("Rest day").count(), 4, "{}", page.text);
}

#[test]
fn a_cards_footer_is_part_of_the_card() {
    let ps = paragraphs();
    let cards: String = (0..3)
        .map(|i| {
            format!(
                "<div class=CustomerCard><span>Customer {i}</span><div class=CustomerCardFooter>\
                 <h3>Running the service cost customer {i} a quarter of what it did before</h3>\
                 </div></div>"
            )
        })
        .collect();
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}<div class=cards>{cards}</div>\
         <div class=site-footer><p>Company, careers, press and the legal notices of the site.</p></div>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("cost customer 2 a quarter"),
        "{}",
        page.text
    );
    assert!(!page.text.contains("legal notices"), "{}", page.text);
}

#[test]
fn a_list_whose_items_are_sentences_with_links_stays_but_a_list_of_links_goes() {
    let ps = paragraphs();
    let hotels = "<ul><li>Official website: <a href=/a>St Regis Hotels and Resorts</a></li>\
        <li>Flagship hotel: <a href=/b>The St Regis New York, in Manhattan</a></li>\
        <li>This hotel features in my lists of <a href=/c>the best luxury hotels in New \
        York City</a> and <a href=/d>the most stunning indoor hotel pools</a></li></ul>";
    let related = "<ul><li><a href=/e>Ten hotels with the best views in Paris</a> |</li>\
        <li><a href=/f>Where to stay in Tokyo on a budget this year</a> |</li>\
        <li><a href=/g>The most beautiful beach resorts in the Maldives</a></li></ul>";
    let html = page(&format!(
        "<h1>Best hotel brands</h1>{ps}<h2>St Regis</h2>{hotels}<p>{SENTENCE}</p>{related}"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(
        page.text.contains("Flagship hotel: The St Regis New York"),
        "{}",
        page.text
    );
    assert!(
        !page.text.contains("Where to stay in Tokyo"),
        "{}",
        page.text
    );
}

#[test]
fn an_advertisement_label_goes_and_a_block_that_starts_like_one_stays() {
    // The label is its block's whole text, in any case and spread over
    // inline elements; a block whose text goes on past a label's length
    // is read, whatever it starts with.
    let ps = paragraphs();
    let long = "Advertisements of the period show how logging was sold to the trade.";
    let html = page(&format!(
        "<h1>Logging HOWTO</h1>{ps}<div> <b>ADVERT</b>ISEMENT </div>\
         <div><span>Anzeige</span></div><p>{long}</p>"
    ));
    let page = extract(html.as_bytes(), &Input::default());
    assert!(!page.text.contains("ISEMENT"), "{}", page.text);
    assert!(!page.text.contains("Anzeige"), "{}", page.text);
    assert!(page.text.contains(long), "{}", page.text);
}
