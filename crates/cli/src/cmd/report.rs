//! `nearcrawl report DIR [-o FILE]`: one self-contained HTML page about a
//! crawl — totals, pages/s, duplicates and errors over time (from
//! `series.jsonl`), hosts with their duplicate rates, body sizes and depths,
//! the largest duplicate clusters. Charts are inline SVG (plotters); no
//! script, no style sheet or font from the network: the file can be mailed
//! or opened offline.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cmd::status::{Status, gather, round3};
use crate::series::{self, Sample};
use anyhow::Context;
use plotters::prelude::*;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A crawl's output directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Where to write the page (default: DIR/report.html).
    #[arg(short, long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Hosts and duplicate clusters listed.
    #[arg(long, default_value_t = 50, value_name = "N")]
    top: usize,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let status = gather(&args.dir, args.top)?;
    let samples = series::read(&args.dir.join("series.jsonl"))
        .with_context(|| format!("reading {}", args.dir.join("series.jsonl").display()))?;
    let html = render(&args.dir, &status, &samples)?;
    let out = args.out.unwrap_or_else(|| args.dir.join("report.html"));
    std::fs::write(&out, html).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("nearcrawl report: {}", out.display());
    Ok(ExitCode::SUCCESS)
}

const STYLE: &str = "body{font:14px/1.4 sans-serif;max-width:1000px;margin:2em auto;color:#222}\
h1{font-size:22px}h2{font-size:17px;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:right}\
td:first-child,th:first-child{text-align:left}td.url{text-align:left;word-break:break-all}\
.note{color:#666}.legend{margin:0 0 1.5em 80px}.pair{display:flex;gap:1em;flex-wrap:wrap}svg{max-width:100%;height:auto}";

fn render(dir: &Path, f: &Status, samples: &[Sample]) -> anyhow::Result<String> {
    let mut h = String::new();
    let title = format!("nearcrawl report: {}", dir.display());
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    totals(&mut h, f, samples.last());
    recrawl(&mut h, f);
    languages(&mut h, f);
    rendering(&mut h, f);
    h.push_str("<h2>Over time</h2>\n");
    if samples.len() < 2 {
        h.push_str("<p class=\"note\">No time series: <code>series.jsonl</code> is missing or has a single sample (crawls by earlier versions, or shorter than a second).</p>\n");
    } else {
        h.push_str(&rate_chart(samples)?);
        h.push_str(&totals_chart(samples)?);
    }
    hosts(&mut h, f);
    h.push_str("<h2>Pages by body size and depth</h2>\n<div class=\"pair\">");
    h.push_str(&bar_chart(
        "Body size (bytes, at least)",
        &size_bars(&f.stats.body_sizes),
    )?);
    h.push_str(&bar_chart(
        "Depth (links from a seed)",
        &depth_bars(&f.stats.depths),
    )?);
    h.push_str("</div>\n");
    url_rules(&mut h, f);
    clusters(&mut h, f);
    problems(&mut h, f);
    h.push_str("</body></html>\n");
    Ok(h)
}

fn totals(h: &mut String, f: &Status, last: Option<&Sample>) {
    let c = &f.stats;
    let (mut exact, mut near) = (c.exact_duplicates, c.near_duplicates);
    let (mut fetched, mut written) = (c.fetched, c.written);
    let mut errors: u64 = c.errors.values().sum();
    let mut bytes = c.bytes;
    let mut queued = f.queued.map(|q| (q.urls as u64, q.hosts as u64));
    match last {
        // A running crawl's state is locked; its samples are fresher than
        // the last run's stats.json.
        Some(s) if f.running => {
            let _ = writeln!(
                h,
                "<p class=\"note\">A run holds this directory now: totals as sampled at {}; \
                 hosts, sizes and depths as its last run ended (<code>stats.json</code>).</p>",
                utc(s.t as u64)
            );
            (fetched, written, exact, near) = (s.fetched, s.written, s.exact, s.near);
            (errors, bytes) = (s.errors, s.bytes);
            queued = Some((s.queued as u64, s.hosts_active as u64));
        }
        _ if f.running => h.push_str(
            "<p class=\"note\">A run holds this directory now: figures as its last run ended (<code>stats.json</code>).</p>\n",
        ),
        _ => {}
    }
    let rows = [
        ("fetched", fetched.to_string()),
        ("written to the corpus", written.to_string()),
        (
            "duplicates (exact + near)",
            format!(
                "{exact} + {near} ({:.1}% of fetched)",
                100.0 * round3((exact + near) as f64 / fetched.max(1) as f64)
            ),
        ),
        ("errors", errors.to_string()),
        ("robots.txt denied", c.robots_denied.to_string()),
        ("bytes fetched", human_bytes(bytes)),
        (
            "queued",
            queued.map_or("–".into(), |(u, hosts)| {
                format!("{u} URLs on {hosts} hosts")
            }),
        ),
        (
            "last checkpoint",
            f.last_checkpoint_unix.map_or("–".into(), utc),
        ),
        ("report made", utc(series::unix_now() as u64)),
    ];
    h.push_str("<table>\n");
    for (name, value) in rows {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", esc(name), esc(&value));
    }
    h.push_str("</table>\n");
}

/// Pages read by language, and those left out of the corpus for theirs
/// (`content.languages`).
fn languages(h: &mut String, f: &Status) {
    let counts = &f.stats.languages;
    let read: u64 = counts.values().sum();
    if read == 0 {
        return;
    }
    let mut rows: Vec<(&String, &u64)> = counts.iter().collect();
    rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    h.push_str(
        "<h2>Languages</h2>\n<table>\n<tr><th>language</th><th>pages</th><th>share</th></tr>\n",
    );
    for (language, n) in rows {
        let share = format!("{:.1}%", 100.0 * *n as f64 / read as f64);
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{n}</td><td>{share}</td></tr>",
            esc(language)
        );
    }
    h.push_str("</table>\n");
    let left_out = f.stats.other_language;
    if left_out > 0 {
        let _ = writeln!(
            h,
            "<p>{left_out} pages left out of the corpus for their language \
             (<code>content.languages</code>).</p>"
        );
    }
}

/// What the pages of the earlier crawl turned out to be, when this crawl
/// asked them again (`crawl --refresh`).
fn recrawl(h: &mut String, f: &Status) {
    let r = &f.stats;
    let n = |k: &str| r.visits.get(k).copied().unwrap_or(0);
    let asked_again = n("changed") + n("unchanged") + n("gone") + n("failed");
    if asked_again == 0 {
        return;
    }
    let share = |x: u64| format!("{x} ({:.1}%)", 100.0 * x as f64 / asked_again as f64);
    let rows = [
        (
            "pages of the earlier crawl asked again",
            asked_again.to_string(),
        ),
        ("unchanged", share(n("unchanged"))),
        (
            "of which answered 304 (not downloaded)",
            r.not_modified.to_string(),
        ),
        ("changed (a new version written)", share(n("changed"))),
        ("gone (404, 410)", share(n("gone"))),
        (
            "failed (the earlier visit carried forward)",
            share(n("failed")),
        ),
        ("new pages found", n("new").to_string()),
        ("bytes not downloaded (304s)", human_bytes(r.bytes_saved)),
    ];
    h.push_str("<h2>Recrawl</h2>\n<table>\n");
    for (name, value) in rows {
        let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", esc(name), esc(&value));
    }
    h.push_str("</table>\n");
}

/// Pages built by script and their rendering (`[render]`).
fn rendering(h: &mut String, f: &Status) {
    let r = &f.stats.render;
    if r.is_empty() {
        return;
    }
    let mut rows = vec![
        (
            "app shells (served HTML built by script)".to_string(),
            r.app_shells,
        ),
        ("rendered in the browser".into(), r.rendered),
        ("rendered, read at the time limit".into(), r.unsettled),
        ("their requests fetched".into(), r.requests),
        ("scripts reused from an earlier page".into(), r.scripts_kept),
    ];
    rows.extend((r.refused.iter()).map(|(why, n)| (format!("requests refused: {why}"), *n)));
    rows.extend((r.not_rendered.iter()).map(|(why, n)| (format!("read as served: {why}"), *n)));
    h.push_str("<h2>Pages built by script</h2>\n<table>\n");
    for (name, value) in rows {
        let _ = writeln!(h, "<tr><td>{}</td><td>{value}</td></tr>", esc(&name));
    }
    h.push_str("</table>\n");
}

fn hosts(h: &mut String, f: &Status) {
    let hosts = &f.top_hosts;
    if hosts.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<h2>Hosts ({} most fetched)</h2>\n<table><tr><th>host</th><th>fetched</th><th>written</th>\
         <th>duplicates</th><th>duplicate rate</th><th>errors</th><th>mean delay</th></tr>",
        hosts.len()
    );
    for row in hosts {
        let host = &row.figures;
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{} ms</td></tr>",
            esc(&host.host),
            host.fetched,
            host.written,
            host.duplicates,
            100.0 * host.duplicate_rate(),
            host.errors,
            host.mean_delay_ms,
        );
    }
    h.push_str("</table>\n");
}

/// The URL rules the crawl learned, so a reader sees why a URL was not
/// fetched (its record in `duplicates.jsonl` names its rule).
fn url_rules(h: &mut String, f: &Status) {
    let Some(line) = super::status::predicted_line(f) else {
        return;
    };
    let _ = writeln!(
        h,
        "<h2>Duplicates predicted from URLs</h2>\n<p class=\"note\">{}. A rule maps a URL to another with the same text, learned from duplicate pairs the gate confirmed (support); a URL it maps to a page already written is not fetched and is recorded in <code>duplicates.jsonl</code> as <code>predicted</code>, with its rule. A page the gate kept that a rule maps to a page written is a counterexample: past one in 50 supporting pairs the rule is retired and what it skipped is fetched.</p>",
        esc(&line)
    );
    h.push_str("<table><tr><th>rule</th><th>URLs skipped</th><th>support</th><th>counterexamples</th><th>standing</th></tr>\n");
    for r in &f.url_rules {
        let _ = writeln!(
            h,
            "<tr><td class=\"url\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.rule),
            r.skipped,
            r.support,
            r.counterexamples,
            esc(&r.standing)
        );
    }
    h.push_str("</table>\n");
}

fn clusters(h: &mut String, f: &Status) {
    let list = &f.duplicate_clusters;
    if list.is_empty() {
        return;
    }
    h.push_str("<h2>Largest duplicate clusters</h2>\n<p class=\"note\">Pages kept in the corpus with the most copies dropped as their duplicates (from <code>duplicates.jsonl</code>), with some of the copies.</p>\n<table><tr><th>page kept</th><th>copies</th></tr>\n");
    for c in list {
        let copies: Vec<String> = (c.some_copies.iter())
            .map(|u| format!("<br><small>{}</small>", esc(u)))
            .collect();
        let _ = writeln!(
            h,
            "<tr><td class=\"url\">{}{}</td><td>{}</td></tr>",
            esc(&c.url),
            copies.concat(),
            c.copies
        );
    }
    h.push_str("</table>\n");
}

/// Errors, out-of-scope links and duplicate traps, by kind.
fn problems(h: &mut String, f: &Status) {
    for (counts, heading) in [
        (
            &f.stats.errors,
            "Errors by kind (every one is in errors.jsonl)",
        ),
        (&f.stats.out_of_scope, "Links not followed, by reason"),
    ] {
        if counts.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<h2>{}</h2>\n<table>", esc(heading));
        for (kind, n) in counts {
            let _ = writeln!(h, "<tr><td>{}</td><td>{n}</td></tr>", esc(kind));
        }
        h.push_str("</table>\n");
    }
    let traps = &f.stats.duplicate_traps;
    if !traps.is_empty() {
        h.push_str("<h2>Sections cut off as duplicate traps</h2>\n<table><tr><th>section</th><th>duplicates in window</th></tr>\n");
        for t in traps {
            let _ = writeln!(
                h,
                "<tr><td class=\"url\">{}</td><td>{} of {}</td></tr>",
                esc(&t.section),
                t.duplicates,
                t.window
            );
        }
        h.push_str("</table>\n");
    }
}

/// A curve per run (a resumed run starts from the last checkpoint's totals),
/// x in [`TimeUnit`]s since the first run started.
type Curves = Vec<Vec<(f64, f64)>>;

/// Seconds for a crawl of a few minutes, minutes for one of a few hours,
/// hours past that.
#[derive(Clone, Copy)]
struct TimeUnit(f64, &'static str);

impl TimeUnit {
    fn of(samples: &[Sample]) -> TimeUnit {
        let span = samples.last().map_or(0.0, |l| l.t) - samples[0].run.min(samples[0].t);
        match span {
            s if s < 180.0 => TimeUnit(1.0, "seconds"),
            s if s < 3.0 * 3600.0 => TimeUnit(60.0, "minutes"),
            _ => TimeUnit(3600.0, "hours"),
        }
    }
}

fn by_run(samples: &[Sample], y: impl Fn(&Sample, &Sample) -> Option<f64>) -> Curves {
    let TimeUnit(unit, _) = TimeUnit::of(samples);
    let t0 = samples[0].run.min(samples[0].t);
    let mut curves: Curves = Vec::new();
    for pair in samples.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.run != b.run {
            curves.push(Vec::new());
            continue;
        }
        if curves.is_empty() {
            curves.push(Vec::new());
        }
        if let Some(v) = y(a, b) {
            curves.last_mut().unwrap().push(((b.t - t0) / unit, v));
        }
    }
    curves.retain(|c| !c.is_empty());
    curves
}

fn rate_chart(samples: &[Sample]) -> anyhow::Result<String> {
    let rate = |f: fn(&Sample) -> u64| {
        move |a: &Sample, b: &Sample| {
            let dt = b.t - a.t;
            (dt > 0.0).then(|| f(b).saturating_sub(f(a)) as f64 / dt)
        }
    };
    line_chart(
        "Pages per second",
        TimeUnit::of(samples),
        &[
            ("fetched", BLUE, by_run(samples, rate(|s| s.fetched))),
            ("written", GREEN, by_run(samples, rate(|s| s.written))),
            (
                "duplicates",
                RED,
                by_run(samples, rate(|s| s.exact + s.near)),
            ),
        ],
    )
}

fn totals_chart(samples: &[Sample]) -> anyhow::Result<String> {
    let total = |f: fn(&Sample) -> u64| move |_: &Sample, b: &Sample| Some(f(b) as f64);
    line_chart(
        "Duplicates and errors (totals)",
        TimeUnit::of(samples),
        &[
            (
                "exact duplicates",
                MAGENTA,
                by_run(samples, total(|s| s.exact)),
            ),
            ("near duplicates", RED, by_run(samples, total(|s| s.near))),
            ("errors", BLACK, by_run(samples, total(|s| s.errors))),
        ],
    )
}

fn chart_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("drawing a chart: {e}")
}

/// Lines over time; the legend is HTML under the chart, where it cannot
/// hide a line.
fn line_chart(
    title: &str,
    unit: TimeUnit,
    lines: &[(&str, RGBColor, Curves)],
) -> anyhow::Result<String> {
    let points = || lines.iter().flat_map(|l| l.2.iter().flatten());
    let x_max = points().map(|p| p.0).fold(0.0, f64::max).max(1.0 / unit.0);
    let y_max = points().map(|p| p.1).fold(0.0, f64::max).max(1.0) * 1.05;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(chart_error)?;
        chart
            .configure_mesh()
            .x_desc(format!("{} since the crawl started", unit.1))
            .y_label_formatter(&|v| short_number(*v))
            .draw()
            .map_err(chart_error)?;
        for (_, color, curves) in lines {
            for curve in curves {
                chart
                    .draw_series(LineSeries::new(
                        curve.iter().copied(),
                        color.stroke_width(2),
                    ))
                    .map_err(chart_error)?;
            }
        }
        root.present().map_err(chart_error)?;
    }
    svg.push_str("\n<p class=\"legend\">");
    for (name, c, _) in lines {
        let _ = write!(
            svg,
            "<span style=\"color:#{:02x}{:02x}{:02x}\">&#9632;</span> {} &nbsp; ",
            c.0,
            c.1,
            c.2,
            esc(name)
        );
    }
    svg.push_str("</p>\n");
    Ok(svg)
}

fn bar_chart(title: &str, bars: &[(String, u64)]) -> anyhow::Result<String> {
    if bars.is_empty() {
        return Ok(format!(
            "<p class=\"note\">{}: no counts yet (a run counts them in stats.json when it ends; earlier versions did not).</p>",
            esc(title)
        ));
    }
    let y_max = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1) as f64 * 1.1;
    let n = bars.len() as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (470, 300)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..n, 0.0..y_max)
            .map_err(chart_error)?;
        let label = |x: &f64| {
            let i = (x - 0.5).round();
            if (x - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < bars.len() {
                bars[i as usize].0.clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(bars.len() * 2 + 1)
            .x_label_formatter(&label)
            .y_label_formatter(&|v| short_number(*v))
            .y_desc("pages")
            .draw()
            .map_err(chart_error)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
                let x = i as f64;
                Rectangle::new(
                    [(x + 0.1, 0.0), (x + 0.9, *v as f64)],
                    BLUE.mix(0.7).filled(),
                )
            }))
            .map_err(chart_error)?;
        root.present().map_err(chart_error)?;
    }
    Ok(svg)
}

/// Body sizes by power of two, as "≥ 4 KiB" labels.
fn size_bars(counts: &BTreeMap<u32, u64>) -> Vec<(String, u64)> {
    counts
        .iter()
        .map(|(&b, &n)| (b, n))
        .map(|(b, n)| (short_bytes(1u64 << b.min(63)), n))
        .collect()
}

fn depth_bars(counts: &BTreeMap<u32, u64>) -> Vec<(String, u64)> {
    counts.iter().map(|(d, n)| (d.to_string(), *n)).collect()
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// "512", "4K", "2M": bar labels, bucket lower bounds (powers of two).
fn short_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{}G", n >> 30),
        n if n >= 1 << 20 => format!("{}M", n >> 20),
        n if n >= 1 << 10 => format!("{}K", n >> 10),
        n => n.to_string(),
    }
}

fn short_number(v: f64) -> String {
    match v.abs() {
        a if a >= 1e6 => format!("{:.1}M", v / 1e6),
        a if a >= 1e4 => format!("{:.0}k", v / 1e3),
        a if a >= 10.0 || a == 0.0 => format!("{v:.0}"),
        _ => format!("{v:.1}"),
    }
}

fn utc(unix: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Text as HTML: URLs and titles come from the web.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use nearcrawl_crawl::stats::{HostFigures, StatsFile};

    use super::*;
    use crate::cmd::status::{Cluster, HostRow, Queued};

    fn sample(t: f64, run: f64, fetched: u64) -> Sample {
        Sample {
            t,
            run,
            fetched,
            written: fetched / 2,
            exact: 0,
            near: fetched / 4,
            errors: 1,
            bytes: 0,
            queued: 0,
            in_flight: 0,
            hosts_active: 0,
            rss_bytes: None,
        }
    }

    #[test]
    fn a_resumed_run_is_a_curve_of_its_own_and_rates_never_go_negative() {
        // Run 1 reaches 300 pages; run 2 resumes from a checkpoint at 200.
        let s = [
            sample(100.0, 100.0, 0),
            sample(160.0, 100.0, 120),
            sample(220.0, 100.0, 300),
            sample(400.0, 400.0, 200),
            sample(460.0, 400.0, 320),
        ];
        let rates = by_run(&s, |a, b| {
            Some((b.fetched - a.fetched) as f64 / (b.t - a.t))
        });
        assert_eq!(rates, vec![vec![(1.0, 2.0), (2.0, 3.0)], vec![(6.0, 2.0)]]);
    }

    /// A status of these counts (`stats.json`'s shape).
    fn status(counts: serde_json::Value) -> Status {
        Status {
            stats: serde_json::from_value(counts).unwrap(),
            ..Status::default()
        }
    }

    #[test]
    fn page_is_self_contained_and_escapes_what_comes_from_the_web() {
        let mut status = status(serde_json::json!({
            "fetched": 10, "written": 6, "exact_duplicates": 1, "near_duplicates": 3,
            "robots_denied": 0, "noindex": 0, "bytes": 0,
            "errors": {"timeout": 2}, "out_of_scope": {"host": 5},
            "body_sizes_log2": {"10": 7, "14": 3}, "depths": {"0": 1, "1": 9},
        }));
        status.queued = Some(Queued { urls: 4, hosts: 1 });
        let host = HostFigures {
            host: "a<b>.test".into(),
            fetched: 10,
            written: 6,
            duplicates: 4,
            errors: 0,
            mean_delay_ms: 1000,
        };
        status.top_hosts = vec![HostRow {
            duplicate_rate: host.duplicate_rate(),
            figures: host,
        }];
        status.url_rules = vec![nearcrawl_crawl::stats::UrlRule {
            rule: "…/print ↔ … (story<1> pages)".into(),
            standing: "proven".into(),
            support: 12,
            counterexamples: 0,
            skipped: 40,
        }];
        status.duplicate_clusters = vec![Cluster {
            url: "http://a.test/?q=<script>".into(),
            copies: 3,
            some_copies: vec!["http://a.test/x\"y".into()],
        }];
        let samples: Vec<Sample> = (0..5).map(|i| sample(i as f64, 0.0, i * 10)).collect();
        let html = render(Path::new("out"), &status, &samples).unwrap();
        assert!(!html.contains("<script"), "no script, and none let in");
        assert!(html.contains("a&lt;b&gt;.test"));
        assert!(html.contains("?q=&lt;script&gt;"));
        assert!(html.contains("x&quot;y"));
        for external in ["http-equiv", "<link", "src=", "@import", "url("] {
            assert!(
                !html.contains(external),
                "{external}: the page needs nothing from outside"
            );
        }
        // Two charts over time, two bar charts.
        assert_eq!(html.matches("<svg").count(), 4);
        assert!(
            html.contains("\n1K\n") && html.contains("\n16K\n"),
            "size bars"
        );
        assert!(html.contains("3 + 1") || html.contains("1 + 3"));
        assert!(html.contains("40.0%"), "the host's duplicate rate");
        assert!(!html.contains("Recrawl"), "not a recrawl");
        assert!(html.contains("Duplicates predicted from URLs"));
        assert!(
            html.contains("…/print ↔ … (story&lt;1&gt; pages)"),
            "the rule, escaped"
        );
    }

    #[test]
    fn pages_are_counted_by_language() {
        let status = status(serde_json::json!({
            "fetched": 10, "written": 6, "exact_duplicates": 0, "near_duplicates": 0,
            "robots_denied": 0, "noindex": 0, "bytes": 0, "errors": {}, "out_of_scope": {},
            "languages": {"en": 6, "de": 3, "und": 1}, "other_language": 4,
        }));
        let html = render(Path::new("out"), &status, &[]).unwrap();
        let table = &html[html.find("<h2>Languages").expect("a languages table")..];
        let (en, de) = (
            table.find("<td>en</td>").unwrap(),
            table.find("<td>de</td>").unwrap(),
        );
        assert!(en < de, "most first");
        assert!(table.contains("<td>6</td><td>60.0%</td>"));
        assert!(table.contains("4 pages left out"));
        let html = render(Path::new("out"), &Status::default(), &[]).unwrap();
        assert!(!html.contains("Languages"));
    }

    #[test]
    fn a_recrawl_shows_what_the_earlier_pages_turned_out_to_be() {
        let status = status(serde_json::json!({
            "fetched": 10, "written": 2, "exact_duplicates": 0, "near_duplicates": 0,
            "robots_denied": 0, "noindex": 0, "bytes": 0, "errors": {}, "out_of_scope": {},
            "visits": {"unchanged": 6, "changed": 2, "gone": 1, "failed": 1, "new": 3},
            "not_modified": 5, "bytes_saved": 20480,
        }));
        let html = render(Path::new("out"), &status, &[]).unwrap();
        assert!(html.contains("<h2>Recrawl</h2>"));
        for row in [
            "<td>10</td>",
            "<td>6 (60.0%)</td>",
            "<td>2 (20.0%)</td>",
            "<td>5</td>",
            "<td>3</td>",
        ] {
            assert!(html.contains(row), "{row}");
        }
        // A running crawl's last run, as its stats.json tells it.
        let file = r#"{"fetched": 1, "written": 1, "exact_duplicates": 0, "near_duplicates": 0,
            "robots_denied": 0, "noindex": 0, "bytes": 0, "errors": {}, "out_of_scope": {},
            "visits": {"changed": 1}, "this_run": {"fetched": 1}}"#;
        let file: StatsFile = serde_json::from_str(file).unwrap();
        let status = Status {
            running: true,
            ..Status::of(file.stats)
        };
        let html = render(Path::new("out"), &status, &[]).unwrap();
        assert!(html.contains("<td>1 (100.0%)</td>"));
    }
}
