#!/usr/bin/env python3
"""The language filter's recall on a site of one language that declares
none (issue 45: >= 99.5% on javadoc and doxygen).

    python3 bench/language_recall.py --binary target/release/nearcrawl ROOT [--seed /index.html] [--lang en]

Serves ROOT with nginx on 127.0.0.1 (javadoc: apt-get install -y
openjdk-17-doc, ROOT /usr/share/doc/openjdk-17-jre-headless/api; doxygen:
libstdc++-12-doc, ROOT /usr/share/doc/gcc-12-base/libstdc++), crawls it
with config/local.toml and `[content] languages = [LANG]`, and prints the
pages fetched, the pages left out for their language (every one a loss on
such a site), the share kept, and the pages per language decided.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from localsite import nginx  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--seed", default="/index.html")
    ap.add_argument("--lang", default="en")
    ap.add_argument("root")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="language-recall-")
    local = open(os.path.join(REPO, "config", "local.toml")).read()
    config = os.path.join(tmp, "c.toml")
    with open(config, "w") as f:
        f.write(local.replace("[output]", f'[content]\nlanguages = ["{args.lang}"]\n\n[output]'))
    out = os.path.join(tmp, "out")
    with nginx(args.root, workers=2) as port:
        subprocess.run([args.binary, "crawl", "--config", config, "--out", out,
                        f"http://127.0.0.1:{port}{args.seed}"], check=True, capture_output=True)
    s = json.load(open(os.path.join(out, "stats.json")))
    fetched, left_out = s["fetched"], s["other_language"]
    print(f"{args.root}: fetched {fetched}, left out for their language {left_out}, kept "
          f"{fetched - left_out} ({100 * (fetched - left_out) / max(1, fetched):.2f}%); "
          f"languages decided {s['languages']}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
