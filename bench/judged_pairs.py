#!/usr/bin/env python3
"""Judged pairs with hard negatives, through `nearcrawl dedup`: how many
copies the gate catches and how many different pages it joins.

    cargo build --release -p nearcrawl-cli
    python3 bench/judged_pairs.py [--binary BIN] [--part dev|held|all] [--json OUT]

Every text is real (../shared/bench/extraction: 181 news articles;
../shared/bench/wcxb-dev: product, service and collection pages); what is
built is how they are put together. Each pair is judged by how it is
built, by the rule a human assessor applies: the same document, edited,
is a duplicate; another item, story or list is not, however much text
it shares.

Duplicates (the second page of each pair should be caught):
- `copy`: the same text on another host;
- `edited`: a syndicated copy (a republished-with-permission line, a
  paragraph cut, 3% of the words changed, an editor's note or update);
- `note`: an editor's note or an update paragraph added;
- `cut`: one or two paragraphs cut (a shorter version of the page);
- `words`: 2-6% of the words changed.

Hard negatives (no page of them should be joined to another):
- `template`: one shop template (a store's information, real text of one
  service page, 120-300 words) filled with different products (the real
  text of product pages, 40-160 words), five products a template, on one
  host or on several (a white-label shop);
- `later`: a story, and a later story on it that leads with its own
  news (the first paragraphs of another article) and reuses 50-75% of the
  first one as background;
- `list`: list pages of one site, twenty items (a headline and a
  sentence) each, the second sharing 40-70% of the first's items;
- `wcxb`: every pair of pages of one host in wcxb-dev (real same-site
  pages: products, categories, docs) but the two that are one page (the
  same product variant, the same URL with a slash).

Articles and pages are split into `dev` and `held` by a hash of their ids
(a third held), so a rule can be chosen on one and checked on the other.
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(REPO, "../shared/bench")
# Pages of one host in wcxb-dev that are one page: a product variant, one
# URL with and without a slash. They are duplicates, not negatives.
WCXB_SAME = {("4211", "4213"), ("0463", "3035")}


def part_of(key):
    return "held" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def paragraphs(body):
    return [p.strip() for p in body.split("\n") if p.strip()]


def load():
    news = json.load(open(os.path.join(SHARED, "extraction/ground-truth.json"), encoding="utf-8"))
    arts = []
    for key in sorted(news):
        paras = paragraphs(news[key].get("articleBody") or "")
        if sum(len(p.split()) for p in paras) >= 150 and len(paras) >= 4:
            raw = gzip.open(os.path.join(SHARED, f"extraction/html/{key}.html.gz")).read().decode("utf-8", "replace")
            m = re.search(r"<title[^>]*>(.*?)</title>", raw, re.S)
            title = re.sub(r"\s+", " ", m.group(1)).strip() if m else key
            arts.append({"id": "n" + key, "title": re.split(r" [|\-–—] ", title)[0], "paras": paras})
    wcxb = json.load(open(os.path.join(SHARED, "wcxb-dev/ground-truth.json"), encoding="utf-8"))
    return arts, wcxb


def change_words(paras, rate, rng):
    vocab = ["reportedly", "officials", "said", "also", "however", "new", "recently", "local"]
    out = []
    for p in paras:
        ws = p.split()
        for i in range(len(ws)):
            if rng.random() < rate:
                ws[i] = rng.choice(vocab)
        out.append(" ".join(ws))
    return out


NOTE = "Editor's note: this article was updated to correct the spelling of a name and to add comment from the city."
UPDATE = "Update: the agencies named in this report have been contacted and their responses will be added when they arrive."


def positive(kind, a, rng):
    paras = list(a["paras"])
    if kind == "copy":
        return paras
    if kind == "edited":
        if len(paras) > 4:
            del paras[rng.randrange(1, len(paras) - 1)]
        paras = change_words(paras, 0.03, rng)
        paras.insert(0, "This story originally appeared in The Daily Ledger and is republished with permission.")
        return paras + [rng.choice([NOTE, UPDATE])]
    if kind == "note":
        return paras + [rng.choice([NOTE, UPDATE])]
    if kind == "cut":
        for _ in range(rng.choice([1, 2])):
            if len(paras) > 3:
                del paras[rng.randrange(1, len(paras) - 1)]
        return paras
    return change_words(paras, rng.uniform(0.02, 0.06), rng)


def text(paras):
    return "\n\n".join(paras)


def build(arts, wcxb, seed):
    """Documents in stream order, each {id, host, title, text, part, role}:
    role is ("dup", first_id, kind) for the page that should be caught,
    ("neg", kind) for a page that must not be."""
    rng = random.Random(seed)
    arts = list(arts)
    rng.shuffle(arts)
    docs = []
    n = len(arts)
    positives, later = arts[: n * 45 // 100], arts[n * 45 // 100 : n * 70 // 100]
    leads, lists = arts[n * 70 // 100 : n * 80 // 100], arts[n * 80 // 100 :]
    kinds = ["copy", "edited", "note", "cut", "words"]
    for i, a in enumerate(positives):
        kind = kinds[i % len(kinds)]
        part = part_of(a["id"])
        docs.append(dict(id=a["id"], host=f"h{i % 7}.example", title=a["title"], text=text(a["paras"]), part=part, role=("first",)))
        title = a["title"] if rng.random() < 0.6 else "Report: " + a["title"]
        docs.append(dict(id=a["id"] + "-" + kind, host=f"c{i % 5}.example", title=title,
                         text=text(positive(kind, a, rng)), part=part, role=("dup", a["id"], kind)))
    # A story and a later one that leads with its own news.
    for i, a in enumerate(later):
        lead_src = leads[i % len(leads)]
        part = part_of(a["id"])
        docs.append(dict(id=a["id"], host=f"s{i % 6}.example", title=a["title"], text=text(a["paras"]), part=part, role=("neg", "later")))
        reuse = rng.uniform(0.5, 0.75)
        keep = a["paras"][: max(2, round(len(a["paras"]) * reuse))]
        lead_words, lead = 0, []
        target = sum(len(p.split()) for p in keep) * (1 - reuse) / reuse
        for p in lead_src["paras"]:
            if lead_words >= target:
                break
            lead.append(p)
            lead_words += len(p.split())
        host = f"s{i % 6}.example" if i % 2 else f"s{(i + 3) % 6}.example"
        docs.append(dict(id=a["id"] + "-later", host=host, title=lead_src["title"] + " (update)",
                         text=text(lead + keep), part=part, role=("neg", "later")))
    # List pages: items of headline and first sentence.
    items = [(a["title"], re.split(r"(?<=[.!?])\s", para)[0]) for a in lists for para in a["paras"][:6]]
    for i in range(0, len(items) - 32, 32):
        part = part_of(f"list{i}")
        shift = rng.randrange(6, 13)
        for k, start in enumerate([i, i + shift]):
            page = items[start : start + 20]
            docs.append(dict(id=f"list{i}-{k}", host=f"l{i % 4}.example", title=f"Latest news, page {1 + k + i // 6}",
                             text=text(f"{h}. {s}" for h, s in page), part=part, role=("neg", "list")))
    # One shop template, five products each.
    products = [k for k, v in sorted(wcxb.items()) if v["pageType"] == "product" and len(v["articleBody"].split()) >= 40]
    services = [k for k, v in sorted(wcxb.items()) if v["pageType"] == "service" and len(v["articleBody"].split()) >= 150]
    rng.shuffle(products)
    used = set()  # wcxb pages the shops are made of
    for t, s in enumerate(services[: len(products) // 5]):
        used.add(s)
        template_words = wcxb[s]["articleBody"].split()[: rng.randrange(120, 300)]
        template = " ".join(template_words)
        part = part_of("t" + s)
        for j, p in enumerate(products[t * 5 : t * 5 + 5]):
            body = paragraphs(wcxb[p]["articleBody"])
            own, words = [], 0
            limit = rng.randrange(40, 160)
            for para in body:
                if words >= limit:
                    break
                own.append(para)
                words += len(para.split())
            used.add(p)
            host = f"shop{t}.example" if t % 2 == 0 else f"shop{t}-{j}.example"
            docs.append(dict(id=f"t{s}-{p}", host=host, title=own[0][:80], text=text(own + [template]),
                             part=part, role=("neg", "template")))
    # Pages of one host in wcxb-dev, in id order, but those the shops use.
    for k, v in sorted(wcxb.items()):
        if not v["articleBody"].strip() or k in used:
            continue
        host = re.sub(r"^https?://([^/]+).*", r"\1", v.get("url") or k)
        role = ("neg", "wcxb")
        for a, b in WCXB_SAME:
            if k == b:
                role = ("dup", "w" + a, "wcxb-same")
        title = paragraphs(v["articleBody"])[0][:80]
        docs.append(dict(id="w" + k, host=host, title=title, text=v["articleBody"], part=part_of("w" + k), role=role))
    return docs


def run(binary, docs):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for d in docs:
            f.write(json.dumps({"id": d["id"], "host": d["host"], "title": d["title"], "text": d["text"]}) + "\n")
        path = f.name
    out = subprocess.run([binary, "dedup", "--input", path], capture_output=True, text=True, check=True).stdout
    os.unlink(path)
    return {r["id"]: r for r in map(json.loads, out.splitlines())}


def score(docs, verdicts, part):
    by_kind = {}
    tp = fp = pos = 0
    wrong = []
    for d in docs:
        if part != "all" and d["part"] != part:
            continue
        v = verdicts.get(d["id"])
        role = d["role"]
        if role[0] == "dup":
            pos += 1
            hit = v is not None and v["duplicate_of"] == role[1]
            tp += hit
            c = by_kind.setdefault(role[2], [0, 0])
            c[0] += hit
            c[1] += 1
        elif v is not None:
            fp += 1
            wrong.append((d["id"], v["duplicate_of"], v.get("similarity"), v.get("distance"), role))
        if role[0] == "neg":
            c = by_kind.setdefault(role[1], [0, 0])
            c[0] += v is not None
            c[1] += 1
        elif role[0] == "first" and v is not None:
            c = by_kind.setdefault("first", [0, 0])
            c[0] += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / pos if pos else 0.0
    return dict(precision=precision, recall=recall, tp=tp, fp=fp, positives=pos, kinds=by_kind, wrong=wrong)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=os.path.join(REPO, "target/release/nearcrawl"))
    ap.add_argument("--part", default="all", choices=["dev", "held", "all"])
    ap.add_argument("--seeds", type=int, default=5, help="sets built (seeds 1..N), figures summed")
    ap.add_argument("--json")
    ap.add_argument("--show", type=int, default=10)
    args = ap.parse_args()
    arts, wcxb = load()
    total = dict(tp=0, fp=0, positives=0, kinds={}, wrong=[])
    for seed in range(1, args.seeds + 1):
        docs = build(arts, wcxb, seed)
        s = score(docs, run(args.binary, docs), args.part)
        for k in ("tp", "fp", "positives"):
            total[k] += s[k]
        for kind, (hit, n) in s["kinds"].items():
            c = total["kinds"].setdefault(kind, [0, 0])
            c[0] += hit
            c[1] += n
        total["wrong"] += [(seed,) + w for w in s["wrong"]]
    s = total
    s["precision"] = s["tp"] / (s["tp"] + s["fp"]) if s["tp"] + s["fp"] else 1.0
    s["recall"] = s["tp"] / s["positives"] if s["positives"] else 0.0
    print(f"{args.part}, {args.seeds} sets: precision {s['precision']:.3f} recall {s['recall']:.3f} "
          f"({s['tp']} of {s['positives']} copies caught, {s['fp']} pages joined wrongly)")
    for kind, (hit, total) in sorted(s["kinds"].items()):
        what = "caught" if kind in ("copy", "edited", "note", "cut", "words", "wcxb-same") else "joined"
        print(f"  {kind:10} {hit:4} of {total:4} {what}")
    for w in s["wrong"][: args.show]:
        print("  wrongly joined:", w)
    if args.json:
        json.dump({k: v for k, v in s.items() if k != "wrong"}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
