#!/usr/bin/env python3
"""Docs-site gate bench: crawl a real documentation site with the default
duplicate gate and judge every drop.

The site is served by nginx from 127.0.0.1 (Debian ships the sites):

    apt-get install -y nginx openjdk-17-doc libstdc++-12-doc rust-doc python3.11-doc
    cargo build --release -p nearcrawl-cli
    python3 bench/docs_gate.py javadoc      # or doxygen, rustdoc, sphinx

What a page documents (its item) is its <title> plus its first heading
(h1, or doxygen's div.title), read from the served file. A page dropped as
a duplicate of a page with another item is a false drop.

True duplicates (the same item under two paths) are planted: nginx adds a
link to /mirror/<same path> on a share of the pages, and serves /mirror/
with a line in the main content that names the time it was served (so
the copy is near, not exact). A mirror page judged a duplicate of a page
with its item is caught; its links (the whole mirror tree) must then never
be crawled.

Real duplicates too, on rustdoc (Debian's rust-doc): the standard library
documents its core and alloc items again under std, and the architecture
modules repeat the same intrinsics (x86/x86_64, arm/aarch64, wasm32/64).
An item there is its path with the crate (std, core, alloc) and the
architecture folder folded; a drop to a page of the same folded item is
right. Reported: re-export copies (an item's files past its first) kept in
the corpus, items lost (fetched, none written), and redirect stubs (pages
that are only a meta refresh) written as pages.

Prints fetched/written/duplicates, false drops (share of fetched, with the
exact word-3-shingle Jaccard of each pair, the worst listed) and the
planted duplicates caught. --json writes the figures as one JSON object.
"""

import argparse
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import unquote, urlparse

import localsite

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (document root, seed path, main-content marker, mirror-link regex on $uri)
SITES = {
    "javadoc": (
        "/usr/share/doc/openjdk-17-jre-headless/api",
        "/index.html",
        '<main role="main">',
        r"y\.html$",
    ),
    "doxygen": (
        "/usr/share/doc/libstdc++-12-doc/libstdc++/user",
        "/index.html",
        '<div class="contents">',
        r"[37]\.html$",
    ),
    "sphinx": (
        "/usr/share/doc/python3.11/html",
        "/index.html",
        '<div class="body" role="main">',
        r"[ny]\.html$",
    ),
    "rustdoc": (
        "/usr/share/doc/rust-doc/html",
        "/std/index.html",
        '<section id="main-content" class="content">',
        r"y\.html$",
    ),
}

# The planted mirror: every page under /mirror/ too, with a timestamp
# after the content marker; the original pages link to their mirror.
MIRROR_HTTP = """
    map $uri $mirror_link {{
        "~{mirror_re}" '<p><a href="/mirror$uri">Mirror of this page</a></p>';
        default "";
    }}
"""
MIRROR_SERVER = """
        location /mirror/ {{
            alias {root}/;
            sub_filter_once on;
            sub_filter '{marker}' '{marker}<p>Mirrored $time_iso8601</p>';
        }}
        location / {{
            sub_filter_once on;
            sub_filter '</body>' '$mirror_link</body>';
        }}
"""

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
policy = "record"
{predict}

[output]
dir = "{out}"
"""


def item_of(root, url):
    """Title and first heading of the file behind `url`."""
    path = unquote(urlparse(url).path)
    if path.startswith("/mirror/"):
        path = path[len("/mirror") :]
    if path.endswith("/"):
        path += "index.html"
    try:
        with open(os.path.join(root, path.lstrip("/")), encoding="utf-8", errors="replace") as f:
            text = f.read(400_000)
    except OSError:
        return None
    title = re.search(r"<title>(.*?)</title>", text, re.S)
    head = re.search(r'<h1[^>]*>(.*?)</h1>|<div class="title">(.*?)</div>', text, re.S)
    clean = lambda s: re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", s or ""))).strip()
    heading = clean((head.group(1) or head.group(2)) if head else "")
    return clean(title.group(1) if title else "") + " | " + heading


RUST_CRATES = ("std", "core", "alloc")
REFRESH = re.compile(rb"<meta[^>]*http-equiv=[\"']?refresh", re.I)


def folded_item(url):
    """rustdoc: the item of a URL with its crate and architecture folded
    (std/vec/struct.Vec.html and alloc/vec/struct.Vec.html are one item);
    None outside std, core and alloc."""
    parts = unquote(urlparse(url).path).lstrip("/").split("/")
    if parts and parts[0] == "mirror":
        parts = parts[1:]
    if not parts or parts[0] not in RUST_CRATES:
        return None
    parts = parts[1:]
    if len(parts) >= 2 and parts[0] == "arch":
        parts = ["arch"] + parts[2:]
    return "/".join(parts)


def is_stub(root, url):
    path = unquote(urlparse(url).path)
    if path.startswith("/mirror/"):
        path = path[len("/mirror") :]
    try:
        with open(os.path.join(root, path.lstrip("/")), "rb") as f:
            return bool(REFRESH.search(f.read(4096)))
    except OSError:
        return False


def reexports(root, pages, renamed=frozenset()):
    """Re-export copies of the site (files of an item past its first, stubs
    left out) and how many the corpus kept; items fetched and lost, and of
    those the ones whose every page was dropped as a copy of the same
    name in another module of the crate (`renamed`: such URLs, texts at
    J3 >= 0.9; `std::mem::transmute` is `std::intrinsics::transmute`)."""
    files = {}
    for crate in RUST_CRATES:
        for dirpath, _, names in os.walk(os.path.join(root, crate)):
            for name in names:
                if not name.endswith(".html"):
                    continue
                path = os.path.join(dirpath, name)
                rel = "/" + os.path.relpath(path, root)
                if is_stub(root, rel):
                    continue
                files.setdefault(folded_item(rel), []).append(rel)
    copies = sum(len(v) - 1 for v in files.values())
    written, fetched, not_renamed = {}, {}, set()
    for rec in pages:
        item = folded_item(rec["url"])
        if item is None or "/mirror/" in rec["url"]:
            continue
        fetched[item] = fetched.get(item, 0) + 1
        if rec.get("duplicate_of") is None:
            written[item] = written.get(item, 0) + 1
        if rec["url"] not in renamed:
            not_renamed.add(item)
    kept = sum(max(0, n - 1) for n in written.values())
    lost_items = [item for item in fetched if item not in written]
    lost = len(lost_items)
    lost_renamed = sum(1 for item in lost_items if item not in not_renamed)
    unfetched = sum(1 for item in files if item not in fetched)
    multi = sum(1 for v in files.values() if len(v) > 1)
    return {"items": len(files), "items_with_copies": multi, "copies": copies,
            "copies_kept": kept, "items_fetched": len(fetched), "items_lost": lost,
            "items_lost_renamed": lost_renamed,
            "items_not_fetched": unfetched}


def unplaced(text):
    """A rustdoc page's text without the lines that say where the item is:
    its heading (`Struct std::vec::Vec`) and `Available on ... only.`"""
    lines = text.split("\n")[1:]
    return "\n".join(l for l in lines if not l.startswith("Available on "))


def shingles(text):
    toks = re.findall(r"\w+", text.lower())
    if len(toks) < 3:
        return {tuple(toks)}
    return {tuple(toks[i : i + 3]) for i in range(len(toks) - 2)}


def jaccard(a, b):
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / max(1, len(sa | sb))


def read_jsonl(pattern):
    for path in sorted(glob.glob(pattern)):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("site", choices=sorted(SITES))
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--max-pages", type=int, default=1_000_000)
    ap.add_argument("--out", help="crawl output dir (default: a temporary one)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--show", type=int, default=15, help="false drops to list")
    ap.add_argument("--no-mirror", action="store_true",
                    help="plant no mirror (the site's own duplicates only)")
    ap.add_argument("--no-predict", action="store_true",
                    help="dedup.predict = false (every duplicate fetched, as before issue 46)")
    args = ap.parse_args()

    root, seed, marker, mirror_re = SITES[args.site]
    if not os.path.isdir(root):
        sys.exit(f"{root} is missing: apt-get install the site's package (see --help)")
    tmp = tempfile.mkdtemp(prefix="docs-gate-")
    out = args.out or os.path.join(tmp, "out")
    with open(os.path.join(tmp, "crawl.toml"), "w") as f:
        # Left out unless asked: binaries before issue 46 know no such key.
        predict = "predict = false" if args.no_predict else ""
        f.write(CONFIG.format(max_pages=args.max_pages, out=out, predict=predict))
    http_extra = "" if args.no_mirror else MIRROR_HTTP.format(mirror_re=mirror_re)
    server_extra = "" if args.no_mirror else MIRROR_SERVER.format(root=root, marker=marker)
    with localsite.nginx(root, http_extra, server_extra) as port:
        with open(os.path.join(tmp, "seeds.txt"), "w") as f:
            f.write(f"http://127.0.0.1:{port}{seed}\n")
        started = time.time()
        crawl = subprocess.Popen(
            [args.binary, "crawl", "--config", os.path.join(tmp, "crawl.toml"),
             "--seeds", os.path.join(tmp, "seeds.txt")],
            stdout=subprocess.DEVNULL,
        )
        # The crawl's own peak RSS (not nginx's, nor this script's).
        _, status, usage = os.wait4(crawl.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"the crawl failed: {status}")
        elapsed = time.time() - started
        peak_rss_mb = usage.ru_maxrss / 1024

    stats = json.load(open(os.path.join(out, "stats.json")))
    # A page is judged by what it is, at its final URL (after redirects and
    # meta refreshes).
    text, pages, final = {}, [], {}
    for rec in read_jsonl(os.path.join(out, "pages-*.jsonl")):
        final[rec["url"]] = rec.get("final_url") or rec["url"]
        text[final[rec["url"]]] = rec.get("text") or ""
        pages.append({"url": final[rec["url"]], "duplicate_of": rec.get("duplicate_of")})
    dups = list(read_jsonl(os.path.join(out, "duplicates.jsonl")))
    # A URL a rule predicted is a duplicate not fetched: its item counts as
    # met (a wrong prediction is a false drop below, its item lost if no
    # page of it was written).
    predicted = [d for d in dups if d.get("kind") == "predicted"]
    for d in predicted:
        pages.append({"url": d["url"], "duplicate_of": d["duplicate_of"]})
    false_drops, mirror_caught, mirror_wrong, moved = [], set(), set(), []
    for d in dups:
        d["url"] = final.get(d["url"], d["url"])
        d["duplicate_of"] = final.get(d["duplicate_of"], d["duplicate_of"])
        a, b = item_of(root, d["url"]), item_of(root, d["duplicate_of"])
        folded = args.site == "rustdoc" and folded_item(d["url"]) is not None
        if args.site == "rustdoc" and folded_item(d["url"]) != folded_item(d["duplicate_of"]) and (
            d["url"].rsplit("/", 1)[-1] == d["duplicate_of"].rsplit("/", 1)[-1]
        ):
            # The same item name in another module: a re-export when the
            # texts are near identical once the lines that name the module
            # are set aside (rustdoc documents it again under the module
            # that re-exports it), else another item.
            j = jaccard(*(unplaced(text.get(u, "")) for u in (d["url"], d["duplicate_of"])))
            moved.append((j, d))
            if j >= 0.9:
                continue
        if (a is not None and a == b) or (
            folded and folded_item(d["url"]) == folded_item(d["duplicate_of"])
        ):
            if "/mirror/" in d["url"]:
                # Once per URL: a URL predicted, then queued again when its
                # rule retired, has two records.
                mirror_caught.add(d["url"])
            continue
        if "/mirror/" in d["url"]:
            mirror_wrong.add(d["url"])
        j = jaccard(text.get(d["url"], ""), text.get(d["duplicate_of"], ""))
        false_drops.append((j, d, a, b))
    fetched_urls = set(text)
    met = fetched_urls | {d["url"] for d in predicted}
    mirror_fetched = sum("/mirror/" in u for u in met)
    fetched = stats.get("fetched", len(fetched_urls))
    mirror_caught, mirror_wrong = len(mirror_caught), len(mirror_wrong)
    figures = {
        "site": args.site,
        "fetched": fetched,
        "written": stats.get("written"),
        "exact": stats.get("exact_duplicates"),
        "near": stats.get("near_duplicates"),
        "false_drops": len(false_drops),
        "false_drop_rate": len(false_drops) / max(1, fetched),
        "mirror_fetched": mirror_fetched,
        "mirror_caught": mirror_caught,
        "mirror_recall": mirror_caught / max(1, mirror_fetched),
        "seconds": round(elapsed, 1),
        "stubs_written": sum(
            1 for p in pages if p["duplicate_of"] is None and is_stub(root, p["url"])
        ),
        "redirects": stats.get("redirects"),
        "duplicate_fetches": (stats.get("exact_duplicates") or 0) + (stats.get("near_duplicates") or 0),
        "predicted": stats.get("predicted_duplicates", 0),
        "predictions_requeued": stats.get("predictions_requeued", 0),
        "url_rules": stats.get("url_rules", []),
        "pages_per_sec": stats.get("this_run", {}).get("pages_per_sec"),
    }
    # An item (title and heading) met under some URL, fetched or
    # predicted, with no page of it written is lost. Not on rustdoc, whose
    # re-exports name one item in several modules (see `reexports`).
    met_items, written_items = set(), set()
    for p in pages if args.site != "rustdoc" else []:
        item = item_of(root, p["url"])
        if item is None:
            continue
        met_items.add(item)
        if p["duplicate_of"] is None:
            written_items.add(item)
    figures["items_met"] = len(met_items)
    figures["items_lost"] = len(met_items - written_items)
    if args.site == "rustdoc":
        renamed = frozenset(d["url"] for j, d in moved if j >= 0.9)
        figures["reexports"] = reexports(root, pages, renamed)
    figures["peak_rss_mb"] = round(peak_rss_mb, 1)
    print(f"{args.site}: fetched {fetched}, written {figures['written']}, "
          f"exact {figures['exact']}, near {figures['near']} in {elapsed:.1f} s, "
          f"peak RSS {peak_rss_mb:.0f} MB")
    print(f"duplicates fetched {figures['duplicate_fetches']}, predicted and not fetched "
          f"{figures['predicted']} (queued again after a rule retired: {figures['predictions_requeued']}); "
          f"{len(figures['url_rules'])} URL rules proven or retired")
    for r in figures["url_rules"][:8]:
        print(f"  {r['skipped']:>6} skipped, support {r['support']}, counter {r['counterexamples']}, "
              f"{r['standing']}: {r['rule']}")
    print(f"items (title and heading) lost: {figures['items_lost']} of {figures['items_met']} met "
          f"(fetched or predicted; none written)")
    print(f"false drops: {len(false_drops)} ({100 * figures['false_drop_rate']:.3f}% of fetched; goal <= 0.1%)")
    print(f"planted duplicates: {mirror_caught} of {mirror_fetched} mirror pages caught "
          f"({100 * figures['mirror_recall']:.1f}%; goal >= 90%), {mirror_wrong} joined to another item")
    print(f"redirect stubs written as pages: {figures['stubs_written']} (goal 0); "
          f"redirect hops followed: {figures['redirects']}")
    if "reexports" in figures:
        r = figures["reexports"]
        caught = 1 - r["copies_kept"] / max(1, r["copies"])
        figures["reexport_recall"] = caught
        print(f"re-exports: {r['copies']} copies of {r['items_with_copies']} items; "
              f"{r['copies_kept']} kept in the corpus ({100 * caught:.1f}% kept out; goal >= 90%); "
              f"items lost {r['items_lost']} of {r['items_fetched']} fetched "
              f"({100 * r['items_lost'] / max(1, r['items_fetched']):.2f}%; goal <= 0.1%; "
              f"{r['items_lost_renamed']} of them re-exports in another module of their crate); "
              f"{r['items_not_fetched']} of {r['items']} items never fetched")
    if moved:
        print(f"same item name in another module: {len(moved)} drops, "
              f"{sum(j >= 0.9 for j, _ in moved)} with texts at J3 >= 0.9 (re-exports)")
        for j, d in sorted(moved, key=lambda x: x[0])[: args.show]:
            print(f"  J3={j:.3f} sim={d.get('similarity', 0):.3f}: "
                  f"{urlparse(d['url']).path} -> {urlparse(d['duplicate_of']).path}")
    for j, d, a, b in sorted(false_drops, key=lambda x: -x[0])[: args.show]:
        print(f"  {d['kind']:5} J3={j:.3f} sim={d.get('similarity', 0):.3f} d={d.get('distance', 0):2} "
              f"check={d.get('check', '-')}: {a!r} -> {b!r}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    if not args.out:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
