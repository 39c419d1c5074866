#!/usr/bin/env python3
"""Distinct pages the gate joins when their titles say nothing: every page
of a documentation site is its own item, so each page `nearcrawl dedup`
calls a duplicate with the titles left out is a join of two different
pages that only their text kept apart (or failed to).

    apt-get install -y openjdk-17-doc
    cargo build --release -p nearcrawl-cli
    python3 bench/titleless_joins.py [DIR] [--binary BIN]

DIR defaults to Debian's javadoc (10,137 pages, 4,102 of them short texts:
"Uses of Class java.io.X / No usage of java.io.X" and the like, whose
texts differ only in a name). The pages are read with `nearcrawl extract
--json` in path order and judged on one host, once without titles and
once with them. Prints the joins by the check that made them.
"""

import argparse
import collections
import json
import os
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def joins(binary, docs):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
        path = f.name
    out = subprocess.run([binary, "dedup", "--input", path], capture_output=True, text=True, check=True).stdout
    os.unlink(path)
    return collections.Counter(json.loads(line).get("check", "exact-text") for line in out.splitlines())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default="/usr/share/doc/openjdk-17-jre-headless/api")
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    args = ap.parse_args()
    files = sorted(
        os.path.join(root, name)
        for root, _, names in os.walk(args.dir, followlinks=True)
        for name in names
        if name.endswith(".html")
    )
    pages = []
    for i in range(0, len(files), 500):
        out = subprocess.run([args.binary, "extract", "--json", *files[i : i + 500]],
                             capture_output=True, text=True, check=True).stdout
        pages += [json.loads(line) for line in out.splitlines()]
    short = sum(1 for p in pages if len((p.get("text") or "").split()) < 100)
    print(f"{args.dir}: {len(pages)} pages, {short} under 100 words")
    for label, with_title in [("without titles", False), ("with titles", True)]:
        docs = [{"id": p["file"], "text": p.get("text") or "", "host": "site",
                 **({"title": p.get("title") or ""} if with_title else {})} for p in pages]
        c = joins(args.binary, docs)
        print(f"  {label:15} {sum(c.values()):5} distinct pages joined ({', '.join(f'{k} {v}' for k, v in sorted(c.items()))})")


if __name__ == "__main__":
    main()
