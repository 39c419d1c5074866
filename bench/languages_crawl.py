#!/usr/bin/env python3
"""A crawl of Debian's translated manuals on loopback with a language filter,
scored against what each page declares (issue 39: precision >= 0.99).

    python3 bench/languages_crawl.py --binary target/release/nearcrawl [--lang de]

Serves /usr/share/developers-reference (Sphinx, `<html lang>` per
language folder) and /usr/share/debian-reference (`ch01.de.html`, with the
Content-Language a negotiating server sends, set here by nginx from the
file name) with nginx on 127.0.0.1 (apt-get install -y nginx
developers-reference developers-reference-de ... debian-reference-de ...),
crawls each with `[content] languages = [LANG]`, and prints for each: the
pages written, how many declare LANG (precision), and how many pages
declaring LANG the site has that the crawl fetched and did not write
(missed).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from localsite import nginx  # noqa: E402

# Each site's start pages: one per language (the manuals do not link
# their translations to each other).
SITES = {
    "developers-reference": (
        "/usr/share/developers-reference",
        ["index.html", "de/index.html", "fr/index.html", "it/index.html", "ja/index.html"],
    ),
    "debian-reference": (
        "/usr/share/debian-reference",
        [f"index.{l}.html" for l in ["en", "de", "es", "fr", "it", "ja", "pt", "zh-cn"]],
    ),
}


def declared(root, path):
    """What a file declares: <html lang>, else its name's language."""
    file = os.path.join(root, path.lstrip("/"))
    try:
        head = open(file, "rb").read(65536).decode("utf-8", "replace").lower()
    except OSError:
        return None
    m = re.search(r"<html[^>]*\slang=[\"']?([a-z]{2,3})", head)
    if m:
        return m.group(1)
    m = re.search(r"\.([a-z]{2})(?:-[a-z]+)?\.html$", path)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/nearcrawl")
    ap.add_argument("--lang", default="de")
    args = ap.parse_args()
    negotiated = "\n".join(
        f"location ~ \\.{l}(-[a-z]+)?\\.html$ {{ add_header Content-Language {l}; }}"
        for l in ["de", "en", "es", "fr", "it", "ja", "pt", "zh"]
    )
    for name, (root, starts) in SITES.items():
        if not os.path.isdir(root):
            print(f"{name}: {root} missing (apt-get install -y {name})")
            continue
        tmp = tempfile.mkdtemp(prefix="lang-crawl-")
        with nginx(root, server_extra=negotiated) as port:
            conf = os.path.join(tmp, "c.toml")
            with open(conf, "w") as f:
                f.write(
                    "[politeness]\ndelay_ms = 0\nglobal_concurrency = 8\nper_host_concurrency = 8\n"
                    "[fetch]\nallow_private_networks = true\n"
                    f"[content]\nlanguages = [\"{args.lang}\"]\n"
                )
            out = os.path.join(tmp, "out")
            seeds = [f"http://127.0.0.1:{port}/{s}" for s in starts]
            subprocess.run([args.binary, "crawl", "--config", conf, "--out", out, *seeds],
                           check=True, stderr=subprocess.DEVNULL)
        prefix = f"http://127.0.0.1:{port}"
        written = [json.loads(l)["url"][len(prefix):]
                   for l in open(os.path.join(out, "pages-00000.jsonl"))]
        visited = [json.loads(l)["url"][len(prefix):]
                   for l in open(os.path.join(out, "visits.jsonl"))]
        right = [p for p in written if declared(root, p) == args.lang]
        wrong = [(p, declared(root, p)) for p in written if declared(root, p) != args.lang]
        missed = [p for p in visited if declared(root, p) == args.lang and p not in written]
        stats = json.load(open(os.path.join(out, "stats.json")))
        print(f"{name}: fetched {stats['fetched']}, written {len(written)} as {args.lang}, "
              f"{len(right)} declaring it: precision {len(right) / max(1, len(written)):.3f}; "
              f"{len(missed)} pages declaring it not written (duplicates among them); "
              f"languages read {stats['languages']}")
        for p, d in wrong[:5]:
            print(f"  written but declares {d}: {p}")


if __name__ == "__main__":
    main()
