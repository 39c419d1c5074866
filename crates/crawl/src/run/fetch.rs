//! One claimed URL, from its host's robots.txt to the gate's verdict: the
//! fetch task, the same for both stores.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_fetch::{FetchError, Fetched};
use url::Url;

use super::{Admitted, Claimed, Done, GateError, PageStore, PageVerdict, Stages, Start};
use crate::cpu::Laps;
use crate::phases::Phase;
use crate::sitemap::{MAX_LEVELS, Sitemap};

/// Pages up to this size are read on the runtime's thread that fetched
/// them, larger ones on a blocking thread. A page on a blocking thread is
/// read beside the runtime's threads, more threads computing than cores:
/// with 64 KiB here, javadoc's many pages of 64-256 KiB kept the crawl at
/// 175-180% CPU and 0.84-0.86 ms a page; with 256 KiB, 182-183% and
/// 0.81-0.84 ms (rust-doc: 167-170% -> 172-174%; 4 rounds alternating).
/// A page of this size takes ~4 ms, which requests in flight on that
/// thread may wait for the reactor; a multi-megabyte page would hold them
/// up for tens of milliseconds.
const INLINE_READ_BYTES: usize = 256 << 10;

/// Fetches a claimed URL and judges the page (or reads the sitemap);
/// never fails: a failure is an error outcome, or the URL goes back.
pub(super) async fn fetch_claimed<P: PageStore>(
    stages: Arc<Stages>,
    store: Arc<P>,
    claimed: Claimed<P::Claim>,
) -> Done<P::Claim> {
    // The configured delay until the fetcher is asked (it knows a host's
    // Crawl-delay once its robots.txt is read).
    let delay = Duration::from_millis(stages.config.politeness.delay_ms);
    let mut done = Done::new(claimed, delay);
    let page = done.claimed.sitemap.is_none();
    if page && stages.config.dedup.predict {
        if let Some(prediction) = store.predict(&done.claimed.url).await {
            let url = &done.claimed.url;
            tracing::debug!(%url, target = prediction.target, rule = prediction.shown, "not fetched: predicted duplicate");
            let record = (stages.pages).predicted(
                url,
                &prediction.target,
                &prediction.shown,
                &mut done.stats,
            );
            done.outcomes.push(record);
            done.predicted = Some(prediction);
            return done;
        }
    }
    if page && store.read_before(&done.claimed.url).await {
        tracing::debug!(url = %done.claimed.url, "not fetched: read as a redirect's target");
        done.stats.read_through_redirect += 1;
        return done;
    }
    if !robots_first(&stages, &*store, &mut done).await {
        return done;
    }
    // A page robots.txt forbids is not fetched: it takes no budget.
    let took_page = page && !stages.fetcher.forbids(&done.claimed.url);
    if took_page {
        match store.admit(&done.claimed).await {
            Admitted::Yes => {}
            Admitted::No(why) => {
                done.stats.out_of_scope(why);
                return done;
            }
            Admitted::Later => {
                done.again = true;
                return done;
            }
        }
    }
    fetch_admitted(&stages, &store, &mut done).await;
    if took_page && done.again {
        // Back to its queue: its next try takes its page again.
        store.give_back_page(&done.claimed).await;
    }
    done
}

/// The request of a URL admitted, once its turn and room allow.
async fn fetch_admitted<P: PageStore>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    done: &mut Done<P::Claim>,
) {
    if matches!(store.start(), Start::WhenReady(_)) && !stages.extraction.has_room() {
        // Requests wait while fetched bodies wait for extraction past
        // their bounds (see `ExtractionSlots`).
        tokio::select! {
            () = stages.extraction.wait_for_room() => {}
            () = stages.stopped() => {
                done.again = true;
                return;
            }
        }
    }
    if !may_start(stages, &**store, done).await {
        done.again = true;
        return;
    }
    let start_by = store.start_by(&done.claimed);
    match done.claimed.sitemap {
        Some(level) => read_sitemap(stages, done, level, start_by).await,
        None => fetch_page(stages, store, done, start_by).await,
    }
}

/// Reads the host's robots.txt first if its rules are not known. That
/// request takes the host's turn: the URL goes back unless the host's
/// next turn is due at once. The sitemaps robots.txt names are returned
/// with a page when the store wants them. False: the URL is not fetched
/// now.
async fn robots_first<P: PageStore>(stages: &Stages, store: &P, done: &mut Done<P::Claim>) -> bool {
    let url = done.claimed.url.clone();
    let fetched_now = !stages.fetcher.has_rules(&url);
    if fetched_now {
        if !store.take_server_turn(&mut done.claimed, stages).await {
            done.again = true;
            return false;
        }
        let asked = Instant::now();
        let rules = tokio::select! {
            r = stages.fetcher.rules_for(&url) => r,
            () = stages.stopped() => {
                done.again = true;
                return false;
            }
        };
        done.delay = stages.fetcher.delay_of(&url);
        done.started = Some(asked);
        // On an error the request reports it (the answer decides).
        if rules.is_err() {
            return true;
        }
    }
    let page = done.claimed.sitemap.is_none();
    if page && stages.config.seeds.sitemaps && store.wants_sitemaps(&url, fetched_now) {
        done.sitemaps = robots_sitemaps(stages, &url).await;
    }
    if fetched_now && stages.fetcher.ready_at(&url) > Instant::now() + store.start().slack() {
        done.again = true;
        return false;
    }
    true
}

/// Whether the request may start now: a store that counted the host's
/// turn from the moment it handed the URL out needs it to start at once,
/// and where turns are kept per server, the server's turn is taken.
async fn may_start<P: PageStore>(stages: &Stages, store: &P, done: &mut Done<P::Claim>) -> bool {
    let url = &done.claimed.url;
    if let Start::AtOnce(slack) = store.start() {
        if stages.fetcher.ready_at(url) > Instant::now() + slack {
            done.delay = stages.fetcher.delay_of(url);
            return false;
        }
    }
    store.take_server_turn(&mut done.claimed, stages).await
}

/// The sitemaps `url`'s robots.txt names (the cached copy), as level 0.
async fn robots_sitemaps(stages: &Stages, url: &Url) -> Vec<(Url, u32)> {
    let Ok(robots) = stages.fetcher.robots_for(url).await else {
        return Vec::new();
    };
    let named = robots.sitemaps().iter().filter_map(|s| Url::parse(s).ok());
    named.map(|s| (s, 0)).collect()
}

/// Reads a sitemap: an index gives more sitemaps (down to
/// [`MAX_LEVELS`]), a list gives pages one link from the seeds (canonical
/// and in scope; the others counted out of scope). A sitemap that cannot
/// be read is an error outcome; one whose turn came too late goes back.
async fn read_sitemap<C>(
    stages: &Stages,
    done: &mut Done<C>,
    level: u32,
    start_by: Option<Instant>,
) {
    let url = done.claimed.url.clone();
    let (parsed, elapsed) = tokio::select! {
        r = crate::sitemap::fetch(&stages.fetcher, &url, start_by) => r,
        () = stages.stopped() => {
            done.again = true;
            return;
        }
    };
    if matches!(&parsed, Err((kind, _)) if *kind == FetchError::Late.kind()) {
        done.again = true;
        return;
    }
    let now = Instant::now();
    done.delay = stages.fetcher.delay_of(&url);
    done.started = Some(now.checked_sub(elapsed).unwrap_or(now));
    let locs = |locs: Vec<String>| locs.into_iter().filter_map(|l| Url::parse(&l).ok());
    match parsed {
        Err((kind, detail)) => done.error(kind, detail),
        Ok(Sitemap::Index(children)) if level < MAX_LEVELS => {
            done.sitemaps = locs(children).map(|s| (s, level + 1)).collect();
        }
        Ok(Sitemap::Index(_)) => {}
        Ok(Sitemap::Urls(pages)) => {
            done.listed = stages.pages.sitemap_pages(pages, &mut done.stats);
        }
    }
}

/// Fetches a page; a request still waiting for its host's turn when the
/// crawl stops, or whose turn came after `start_by`, is not sent (the URL
/// goes back).
async fn fetch_page<P: PageStore>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    done: &mut Done<P::Claim>,
    start_by: Option<Instant>,
) {
    let t = Instant::now();
    let url = done.claimed.url.clone();
    let depth = done.claimed.depth;
    let hop_stages = stages.clone();
    let hop_ok = move |hop: &Url| hop_stages.pages.allows_hop(hop, depth);
    // A task started as another ended runs before the connection tasks of
    // the requests that just ended have put their connections back in the
    // pool: without this yield, ~7% of requests to a loopback site opened a
    // new connection (and the pool closed as many).
    tokio::task::yield_now().await;
    // A page of an earlier crawl is asked for only if it changed.
    let earlier = stages.pages.earlier_of(&url);
    let retried = std::sync::Mutex::new(Vec::new());
    let note_retry = |e: &FetchError| {
        tracing::info!(%url, kind = e.kind(), "{e}: trying again");
        retried.lock().unwrap().push(e.kind());
    };
    let ask = nearcrawl_fetch::Ask {
        start_by,
        validators: earlier.map(|e| &e.validators),
        on_retry: Some(&note_retry),
        ..nearcrawl_fetch::Ask::new(&hop_ok)
    };
    let result = tokio::select! {
        r = stages.fetcher.fetch_with(&url, ask) => r,
        () = stages.stopped() => {
            tracing::debug!(%url, "abandoned: stopping");
            done.again = true;
            return;
        }
    };
    for kind in retried.into_inner().unwrap() {
        *done.stats.retries.entry(kind.to_string()).or_default() += 1;
    }
    if matches!(result, Err(FetchError::Late)) {
        tracing::debug!(%url, "not sent: its turn came after its lease's start slack");
        done.again = true;
        return;
    }
    if let Err(e @ FetchError::NoRoom(_)) = &result {
        // Bodies fetched earlier wait for a slow stage (large PDFs for their
        // reader): asked again once there is room, not lost to a server
        // that gave up on us. (A URL that goes back commits no counts.)
        tracing::info!(%url, "{e}");
        done.again = true;
        return;
    }
    let t = stages.phases.add(Phase::Fetch, t);
    let now = Instant::now();
    done.delay = stages.fetcher.delay_of(&url);
    done.started = Some(match &result {
        Ok(fetched) => now.checked_sub(fetched.elapsed).unwrap_or(now),
        Err(_) => now,
    });
    match result {
        Ok(fetched) if fetched.status == 304 && earlier.is_some() => {
            stages.latencies.observe(fetched.elapsed);
            done.final_url = Some(fetched.final_url.clone());
            done.outcomes = stages
                .pages
                .not_modified(&url, depth, fetched, &mut done.stats);
            note_read_target(stages, &**store, done).await;
        }
        Ok(fetched) if fetched.status == 304 => {
            let why = "HTTP status 304 to a request that was not conditional".to_string();
            done.error(FetchError::HttpStatus(304).kind(), why);
        }
        Ok(fetched) => {
            stages.latencies.observe(fetched.elapsed);
            judge_page(stages, store, done, fetched, t).await;
        }
        Err(e) => {
            tracing::debug!(%url, kind = e.kind(), "{e}");
            done.host_error = !matches!(e, FetchError::RobotsDenied);
            let record = crate::page::failed(&url, &e, &mut done.stats);
            done.outcomes.push(record);
            let visit = stages
                .pages
                .visit_after_error(&url, depth, &e, &mut done.stats);
            done.outcomes.extend(visit);
        }
    }
}

/// Reads a fetched page in its extraction turn, then asks the gate and
/// turns the verdict into outcomes.
async fn judge_page<P: PageStore>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    done: &mut Done<P::Claim>,
    fetched: Fetched,
    t: Instant,
) {
    let depth = done.claimed.depth;
    if stages.pages.is_pdf(&fetched) {
        let Some(read) = read_pdf(stages, store, done, fetched).await else {
            return;
        };
        return judge_read(stages, store, done, read, t).await;
    }
    let len = fetched.body.len();
    let turn = stages.extraction.enter(len).await;
    let t = stages.phases.add(Phase::ExtractionWait, t);
    let read = in_turn(stages, store, len, move |s, p| {
        let mut laps = Laps::start();
        let page = s.pages.extract(&fetched, None, &mut laps);
        let render = s.renderer.as_ref();
        if render.is_some_and(|r| r.wants(&fetched.final_url, &page)) {
            return Err(Box::new((fetched, page)));
        }
        Ok(s.pages
            .read_page(depth, fetched, page, |c| p.seen(c), &mut laps))
    });
    let read = read.await;
    drop(turn);
    let read = match read {
        Some(Ok(read)) => {
            done.stats.render.app_shells += u64::from(read.0.page.app_shell);
            read
        }
        Some(Err(shell)) => match render_page(stages, store, done, *shell).await {
            Some(read) => read,
            None => return,
        },
        None => {
            done.error("extract", "extraction panicked".into());
            return;
        }
    };
    judge_read(stages, store, done, read, t).await;
}

/// Runs `work` on a page of `len` bytes: on this thread if it is small,
/// else on a blocking thread (see [`INLINE_READ_BYTES`]). None: it
/// panicked.
async fn in_turn<P: PageStore, R: Send + 'static>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    len: usize,
    work: impl FnOnce(&Stages, &P) -> R + Send + 'static,
) -> Option<R> {
    if len <= INLINE_READ_BYTES {
        return Some(work(stages, store));
    }
    let (s, p) = (stages.clone(), store.clone());
    tokio::task::spawn_blocking(move || work(&s, &p)).await.ok()
}

/// Renders a page built by script and reads the DOM the browser built
/// (the page as served when it cannot be rendered). None: the crawl
/// stopped (the URL goes back), or reading failed (an error outcome).
async fn render_page<P: PageStore>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    done: &mut Done<P::Claim>,
    (fetched, page): (Fetched, nearcrawl_extract::Page),
) -> Option<(crate::page::ReadPage, nearcrawl_index::Prepared)> {
    let depth = done.claimed.depth;
    done.stats.render.app_shells += u64::from(page.app_shell);
    let renderer = stages.renderer.as_ref().expect("asked to render");
    let rendered = tokio::select! {
        r = renderer.render(stages, &fetched, &mut done.stats.render) => r,
        () = stages.stopped() => {
            done.again = true;
            return None;
        }
    };
    let len = rendered.as_ref().map_or(0, String::len);
    let turn = stages.extraction.enter(len).await;
    let read = in_turn(stages, store, len, move |s, p| {
        let mut laps = Laps::start();
        let page = match &rendered {
            Some(dom) => s.pages.extract(&fetched, Some(dom), &mut laps),
            None => page,
        };
        let mut read = s
            .pages
            .read_page(depth, fetched, page, |c| p.seen(c), &mut laps);
        // The archive keeps the response as served, and the DOM beside it.
        if let Some(capture) = &mut read.0.capture {
            capture.rendered = rendered;
        }
        read
    });
    let read = read.await;
    drop(turn);
    if read.is_none() {
        done.error("extract", "extraction panicked".into());
    }
    read
}

/// Reads a fetched PDF apart from the pages (see [`crate::pdf`]); a PDF
/// that cannot be read is an error outcome of its kind.
async fn read_pdf<P: PageStore>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    done: &mut Done<P::Claim>,
    fetched: Fetched,
) -> Option<(crate::page::ReadPage, nearcrawl_index::Prepared)> {
    let depth = done.claimed.depth;
    if fetched.truncated {
        let limit = stages.config.fetch.max_pdf_bytes;
        done.error("pdf_too_large", format!("a PDF of more than {limit} bytes"));
        return None;
    }
    let waiting = stages.extraction.hold(fetched.body.len());
    match stages
        .pdfs
        .read(&fetched.body, &fetched.final_url, waiting)
        .await
    {
        Ok(page) => {
            let (s, p) = (stages.clone(), store.clone());
            let read = move || {
                let mut laps = Laps::start();
                s.pages
                    .read_page(depth, fetched, page, |c| p.seen(c), &mut laps)
            };
            tokio::task::spawn_blocking(read).await.ok()
        }
        Err(failure) => {
            tracing::debug!(url = %done.claimed.url, kind = failure.kind, "{}", failure.detail);
            done.error(&failure.kind, failure.detail);
            None
        }
    }
}

/// Asks the gate about a page read, and turns the verdict into outcomes.
async fn judge_read<P: PageStore>(
    stages: &Arc<Stages>,
    store: &Arc<P>,
    done: &mut Done<P::Claim>,
    (read, prepared): (crate::page::ReadPage, nearcrawl_index::Prepared),
    t: Instant,
) {
    let depth = done.claimed.depth;
    let url = done.claimed.url.clone();
    done.final_url = Some(read.fetched.final_url.clone());
    let read = match (stages.pages).without_verdict(&url, depth, read, &mut done.stats) {
        Ok(judged) => {
            done.outcomes = judged.outcomes;
            done.links = judged.links;
            note_read_target(stages, &**store, done).await;
            return;
        }
        Err(read) => read,
    };
    let (decision, original) = match store.judge(&mut done.claimed, prepared).await {
        Ok(verdicted) => verdicted,
        Err(GateError::Again(why)) => {
            tracing::warn!(%url, "the gate failed, the URL goes back: {why}");
            done.again = true;
            return;
        }
        Err(GateError::Failed(why)) => {
            done.error("index", why);
            return;
        }
    };
    tracing::debug!(%url, status = read.fetched.status, verdict = ?decision.verdict, "page");
    let judged = (stages.pages).judged(&url, depth, read, &decision, original, &mut done.stats);
    done.verdict = Some(PageVerdict {
        duplicate: !judged.new,
        copies_neighbour: judged.copies_neighbour,
        written: judged.written,
    });
    done.outcomes = judged.outcomes;
    done.links = judged.links;
    note_read_target(stages, &**store, done).await;
    stages.phases.add(Phase::Judge, t);
}

/// A page read through a redirect is its target's page too: the target is
/// marked read, so a link to it queued before (or after) is not fetched.
async fn note_read_target<P: PageStore>(stages: &Stages, store: &P, done: &mut Done<P::Claim>) {
    let final_url = done.final_url.as_ref();
    let target = final_url.and_then(|f| stages.pages.canon().canonicalize(f));
    if let Some(target) = target.filter(|t| *t != done.claimed.url) {
        store.mark_read(&target).await;
        done.read_target = Some(target);
    }
}
