#!/usr/bin/env python3
"""Replays pages from nearcrawl's WARC files through its CDXJ indexes with
pywb, the replay tool web archives run, revisit records included.

A generated site (bench/recrawl.py's, with two byte-identical copies of a
page) is crawled, changed and crawled again with --refresh, both served by
nginx: the first crawl holds responses and identical-payload revisits (the
copies), the second responses for changed pages and server-not-modified
revisits (304s) for the rest. Both crawls' WARC files and CDXJ lines (file
names made unique) go into one pywb collection, which is served; every
page is then asked for raw (`id_`) at each crawl's time and compared with
the file as it was then. pywb replays a revisit with its own HTTP headers,
so a 304 replays as the 304 it was (it answers 503 when it cannot find the
original by the revisit's payload digest); the page at the recrawl's time
is then asked from a second collection whose index leaves the 304s out,
as archives replaying recrawls do, and must be the first crawl's capture.

    python3 bench/pywb_replay.py [--pages 200] [--binary target/release/nearcrawl]

pywb is installed from PyPI into target/pywb-venv when missing.
"""
import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import localsite  # noqa: E402
import recrawl  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(REPO, "target", "pywb-venv")


def pywb():
    wayback = os.path.join(VENV, "bin", "wayback")
    if not os.path.exists(wayback):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "pywb"], check=True)
    return wayback


def snapshot(root):
    """Every file's bytes, by URL path."""
    return {"/" + os.path.relpath(p, root): open(p, "rb").read()
            for p in glob.glob(os.path.join(root, "*.html"))}


def collection(tmp, crawls, name="nc", keep=lambda j: True):
    """A pywb collection of the crawls' WARC files and of the CDXJ lines
    `keep` keeps."""
    coll = os.path.join(tmp, "collections", name)
    os.makedirs(os.path.join(coll, "archive"))
    os.makedirs(os.path.join(coll, "indexes"))
    lines = []
    for crawl, out in crawls:
        for warc in glob.glob(os.path.join(out, "crawl-*.warc.gz")):
            base = os.path.basename(warc)
            shutil.copy(warc, os.path.join(coll, "archive", f"{crawl}-{base}"))
            for line in open(warc[: -len(".warc.gz")] + ".cdxj"):
                key, ts, fields = line.rstrip("\n").split(" ", 2)
                j = json.loads(fields)
                j["filename"] = f"{crawl}-{j['filename']}"
                if keep(j):
                    lines.append(f"{key} {ts} {json.dumps(j)}")
    lines.sort()
    with open(os.path.join(coll, "indexes", "index.cdxj"), "w") as f:
        f.write("\n".join(lines) + "\n")


def timestamp(out):
    """A 14-digit time within the crawl in `out` (its CDXJ lines')."""
    stamps = [line.split(" ", 2)[1] for p in glob.glob(os.path.join(out, "*.cdxj")) for line in open(p)]
    return max(stamps)


def replay(port, ts, url, coll="nc"):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{coll}/{ts}id_/{url}", timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    a = ap.parse_args()
    wayback = pywb()
    tmp = tempfile.mkdtemp(prefix="pywb-replay-")
    os.chmod(tmp, 0o755)
    root = os.path.join(tmp, "site")
    os.makedirs(root)
    site = recrawl.Site(root, a.pages, 11)
    site.write_all()
    # Two byte-identical copies of page 5, linked from the index.
    for name in ("copy-a.html", "copy-b.html"):
        shutil.copy(os.path.join(root, "p5.html"), os.path.join(root, name))
    with open(os.path.join(root, "index.html"), "a") as f:
        f.write('<a href="copy-a.html">a</a> <a href="copy-b.html">b</a>')
    first, second = os.path.join(tmp, "first"), os.path.join(tmp, "second")
    with localsite.nginx(root) as port:
        conf = recrawl.config(tmp, port, 0)
        recrawl.crawl(a.binary, conf, first)
        before = snapshot(root)
        site.change(0.05, 0.02, 0.01, 0.02)
        with open(os.path.join(root, "index.html"), "a") as f:
            f.write('<a href="copy-a.html">a</a> <a href="copy-b.html">b</a>')
        recrawl.crawl(a.binary, conf, second, refresh=first)
        after = snapshot(root)
        base = f"http://127.0.0.1:{port}"
    crawls = [("first", first), ("second", second)]
    collection(tmp, crawls)
    # As archives replay recrawls: a 304 is the server's word that the page
    # had not changed, not a page, so replay leaves it out of its index
    # (pywb replays a revisit with its own headers: a 304).
    collection(tmp, crawls, "replay", keep=lambda j: j["status"] != "304")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        wb_port = s.getsockname()[1]
    server = subprocess.Popen([wayback, "-p", str(wb_port), "-b", "127.0.0.1"], cwd=tmp,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        localsite.wait_listening(wb_port)
        counts, shown = {}, set()
        for crawl_name, out, files in (("first", first, before), ("second", second, after)):
            ts = timestamp(out)
            kinds = {}
            for p in glob.glob(os.path.join(out, "*.cdxj")):
                for line in open(p):
                    j = json.loads(line.split(" ", 2)[2])
                    kinds[j["url"][len(base):]] = "revisit" if j.get("mime") == "warc/revisit" else "response"
            for path, body in sorted(files.items()):
                kind = kinds.get(path)
                if kind is None:
                    continue  # not crawled (a page gone before, a new one after)
                status, got = replay(wb_port, ts, base + path)
                if status == 304:
                    # The 304 as archived (pywb found its original by its
                    # payload digest, or it would answer 503); the page at
                    # that time, from the index without 304s.
                    kind = "304 revisit"
                    status, got = replay(wb_port, ts, base + path, "replay")
                key = (crawl_name, kind)
                ok, total = counts.get(key, (0, 0))
                good = status == 200 and got == body
                if not good and key not in shown:
                    shown.add(key)
                    print(f"  {crawl_name} {kind} {path}: status {status}, {len(got)} bytes "
                          f"(want {len(body)}): {got[:200]!r}")
                counts[key] = (ok + good, total + 1)
        for (crawl_name, kind), (ok, total) in sorted(counts.items()):
            print(f"{crawl_name} crawl, {kind} records: {ok} of {total} pages replayed byte for byte")
        sys.exit(0 if all(ok == total for ok, total in counts.values()) else 1)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
