#!/usr/bin/env python3
"""A recrawl's CDXJ index against webrecorder's indexer (issue 45, item 1).

    python3 bench/cdxj_recrawl.py --binary target/release/nearcrawl [--edits 300]

Copies the Java SE API docs (apt-get install -y openjdk-17-doc) to
/dev/shm, serves the copy with nginx on 127.0.0.1, crawls it with WARC
output, edits --edits pages at random, recrawls with --refresh (unchanged
pages answer 304: revisit records), and prints for each crawl how many
lines of its .cdxj files differ from `cdxj-indexer --sort` of its WARC
files (target/warcio-venv, as tests/run installs it).
"""
import argparse
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from localsite import nginx  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAVADOC = "/usr/share/doc/openjdk-17-jre-headless/api"
INDEXER = os.path.join(REPO, "target", "warcio-venv", "bin", "cdxj-indexer")


def differing(out):
    """Lines of the crawl's .cdxj files not in cdxj-indexer's, and all."""
    n = total = 0
    for warc in sorted(glob.glob(os.path.join(out, "*.warc.gz"))):
        theirs = subprocess.run([INDEXER, "--sort", warc], capture_output=True, text=True,
                                check=True).stdout.splitlines()
        ours = open(warc[: -len(".warc.gz")] + ".cdxj").read().splitlines()
        total += len(theirs)
        n += len(set(theirs) - set(ours)) + max(0, len(ours) - len(theirs))
    return n, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--edits", type=int, default=300)
    args = ap.parse_args()
    if not os.path.exists(INDEXER):
        sys.exit("cdxj-indexer is missing: tests/run --deps-only installs it")
    tmp = tempfile.mkdtemp(prefix="cdxj-recrawl-", dir="/dev/shm")
    os.chmod(tmp, 0o755)
    site = os.path.join(tmp, "site")
    shutil.copytree(JAVADOC, site)
    config = os.path.join(tmp, "c.toml")
    local = open(os.path.join(REPO, "config", "local.toml")).read()
    with open(config, "w") as f:
        f.write(local.replace("[output]", '[output]\nformats = ["jsonl", "warc"]'))
    first, second = os.path.join(tmp, "first"), os.path.join(tmp, "second")
    with nginx(site, workers=2) as port:
        seed = f"http://127.0.0.1:{port}/index.html"
        crawl = [args.binary, "crawl", "--config", config, seed]
        subprocess.run(crawl + ["--out", first], check=True, capture_output=True)
        pages = sorted(glob.glob(os.path.join(site, "**", "*.html"), recursive=True))
        for page in random.Random(7).sample(pages, args.edits):
            text = open(page, encoding="utf-8", errors="replace").read()
            with open(page, "w") as f:
                f.write(text.replace("</body>", "<p>An edit made for the recrawl.</p></body>"))
        subprocess.run(crawl + ["--out", second, "--refresh", first], check=True,
                       capture_output=True)
    for name, out in (("first crawl", first), ("recrawl", second)):
        n, total = differing(out)
        print(f"{name}: {n} of {total} CDXJ lines differ from cdxj-indexer --sort")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
