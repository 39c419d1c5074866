#!/usr/bin/env python3
"""A gate that remembers: crawl a real documentation site, then crawl a
mirror of it on another host with `--dedup-against` the first crawl, and
judge every drop.

    apt-get install -y nginx openjdk-17-doc rust-doc
    cargo build --release -p nearcrawl-cli
    python3 bench/remembered_gate.py javadoc [--max-pages N]   # or rustdoc, doxygen, sphinx

The site is served by nginx on 127.0.0.1 for the first crawl and on
127.0.0.2 (the mirror: another host, the same files) for the second,
whose seeds are every page of the first crawl on the mirror's host (a
mirror's copies are dropped and their links not followed, so a crawl from
its front page alone would stop there: one page, one drop). A
mirror page dropped as a duplicate of a first-crawl page documenting the
same item (title and first heading, as bench/docs_gate.py reads them) is
caught; one dropped for a page of another item is a false drop. Prints the
mirror's pages dropped against the first crawl (goal: 95% or more), the
false drops, the import's time and the crawl's peak memory.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_gate  # noqa: E402
import localsite  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFIG = """
[scope]
max_depth = 50
max_pages = {max_pages}
max_pages_per_host = {max_pages}
[politeness]
delay_ms = 0
global_concurrency = 64
per_host_concurrency = 64
obey_robots = false
[fetch]
allow_private_networks = true
request_timeout_secs = 20
[dedup]
capacity = 1000000
"""


def crawl(binary, conf, seeds, out, more=()):
    started = time.time()
    p = subprocess.Popen([binary, "crawl", "--config", conf, "--out", out, "--seeds", seeds, *more],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"the crawl failed: {err}")
    stats = json.load(open(os.path.join(out, "stats.json")))
    return stats, time.time() - started, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("site", choices=sorted(docs_gate.SITES))
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--max-pages", type=int, default=1_000_000)
    ap.add_argument("--show", type=int, default=10)
    a = ap.parse_args()
    root, seed_path, _, _ = docs_gate.SITES[a.site]
    if not os.path.isdir(root):
        sys.exit(f"{root} is missing: apt-get install the site's package (see --help)")
    tmp = tempfile.mkdtemp(prefix="remembered-gate-")
    conf = os.path.join(tmp, "c.toml")
    with open(conf, "w") as f:
        f.write(CONFIG.format(max_pages=a.max_pages))
    first, mirror = os.path.join(tmp, "first"), os.path.join(tmp, "mirror")
    seeds = os.path.join(tmp, "seeds.txt")
    with localsite.nginx(root) as port:
        with open(seeds, "w") as f:
            f.write(f"http://127.0.0.1:{port}{seed_path}\n")
        s1, t1, m1 = crawl(a.binary, conf, seeds, first)
        base1 = f"http://127.0.0.1:{port}"
    with localsite.nginx(root, ip="127.0.0.2") as port:
        base2 = f"http://127.0.0.2:{port}"
        with open(seeds, "w") as f:
            for v in docs_gate.read_jsonl(os.path.join(first, "visits.jsonl")):
                f.write(base2 + v["url"][len(base1):] + "\n")
        s2, t2, m2 = crawl(a.binary, conf, seeds, mirror, ["--dedup-against", first])
    dups = list(docs_gate.read_jsonl(os.path.join(mirror, "duplicates.jsonl")))
    against = [d for d in dups if d.get("crawl") == first]
    false = [d for d in against
             if docs_gate.item_of(root, d["url"]) != docs_gate.item_of(root, d["duplicate_of"])]
    print(f"{a.site}: first crawl {s1['fetched']} fetched, {s1['written']} written, {t1:.1f} s, {m1:.0f} MB")
    print(f"  mirror (127.0.0.2, --dedup-against the first): {s2['fetched']} fetched, "
          f"{s2['written']} written, {len(dups)} duplicates, {t2:.1f} s, {m2:.0f} MB")
    print(f"  dropped as copies of the first crawl's pages: {len(against)} of {s2['fetched']} "
          f"fetched ({100 * len(against) / max(1, s2['fetched']):.1f}%)")
    print(f"  false drops (another item): {len(false)} ({100 * len(false) / max(1, s2['fetched']):.2f}% of fetched)")
    for d in false[: a.show]:
        print(f"    {d['url']} -> {d['duplicate_of']}")
    kept = s2["written"]
    print(f"  mirror pages kept in the corpus: {kept}")


if __name__ == "__main__":
    main()
