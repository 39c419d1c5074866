//! One fetched page through the pipeline, the same for both engines (the
//! embedded crawl and a cluster worker): they differ in where state lives,
//! never in what a page becomes.
//!
//! 1. [`Pipeline::read`], with no lock and no state: extraction, the
//!    page's links canonicalized and scoped, its capture for archival
//!    outputs (the body moves into it), its fingerprints and name.
//! 2. The engine asks its gate for a verdict (the embedded gate, or the
//!    shared log of a cluster) and the duplicate's original URL.
//! 3. [`Pipeline::judged`]: the outcomes of the verdict, counted in the
//!    engine's [`Stats`]: a duplicate is recorded (its page too under the
//!    `record` policy) and its links dropped; a new page goes to the corpus
//!    (unless `noindex`) with its links to queue, and the trap rule's
//!    signal is said once for both ([`Judged::copies_neighbour`]).
//!
//! Fetch failures ([`failed`]) and sitemap lists ([`Pipeline::sitemap_pages`])
//! are counted and scoped here too.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nearcrawl_extract::{Input, Page, extract_timed};
use nearcrawl_fetch::{FetchError, Fetched, Validators};
use nearcrawl_index::{Decision, Doc, Fingerprinter, Prepared, Verdict};
use url::Url;

use crate::canonical::Canonicalizer;
use crate::config::{Config, Content, DuplicatePolicy, Recrawl};
use crate::cpu::{Laps, Stage};
use crate::languages::LanguageFilter;
use crate::recrawl::{Change, Earlier, EarlierCrawl, Seen};
use crate::scope::{OutOfScope, Scope};
use crate::sink::{Capture, DuplicateRecord, ErrorRecord, Outcome, PageRecord};
use crate::stats::Stats;

/// What turns a fetched response into outcomes: the scope, the URL
/// spelling, the fingerprinters and the duplicate policy. Shared by every
/// task of an engine.
pub struct Pipeline {
    scope: Scope,
    canon: Canonicalizer,
    /// Fingerprinters are reused (they hold buffers), one per thread at work.
    fingerprinters: Mutex<Vec<Fingerprinter>>,
    fingerprinter: Fingerprinter,
    /// The request headers a capture records; none when no output keeps
    /// captures.
    capture_headers: Option<Vec<(String, String)>>,
    policy: DuplicatePolicy,
    /// The crawl whose pages this one asks again, if any.
    earlier: Option<EarlierCrawl>,
    recrawl: Recrawl,
    /// The earlier crawls the gate remembers, as named in duplicates'
    /// records.
    remembered: Vec<String>,
    /// The languages kept, and whether other pages' links are followed.
    content: Content,
    languages: LanguageFilter,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").finish_non_exhaustive()
    }
}

/// A fetched page as read before its verdict.
#[derive(Debug)]
pub struct ReadPage {
    pub page: Page,
    /// The response, its body gone (extracted, or moved into the capture).
    pub fetched: Fetched,
    /// Since the Unix epoch.
    pub fetched_at: Duration,
    pub body_bytes: u64,
    pub links: ScopedLinks,
    pub capture: Option<Capture>,
    /// What the next crawl of the page compares with.
    pub validators: Validators,
    pub text_hash: u64,
    /// The payload's digest, when it is archived.
    pub digest: Option<String>,
}

impl ReadPage {
    /// What the fetch saw, for the page's visit record (its validators and
    /// digest move into it).
    fn take_seen(&mut self) -> Seen {
        Seen {
            status: self.fetched.status,
            validators: std::mem::take(&mut self.validators),
            text_hash: Some(self.text_hash),
            bytes: self.body_bytes,
            digest: self.digest.take(),
        }
    }
}

/// A page's links that may be queued (canonical, in scope, not known to
/// be seen), and the reasons the others were not.
#[derive(Debug, Default)]
pub struct ScopedLinks {
    pub queue: Vec<Url>,
    pub out_of_scope: Vec<&'static str>,
}

/// Where [`Pipeline::scope_link`] put a link.
#[derive(Debug, Clone, Copy)]
enum Scoped {
    /// In the queue, at this index.
    Queued(usize),
    /// Out of scope, for this reason.
    Out(&'static str),
    /// Neither: not canonical http(s), or seen.
    Left,
}

/// The outcomes of a judged page.
#[derive(Debug, Default)]
pub struct Judged {
    /// Its capture, then its records, in the order the outputs get them.
    pub outcomes: Vec<Outcome>,
    /// A new page: its links to queue, one level deeper. A duplicate's
    /// links never reach the frontier.
    pub links: Vec<Url>,
    /// The page is new: the gate records it as a document.
    pub new: bool,
    /// The page went to the corpus (new, and not `noindex`).
    pub written: bool,
    /// The trap rule's signal: a duplicate of a page in its own directory
    /// (see [`crate::traps::copies_own_directory`]).
    pub copies_neighbour: bool,
}

impl Pipeline {
    /// The pipeline of `config`'s crawl of `seeds` (with their depths: an
    /// earlier crawl's pages, asked again, are seeds too, see
    /// [`crate::recrawl::seeds_to_queue`]); `capture_headers`: the request
    /// headers captures record, if an output keeps them; `earlier`: the
    /// crawl this one asks again.
    pub fn new(
        config: &Config,
        seeds: &[(Url, u32)],
        fingerprinter: Fingerprinter,
        capture_headers: Option<Vec<(String, String)>>,
        earlier: Option<EarlierCrawl>,
    ) -> Result<Pipeline, regex::Error> {
        Ok(Pipeline {
            scope: Scope::new(&config.scope, seeds.iter().map(|(url, _)| url))?,
            canon: Canonicalizer {
                strip_params: config.scope.strip_params.clone(),
                sort_query: config.scope.sort_query,
            },
            fingerprinters: Mutex::new(Vec::new()),
            fingerprinter,
            capture_headers,
            policy: config.dedup.policy,
            earlier,
            recrawl: config.recrawl.clone(),
            remembered: (config.dedup.remembered(&config.recrawl).iter())
                .map(|d| d.display().to_string())
                .collect(),
            content: config.content.clone(),
            languages: LanguageFilter::new(
                config.content.languages.clone(),
                config.content.undecided_language,
            ),
        })
    }

    /// What the earlier crawl saw of `url`.
    pub fn earlier_of(&self, url: &Url) -> Option<&Earlier> {
        self.earlier.as_ref()?.get(url)
    }

    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    pub fn canon(&self) -> &Canonicalizer {
        &self.canon
    }

    /// A seed's canonical URL, to queue at `depth` (an earlier crawl's
    /// pages come at theirs): none when it cannot be crawled or is out of
    /// scope, said in the log, since a seed the user gave is never fetched
    /// then. The one rule for both stores.
    pub fn seed(&self, url: &Url, depth: u32) -> Option<Url> {
        let Some(c) = self.canon.canonicalize(url) else {
            tracing::warn!(%url, "seed skipped: not a URL that can be crawled");
            return None;
        };
        match self.scope.check(&c, depth) {
            Ok(()) => Some(c),
            Err(why) => {
                tracing::warn!(%url, "seed skipped: out of scope ({})", why.name());
                None
            }
        }
    }

    /// `url`'s canonical spelling, if it is in scope at `depth`.
    pub fn in_scope(&self, url: &Url, depth: u32) -> Option<Url> {
        let c = self.canon.canonicalize(url)?;
        self.scope.check(&c, depth).is_ok().then_some(c)
    }

    /// Whether a redirect of a page at `depth` may go to `hop`.
    pub fn allows_hop(&self, hop: &Url, depth: u32) -> bool {
        self.in_scope(hop, depth).is_some()
    }

    /// The page `fetched` is: its body as served, or the DOM a browser
    /// built from it (`rendered`, text whatever the body's charset). Its
    /// stages' CPU time is counted on `laps` ([`crate::cpu`]).
    pub fn extract(&self, fetched: &Fetched, rendered: Option<&str>, laps: &mut Laps) -> Page {
        let (html, charset) = match rendered {
            Some(dom) => (dom.as_bytes(), Some("utf-8")),
            None => (&fetched.body[..], fetched.charset.as_deref()),
        };
        let input = Input {
            url: Some(&fetched.final_url),
            charset,
            x_robots_tag: fetched.x_robots_tag.as_deref(),
            content_language: header(&fetched.headers, "content-language"),
            markdown: self.content.markdown(),
            // Outputs record no anchor texts.
            links_without_text: true,
        };
        extract_timed(html, &input, &mut |s| laps.lap_extract(s))
    }

    /// Whether `host` is one the crawl may fetch from (the scope's hosts
    /// and domains; paths, depths and patterns are for pages).
    pub fn allows_host(&self, host: &str) -> bool {
        self.scope.allows_host(host)
    }

    /// Whether a fetched body is a PDF (declared so, or by its header):
    /// read by [`crate::pdf::PdfReader`], then [`Pipeline::read_page`].
    pub fn is_pdf(&self, fetched: &Fetched) -> bool {
        fetched.is_declared_pdf() || nearcrawl_extract::is_pdf(&fetched.body)
    }

    /// Reads a page extracted at `depth` (by [`Pipeline::extract`], or a
    /// PDF's): scopes its links (those `seen` says were queued before are
    /// left out: most links were), captures and fingerprints it. No lock,
    /// no state. Its stages' CPU time is counted on `laps`, which the
    /// extraction of the page may have started.
    pub fn read_page(
        &self,
        depth: u32,
        mut fetched: Fetched,
        page: Page,
        seen: impl Fn(&Url) -> bool,
        laps: &mut Laps,
    ) -> (ReadPage, Prepared) {
        let fetched_at = now();
        let links = self.scoped_links(&page, depth + 1, seen);
        laps.lap_extract(nearcrawl_extract::Stage::Links);
        let body_bytes = fetched.body.len() as u64;
        let validators = Validators::of(&fetched.headers);
        let text_hash = crate::recrawl::stable_hash(&page.text);
        let prepared = self.prepare(&page, &fetched.final_url);
        laps.lap(Stage::Fingerprint);
        let capture = self.capture_headers.as_ref().map(|_| {
            // The URL asked for, whose validators every hop carried.
            let asked = fetched.redirects.first().unwrap_or(&fetched.final_url);
            let headers = self.request_headers(asked);
            let mut c = capture(headers, &mut fetched, fetched_at);
            c.digest = Some(crate::sink::payload_digest(&c.body));
            c
        });
        let digest = capture.as_ref().and_then(|c| c.digest.clone());
        fetched.body = Vec::new();
        laps.lap(Stage::Write);
        let read = ReadPage {
            page,
            fetched,
            fetched_at,
            body_bytes,
            links,
            capture,
            validators,
            text_hash,
            digest,
        };
        (read, prepared)
    }

    /// The outcomes of a page of `url` at `depth` the gate judged
    /// `decision`, counted in `stats`; `original`: a duplicate's original,
    /// by URL, when the engine knows it.
    pub fn judged(
        &self,
        url: &Url,
        depth: u32,
        mut read: ReadPage,
        decision: &Decision,
        original: Option<String>,
        stats: &mut Stats,
    ) -> Judged {
        let seen = read.take_seen();
        let ReadPage {
            page,
            fetched,
            fetched_at,
            body_bytes,
            links,
            capture,
            text_hash,
            ..
        } = read;
        stats.count_fetch(body_bytes, depth, fetched.redirects.len());
        stats.count_language(page.language);
        let mut judged = Judged {
            outcomes: capture.map(Outcome::Capture).into_iter().collect(),
            ..Judged::default()
        };
        let earlier = self.earlier_of(url);
        let change = Change::of_text(earlier, text_hash);
        let at = fetched_at.as_secs();
        let visit = self.visit(url, depth, at, change, Some(seen), stats);
        judged.outcomes.push(visit);
        let noindex = page.robots.noindex;
        let mut record = page_record(url.as_str(), depth, &fetched, fetched_at, page, decision);
        if change == Change::Changed {
            record.replaces = earlier.map(|e| e.version_at);
        }
        if decision.verdict.duplicate_of().is_some() {
            judged.copies_neighbour = crate::traps::copies_own_directory(url, original.as_deref());
            let original = original.unwrap_or_default();
            let mut outcomes =
                duplicate_outcomes(record, &decision.verdict, original, self.policy, stats);
            if let Some(Outcome::Duplicate(d)) = outcomes.first_mut() {
                d.crawl = self.crawl_of(&decision.verdict);
            }
            judged.outcomes.extend(outcomes);
            return judged;
        }
        judged.new = true;
        if noindex {
            stats.noindex += 1;
        } else {
            stats.written += 1;
            judged.written = true;
            judged.outcomes.push(Outcome::Page(record));
        }
        for why in links.out_of_scope {
            stats.out_of_scope(why);
        }
        judged.links = links.queue;
        judged
    }

    /// The record of a URL not fetched because a proven URL rule maps it
    /// to a page written: a duplicate of that page, of kind `predicted`.
    pub fn predicted(&self, url: &Url, target: &str, rule: &str, stats: &mut Stats) -> Outcome {
        stats.predicted_duplicates += 1;
        Outcome::Duplicate(DuplicateRecord {
            url: url.to_string(),
            duplicate_of: target.to_string(),
            kind: "predicted".into(),
            // Not measured: the page was not fetched.
            distance: 0,
            similarity: 0.0,
            check: "url-rule".into(),
            crawl: None,
            rule: Some(rule.to_string()),
        })
    }

    /// The outcomes of a page that needs no verdict, or the page back
    /// for the gate:
    /// - a page in a language the corpus does not keep
    ///   (`content.languages`, see [`crate::languages`]) is not judged
    ///   (the gate holds the corpus's pages); its links are queued unless `follow_other_languages` is
    ///   off and its language is known (a page of no known language, a
    ///   site's start page of links, is not known to be in another);
    /// - a page whose text is its earlier visit's but for numbers and date
    ///   words (see [`crate::recrawl`]) is not judged or written again; its
    ///   links are queued (a new page may hang off an unchanged one, by
    ///   its menus, which are not its text).
    ///
    /// Either way its capture and its visit are recorded.
    // The page comes back by value, as it came in: a move, once per page.
    #[allow(clippy::result_large_err)]
    pub fn without_verdict(
        &self,
        url: &Url,
        depth: u32,
        read: ReadPage,
        stats: &mut Stats,
    ) -> Result<Judged, ReadPage> {
        let earlier = self.earlier_of(url);
        let host = url.host_str().unwrap_or("");
        let page = &read.page;
        if !self
            .languages
            .keeps(host, page.language, page.language_from_code)
        {
            stats.other_language += 1;
            // An undecided page's links are followed: it is no evidence of
            // another language.
            let undecided = page.language.is_none() || page.language_from_code;
            let follow = self.content.follow_other_languages || undecided;
            let change = Change::of_text(earlier, read.text_hash);
            return Ok(self.settled(url, depth, read, change, follow, stats));
        }
        if earlier.is_some_and(|e| e.text_hash == Some(read.text_hash)) {
            return Ok(self.settled(url, depth, read, Change::Unchanged, true, stats));
        }
        Err(read)
    }

    /// A page settled without a verdict: counted, its capture and its
    /// visit, and its links when `follow`.
    fn settled(
        &self,
        url: &Url,
        depth: u32,
        mut read: ReadPage,
        change: Change,
        follow: bool,
        stats: &mut Stats,
    ) -> Judged {
        stats.count_fetch(read.body_bytes, depth, read.fetched.redirects.len());
        stats.count_language(read.page.language);
        let seen = read.take_seen();
        let at = read.fetched_at.as_secs();
        let mut outcomes: Vec<Outcome> = read.capture.map(Outcome::Capture).into_iter().collect();
        outcomes.push(self.visit(url, depth, at, change, Some(seen), stats));
        let mut judged = Judged {
            outcomes,
            ..Judged::default()
        };
        if follow {
            for why in read.links.out_of_scope {
                stats.out_of_scope(why);
            }
            judged.links = read.links.queue;
        }
        judged
    }

    /// The outcomes of a 304 to a conditional request of `url`: the
    /// earlier version stands (a `revisit` capture, and the visit).
    pub fn not_modified(
        &self,
        url: &Url,
        depth: u32,
        mut fetched: Fetched,
        stats: &mut Stats,
    ) -> Vec<Outcome> {
        let earlier = self.earlier_of(url);
        stats.count_fetch(0, depth, fetched.redirects.len());
        stats.not_modified += 1;
        stats.bytes_saved += earlier.map_or(0, |e| e.bytes);
        let at = now();
        let seen = Seen {
            status: fetched.status,
            validators: Validators::of(&fetched.headers),
            text_hash: None,
            bytes: 0,
            digest: None,
        };
        let mut outcomes = Vec::new();
        if self.capture_headers.is_some() {
            let mut c = capture(self.request_headers(url), &mut fetched, at);
            c.not_modified_since_ms = earlier.map(|e| e.version_at * 1000);
            c.digest = earlier.and_then(|e| e.digest.clone());
            outcomes.push(Outcome::Capture(c));
        }
        let at = at.as_secs();
        let visit = self.visit(url, depth, at, Change::Unchanged, Some(seen), stats);
        outcomes.push(visit);
        outcomes
    }

    /// The visit of a page of the earlier crawl whose fetch failed with
    /// `e`: gone (404, 410), or failed (the earlier visit carried forward).
    pub fn visit_after_error(
        &self,
        url: &Url,
        depth: u32,
        e: &FetchError,
        stats: &mut Stats,
    ) -> Option<Outcome> {
        self.earlier_of(url)?;
        let (change, seen) = match e {
            FetchError::HttpStatus(status @ (404 | 410)) => {
                let seen = Seen {
                    status: *status,
                    ..Seen::default()
                };
                (Change::Gone, Some(seen))
            }
            _ => (Change::Failed, None),
        };
        let at = now().as_secs();
        Some(self.visit(url, depth, at, change, seen, stats))
    }

    /// The earlier crawl a duplicate's original is from, if not this one.
    fn crawl_of(&self, verdict: &Verdict) -> Option<String> {
        let (of, ..) = verdict.duplicate_of()?;
        let (crawl, _) = crate::remembered::Remembered::split(of)?;
        self.remembered.get(crawl).cloned()
    }

    /// The headers a request of `url` carried, for its capture: the
    /// fetcher's, and the earlier crawl's validators that made it
    /// conditional.
    fn request_headers(&self, url: &Url) -> Vec<(String, String)> {
        let mut headers = self.capture_headers.clone().unwrap_or_default();
        let sent = self
            .earlier_of(url)
            .into_iter()
            .flat_map(|e| e.validators.conditions());
        headers.extend(sent.map(|(name, value)| (name.to_string(), value.to_string())));
        headers
    }

    /// A visit's record, counted in `stats`.
    fn visit(
        &self,
        url: &Url,
        depth: u32,
        at: u64,
        change: Change,
        seen: Option<Seen>,
        stats: &mut Stats,
    ) -> Outcome {
        stats.count_visit(change.name());
        let earlier = self.earlier_of(url);
        let record =
            crate::recrawl::visit_record(&self.recrawl, url, depth, at, change, earlier, seen);
        Outcome::Visit(record)
    }

    /// The pages a sitemap lists, canonical and in scope one link from the
    /// seeds; the others counted out of scope in `stats`.
    pub fn sitemap_pages(&self, locs: Vec<String>, stats: &mut Stats) -> Vec<Url> {
        let mut pages = Vec::new();
        for loc in locs {
            let Some(c) = Url::parse(&loc)
                .ok()
                .and_then(|u| self.canon.canonicalize(&u))
            else {
                continue;
            };
            match self.scope.check(&c, 1) {
                Ok(()) => pages.push(c),
                Err(why) => stats.out_of_scope(why.name()),
            }
        }
        pages
    }

    fn scoped_links(&self, page: &Page, depth: u32, seen: impl Fn(&Url) -> bool) -> ScopedLinks {
        let mut links = ScopedLinks::default();
        if page.robots.nofollow {
            return links;
        }
        // A page links to one place many times (API docs: four times
        // over): a URL is scoped the first time, and its repeats go where
        // it went, queued or counted out of scope again, as if scoped.
        let mut first: HashMap<&str, Scoped, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(page.links.len(), Default::default());
        for link in page.links.iter().filter(|l| !l.nofollow) {
            match first.get(link.url.as_str()) {
                Some(&Scoped::Queued(i)) => {
                    let url = links.queue[i].clone();
                    links.queue.push(url);
                }
                Some(&Scoped::Out(why)) => links.out_of_scope.push(why),
                Some(Scoped::Left) => {}
                None => {
                    let scoped = self.scope_link(&link.url, depth, &seen, &mut links);
                    first.insert(link.url.as_str(), scoped);
                }
            }
        }
        links
    }

    /// Adds a link to `links` (queued, or its reason out of scope) or
    /// leaves it (not canonical http(s), or seen); says which.
    fn scope_link(
        &self,
        url: &Url,
        depth: u32,
        seen: impl Fn(&Url) -> bool,
        links: &mut ScopedLinks,
    ) -> Scoped {
        // Most links a scope leaves out lead to other hosts: told by the
        // host alone (a link is an http(s) URL, and canonical spelling
        // keeps its host), before the URL is copied.
        let why = if !self.scope.allows_host(url.host_str().unwrap_or("")) {
            OutOfScope::Host.name()
        } else {
            let Some(c) = self.canon.canonicalize(url) else {
                return Scoped::Left;
            };
            match self.scope.check(&c, depth) {
                Ok(()) if seen(&c) => return Scoped::Left,
                Ok(()) => {
                    links.queue.push(c);
                    return Scoped::Queued(links.queue.len() - 1);
                }
                Err(why) => why.name(),
            }
        };
        links.out_of_scope.push(why);
        Scoped::Out(why)
    }

    /// The page's fingerprints and name, with a fingerprinter from the
    /// pool (a clone of the first when the pool is empty; it goes back
    /// after).
    fn prepare(&self, page: &Page, url: &Url) -> Prepared {
        let pooled = self.fingerprinters.lock().unwrap().pop();
        let mut fp = pooled.unwrap_or_else(|| self.fingerprinter.clone());
        let host = url.host_str();
        let name = nearcrawl_index::page_name(
            page.title.as_deref(),
            page.heading.as_deref(),
            page.site_name.as_deref(),
            host,
        );
        let prepared = fp.prepare(Doc {
            text: &page.text,
            title: name.as_deref(),
            host,
            url: Some(url.as_str()),
        });
        self.fingerprinters.lock().unwrap().push(fp);
        prepared
    }
}

/// A fetch of `url` that failed: counted in `stats` (a robots.txt denial
/// as such, anything else as an error of its kind), and its record.
pub fn failed(url: &Url, e: &FetchError, stats: &mut Stats) -> Outcome {
    if !matches!(e, FetchError::RobotsDenied) {
        return error(url.as_str(), e.kind(), e.to_string(), stats);
    }
    stats.robots_denied += 1;
    Outcome::Error(ErrorRecord {
        url: url.to_string(),
        kind: e.kind().into(),
        detail: e.to_string(),
    })
}

/// An error of `kind` about `url` (a sitemap, the gate): counted in
/// `stats`, and its record.
pub fn error(url: &str, kind: &str, detail: String, stats: &mut Stats) -> Outcome {
    *stats.errors.entry(kind.into()).or_default() += 1;
    Outcome::Error(ErrorRecord {
        url: url.into(),
        kind: kind.into(),
        detail,
    })
}

/// The raw exchange for archival outputs; extraction is done with the
/// body, so the capture takes it. `at`: since the Unix epoch.
fn capture(request_headers: Vec<(String, String)>, fetched: &mut Fetched, at: Duration) -> Capture {
    Capture {
        url: fetched.final_url.to_string(),
        fetched_at_ms: at.as_millis() as u64,
        request_headers,
        status: fetched.status,
        headers: std::mem::take(&mut fetched.headers),
        body: std::mem::take(&mut fetched.body),
        truncated: fetched.truncated,
        ip: fetched.remote_ip.map(|ip| ip.to_string()),
        not_modified_since_ms: None,
        digest: None,
        rendered: None,
    }
}

/// The corpus record of a page (it takes the page's text).
fn page_record(
    url: &str,
    depth: u32,
    fetched: &Fetched,
    fetched_at: Duration,
    page: Page,
    decision: &Decision,
) -> PageRecord {
    PageRecord {
        url: url.to_string(),
        final_url: fetched.final_url.to_string(),
        status: fetched.status,
        fetched_at: fetched_at.as_secs(),
        depth,
        outlinks: page.links.len(),
        title: page.title,
        lang: page.lang,
        language: page.language.map(str::to_string),
        // The gate read the plain text; the corpus gets the format asked for.
        text: page.markdown.unwrap_or(page.text),
        simhash: decision.simhash.fingerprint.to_string(),
        content_hash: format!("{:032x}", decision.content_hash),
        duplicate_of: None,
        replaces: None,
    }
}

/// A duplicate's outcomes: its record, and under the `record` policy the
/// page itself naming `original`; counted in `stats`.
fn duplicate_outcomes(
    page: PageRecord,
    verdict: &Verdict,
    original: String,
    policy: DuplicatePolicy,
    stats: &mut Stats,
) -> Vec<Outcome> {
    let Some((_, kind, distance, similarity)) = verdict.duplicate_of() else {
        return Vec::new();
    };
    if kind == "exact" {
        stats.exact_duplicates += 1;
    } else {
        stats.near_duplicates += 1;
    }
    let mut outcomes = vec![Outcome::Duplicate(DuplicateRecord {
        url: page.url.clone(),
        duplicate_of: original.clone(),
        kind: kind.into(),
        distance,
        similarity,
        check: verdict
            .check()
            .map(|c| c.name().to_string())
            .unwrap_or_default(),
        crawl: None,
        rule: None,
    })];
    if policy == DuplicatePolicy::Record {
        outcomes.push(Outcome::Page(PageRecord {
            duplicate_of: Some(original),
            ..page
        }));
    }
    outcomes
}

/// The first value of the header `name` (lowercase).
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    let mut values = headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name));
    values.next().map(|(_, v)| v.as_str())
}

fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_link_goes_where_it_went_the_first_time() {
        let config = Config::parse(
            "[scope]\nexclude = [\"/private\"]\n",
            std::path::Path::new("test.toml"),
        )
        .unwrap();
        let seed = Url::parse("http://127.0.0.1/").unwrap();
        let fingerprinter = Fingerprinter::new(&nearcrawl_index::DedupConfig::default()).unwrap();
        let pages =
            Pipeline::new(&config, &[(seed.clone(), 0)], fingerprinter, None, None).unwrap();
        let hrefs = [
            "/a",
            "http://127.0.0.2/x",
            "/private/p",
            "/seen",
            "/a",
            "/seen",
            "http://127.0.0.2/x",
            "/private/p",
            "/a#f",
            "/b",
        ];
        let html: String = hrefs
            .iter()
            .map(|h| format!("<a href=\"{h}\">x</a>"))
            .collect();
        let input = Input {
            url: Some(&seed),
            ..Input::default()
        };
        let page = nearcrawl_extract::extract(html.as_bytes(), &input);
        let seen = |u: &Url| u.path() == "/seen";
        let got = pages.scoped_links(&page, 1, seen);
        let paths: Vec<&str> = got.queue.iter().map(Url::path).collect();
        assert_eq!(paths, ["/a", "/a", "/a", "/b"]);
        assert_eq!(got.out_of_scope, ["host", "excluded", "host", "excluded"]);
        // As every link scoped on its own.
        let mut alone = ScopedLinks::default();
        for link in &page.links {
            pages.scope_link(&link.url, 1, seen, &mut alone);
        }
        assert_eq!(got.queue, alone.queue);
        assert_eq!(got.out_of_scope, alone.out_of_scope);
    }
}
