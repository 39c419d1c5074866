"""The second crawl of a site, measured against planted truth.

A generated site (N pages of made-up words, each with a "Last updated"
line, linked from an index and to its neighbours) is crawled once; then
5% of its pages get a real text change, 2% a new date only, 1% are
deleted and 2% new pages are added (linked from the index); then
`nearcrawl crawl --refresh` crawls it again. Served two ways: by nginx
(ETag and Last-Modified: unchanged pages answer 304) and by a server of
our own that sends no validators (every page is downloaded, compared and
only what changed is written).

Prints, per server: bytes downloaded by the recrawl against the first
crawl, each page's verdict against the truth (changed / unchanged / gone /
new), pages written by the recrawl, and URLs lost or counted twice. With
--kill, the recrawl is killed (SIGKILL) twice at random moments and run
again to the end.

    python3 bench/recrawl.py [--pages 2000] [--binary target/release/nearcrawl] [--kill]
"""
import argparse
import glob
import http.server
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import localsite  # noqa: E402

MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]


def words(rng, n):
    vocab = [f"w{rng.randrange(20000):05d}"[1:] for _ in range(n)]
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for w in vocab:
        out.append("".join(letters[int(c) * 2 + rng.randrange(2)] for c in w))
    return " ".join(out)


def page_html(i, n, texts, date, pages):
    # Links to neighbours stay when they go (dead links, as on static sites).
    links = [f'<a href="p{j}.html">page {j}</a>' for j in (i - 1, i + 1, i + 2) if 0 <= j < n]
    paras = "".join(f"<p>{t}</p>" for t in texts)
    return (f"<!DOCTYPE html><html><head><title>Topic {i}</title></head><body>"
            f"<nav><a href=\"index.html\">home</a> {' '.join(links)}</nav>"
            f"<main><h1>Topic {i}</h1><p>Last updated {date}.</p>{paras}</main></body></html>")


def index_html(pages):
    items = "".join(f'<li><a href="p{i}.html">Topic {i}</a></li>' for i in sorted(pages))
    return (f"<!DOCTYPE html><html><head><title>Index</title></head><body><main>"
            f"<h1>Index</h1><p>Every topic of the site.</p><ul>{items}</ul></main></body></html>")


class Site:
    def __init__(self, root, n, seed):
        self.root, self.rng = root, random.Random(seed)
        self.texts = {i: [words(self.rng, 120) for _ in range(3)] for i in range(n)}
        self.dates = {i: f"{self.rng.randrange(1, 28)} {self.rng.choice(MONTHS)} 2026" for i in range(n)}
        self.next = self.n = n

    def write(self, i):
        html = page_html(i, self.n, self.texts[i], self.dates[i], self.texts)
        with open(os.path.join(self.root, f"p{i}.html"), "w") as f:
            f.write(html)

    def write_all(self):
        for i in self.texts:
            self.write(i)
        with open(os.path.join(self.root, "index.html"), "w") as f:
            f.write(index_html(self.texts))

    def change(self, share_changed, share_dated, share_deleted, share_new):
        """Changes the site; returns the truth by URL path."""
        ids = sorted(self.texts)
        self.rng.shuffle(ids)
        n = len(ids)
        cut = [round(n * s) for s in (share_changed, share_dated, share_deleted)]
        changed = ids[:cut[0]]
        dated = ids[cut[0]:cut[0] + cut[1]]
        deleted = ids[cut[0] + cut[1]:cut[0] + cut[1] + cut[2]]
        truth = {f"/p{i}.html": "unchanged" for i in ids}
        time.sleep(1.1)  # a new Last-Modified second for what changes
        for i in changed:
            self.texts[i][1] = words(self.rng, 120)
            truth[f"/p{i}.html"] = "changed"
        for i in dated:
            self.dates[i] = f"{self.rng.randrange(1, 28)} {self.rng.choice(MONTHS)} 2027"
        for i in deleted:
            os.remove(os.path.join(self.root, f"p{i}.html"))
            del self.texts[i]
            truth[f"/p{i}.html"] = "gone"
        added = list(range(self.next, self.next + round(n * share_new)))
        for i in added:
            self.texts[i] = [words(self.rng, 120) for _ in range(3)]
            self.dates[i] = "1 December 2026"
            truth[f"/p{i}.html"] = "new"
        self.next += len(added)
        for i in changed + dated + added:
            self.write(i)
        with open(os.path.join(self.root, "index.html"), "w") as f:
            f.write(index_html(self.texts))
        truth["/index.html"] = "changed"
        self.redone = changed + dated + added
        return truth

    def bytes_of(self, ids):
        return sum(os.path.getsize(os.path.join(self.root, f"p{i}.html")) for i in ids)


class NoValidators(http.server.SimpleHTTPRequestHandler):
    """Serves files with neither ETag nor Last-Modified, and never a 304."""

    def send_header(self, key, value):
        if key.lower() not in ("last-modified", "etag"):
            super().send_header(key, value)

    def log_message(self, *args):
        pass

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a crawl killed mid-answer


def plain_server(root):
    handler = lambda *a, **k: NoValidators(*a, directory=root, **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def config(tmp, port, delay_ms):
    path = os.path.join(tmp, "c.toml")
    with open(path, "w") as f:
        f.write(f"""[seeds]
urls = ["http://127.0.0.1:{port}/index.html"]
[politeness]
delay_ms = {delay_ms}
global_concurrency = 8
per_host_concurrency = 8
[fetch]
allow_private_networks = true
[output]
formats = ["jsonl", "warc"]
checkpoint_secs = 1
""")
    return path


def crawl(binary, conf, out, refresh=None, kills=0, rng=None):
    args = [binary, "crawl", "--config", conf, "--out", out]
    if refresh:
        args += ["--refresh", refresh]
    for _ in range(kills):
        p = subprocess.Popen(args, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.2))
        if p.poll() is not None:
            sys.exit("the crawl ended before its kill: give it more pages")
        p.send_signal(signal.SIGKILL)
        p.wait()
    t = time.time()
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"crawl failed: {done.stderr}")
    return time.time() - t, json.load(open(os.path.join(out, "stats.json")))


def lines(pattern):
    out = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            out += [json.loads(line) for line in f if line.strip()]
    return out


def measure(binary, pages, served, kill, seed, keep):
    tmp = tempfile.mkdtemp(prefix="nearcrawl-recrawl-")
    os.chmod(tmp, 0o755)  # nginx's workers run as another user
    root = os.path.join(tmp, "site")
    os.makedirs(root)
    site = Site(root, pages, seed)
    site.write_all()
    if served == "nginx":
        ctx = localsite.nginx(root)
        port = ctx.__enter__()
    else:
        server = plain_server(root)
        port = server.server_address[1]
    try:
        # Killed runs need time to be killed in: 3 ms between requests.
        conf = config(tmp, port, 3 if kill else 0)
        first, second = os.path.join(tmp, "first"), os.path.join(tmp, "second")
        t1, s1 = crawl(binary, conf, first)
        truth = site.change(0.05, 0.02, 0.01, 0.02)
        kills = 2 if kill else 0
        t2, s2 = crawl(binary, conf, second, refresh=first, kills=kills, rng=random.Random(seed))
        visits = lines(os.path.join(second, "visits.jsonl"))
        written = lines(os.path.join(second, "pages-*.jsonl"))
        base = f"http://127.0.0.1:{port}"
        seen = {}
        for v in visits:
            seen.setdefault(v["url"][len(base):], []).append(v["change"])
        twice = [u for u, c in seen.items() if len(c) > 1]
        lost = [u for u in truth if u not in seen]
        right = {k: 0 for k in ("changed", "unchanged", "gone", "new")}
        wrong = []
        for path, want in truth.items():
            got = seen.get(path, ["-"])[0]
            if got == want:
                right[want] += 1
            else:
                wrong.append((path, want, got))
        want_written = {p for p, c in truth.items() if c in ("changed", "new")}
        got_written = [w["url"][len(base):] for w in written]
        total = {k: sum(1 for c in truth.values() if c == k) for k in right}
        print(f"{served}: {pages} pages; first crawl {s1['fetched']} fetched, {s1['bytes']:,} bytes, {t1:.1f} s; "
              f"recrawl {s2['fetched']} fetched, {s2['bytes']:,} bytes ({100 * s2['bytes'] / s1['bytes']:.1f}% of the first), "
              f"{s2['not_modified']} answered 304, {s2['bytes_saved']:,} bytes saved, {t2:.1f} s"
              + (f" (after {kills} kills)" if kills else ""))
        floor = site.bytes_of(site.redone) + os.path.getsize(os.path.join(root, "index.html"))
        print(f"  the changed, re-dated and new pages and the index alone are {floor:,} bytes "
              f"({100 * floor / s1['bytes']:.1f}% of the first crawl)")
        print("  verdicts right: " + ", ".join(f"{k} {right[k]}/{total[k]}" for k in right))
        print(f"  written by the recrawl: {len(got_written)} ({len(set(got_written) & want_written)} of "
              f"{len(want_written)} changed or new; {len(set(got_written) - want_written)} others; "
              f"{len(got_written) - len(set(got_written))} twice)")
        print(f"  visits lost: {len(lost)}, counted twice: {len(twice)}")
        for w in wrong[:10]:
            print(f"  wrong: {w}")
        if keep:
            print(f"  kept: {tmp} (the server is gone)")
        return not wrong and not lost and not twice
    finally:
        if served == "nginx":
            ctx.__exit__(None, None, None)
        else:
            server.shutdown()
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--binary", default="target/release/nearcrawl")
    ap.add_argument("--server", choices=["nginx", "plain", "both"], default="both")
    ap.add_argument("--kill", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", action="store_true", help="keep the outputs")
    a = ap.parse_args()
    ok = True
    for served in (["nginx", "plain"] if a.server == "both" else [a.server]):
        ok &= measure(a.binary, a.pages, served, a.kill, a.seed, a.keep)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
