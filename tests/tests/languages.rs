//! `content.languages`: a crawl of a site in three languages keeps only
//! the pages in the languages asked for (by the rule of
//! `nearcrawl_extract::page_language`: a template's `lang="en"` over a
//! German text is German, a page declaring nothing is detected), follows
//! the other pages' links unless `follow_other_languages = false`, and
//! counts pages per language in `stats.json` and `status`.

use std::collections::BTreeSet;
use std::path::Path;

use nearcrawl_tests::{crawl_ok, fresh_dir, json_lines, run, serve};

const EN: [&str; 3] = [
    "The harbour was quiet in the early morning, and the fishermen were mending their nets \
     while the gulls circled above the boats, waiting for the first catch of the day.",
    "Our library opens at nine on weekdays. Members may borrow up to ten books at a time, \
     and the reading room upstairs offers newspapers from all over the country.",
    "The committee met on Tuesday to discuss the new budget, which includes funding for \
     road repairs, a larger school canteen and longer opening hours for the swimming pool.",
];
const DE: [&str; 4] = [
    "Die Bibliothek ist werktags ab neun Uhr geöffnet. Mitglieder dürfen bis zu zehn Bücher \
     gleichzeitig ausleihen, und im Lesesaal liegen Zeitungen aus dem ganzen Land aus.",
    "Am frühen Morgen war der Hafen still, die Fischer flickten ihre Netze, während die Möwen \
     über den Booten kreisten und auf den ersten Fang des Tages warteten.",
    "Der Ausschuss hat am Dienstag über den neuen Haushalt beraten, der Mittel für die \
     Reparatur der Straßen, eine größere Schulkantine und längere Öffnungszeiten vorsieht.",
    "Im Herbst färben sich die Blätter der alten Eichen im Stadtpark golden, und an den \
     Wochenenden sammeln die Kinder Kastanien, aus denen sie kleine Figuren basteln.",
];
const FR: [&str; 2] = [
    "La bibliothèque ouvre à neuf heures en semaine. Les membres peuvent emprunter jusqu'à \
     dix livres à la fois, et la salle de lecture propose des journaux de tout le pays.",
    "Tôt le matin, le port était calme : les pêcheurs réparaient leurs filets pendant que \
     les mouettes tournaient au-dessus des bateaux en attendant la première prise du jour.",
];

/// `lang` attribute (if any), title, text, links.
fn page(lang: Option<&str>, title: &str, text: &str, links: &[&str]) -> Vec<u8> {
    let lang = lang.map(|l| format!(" lang=\"{l}\"")).unwrap_or_default();
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    format!(
        "<!doctype html><html{lang}><head><title>{title}</title></head><body>\
         <nav>{links}</nav><main><h1>{title}</h1><p>{text}</p><p>{text}</p></main></body></html>"
    )
    .into_bytes()
}

/// The site: a start page with next to no text (no language), and pages
/// in English, German and French; one German page only an English page
/// links to.
fn route(path: &str) -> (u16, &'static str, Vec<u8>) {
    let body = match path {
        "/" => page(None, "Start", "", &["/en/1", "/de/1", "/fr/1"]),
        "/en/1" => page(Some("en"), "Harbour", EN[0], &["/en/2", "/de/via-en"]),
        "/en/2" => page(Some("en-GB"), "Library", EN[1], &[]),
        "/de/via-en" => page(Some("de"), "Ausschuss", DE[2], &[]),
        "/de/1" => page(Some("de-DE"), "Bibliothek", DE[0], &["/de/2", "/de/3"]),
        // A template's default declaration over a German text.
        "/de/2" => page(Some("en"), "Hafen", DE[1], &[]),
        // No declaration.
        "/de/3" => page(None, "Herbst", DE[3], &[]),
        "/fr/1" => page(Some("fr"), "Bibliothèque", FR[0], &["/fr/2"]),
        "/fr/2" => page(Some("fr"), "Port", FR[1], &[]),
        "/robots.txt" => return (404, "text/plain", Vec::new()),
        _ => return (404, "text/html", b"not found".to_vec()),
    };
    (200, "text/html; charset=utf-8", body)
}

fn crawl(dir: &Path, port: u16, content: &str) -> serde_json::Value {
    std::fs::write(
        dir.join("c.toml"),
        format!(
            "[seeds]\nurls = [\"http://127.0.0.1:{port}/\"]\n\
             [politeness]\ndelay_ms = 0\n[fetch]\nallow_private_networks = true\n\
             [output]\ndir = \"{}\"\n[content]\n{content}\n",
            dir.join("out").display()
        ),
    )
    .unwrap();
    crawl_ok(dir)
}

fn paths(rows: &[serde_json::Value], key: &str) -> BTreeSet<String> {
    rows.iter()
        .map(|r| {
            r[key]
                .as_str()
                .unwrap()
                .split('/')
                .skip(3)
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths
        .iter()
        .map(|p| p.trim_start_matches('/').to_string())
        .collect()
}

#[test]
fn only_pages_in_the_languages_asked_for_reach_the_corpus() {
    let (port, _) = serve(route, std::time::Duration::ZERO);
    let dir = fresh_dir("languages-kept");
    let stats = crawl(&dir, port, "languages = [\"de\"]");
    let out = dir.join("out");
    let pages = json_lines(&out.join("pages-00000.jsonl"));
    assert_eq!(
        paths(&pages, "url"),
        set(&["/de/1", "/de/2", "/de/3", "/de/via-en"]),
        "the German pages, the template's and the undeclared one too"
    );
    assert!(pages.iter().all(|p| p["language"] == "de"));
    let visited = paths(&json_lines(&out.join("visits.jsonl")), "url");
    assert!(
        visited.contains("en/2") && visited.contains("fr/2"),
        "links followed"
    );
    assert_eq!(stats["fetched"], 9);
    assert_eq!(stats["written"], 4);
    let by_language = &stats["languages"];
    assert_eq!(
        (
            &by_language["de"],
            &by_language["en"],
            &by_language["fr"],
            &by_language["und"]
        ),
        (&4.into(), &2.into(), &2.into(), &1.into())
    );
    assert_eq!(stats["other_language"], 5);
    let status = run(&["status", out.to_str().unwrap()], b"");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("languages: de 4, en 2, fr 2, und 1; 5 left out"),
        "{text}"
    );
}

#[test]
fn other_languages_links_are_not_followed_when_asked() {
    let (port, log) = serve(route, std::time::Duration::ZERO);
    let dir = fresh_dir("languages-unfollowed");
    let stats = crawl(
        &dir,
        port,
        "languages = [\"de\"]\nfollow_other_languages = false",
    );
    let asked: BTreeSet<String> = log.lock().unwrap().iter().cloned().collect();
    for never in ["/en/2", "/de/via-en", "/fr/2"] {
        assert!(
            !asked.contains(never),
            "{never} is linked from other languages only"
        );
    }
    // The start page is of no known language: its links are followed.
    assert!(asked.contains("/de/1") && asked.contains("/en/1"));
    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    assert_eq!(paths(&pages, "url"), set(&["/de/1", "/de/2", "/de/3"]));
    assert_eq!(stats["fetched"], 6);
}

#[test]
fn every_language_is_kept_by_default_and_recorded() {
    let (port, _) = serve(route, std::time::Duration::ZERO);
    let dir = fresh_dir("languages-default");
    let stats = crawl(&dir, port, "");
    assert_eq!(stats["written"], 9);
    assert_eq!(stats["other_language"], 0);
    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    let language = |path: &str| {
        let page = pages
            .iter()
            .find(|p| p["url"].as_str().unwrap().ends_with(path));
        page.map(|p| p["language"].clone())
    };
    assert_eq!(language("/fr/2"), Some("fr".into()));
    assert_eq!(language("/en/2"), Some("en".into()));
    assert_eq!(
        language("/de/2"),
        Some("de".into()),
        "the text over the template"
    );
    let start = format!("127.0.0.1:{port}/");
    assert_eq!(
        language(&start),
        Some(serde_json::Value::Null),
        "no language known"
    );
}

/// An English site that declares no language, whose API pages hold
/// identifiers only (the detector names no language for them).
fn api_route(path: &str) -> (u16, &'static str, Vec<u8>) {
    let guide = format!("{} {}", EN[0], EN[1]);
    let body = match path {
        "/" => page(
            None,
            "Guide",
            &guide,
            &["/api/object", "/api/list", "/guide/2"],
        ),
        "/guide/2" => page(None, "Committee", EN[2], &[]),
        "/api/object" => page(
            None,
            "Object",
            "java.lang.Object getClass() hashCode() equals(Object) toString() notify() wait(long)",
            &[],
        ),
        "/api/list" => page(
            None,
            "List",
            "java.util.List<E> add(E) get(int) set(int,E) remove(int) java.util.ArrayList<E>",
            &[],
        ),
        "/robots.txt" => return (404, "text/plain", Vec::new()),
        _ => return (404, "text/html", b"not found".to_vec()),
    };
    (200, "text/html; charset=utf-8", body)
}

#[test]
fn a_page_of_no_language_decided_takes_its_hosts() {
    let (port, _) = serve(api_route, std::time::Duration::ZERO);
    let dir = fresh_dir("languages-undecided");
    let stats = crawl(&dir, port, "languages = [\"en\"]");
    assert_eq!(stats["languages"]["und"], 2, "{stats}");
    assert_eq!(stats["written"], 4, "{stats}");
    assert_eq!(stats["other_language"], 0, "{stats}");

    // Or, when asked, the filter keeps only what it could name.
    let dir = fresh_dir("languages-undecided-dropped");
    let stats = crawl(
        &dir,
        port,
        "languages = [\"en\"]\nundecided_language = \"drop\"",
    );
    let pages = json_lines(&dir.join("out/pages-00000.jsonl"));
    assert_eq!(paths(&pages, "url"), set(&["/", "/guide/2"]));
    assert_eq!(stats["other_language"], 2, "{stats}");
}
