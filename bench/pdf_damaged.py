#!/usr/bin/env python3
"""Damaged real PDFs through `nearcrawl extract`, as the crawl reads them.

    python3 bench/pdf_damaged.py --binary target/release/nearcrawl [--docs 200] PDF_LIST

PDF_LIST: a file naming one PDF per line (Debian's: `find /usr/share/doc
/usr/share/texlive -name '*.pdf'`, after apt-get install -y
texlive-science-doc texlive-latex-recommended-doc texlive-publishers-doc).
Takes --docs of them, spread over the list, and makes of each a copy cut
short at a random point and copies with 1, 4 and 16 random bits flipped;
reads every copy with `nearcrawl extract --json --max-memory-mb 1024
--max-cpu-secs 30 -` (the crawl's PDF reader) and counts how each ended:
a page, an error of a kind (errors.jsonl's), or a crash (a signal, or an
exit with no JSON: a panic out of the reader). 0 crashes is the goal; a
reader killed at its CPU limit is counted as a timeout.
"""
import argparse
import collections
import json
import random
import subprocess
import time


def damaged(data, rng):
    yield "cut", data[: rng.randrange(1, len(data))]
    for flips in (1, 4, 16):
        b = bytearray(data)
        for _ in range(flips):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        yield f"flip{flips}", bytes(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/release/nearcrawl")
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("list")
    args = ap.parse_args()
    files = [l.strip() for l in open(args.list) if l.strip()]
    step = max(1, len(files) // args.docs)
    chosen = files[::step][: args.docs]
    rng = random.Random(39)
    ends = collections.Counter()
    kinds = collections.Counter()
    start = time.time()
    for path in chosen:
        data = open(path, "rb").read()
        for how, copy in damaged(data, rng):
            cmd = [args.binary, "extract", "--json", "--max-memory-mb", "1024",
                   "--max-cpu-secs", "30", "-"]
            try:
                p = subprocess.run(cmd, input=copy, capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                ends["timeout (wall)"] += 1
                continue
            try:
                row = json.loads(p.stdout.decode("utf-8", "replace").splitlines()[0])
            except (json.JSONDecodeError, IndexError):
                if p.returncode == -24:
                    ends["timeout (cpu limit)"] += 1
                else:
                    ends[f"crash ({p.returncode})"] += 1
                    print("crash:", how, path, p.returncode, p.stderr[-300:])
                continue
            if "error" in row:
                ends["error"] += 1
                kinds[row["error"]] += 1
            else:
                ends["page"] += 1
    total = sum(ends.values())
    print(f"{len(chosen)} PDFs, {total} damaged copies in {time.time() - start:.0f} s: "
          f"{dict(ends)}; errors by kind {dict(kinds)}")


if __name__ == "__main__":
    main()
