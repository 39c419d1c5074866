#!/usr/bin/env python3
"""Cross-host gate bench: one story on several hosts, each host with its
own template, title style and boilerplate; crawl them all with the default
gate and judge every drop.

    cargo build --release -p nearcrawl-cli
    python3 bench/crosshost_gate.py [--seed N] [--articles DIR]

Real article text: the 181 news articles of ../shared/bench/extraction
(their hand-annotated bodies and their pages' headlines). Hosts are loopback
addresses 127.0.2.1-13, each a seed, so the crawl order varies:

- hosts 1-4 are large (about 25 stories each), 5-8 middling (about 10),
  9-12 small (3-10 pages, mostly copies: hosts met for the first time);
- a third of the stories has a copy on another host: a plain copy (the same
  text in another template, title style and site name) or an edited one (a
  syndication line, an editor's note, an update paragraph, a paragraph cut,
  a few words changed), and 40% of copies carry a rewritten headline;
- host 13 is a series: 40 flood warnings that differ in one county and
  one date, and must all be kept.

Hard negatives (`--hard`, from ../shared/bench/wcxb-dev when it is there),
pages that share much of their text and are not copies:

- hosts 14-16 are shops on one platform: 36 products (the real text of
  wcxb-dev product pages, 40-160 words) in one template (a store's
  information: 120-300 words of a real service page), a third on each
  host, each product its own story;
- a later story: for a sixth of the stories, a page on another host that
  leads with its own news (the opening paragraphs of an article used
  nowhere else, a third of the text) and reuses the rest of the story as
  background, under its own headline: a story of its own.

A page dropped as a duplicate of a page of another story (or any series
page dropped) is a false drop. A story's pages past its first written one
are copies kept. Prints copies caught (plain, edited; and of those, the
ones on small hosts, met for the first time),
false drops and the pages fetched; --json writes the figures.
"""

import argparse
import glob
import gzip
import html
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOSTS = 12
SERIES_HOST = 13
SHOP_HOSTS = [14, 15, 16]

SITES = [
    ("The Daily Ledger", "{t} | {s}"),
    ("Northern Courier", "{s} - {t}"),
    ("Metro Wire", "{t} — {s}"),
    ("The Evening Post", "{t} ({s})"),
    ("Globe Report", "{t} :: {s}"),
    ("Harbor Times", "{s}: {t}"),
    ("Valley News Online", "{t} | {s}"),
    ("Capital Observer", "{t} - {s}"),
    ("Pine Street Blog", "{t} · {s}"),
    ("Morning Digest", "{t}"),
    ("Weekly Signal", "{t} | {s}"),
    ("Riverside Herald", "{s} » {t}"),
    ("County Alerts", "{t} | {s}"),
    ("Scooter Depot", "{t} | {s}"),
    ("Ride Shop", "{t} - {s}"),
    ("Wheels Direct", "{t}"),
]

COUNTIES = [
    "Adams", "Brown", "Clark", "Dane", "Eau Claire", "Florence", "Grant", "Green",
    "Iowa", "Iron", "Jackson", "Juneau", "Kenosha", "Lafayette", "Langlade", "Lincoln",
    "Marathon", "Marinette", "Monroe", "Oneida", "Outagamie", "Pepin", "Pierce", "Polk",
    "Price", "Racine", "Richland", "Rock", "Rusk", "Sauk", "Sawyer", "Shawano",
    "Taylor", "Vernon", "Vilas", "Walworth", "Washburn", "Waupaca", "Wood", "Dodge",
]


def load_articles(root):
    truth = json.load(open(os.path.join(root, "ground-truth.json"), encoding="utf-8"))
    out = []
    for key in sorted(truth):
        body = (truth[key].get("articleBody") or "").strip()
        path = os.path.join(root, "html", f"{key}.html.gz")
        if len(body.split()) < 120 or not os.path.exists(path):
            continue
        raw = gzip.open(path).read().decode("utf-8", "replace")
        m = re.search(r'<meta[^>]+property=["\']og:title["\'][^>]+content=["\']([^"\']+)', raw) or re.search(
            r"<title[^>]*>(.*?)</title>", raw, re.S
        )
        headline = html.unescape(re.sub(r"\s+", " ", m.group(1))).strip() if m else key
        headline = re.split(r" [|\-–—] ", headline)[0].strip() or key
        paras = [p.strip() for p in body.split("\n") if p.strip()]
        out.append({"id": key, "headline": headline, "paras": paras})
    return out


def rewrite_headline(h, rng):
    words = h.split()
    lead = rng.choice(["Report:", "Analysis:", "Update:", "Explained:", "Watch:"])
    cut = words[: max(3, len(words) - 2)]
    if len(cut) > 4:
        i = rng.randrange(1, len(cut) - 1)
        cut[i], cut[i + 1] = cut[i + 1], cut[i]
    return f"{lead} {' '.join(cut)}"


def edit(paras, rng, host_name, source_name):
    paras = list(paras)
    if len(paras) > 4:
        del paras[rng.randrange(1, len(paras) - 1)]
    words_changed = []
    for p in paras:
        ws = p.split()
        for i in range(len(ws)):
            if rng.random() < 0.03:
                ws[i] = rng.choice(["reportedly", "officials", "said", "also", "however", "new"])
        words_changed.append(" ".join(ws))
    paras = words_changed
    paras.insert(0, f"This story originally appeared in {source_name} and is republished with permission.")
    if rng.random() < 0.5:
        paras.append("Editor's note: this article was updated to correct the spelling of a name and to add comment from the city.")
    else:
        paras.append(f"Update: {host_name} has contacted the agencies named in this report and will add their responses when they arrive.")
    return paras


def series_page(i):
    county = COUNTIES[i]
    day = 3 + i % 25
    text = [
        f"The National Weather Service has issued a flood warning for {county} County until 6 PM on March {day}.",
        "Heavy rain over the past two days has raised rivers and streams above flood stage in low-lying areas.",
        "Residents should avoid driving through flooded roads, move valuables to higher floors and keep a radio tuned to local stations.",
        "Turn around, don't drown: most flood deaths happen in vehicles. Six inches of moving water can knock an adult down.",
        "Emergency shelters are open at the county fairgrounds and the high school gymnasium for anyone who must leave home.",
        "This warning will be updated as conditions change. Check back for the latest information from emergency management officials.",
    ]
    return f"Flood warning for {county} County, March {day}", text


def shop_pages(wcxb_dir, rng):
    """Products of one template on the shop hosts."""
    truth = json.load(open(os.path.join(wcxb_dir, "ground-truth.json"), encoding="utf-8"))
    products = [k for k, v in sorted(truth.items()) if v["pageType"] == "product" and len(v["articleBody"].split()) >= 40]
    service = next(k for k, v in sorted(truth.items()) if v["pageType"] == "service" and len(v["articleBody"].split()) >= 300)
    template = " ".join(truth[service]["articleBody"].split()[: rng.randrange(120, 300)])
    pages = []
    for i, key in enumerate(rng.sample(products, 36)):
        own, words = [], 0
        limit = rng.randrange(40, 160)
        for para in (p.strip() for p in truth[key]["articleBody"].split("\n")):
            if words >= limit:
                break
            if para:
                own.append(para)
                words += len(para.split())
        host = SHOP_HOSTS[i % len(SHOP_HOSTS)]
        pages.append((host, f"/product/{key}.html", f"product-{key}", own[0][:70], own + [template], "product"))
    return pages


def later_story(a, lead_source, rng):
    """A later story on `a`'s subject: its own opening, `a` as background."""
    keep = a["paras"][: max(2, round(len(a["paras"]) * rng.uniform(0.6, 0.75)))]
    target = sum(len(p.split()) for p in keep) / 2
    lead, words = [], 0
    for p in lead_source["paras"]:
        if words >= target:
            break
        lead.append(p)
        words += len(p.split())
    return lead_source["headline"], lead + keep


def plan(articles, rng, hard_dir=None):
    """Stories placed on hosts: [(host, path, story, headline, paras, kind)]."""
    rng.shuffle(articles)
    leads = articles[-12:] if hard_dir else []
    articles = articles[: len(articles) - len(leads)]
    pages, by_host = [], {h: [] for h in range(1, HOSTS + 1)}
    sizes = {h: (25 if h <= 4 else 10 if h <= 8 else 0) for h in range(1, HOSTS + 1)}
    stories = iter(articles)
    originals = []
    for h in range(1, 9):
        for _ in range(sizes[h]):
            a = next(stories, None)
            if a is None:
                break
            originals.append((h, a))
    rest = list(stories)
    # Copies of a third of the stories, on another host; small hosts get
    # copies mostly, and a few stories of their own.
    copied = rng.sample(originals, len(originals) // 3)
    targets = [h for h in range(1, HOSTS + 1)]
    small = list(range(9, HOSTS + 1))
    for n, (src, a) in enumerate(copied):
        dst = small[n % len(small)] if n % 2 == 0 else rng.choice([h for h in targets if h != src])
        kind = "plain" if n % 2 else "edited"
        by_host[dst].append((a, kind, src))
    for h in small:
        for _ in range(rng.randrange(1, 4)):
            if rest:
                by_host[h].append((rest.pop(), "original", None))
    for h, a in originals:
        by_host[h].insert(0, (a, "original", None))
    for h, items in by_host.items():
        for i, (a, kind, src) in enumerate(items):
            headline = a["headline"]
            paras = a["paras"]
            if kind != "original":
                if rng.random() < 0.4:
                    headline = rewrite_headline(headline, rng)
                if kind == "edited":
                    paras = edit(paras, rng, SITES[h - 1][0], SITES[src - 1][0])
            pages.append((h, f"/news/{i}-{a['id']}.html", a["id"], headline, paras, kind))
    for i in range(40):
        headline, paras = series_page(i)
        pages.append((SERIES_HOST, f"/alerts/{i}.html", f"series-{i}", headline, paras, "series"))
    if hard_dir:
        pages += shop_pages(hard_dir, rng)
        for n, (src, a) in enumerate(rng.sample(originals, len(leads))):
            headline, paras = later_story(a, leads[n], rng)
            host = rng.choice([h for h in range(1, HOSTS + 1) if h != src])
            pages.append((host, f"/news/later-{a['id']}.html", f"later-{a['id']}", headline, paras, "later"))
    return pages


def render(host, headline, paras, others):
    site, style = SITES[host - 1]
    title = style.format(t=headline, s=site)
    meta = f'<meta property="og:site_name" content="{site}">' if host % 2 else ""
    if host % 3 == 0:
        meta += f'<meta property="og:title" content="{html.escape(headline)}">'
    nav = " ".join(f'<a href="/section/{s}">{s.title()}</a>' for s in ["news", "sport", "business", "opinion"])
    most = "".join(f'<li><a href="{p}">{html.escape(h)}</a></li>' for p, h in others[:5])
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paras)
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title>{meta}</head><body>"
        f"<header><div class='logo'>{site}</div><nav>{nav}</nav></header>"
        f"<main><article><h1>{html.escape(headline)}</h1>{body}</article></main>"
        f"<aside class='sidebar'><h3>Most read</h3><ul>{most}</ul></aside>"
        f"<footer>&copy; {site}. All rights reserved. <a href='/about'>About</a> <a href='/privacy'>Privacy</a></footer>"
        "</body></html>"
    )


def serve(pages, port):
    sites = {}
    for h, path, story, headline, paras, kind in pages:
        sites.setdefault(h, {})[path] = (headline, paras)
    docs = {}
    for h, paths in sites.items():
        listing = [(p, hl) for p, (hl, _) in paths.items()]
        for p, (hl, paras) in paths.items():
            docs[(h, p)] = render(h, hl, paras, [x for x in listing if x[0] != p])
        links = "".join(f'<li><a href="{p}">{html.escape(hl)}</a></li>' for p, hl in listing)
        site = SITES[h - 1][0]
        docs[(h, "/")] = (
            f"<html><head><title>{site}</title></head><body><h1>{site}</h1><ul>{links}</ul></body></html>"
        )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            host = int(self.server.server_address[0].rsplit(".", 1)[1])
            body = docs.get((host, self.path.split("?")[0]))
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    servers = []
    for h in sites:
        s = ThreadingHTTPServer((f"127.0.2.{h}", port), Handler)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
    return servers


CONFIG = """
[scope]
max_depth = 5
max_pages = 100000

[politeness]
delay_ms = 0
global_concurrency = 32
per_host_concurrency = 4
obey_robots = false

[fetch]
allow_private_networks = true

[dedup]
policy = "record"

[output]
dir = "{out}"
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--articles", default=os.path.join(REPO, "../shared/bench/extraction"))
    ap.add_argument("--hard", default=os.path.join(REPO, "../shared/bench/wcxb-dev"),
                    help="wcxb-dev, for the shops' products (no hard negatives if missing)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--show", type=int, default=10)
    args = ap.parse_args()
    if not os.path.isdir(args.articles):
        sys.exit(f"{args.articles} is missing (the extraction benchmark set)")
    rng = random.Random(args.seed)
    hard = args.hard if os.path.isdir(args.hard) else None
    pages = plan(load_articles(args.articles), rng, hard)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    servers = serve(pages, port)
    tmp = tempfile.mkdtemp(prefix="crosshost-gate-")
    out = os.path.join(tmp, "out")
    with open(os.path.join(tmp, "c.toml"), "w") as f:
        f.write(CONFIG.format(out=out))
    hosts = sorted({p[0] for p in pages})
    with open(os.path.join(tmp, "seeds.txt"), "w") as f:
        for h in rng.sample(hosts, len(hosts)):
            f.write(f"http://127.0.2.{h}:{port}/\n")
    started = time.time()
    subprocess.run(
        [args.binary, "crawl", "--config", os.path.join(tmp, "c.toml"), "--seeds", os.path.join(tmp, "seeds.txt")],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    elapsed = time.time() - started
    for s in servers:
        s.shutdown()

    what = {(f"127.0.2.{h}", path): (story, kind, h) for h, path, story, _, _, kind in pages}

    def page_of(url):
        m = re.match(r"http://([\d.]+):\d+(/[^?#]*)", url)
        return what.get((m.group(1), m.group(2))) if m else None

    records = []
    for path in sorted(glob.glob(os.path.join(out, "pages-*.jsonl"))):
        for line in open(path, encoding="utf-8"):
            records.append(json.loads(line))
    fetched = [r for r in records if page_of(r["url"])]
    written = {}
    kinds_by_story = {}
    false_drops, drops = [], 0
    for r in fetched:
        story, kind, host = page_of(r["url"])
        kinds_by_story.setdefault(story, []).append((kind, host))
        if r.get("duplicate_of") is None:
            written.setdefault(story, []).append((kind, host))
            continue
        drops += 1
        of = page_of(r["duplicate_of"])
        if of is None or of[0] != story or kind == "series":
            false_drops.append((r["url"], r["duplicate_of"], r.get("duplicate_kind") or ""))
    # Copies: every page of a story past the first, by the kind of copy.
    figures = {"fetched": len(fetched), "seconds": round(elapsed, 1)}
    for label, test in [
        ("plain", lambda k, h: k == "plain"),
        ("edited", lambda k, h: k == "edited"),
        ("small_plain", lambda k, h: k == "plain" and h >= 9),
        ("small_edited", lambda k, h: k == "edited" and h >= 9),
    ]:
        total = kept = 0
        for story, pages_of in kinds_by_story.items():
            copies = [p for p in pages_of if test(*p)]
            if not copies:
                continue
            total += len(copies)
            # Copies kept: pages of the story written past the first.
            kept += min(len(copies), max(0, len(written.get(story, [])) - 1))
        figures[f"{label}_copies"] = total
        figures[f"{label}_caught"] = (total - kept) / max(1, total)
    figures["false_drops"] = len(false_drops)
    figures["false_drop_rate"] = len(false_drops) / max(1, len(fetched))
    series = [r for r in fetched if page_of(r["url"])[1] == "series"]
    figures["series_kept"] = sum(1 for r in series if r.get("duplicate_of") is None)
    print(f"cross-host (seed {args.seed}): fetched {len(fetched)} pages on {len(hosts)} hosts in {elapsed:.1f} s; {drops} dropped")
    for label in ["plain", "edited", "small_plain", "small_edited"]:
        print(f"  {label:12} copies: {figures[label + '_copies']:3}, caught {100 * figures[label + '_caught']:.1f}%")
    print(f"  false drops: {len(false_drops)} ({100 * figures['false_drop_rate']:.2f}% of fetched; goal <= 0.5%); "
          f"series pages kept {figures['series_kept']} of {len(series)}")
    for kind in ["product", "later"]:
        pages_of = [r for r in fetched if page_of(r["url"])[1] == kind]
        dropped = sum(1 for r in pages_of if r.get("duplicate_of") is not None)
        figures[f"{kind}_dropped"] = dropped
        if pages_of:
            print(f"  hard negatives, {kind:7}: {len(pages_of)} fetched, {dropped} dropped")
    for u, d, _ in false_drops[: args.show]:
        print(f"    {u} -> {d}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
