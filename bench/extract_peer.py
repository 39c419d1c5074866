#!/usr/bin/env python3
"""nearcrawl's extractor against rs-trafilatura on wcxb-dev, in one run.

Both extract every page of ../shared/bench/wcxb-dev into a directory of
texts; the texts are scored alike (AEB F1 of ../shared/bench/extraction/
score.py: 4-gram shingles, per-page normalised, macro P/R) per page type,
over the whole set and over the extraction bench's dev (70%) and held
(30%) parts. With --worst TYPE it lists that type's dev pages where the
peer leads most.

    cargo build --release --manifest-path bench/rstraf-peer/Cargo.toml
    python3 bench/extract_peer.py [--worst service]
"""

import argparse
import json
import os
import re
import subprocess
import tempfile
from collections import Counter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SET = os.path.join(REPO, "..", "shared", "bench", "wcxb-dev")
PEER = os.path.join(REPO, "bench", "rstraf-peer", "target", "release", "rstraf-peer")
WORD = re.compile(r"\w+")


def shingles(text):
    toks = WORD.findall(text or "")
    if not toks:
        return Counter()
    if len(toks) <= 4:
        return Counter([tuple(toks)])
    return Counter(tuple(toks[i : i + 4]) for i in range(len(toks) - 3))


def page_pr(truth, pred):
    """Per-page precision and recall (None where undefined), as score.py."""
    a, b = shingles(truth), shingles(pred)
    tp, fp, fn = sum((a & b).values()), sum((b - a).values()), sum((a - b).values())
    total = tp + fp + fn
    if total == 0:
        return None, None
    tp, fp, fn = tp / total, fp / total, fn / total
    exact = fp == 0 and fn == 0
    p = (1.0 if exact else tp / (tp + fp)) if tp + fp > 0 else None
    r = (1.0 if exact else tp / (tp + fn)) if tp + fn > 0 else None
    return p, r


def f1(pairs):
    ps = [p for p, _ in pairs if p is not None]
    rs = [r for _, r in pairs if r is not None]
    P, R = sum(ps) / max(1, len(ps)), sum(rs) / max(1, len(rs))
    return 2 * P * R / (P + R) if P + R else 0.0


def held_out(page_id):
    """The extraction bench's held-out part: FNV-1a of the id, 3 in 10."""
    h = 0xCBF29CE484222325
    for b in page_id.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h % 10 < 3


def read_texts(directory, ids):
    out = {}
    for i in ids:
        try:
            with open(os.path.join(directory, f"{i}.txt"), encoding="utf-8") as f:
                out[i] = f.read()
        except OSError:
            out[i] = ""
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worst", help="list this type's dev pages where the peer leads most")
    args = ap.parse_args()
    with open(os.path.join(SET, "ground-truth.json"), encoding="utf-8") as f:
        truth = json.load(f)
    work = tempfile.mkdtemp(prefix="extract-peer-")
    ours_dir, peer_dir = os.path.join(work, "nearcrawl"), os.path.join(work, "rstraf")
    subprocess.run(
        ["cargo", "test", "--release", "-p", "nearcrawl-extract", "--test", "benchmark",
         "--", "--ignored", "--nocapture", "report_wcxb_by_page_type"],
        cwd=REPO, check=True, env={**os.environ, "WCXB_DUMP": ours_dir},
        stdout=subprocess.DEVNULL,
    )
    subprocess.run([PEER, SET, peer_dir], check=True)
    ours, peer = read_texts(ours_dir, truth), read_texts(peer_dir, truth)
    rows = []
    for i, v in truth.items():
        body = v.get("articleBody") or ""
        rows.append((i, v["pageType"], held_out(i), page_pr(body, ours[i]), page_pr(body, peer[i])))
    types = ["all"] + sorted({r[1] for r in rows})
    print(f"{'type':14} {'whole: ours / peer':>20} {'dev: ours / peer':>20} {'held: ours / peer':>20}")
    for t in types:
        cells = []
        for part in ("whole", "dev", "held"):
            sel = [r for r in rows if (t == "all" or r[1] == t)
                   and (part == "whole" or r[2] == (part == "held"))]
            cells.append(f"{f1([r[3] for r in sel]):.4f} / {f1([r[4] for r in sel]):.4f} ({len(sel)})")
        print(f"{t:14} " + " ".join(f"{c:>20}" for c in cells))
    if args.worst:
        def pf(pr):
            p, r = (x or 0.0 for x in pr)
            return 2 * p * r / (p + r) if p + r else 0.0
        sel = sorted((r for r in rows if r[1] == args.worst and not r[2]),
                     key=lambda r: pf(r[3]) - pf(r[4]))
        for r in sel[:15]:
            print(f"{r[0]} ours {pf(r[3]):.2f} peer {pf(r[4]):.2f} {truth[r[0]].get('url', '')[:90]}")
    print(f"texts in {work}")


if __name__ == "__main__":
    main()
