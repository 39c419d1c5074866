//! A site on disk that changes between two crawls, for the recrawl tests:
//! page i has a title, a "Last updated" line and text of its own, and
//! links to its neighbours; the index links to every page.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::made_up_words;

/// Pages of the site before it changes.
pub const PAGES: usize = 30;

/// The site: page i has a title, a "Last updated" line and text of its own,
/// and links to its neighbours; the index links to every page.
#[derive(Debug)]
pub struct Site {
    pub root: PathBuf,
    texts: BTreeMap<usize, String>,
    dates: BTreeMap<usize, String>,
}

impl Site {
    /// A fresh temporary directory for test `tag` (readable by nginx's
    /// workers) and the site in its `site` folder.
    pub fn in_fresh_dir(tag: &str) -> (PathBuf, Site) {
        let tmp = std::env::temp_dir().join(format!("nearcrawl-e2e-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let site = Site::new(&tmp.join("site"));
        crate::nginx::open_to_all(&tmp);
        crate::nginx::open_to_all(&site.root);
        (tmp, site)
    }

    pub fn new(root: &Path) -> Site {
        std::fs::create_dir_all(root).unwrap();
        let mut site = Site {
            root: root.to_path_buf(),
            texts: (0..PAGES)
                .map(|i| (i, made_up_words(i as u64, 200, 5_000)))
                .collect(),
            dates: (0..PAGES)
                .map(|i| (i, format!("{} March 2026", i % 28 + 1)))
                .collect(),
        };
        for i in 0..PAGES {
            site.write(i);
        }
        site.write_index();
        site
    }

    fn write(&mut self, i: usize) {
        let links: String = [i.wrapping_sub(1), i + 1]
            .iter()
            .filter(|j| **j < PAGES)
            .map(|j| format!("<a href=\"p{j}.html\">page {j}</a> "))
            .collect();
        let html = format!(
            "<!DOCTYPE html><html><head><title>Topic {i}</title></head><body>\
             <nav><a href=\"index.html\">home</a> {links}</nav><main><h1>Topic {i}</h1>\
             <p>Last updated {}.</p><p>{}</p></main></body></html>",
            self.dates[&i], self.texts[&i]
        );
        let path = self.root.join(format!("p{i}.html"));
        std::fs::write(&path, html).unwrap();
        // A new Last-Modified (and so ETag) even within the same second.
        let later = SystemTime::now() + Duration::from_secs(60);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(later).unwrap();
    }

    fn write_index(&self) {
        let items: String = (self.texts.keys())
            .map(|i| format!("<li><a href=\"p{i}.html\">Topic {i}</a></li>"))
            .collect();
        let html = format!(
            "<!DOCTYPE html><html><head><title>Index</title></head><body><main><h1>Index</h1>\
             <p>Every topic of the site, listed.</p><ul>{items}</ul></main></body></html>"
        );
        std::fs::write(self.root.join("index.html"), html).unwrap();
    }

    /// Changes the site; the truth by path.
    pub fn change(&mut self) -> BTreeMap<String, &'static str> {
        let mut truth: BTreeMap<String, &'static str> = (0..PAGES)
            .map(|i| (format!("/p{i}.html"), "unchanged"))
            .collect();
        for i in [3, 7, 11] {
            self.texts
                .insert(i, made_up_words(1000 + i as u64, 200, 5_000));
            self.write(i);
            truth.insert(format!("/p{i}.html"), "changed");
        }
        for i in [5, 9] {
            self.dates.insert(i, format!("{} April 2027", i + 2));
            self.write(i);
        }
        for i in [13, 17] {
            std::fs::remove_file(self.root.join(format!("p{i}.html"))).unwrap();
            self.texts.remove(&i);
            truth.insert(format!("/p{i}.html"), "gone");
        }
        for i in [PAGES, PAGES + 1] {
            self.texts
                .insert(i, made_up_words(2000 + i as u64, 200, 5_000));
            self.dates.insert(i, "1 May 2027".into());
            self.write(i);
            truth.insert(format!("/p{i}.html"), "new");
        }
        // The index's list of links is a menu, not its text: the index is
        // unchanged, and the new pages are found through its links.
        self.write_index();
        truth.insert("/index.html".into(), "unchanged");
        truth
    }
}
