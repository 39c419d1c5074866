#!/usr/bin/env python3
"""Pages built by script: what rendering yields, what it costs, and what the
server sees.

    bench/render_bench.py [--per-kind N] [--delay-ms MS] [--tabs N]

Writes the app-shell site of tests/src/app_site.rs (N pages of each kind:
JSON endpoint, embedded blob, client-side router, timer, static pages; and
hostile scripts), serves it with nginx on 127.0.0.1 logging each request's
start, crawls it with `nearcrawl crawl` (render auto, WARC on), and prints:

- app shells yielding their text: word F1 of the page's text against the
  text a browser shows (title and paragraphs), share with F1 >= .8, by kind;
- static pages rendered (read from the WARC's conversion records);
- the least gap between two request starts in the server's log (the
  browser's requests included) against the configured delay; requests to
  URLs robots.txt forbids; styles, images and popups requested;
- wall time, pages/s, and the peak PSS summed over the crawler and every
  process under it (the browser's), sampled every 100 ms.

Needs, built once:
    cargo build --release -p nearcrawl-cli
    cargo build --release -p nearcrawl-tests --example app_site
and nginx and chromium (apt-get install -y nginx chromium).
Env: NEARCRAWL_BIN overrides the binary.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import localsite
from proctree import pss_kib, tree as process_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def watch_memory(proc, peak):
    """Samples the process tree's summed PSS until `proc` ends."""
    while proc.poll() is None:
        tree = process_tree(proc.pid)
        total = sum(pss_kib(p) for p in tree)
        if total > peak["kib"]:
            peak.update(kib=total, processes=len(tree))
        time.sleep(0.1)


def word_f1(got, want):
    g, w = collections.Counter(got.split()), collections.Counter(want.split())
    common = sum((g & w).values())
    if not common:
        return 0.0
    p, r = common / sum(g.values()), common / sum(w.values())
    return 2 * p * r / (p + r)


def warc_conversions(out):
    """Target URIs of the WARC's conversion records."""
    uris = []
    for name in sorted(os.listdir(out)):
        if not name.endswith(".warc.gz"):
            continue
        data = open(os.path.join(out, name), "rb").read()
        text = b""
        while data:
            d = zlib.decompressobj(31)
            text += d.decompress(data)
            data = d.unused_data
        for record in text.split(b"WARC/1.1\r\n"):
            if b"WARC-Type: conversion\r\n" in record[:400]:
                m = re.search(rb"WARC-Target-URI: (\S+)", record)
                uris.append(m.group(1).decode())
    return uris


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-kind", type=int, default=50)
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--tabs", type=int, default=2)
    args = ap.parse_args()
    binary = os.environ.get("NEARCRAWL_BIN", os.path.join(ROOT, "target/release/nearcrawl"))
    writer = os.path.join(ROOT, "target/release/examples/app_site")
    tmp = tempfile.mkdtemp(prefix="render-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.chmod(tmp, 0o755)
    subprocess.run([writer, tmp, str(args.per_kind)], check=True)
    truth = [json.loads(l) for l in open(os.path.join(tmp, "truth.jsonl"))]
    log = os.path.join(tmp, "access.log")
    http_extra = "log_format timed '$msec $request_time $request_uri';"
    server_extra = (
        "types { text/html html; application/javascript js; application/json json; text/css css; image/png png; } "
        f"access_log {log} timed; "
        "location /app/ { default_type text/html; try_files $uri /app/shell.html; }"
    )
    site = os.path.join(tmp, "site")
    for d, _, _ in os.walk(site):
        os.chmod(d, 0o755)
    out = os.path.join(tmp, "out")
    with localsite.nginx(site, http_extra=http_extra, server_extra=server_extra) as port:
        config = os.path.join(tmp, "c.toml")
        with open(config, "w") as f:
            f.write(f"""[seeds]
urls = ["http://127.0.0.1:{port}/index.html"]
[scope]
max_depth = 1000
[politeness]
delay_ms = {args.delay_ms}
per_host_concurrency = 4
[fetch]
allow_private_networks = true
[output]
dir = "{out}"
formats = ["jsonl", "warc"]
[render]
tabs = {args.tabs}
page_timeout_secs = 10
""")
        started = time.time()
        proc = subprocess.Popen([binary, "crawl", "--config", config],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak = {"kib": 0, "processes": 0}
        watcher = threading.Thread(target=watch_memory, args=(proc, peak))
        watcher.start()
        _, stderr = proc.communicate()
        watcher.join()
        wall = time.time() - started
        if proc.returncode != 0:
            sys.exit(f"crawl failed: {stderr}")
    stats = json.load(open(os.path.join(out, "stats.json")))
    base = f"http://127.0.0.1:{port}"
    pages = {}
    for name in sorted(os.listdir(out)):
        if name.startswith("pages-") and name.endswith(".jsonl"):
            for line in open(os.path.join(out, name)):
                row = json.loads(line)
                pages[row["url"][len(base):]] = row.get("text", "")
    by_kind = collections.defaultdict(list)
    for t in truth:
        if t["kind"] == "hostile":
            continue
        f1 = word_f1(pages.get(t["path"], ""), t["title"] + " " + t["text"])
        by_kind[t["kind"]].append(f1)
    print(f"site: {len(truth)} pages ({args.per_kind} per kind), delay {args.delay_ms} ms, {args.tabs} tabs")
    app = [f for k, fs in by_kind.items() if k != "static" for f in fs]
    print(f"app shells with their text (word F1 >= .8): {sum(f >= .8 for f in app)} of {len(app)} "
          f"({100 * sum(f >= .8 for f in app) / len(app):.1f}%)")
    for kind, fs in sorted(by_kind.items()):
        fs = sorted(fs)
        print(f"  {kind:7} pages {len(fs):4}  F1 median {fs[len(fs) // 2]:.3f}  min {fs[0]:.3f}  "
              f">=.8: {sum(f >= .8 for f in fs)}")
    rendered = {u[len(base):] for u in warc_conversions(out)}
    static = [t["path"] for t in truth if t["kind"] == "static"]
    print(f"static pages rendered: {sum(p in rendered for p in static)} of {len(static)}; "
          f"pages rendered in all: {len(rendered)}")
    requests = []
    for line in open(log):
        ended, took, uri = line.split(" ", 2)
        requests.append((float(ended) - float(took), uri.strip()))
    requests.sort()
    gaps = [b[0] - a[0] for a, b in zip(requests, requests[1:])]
    asked = collections.Counter(u for _, u in requests)
    forbidden = sum(n for u, n in asked.items() if u.startswith("/private/"))
    never = sum(asked[u] for u in ["/assets/app.css", "/assets/logo.png", "/hostile/popup-target.html"])
    print(f"server log: {len(requests)} requests; least gap between two starts {min(gaps) * 1000:.1f} ms "
          f"(delay {args.delay_ms} ms); robots.txt-forbidden requests {forbidden}; styles, images, popups {never}")
    r = stats["render"]
    print(f"stats: {json.dumps(r)}")
    print(f"crawl: {stats['fetched']} pages in {wall:.1f} s ({stats['fetched'] / wall:.1f} pages/s); "
          f"peak PSS of the crawl and its browser {peak['kib'] / 1024:.0f} MiB over {peak['processes']} processes")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
