#!/usr/bin/env python3
"""Docs-site gate bench: crawl a real documentation site with the default
duplicate gate and judge every drop.

The site is served by nginx from 127.0.0.1 (Debian ships the sites):

    apt-get install -y nginx openjdk-17-doc libstdc++-12-doc rust-doc python3.11-doc
    cargo build --release -p nearcrawl-cli
    python3 bench/docs_gate.py javadoc      # or doxygen, rustdoc, sphinx

What a page documents (its item) is its <title> plus its first heading
(h1, or doxygen's div.title), read from the served file. A page dropped as
a duplicate of a page with another item is a false drop.

True duplicates (the same item under two paths) are planted: nginx adds a
link to /mirror/<same path> on a share of the pages, and serves /mirror/
with a line in the main content that names the time it was served (so
the copy is near, not exact). A mirror page judged a duplicate of a page
with its item is caught; its links (the whole mirror tree) must then never
be crawled.

Prints fetched/written/duplicates, false drops (share of fetched, with the
exact word-3-shingle Jaccard of each pair, the worst listed) and the
planted duplicates caught. --json writes the figures as one JSON object.
"""

import argparse
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import unquote, urlparse

import localsite

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (document root, seed path, main-content marker, mirror-link regex on $uri)
SITES = {
    "javadoc": (
        "/usr/share/doc/openjdk-17-jre-headless/api",
        "/index.html",
        '<main role="main">',
        r"y\.html$",
    ),
    "doxygen": (
        "/usr/share/doc/libstdc++-12-doc/libstdc++/user",
        "/index.html",
        '<div class="contents">',
        r"[37]\.html$",
    ),
    "sphinx": (
        "/usr/share/doc/python3.11/html",
        "/index.html",
        '<div class="body" role="main">',
        r"[ny]\.html$",
    ),
    "rustdoc": (
        "/usr/share/doc/rust-doc/html",
        "/std/index.html",
        '<section id="main-content" class="content">',
        r"y\.html$",
    ),
}

# The planted mirror: every page under /mirror/ too, with a timestamp
# after the content marker; the original pages link to their mirror.
MIRROR_HTTP = """
    map $uri $mirror_link {{
        "~{mirror_re}" '<p><a href="/mirror$uri">Mirror of this page</a></p>';
        default "";
    }}
"""
MIRROR_SERVER = """
        location /mirror/ {{
            alias {root}/;
            sub_filter_once on;
            sub_filter '{marker}' '{marker}<p>Mirrored $time_iso8601</p>';
        }}
        location / {{
            sub_filter_once on;
            sub_filter '</body>' '$mirror_link</body>';
        }}
"""

CONFIG = """
[scope]
max_depth = 50
max_pages = {max_pages}
max_pages_per_host = {max_pages}

[politeness]
delay_ms = 0
global_concurrency = 64
per_host_concurrency = 64
obey_robots = false

[fetch]
allow_private_networks = true
request_timeout_secs = 20

[dedup]
capacity = 1000000
policy = "record"

[output]
dir = "{out}"
"""


def item_of(root, url):
    """Title and first heading of the file behind `url`."""
    path = unquote(urlparse(url).path)
    if path.startswith("/mirror/"):
        path = path[len("/mirror") :]
    if path.endswith("/"):
        path += "index.html"
    try:
        with open(os.path.join(root, path.lstrip("/")), encoding="utf-8", errors="replace") as f:
            text = f.read(400_000)
    except OSError:
        return None
    title = re.search(r"<title>(.*?)</title>", text, re.S)
    head = re.search(r'<h1[^>]*>(.*?)</h1>|<div class="title">(.*?)</div>', text, re.S)
    clean = lambda s: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", s or ""))).strip()
    heading = clean((head.group(1) or head.group(2)) if head else "")
    return clean(title.group(1) if title else "") + " | " + heading


def shingles(text):
    toks = re.findall(r"\w+", text.lower())
    if len(toks) < 3:
        return {tuple(toks)}
    return {tuple(toks[i : i + 3]) for i in range(len(toks) - 2)}


def jaccard(a, b):
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / max(1, len(sa | sb))


def read_jsonl(pattern):
    for path in sorted(glob.glob(pattern)):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("site", choices=sorted(SITES))
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--max-pages", type=int, default=1_000_000)
    ap.add_argument("--out", help="crawl output dir (default: a temporary one)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--show", type=int, default=15, help="false drops to list")
    args = ap.parse_args()

    root, seed, marker, mirror_re = SITES[args.site]
    if not os.path.isdir(root):
        sys.exit(f"{root} is missing: apt-get install the site's package (see --help)")
    tmp = tempfile.mkdtemp(prefix="docs-gate-")
    out = args.out or os.path.join(tmp, "out")
    with open(os.path.join(tmp, "crawl.toml"), "w") as f:
        f.write(CONFIG.format(max_pages=args.max_pages, out=out))
    http_extra = MIRROR_HTTP.format(mirror_re=mirror_re)
    server_extra = MIRROR_SERVER.format(root=root, marker=marker)
    with localsite.nginx(root, http_extra, server_extra) as port:
        with open(os.path.join(tmp, "seeds.txt"), "w") as f:
            f.write(f"http://127.0.0.1:{port}{seed}\n")
        started = time.time()
        subprocess.run(
            [args.binary, "crawl", "--config", os.path.join(tmp, "crawl.toml"),
             "--seeds", os.path.join(tmp, "seeds.txt")],
            check=True, stdout=subprocess.DEVNULL,
        )
        elapsed = time.time() - started

    stats = json.load(open(os.path.join(out, "stats.json")))
    text = {}
    for rec in read_jsonl(os.path.join(out, "pages-*.jsonl")):
        text[rec["url"]] = rec.get("text") or ""
    dups = list(read_jsonl(os.path.join(out, "duplicates.jsonl")))
    false_drops, mirror_caught, mirror_wrong = [], 0, 0
    for d in dups:
        a, b = item_of(root, d["url"]), item_of(root, d["duplicate_of"])
        if a is not None and a == b:
            mirror_caught += "/mirror/" in d["url"]
            continue
        mirror_wrong += "/mirror/" in d["url"]
        j = jaccard(text.get(d["url"], ""), text.get(d["duplicate_of"], ""))
        false_drops.append((j, d, a, b))
    fetched_urls = set(text)
    mirror_fetched = sum("/mirror/" in u for u in fetched_urls)
    fetched = stats.get("fetched", len(fetched_urls))
    figures = {
        "site": args.site,
        "fetched": fetched,
        "written": stats.get("written"),
        "exact": stats.get("exact_duplicates"),
        "near": stats.get("near_duplicates"),
        "false_drops": len(false_drops),
        "false_drop_rate": len(false_drops) / max(1, fetched),
        "mirror_fetched": mirror_fetched,
        "mirror_caught": mirror_caught,
        "mirror_recall": mirror_caught / max(1, mirror_fetched),
        "seconds": round(elapsed, 1),
    }
    print(f"{args.site}: fetched {fetched}, written {figures['written']}, "
          f"exact {figures['exact']}, near {figures['near']} in {elapsed:.1f} s")
    print(f"false drops: {len(false_drops)} ({100 * figures['false_drop_rate']:.3f}% of fetched; goal <= 0.1%)")
    print(f"planted duplicates: {mirror_caught} of {mirror_fetched} mirror pages caught "
          f"({100 * figures['mirror_recall']:.1f}%; goal >= 90%), {mirror_wrong} joined to another item")
    for j, d, a, b in sorted(false_drops, key=lambda x: -x[0])[: args.show]:
        print(f"  {d['kind']:5} J3={j:.3f} sim={d.get('similarity', 0):.3f} d={d.get('distance', 0):2} "
              f"check={d.get('check', '-')}: {a!r} -> {b!r}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    if not args.out:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
