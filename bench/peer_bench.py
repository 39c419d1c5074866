#!/usr/bin/env python3
"""nearcrawl against the spider crate, alternating in one run, on one site.

    bench/peer_bench.py SITE [--rounds N] [--max-pages N]

SITE is one of
  javadoc    Java SE 17 API docs (apt-get install -y nginx openjdk-17-doc)
  generated  crawl_bench's generated 20,000-page site with planted duplicates
  big        a generated 1,500-page site where every 50th page is ~10 MB
             (a long table, as big generated docs pages are)

Dir sites are served by nginx from 127.0.0.1. Each round runs both crawlers
(the order alternates), each from a fresh output directory, with the same
settings: 64 requests in flight, no delay, robots.txt off for spider (the
sites have none). Figures per run, read from the kernel (wait4 rusage):
wall seconds, pages, pages/s, CPU seconds (user+sys), CPU ms per page, peak
RSS; for nearcrawl also the state directory's bytes per fetched page.

Needs, built once:
    cargo build --release -p nearcrawl-cli
    cargo build --release -p nearcrawl-crawl --example crawl_bench   # generated
    (cd bench/spider-peer && CARGO_TARGET_DIR=../../target/spider cargo build --release)  # ~360 crates, once
Env: NEARCRAWL_BIN, SPIDER_BIN, CRAWL_BENCH_BIN override the paths.
"""
import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import localsite

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAVADOC = "/usr/share/doc/openjdk-17-jre-headless/api"

CONFIG = """
[scope]
max_depth = 100
max_pages = {max_pages}
max_pages_per_host = {max_pages}

[politeness]
delay_ms = 0
global_concurrency = 64
per_host_concurrency = 64
obey_robots = true

[fetch]
allow_private_networks = true
request_timeout_secs = 30

[dedup]
capacity = 1000000
"""


def build_big_site(root):
    """1,500 pages linked in a tree; every 50th is a ~10 MB table page."""
    rng = random.Random(11)
    words = open(os.path.join(ROOT, "crates/simhash/src/tokenize.rs")).read().split()
    words = [w for w in words if w.isalpha()] or ["word"]
    os.makedirs(root, exist_ok=True)
    n = 1500
    for i in range(n):
        kids = [c for c in (2 * i + 1, 2 * i + 2) if c < n]
        links = "".join(f'<li><a href="p{c}.html">page {c}</a></li>' for c in kids)
        if i % 50 == 49:
            rows = "".join(
                f"<tr><td>m{i}_{r}</td><td>{' '.join(rng.choice(words) for _ in range(12))}</td></tr>"
                for r in range(60_000)
            )
            body = f"<table>{rows}</table>"
        else:
            body = "".join(
                f"<p>{' '.join(rng.choice(words) for _ in range(40))} item {i} part {k}</p>"
                for k in range(8)
            )
        with open(os.path.join(root, f"p{i}.html"), "w") as f:
            f.write(
                f"<!doctype html><html><head><title>Page {i}</title></head><body>"
                f"<nav><ul>{links}</ul></nav><main><h1>Page {i}</h1>{body}</main></body></html>"
            )
    return "/p0.html"


def run_measured(cmd, **kw):
    """Runs cmd; returns (wall s, cpu s, peak RSS MiB, stdout)."""
    start = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.time() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[0]} failed: exit {os.waitstatus_to_exitcode(status)}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.decode()


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site", choices=["javadoc", "generated", "big"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-pages", type=int, default=1_000_000)
    args = ap.parse_args()
    nearcrawl = os.environ.get("NEARCRAWL_BIN", os.path.join(ROOT, "target/release/nearcrawl"))
    spider = os.environ.get("SPIDER_BIN", os.path.join(ROOT, "target/spider/release/spider-peer"))
    crawl_bench = os.environ.get("CRAWL_BENCH_BIN", os.path.join(ROOT, "target/release/examples/crawl_bench"))
    for b in [nearcrawl, spider] + ([crawl_bench] if args.site == "generated" else []):
        if not os.path.exists(b):
            sys.exit(f"{b} is missing: see the build commands in {__file__}'s docstring")
    tmp = tempfile.mkdtemp(prefix="peer-bench-")
    os.chmod(tmp, 0o755)  # nginx's workers read the generated site
    try:
        with served(args.site, tmp, crawl_bench) as seed:
            with open(os.path.join(tmp, "crawl.toml"), "w") as f:
                f.write(CONFIG.format(max_pages=args.max_pages))
            with open(os.path.join(tmp, "seeds.txt"), "w") as f:
                f.write(seed + "\n")
            print(f"site {args.site}: {seed}")
            print("crawler    round   pages   wall s  pages/s   CPU s  CPU ms/page  peak RSS MiB  state B/page")
            for r in range(args.rounds):
                order = ["nearcrawl", "spider"] if r % 2 == 0 else ["spider", "nearcrawl"]
                for who in order:
                    run_one(who, r, tmp, seed, nearcrawl if who == "nearcrawl" else spider)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def served(site, tmp, crawl_bench):
    """Serves `site` until the block ends; yields its seed URL."""
    if site == "generated":
        server = subprocess.Popen([crawl_bench, "20000", "--serve"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            seed = None
            while seed is None:
                line = server.stdout.readline()
                if not line:
                    sys.exit("crawl_bench --serve did not start")
                seed = next((w for w in line.split() if w.startswith("http://")), None)
            localsite.wait_listening(int(seed.split(":")[2].split("/")[0]))
            yield seed
        finally:
            server.terminate()
            server.wait()
        return
    if site == "javadoc":
        root, path = JAVADOC, "/index.html"
        if not os.path.isdir(root):
            sys.exit(f"{root} is missing: apt-get install -y openjdk-17-doc")
    else:
        root = os.path.join(tmp, "site")
        path = build_big_site(root)
    with localsite.nginx(root, workers=2) as port:
        yield f"http://127.0.0.1:{port}{path}"


def run_one(who, r, tmp, seed, binary):
    """One crawl from a fresh output directory; prints its figures."""
    out = os.path.join(tmp, f"out-{who}")
    shutil.rmtree(out, ignore_errors=True)
    if who == "nearcrawl":
        wall, cpu, rss, _ = run_measured(
            [binary, "crawl", "--config", os.path.join(tmp, "crawl.toml"),
             "--seeds", os.path.join(tmp, "seeds.txt"), "--out", out])
        pages = json.load(open(os.path.join(out, "stats.json")))["fetched"]
        state = f"{du(os.path.join(out, 'state')) / max(pages, 1):12.0f}"
    else:
        wall, cpu, rss, text = run_measured([binary, seed, out, "64"])
        pages = int(dict(kv.split("=") for kv in text.split())["pages"])
        state = "           -"
    print(f"{who:10} {r + 1:5} {pages:7} {wall:8.2f} {pages / wall:8.0f} {cpu:7.2f}"
          f" {1000 * cpu / max(pages, 1):12.2f} {rss:13.0f} {state}", flush=True)
    shutil.rmtree(out, ignore_errors=True)

if __name__ == "__main__":
    main()
