#!/usr/bin/env python3
"""Is a page's embedded data (a `<script type="application/json">` blob,
Next.js's `__NEXT_DATA__`) as good a source of its text as the page shown?

    cargo build --release -p nearcrawl-cli
    python3 bench/embedded_data.py [../shared/bench/wcxb-dev]

The question decides whether an app shell that embeds its data is read from
the blob instead of rendered. Real pages that carry both a blob and their
text (server-rendered) answer it: for each page of the set with a JSON blob
holding at least 200 characters of prose, its main text (the set's truth)
is scored (word precision, recall, F1) against

- the blob's prose: every string of 6 or more tokens, 70% of them words
  (so class lists, ids and URLs are not prose), or 20 CJK characters, HTML
  strings read as their text;
- the blob through nearcrawl's extractor: the blob as a document (objects
  and arrays as nested blocks, prose as paragraphs, HTML as it is), to see
  whether the extractor picks the page's own text out of it;
- the served page through nearcrawl's extractor (what a rendered DOM of a
  server-rendered page gives).

Prints one line per blob kind (`__NEXT_DATA__`, any other JSON blob).
Env: NEARCRAWL_BIN overrides the binary.
"""
import collections
import gzip
import html
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NEARCRAWL_BIN", os.path.join(ROOT, "target/release/nearcrawl"))
SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)
TYPE = re.compile(r"""type\s*=\s*["']?([^"'\s>]+)""", re.I)
ID = re.compile(r"""id\s*=\s*["']([^"']+)""", re.I)
TAG = re.compile(r"<[^>]+>")
WORD = re.compile(r"""^[^\W\d_]+(?:['’-][^\W\d_]+)*[.,;:!?"'’”)]*$""")
MIN_PROSE = 200


def plain(s):
    return html.unescape(TAG.sub(" ", s)) if "<" in s and ">" in s else s


def is_prose(s):
    text = plain(s)
    tokens = text.split()
    if len(tokens) >= 6:
        return sum(1 for t in tokens if WORD.match(t)) >= 0.7 * len(tokens)
    cjk = sum(1 for c in text if "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af")
    return cjk >= 20


def prose(v, out):
    """The blob's prose strings, in order."""
    if isinstance(v, str):
        if is_prose(v):
            out.append(plain(v))
    elif isinstance(v, (list, dict)):
        for x in v.values() if isinstance(v, dict) else v:
            prose(x, out)
    return out


def as_document(v):
    """The blob as nested blocks, for the extractor."""
    if isinstance(v, str):
        if not is_prose(v):
            return ""
        return f"<div>{v}</div>" if plain(v) != v else f"<p>{html.escape(v)}</p>"
    if not isinstance(v, (list, dict)):
        return ""
    inner = "".join(as_document(x) for x in (v.values() if isinstance(v, dict) else v))
    return f"<div>{inner}</div>" if inner else ""


def words(s):
    return collections.Counter(re.findall(r"\w+", s.lower()))


def scores(got, truth):
    g, t = words(got), words(truth)
    common = sum((g & t).values())
    p, r = common / max(1, sum(g.values())), common / max(1, sum(t.values()))
    return p, r, (2 * p * r / (p + r) if common else 0.0)


def extract(paths):
    out = subprocess.run([BIN, "extract", "--json", *paths], capture_output=True,
                         text=True, check=True).stdout
    return {j["file"]: j["text"] for j in map(json.loads, out.splitlines())}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "../shared/bench/wcxb-dev")
    truth = json.load(open(os.path.join(root, "ground-truth.json")))
    tmp = tempfile.mkdtemp(prefix="embedded-data-")
    pages = []  # (kind, blob prose, blob document path, served path, truth)
    for name in sorted(os.listdir(os.path.join(root, "html"))):
        page_id = name.split(".")[0]
        body_truth = truth.get(page_id, {}).get("articleBody", "")
        served = os.path.join(root, "html", name)
        raw = gzip.open(served).read().decode("utf-8", "replace")
        best = None
        for attrs, body in SCRIPT.findall(raw):
            kind = TYPE.search(attrs)
            if not body_truth or not kind or kind.group(1).lower() != "application/json":
                continue
            try:
                blob = json.loads(body)
            except ValueError:
                continue
            text = "\n".join(prose(blob, []))
            if len(text) >= MIN_PROSE and (best is None or len(text) > len(best[1])):
                blob_id = ID.search(attrs)
                kind = "__NEXT_DATA__" if blob_id and blob_id.group(1) == "__NEXT_DATA__" else "other"
                best = (kind, text, blob)
        if best:
            doc = os.path.join(tmp, page_id + ".html")
            with open(doc, "w") as f:
                f.write(f"<!doctype html><html><head><title>-</title></head><body>{as_document(best[2])}</body></html>")
            pages.append((best[0], best[1], doc, served, body_truth))
    from_blob = extract([p[2] for p in pages])
    from_served = extract([p[3] for p in pages])
    by_kind = collections.defaultdict(list)
    for kind, text, doc, served, body_truth in pages:
        by_kind[kind].append([scores(text, body_truth), scores(from_blob.get(doc, ""), body_truth),
                              scores(from_served.get(served, ""), body_truth)])
    print(f"{'blob':14} {'pages':>5}  {'blob prose P/R/F1':>18}  {'blob->extract F1':>16}  {'served->extract F1':>18}")
    for kind, rows in sorted(by_kind.items()):
        mean = [[sum(r[s][m] for r in rows) / len(rows) for m in range(3)] for s in range(3)]
        print(f"{kind:14} {len(rows):5}  {mean[0][0]:.2f}/{mean[0][1]:.2f}/{mean[0][2]:.2f}      "
              f"{mean[1][2]:16.2f}  {mean[2][2]:18.2f}")
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
