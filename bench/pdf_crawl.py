#!/usr/bin/env python3
"""A crawl of a loopback site of HTML pages and PDFs, for the memory and
the time PDFs take (issue 39: peak RSS <= 100 MB with 64 requests in
flight, PDFs up to the cap).

    python3 bench/pdf_crawl.py --binary target/release/nearcrawl [--pdfs 400] PDF_LIST

Builds a site under a temporary directory: an index linking --pdfs PDFs
(copies of the list's files no larger than max_pdf_bytes, 20 MiB) and as
many HTML pages (each with a paragraph of its own), served by nginx on
127.0.0.1; crawls it with config/local.toml (64 in flight, no delay),
and prints the crawl's peak RSS (/usr/bin/time), the largest RSS any PDF
reader (child process) reached and the most the crawl alone and the crawl
and its readers held at once, as summed RSS and as summed PSS (sampled
from /proc every 20 ms), the PDFs written and the errors
by kind, the attempts tried again, and the PDFs requested more than
once (nginx's access log).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from localsite import nginx  # noqa: E402
from proctree import children, pss_kib, rss_kib  # noqa: E402

CAP = 20 << 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/nearcrawl")
    ap.add_argument("--pdfs", type=int, default=400)
    ap.add_argument("--readers-memory-mb", type=int,
                    help="content.pdf_readers_memory_mb (default: the binary's)")
    ap.add_argument("list")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    files = [l.strip() for l in open(args.list) if l.strip()]
    files = [f for f in files if os.path.getsize(f) <= CAP]
    random.Random(39).shuffle(files)
    files = files[: args.pdfs]
    tmp = tempfile.mkdtemp(prefix="pdf-crawl-")
    os.chmod(tmp, 0o755)  # nginx's workers read the site as another user
    root = os.path.join(tmp, "site")
    os.makedirs(root)
    links = []
    for i, f in enumerate(files):
        shutil.copy(f, os.path.join(root, f"d{i}.pdf"))
        with open(os.path.join(root, f"p{i}.html"), "w") as h:
            words = " ".join(f"w{random.Random(i * 7 + k).randrange(5000)}" for k in range(300))
            h.write(f"<html><head><title>Page {i}</title></head><body><p>{words}</p></body></html>")
        links.append(f'<a href="d{i}.pdf">d{i}</a> <a href="p{i}.html">p{i}</a>')
    with open(os.path.join(root, "index.html"), "w") as h:
        h.write("<html><body>" + "\n".join(links) + "</body></html>")
    total = sum(os.path.getsize(os.path.join(root, f"d{i}.pdf")) for i in range(len(files)))
    pdf_types = "location ~ \\.pdf$ { types { } default_type application/pdf; }"
    access = os.path.join(tmp, "access.log")
    served = f"{pdf_types} access_log {access};"
    with nginx(root, server_extra=served, workers=2) as port:
        out = os.path.join(tmp, "out")
        config = "config/local.toml"
        if args.readers_memory_mb:
            config = os.path.join(tmp, "crawl.toml")
            with open(config, "w") as f:
                f.write(open("config/local.toml").read())
                f.write(f"\n[content]\npdf_readers_memory_mb = {args.readers_memory_mb}\n")
        cmd = ["/usr/bin/time", "-f", "%M", binary, "crawl", "--config", config,
               "--out", out, f"http://127.0.0.1:{port}/index.html"]
        start = time.time()
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        peaks = {"child": 0, "together": 0, "crawl": 0, "pss": 0}
        done = threading.Event()

        def sample():
            while not done.is_set():
                crawl = children(p.pid)
                together = pss = 0
                for c in crawl:
                    own = rss_kib(c)
                    peaks["crawl"] = max(peaks["crawl"], own)
                    together += own
                    pss += pss_kib(c)
                    for reader in children(c):
                        r = rss_kib(reader)
                        peaks["child"] = max(peaks["child"], r)
                        together += r
                        pss += pss_kib(reader)
                peaks["together"] = max(peaks["together"], together)
                peaks["pss"] = max(peaks["pss"], pss)
                time.sleep(0.02)

        t = threading.Thread(target=sample)
        t.start()
        _, err = p.communicate()
        done.set()
        t.join()
        secs = time.time() - start
    peak = int(err.strip().splitlines()[-1])
    stats = json.load(open(os.path.join(out, "stats.json")))
    written_pdfs = 0
    for name in sorted(os.listdir(out)):
        if name.startswith("pages-"):
            for line in open(os.path.join(out, name)):
                written_pdfs += json.loads(line)["url"].endswith(".pdf")
    print(f"{len(files)} PDFs ({total / 1e6:.0f} MB) and {len(files)} pages in {secs:.1f} s: "
          f"fetched {stats['fetched']}, written {stats['written']} ({written_pdfs} PDFs), "
          f"errors {stats['errors']}, attempts tried again {stats.get('retries', {})}")
    # Requests per PDF as nginx logged them: a PDF asked more than once was
    # downloaded again (in part or whole).
    asked = {}
    for line in open(access):
        path = line.split('"')[1].split()[1] if '"' in line else ""
        if path.endswith(".pdf"):
            asked[path] = asked.get(path, 0) + 1
    again = {p: n for p, n in asked.items() if n > 1}
    print(f"PDF requests: {sum(asked.values())} for {len(asked)} PDFs; asked more than once: "
          f"{len(again)} {dict(sorted(again.items())[:5])}")
    print(f"peak RSS: crawl {peak / 1024:.0f} MiB (its own, sampled: {peaks['crawl'] / 1024:.0f}); "
          f"a PDF reader at most "
          f"{peaks['child'] / 1024:.0f} MiB; crawl and readers together at most "
          f"{peaks['together'] / 1024:.0f} MiB summed RSS, {peaks['pss'] / 1024:.0f} MiB summed PSS "
          f"(the binary's pages, shared by the crawl and its readers, counted once) (sampled)")
    kinds = {}
    for line in open(os.path.join(out, "errors.jsonl")):
        e = json.loads(line)
        kinds.setdefault(e["kind"], e["detail"])
    print("an error of each kind:", kinds)
    if not os.environ.get("KEEP"):
        shutil.rmtree(tmp)
    else:
        print("kept", tmp)


if __name__ == "__main__":
    main()
