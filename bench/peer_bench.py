#!/usr/bin/env python3
"""nearcrawl against the spider crate, alternating in one run, on one site.

    bench/peer_bench.py SITE [--rounds N] [--max-pages N] [--peers LIST] [--base BIN]

SITE is one of
  javadoc    Java SE 17 API docs (apt-get install -y nginx openjdk-17-doc)
  rustdoc    the Rust API docs from /std/index.html (apt-get install -y rust-doc)
  rustdoc-same
             the same site, where nearcrawl fetches the pages spider fetches:
             on `rustdoc` spider also fetches ~7,300 small core::arch pages
             that nearcrawl's gate keeps out (copies of std::arch's), so a
             page is not the same unit for both. Here nearcrawl is seeded
             with every URL a spider run (made first, not measured) fetched,
             and does not skip predicted duplicates or duplicate traps
             ([dedup] predict = false, trap_window = 0): the same pages,
             each read, judged and written as usual
  generated  crawl_bench's generated 20,000-page site with planted duplicates
  big        a generated 1,500-page site where every 50th page is ~10 MB
             (a long table, as big generated docs pages are)

Peers (--peers, comma-separated; default nearcrawl,spider):
  nearcrawl  target/release/nearcrawl, as shipped (extraction and gate on)
  base       another nearcrawl build (--base BIN), to compare two builds
  spider     the spider crate's bare crawl (fetch and links only)
  transform  spider doing our job: its readability, main-content and
             Markdown pass (spider_transformations) on every page

Dir sites are served by nginx from 127.0.0.1. Each round runs every crawler
(the order rotates), each from a fresh output directory on tmpfs
(/dev/shm when there is one: a disk's write-back would measure the
disk), with the same
settings: 64 requests in flight, no delay, robots.txt off for spider (the
sites have none). Figures per run, read from the kernel (wait4 rusage):
wall seconds, pages, pages/s, CPU seconds (user+sys), CPU% (CPU seconds
over wall seconds: 200% is both cores), CPU ms per page, peak RSS, and the
machine's idle share over the run (/proc/stat: what neither the crawler
nor the server used); the MB of bodies fetched and CPU ms per MB (where
the crawlers fetch different pages, as on the Rust docs, whose pages the
gate keeps out are smaller than the rest, a page is not the same unit for
both); for
nearcrawl also the state directory's bytes per fetched page and its CPU
ms a page by stage (stats.json this_run.cpu_secs), and for the
transform peer the pages whose Markdown kept under 200 bytes.

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
RUSTDOC = "/usr/share/doc/rust-doc/html"

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
{dedup}"""


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


def machine_ticks():
    """The machine's CPU ticks since boot: (idle and iowait, all)."""
    with open("/proc/stat") as f:
        ticks = [int(t) for t in f.readline().split()[1:]]
    return ticks[3] + ticks[4], sum(ticks)


def run_measured(cmd, tries=1, **kw):
    """Runs cmd; returns (wall s, cpu s, peak RSS MiB, stdout, machine idle
    share over the run: what neither the crawler nor the server used). The
    spider peer exits 2 when its writer missed pages (not a fair run): such
    a run is made again, up to `tries` times in all."""
    for attempt in range(tries):
        start = time.time()
        idle0, all0 = machine_ticks()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kw)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.time() - start
        idle1, all1 = machine_ticks()
        idle = (idle1 - idle0) / max(1, all1 - all0)
        code = os.waitstatus_to_exitcode(status)
        if code == 2 and attempt + 1 < tries:
            print(f"  ({cmd[0]}: its writer missed pages; run again)", flush=True)
            continue
        if code != 0:
            sys.exit(f"{cmd[0]} failed: exit {code}")
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.decode(), idle


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site", choices=["javadoc", "rustdoc", "rustdoc-same", "generated", "big"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-pages", type=int, default=1_000_000)
    ap.add_argument("--peers", default="nearcrawl,spider")
    ap.add_argument("--base", help="another nearcrawl binary, the peer 'base'")
    args = ap.parse_args()
    peers = args.peers.split(",")
    nearcrawl = os.environ.get("NEARCRAWL_BIN", os.path.join(ROOT, "target/release/nearcrawl"))
    spider = os.environ.get("SPIDER_BIN", os.path.join(ROOT, "target/spider/release/spider-peer"))
    crawl_bench = os.environ.get("CRAWL_BENCH_BIN", os.path.join(ROOT, "target/release/examples/crawl_bench"))
    binaries = {"nearcrawl": nearcrawl, "base": args.base, "spider": spider, "transform": spider}
    for who in peers:
        if who not in binaries:
            sys.exit(f"unknown peer {who}: one of {', '.join(binaries)}")
    needed = {"generated": [crawl_bench], "rustdoc-same": [spider]}.get(args.site, [])
    for b in [binaries[w] for w in peers] + needed:
        if not b or not os.path.exists(b):
            sys.exit(f"{b} is missing: see the build commands in {__file__}'s docstring")
    tmp = tempfile.mkdtemp(prefix="peer-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.chmod(tmp, 0o755)  # nginx's workers read the generated site
    try:
        with served(args.site, tmp, crawl_bench) as seed:
            same = args.site == "rustdoc-same"
            dedup = "predict = false\ntrap_window = 0\n" if same else ""
            with open(os.path.join(tmp, "crawl.toml"), "w") as f:
                f.write(CONFIG.format(max_pages=args.max_pages, dedup=dedup))
            with open(os.path.join(tmp, "seeds.txt"), "w") as f:
                f.write("".join(u + "\n" for u in spider_urls(spider, seed, tmp)) if same else seed + "\n")
            print(f"site {args.site}: {seed}")
            print("crawler    round   pages   wall s  pages/s   CPU s  CPU%  CPU ms/page  peak RSS MiB  state B/page  short  idle"
                  "  body MB  CPU ms/MB")
            for r in range(args.rounds):
                order = peers[r % len(peers):] + peers[:r % len(peers)]
                for who in order:
                    run_one(who, r, tmp, seed, binaries[who])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def spider_urls(spider, seed, tmp):
    """The URLs one spider crawl from `seed` fetched (not measured)."""
    out = os.path.join(tmp, "out-spider-urls")
    run_measured([spider, seed, out, "64"], tries=3)
    urls = []
    with open(os.path.join(out, "pages.html"), "rb") as f:
        # Each page: its URL line, its length line, its body.
        while url := f.readline():
            f.seek(int(f.readline()), os.SEEK_CUR)
            urls.append(url.decode().strip())
    shutil.rmtree(out, ignore_errors=True)
    print(f"nearcrawl's seeds: the {len(urls)} URLs spider fetched")
    return urls


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
    if site in ("javadoc", "rustdoc", "rustdoc-same"):
        root, path, package = {
            "javadoc": (JAVADOC, "/index.html", "openjdk-17-doc"),
            "rustdoc": (RUSTDOC, "/std/index.html", "rust-doc"),
        }[site.removesuffix("-same")]
        if not os.path.isdir(root):
            sys.exit(f"{root} is missing: apt-get install -y {package}")
    else:
        root = os.path.join(tmp, "site")
        path = build_big_site(root)
    with localsite.nginx(root, workers=2) as port:
        yield f"http://127.0.0.1:{port}{path}"


def run_one(who, r, tmp, seed, binary):
    """One crawl from a fresh output directory; prints its figures."""
    out = os.path.join(tmp, f"out-{who}")
    shutil.rmtree(out, ignore_errors=True)
    short = "    -"
    if who in ("nearcrawl", "base"):
        wall, cpu, rss, _, idle = run_measured(
            [binary, "crawl", "--config", os.path.join(tmp, "crawl.toml"),
             "--seeds", os.path.join(tmp, "seeds.txt"), "--out", out])
        stats = json.load(open(os.path.join(out, "stats.json")))
        pages = stats["fetched"]
        body_bytes = stats.get("bytes", 0)
        state = f"{du(os.path.join(out, 'state')) / max(pages, 1):12.0f}"
        stages = stats.get("this_run", {}).get("cpu_secs", {})
    else:
        mode = ["transform"] if who == "transform" else []
        wall, cpu, rss, text, idle = run_measured([binary, seed, out, "64"] + mode, tries=3)
        said = dict(kv.split("=") for kv in text.split())
        pages = int(said["pages"])
        body_bytes = int(said.get("bytes", 0))
        state = "           -"
        if who == "transform":
            short = f"{said.get('short', '-'):>5}"
    print(f"{who:10} {r + 1:5} {pages:7} {wall:8.2f} {pages / wall:8.0f} {cpu:7.2f} {100 * cpu / wall:4.0f}%"
          f" {1000 * cpu / max(pages, 1):12.2f} {rss:13.0f} {state:>13} {short} {100 * idle:5.0f}%"
          f" {body_bytes / 1e6:8.1f} {1000 * cpu / max(body_bytes / 1e6, 1e-9):10.1f}", flush=True)
    if who in ("nearcrawl", "base") and stages:
        # Where its CPU went, ms a page by stage (stats.json this_run.cpu_secs).
        by_stage = ", ".join(f"{k} {1000 * v / max(pages, 1):.3f}" for k, v in stages.items()
                             if isinstance(v, (int, float)))
        print(f"{'':10} ms/page by stage: {by_stage}", flush=True)
        lock = stats.get("this_run", {}).get("core_lock")
        if lock:
            # How much of the crawl is serial: the store's lock held, the
            # time threads were blocked on it and the time tasks queued
            # for it (each summed over threads or tasks).
            queued = lock.get("queued_secs")
            queued = "" if queued is None else f", tasks queued {queued:.2f} s"
            print(f"{'':10} core lock: held {lock['held_secs']:.2f} s, "
                  f"threads blocked {lock['waited_secs']:.2f} s{queued}", flush=True)
    shutil.rmtree(out, ignore_errors=True)

if __name__ == "__main__":
    main()
