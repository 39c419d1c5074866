//! `nearcrawl crawl` follows a prompt meta refresh as a redirect (rustdoc's
//! stubs): the stub is never a page, its target is written once, a refresh
//! loop ends as a redirect loop does, and a page that refreshes slowly is
//! a page. Seen where the server sees it: the requests it logged.

use nearcrawl_tests::{json_lines, made_up_words, run, serve};

fn stub(target: &str) -> Vec<u8> {
    format!(
        "<!DOCTYPE html><html><head><meta http-equiv=\"refresh\" content=\"0;URL={target}\">\
         <title>Redirection</title></head><body><p>Redirecting to <a href=\"{target}\">{target}</a>...</p>\
         </body></html>"
    )
    .into_bytes()
}

fn page(title: &str, text: &str, links: &str) -> Vec<u8> {
    format!(
        "<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p>{links}</main></body></html>"
    )
    .into_bytes()
}

#[test]
fn a_meta_refresh_is_a_redirect_and_its_stub_no_page() {
    // Text of its own for each page: the test needs nothing beside the
    // checkout.
    let texts: Vec<String> = (0..3).map(|i| made_up_words(i, 250, 5_000)).collect();
    let (port, log) = serve(
        move |path| {
            let html = |b: Vec<u8>| (200, "text/html", b);
            match path {
                "/robots.txt" => (404, "text/plain", Vec::new()),
                "/" => html(page(
                    "Home",
                    &texts[0],
                    "<a href='/old/a.html'>A</a> <a href='/old/b.html'>B</a> \
                     <a href='/loop/1.html'>Loop</a> <a href='/slow.html'>Slow</a> \
                     <a href='/away.html'>Away</a>",
                )),
                // Two stubs for one page: fetched once.
                "/old/a.html" => html(stub("../new/a.html")),
                "/old/b.html" => html(stub("/new/a.html")),
                "/new/a.html" => html(page("Item A", &texts[1], "")),
                "/loop/1.html" => html(stub("2.html")),
                "/loop/2.html" => html(stub("1.html")),
                "/slow.html" => html(page(
                    "Slow",
                    &texts[2],
                    "<meta http-equiv='refresh' content='30;URL=/new/never.html'>",
                )),
                // Out of scope: another host.
                "/away.html" => html(stub("http://elsewhere.invalid/")),
                _ => (404, "text/plain", Vec::new()),
            }
        },
        std::time::Duration::ZERO,
    );
    let dir = std::env::temp_dir().join(format!("nearcrawl-e2e-refresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true\n[output]\ndir = \"{}\"\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    let seed = format!("http://127.0.0.1:{port}/");
    let out = run(
        &[
            "crawl",
            &seed,
            "--config",
            dir.join("c.toml").to_str().unwrap(),
        ],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    let finals: Vec<&str> = pages
        .iter()
        .map(|p| p["final_url"].as_str().unwrap())
        .collect();
    assert!(
        pages.iter().all(|p| p["title"] != "Redirection"),
        "a stub was written as a page: {finals:?}"
    );
    assert_eq!(
        finals.iter().filter(|u| u.ends_with("/new/a.html")).count(),
        1,
        "{finals:?}"
    );
    assert!(
        finals.iter().any(|u| u.ends_with("/slow.html")),
        "{finals:?}"
    );
    let requests = log.lock().unwrap().clone();
    // Each stub's hop is fetched, as an HTTP redirect's would be; the
    // second copy is a duplicate.
    assert_eq!(
        requests.iter().filter(|p| *p == "/new/a.html").count(),
        2,
        "{requests:?}"
    );
    assert!(
        !requests.iter().any(|p| p == "/new/never.html"),
        "{requests:?}"
    );
    // The loop went round until its hop limit or a URL seen, then stopped.
    assert!(
        requests.iter().filter(|p| p.starts_with("/loop/")).count() <= 3,
        "{requests:?}"
    );

    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/stats.json")).unwrap())
            .unwrap();
    assert!(stats["redirects"].as_u64().unwrap() >= 1, "{stats}");
    let errors = std::fs::read_to_string(dir.join("out/errors.jsonl")).unwrap_or_default();
    assert!(errors.contains("/loop/"), "the loop is an error: {errors}");
    assert!(
        errors.contains("/away.html"),
        "an out-of-scope hop is refused: {errors}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
