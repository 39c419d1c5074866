#!/usr/bin/env python3
"""Checks a crawl's WARC files with warcio, the tool archives use.

    python3 bench/warc_check.py OUT_DIR [--served N]

`warcio check` verifies every record's WARC-Block-Digest and every
response's WARC-Payload-Digest. With --served N, the first N responses'
payload digests are also compared with the SHA-1 of the body the server
sends now (for a site that does not change, such as a loopback one).
Each file's CDXJ index (crawl-NNNNN.cdxj) is compared with what
`cdxj-indexer --sort` (webrecorder's indexer, on warcio) makes of the
file: they must be the same lines.
warcio and cdxj-indexer are installed from PyPI into target/warcio-venv
when missing.
"""

import argparse
import base64
import glob
import hashlib
import os
import subprocess
import sys
import urllib.request

VENV = os.path.join(os.path.dirname(__file__), "..", "target", "warcio-venv")


def warcio_python():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(os.path.join(VENV, "bin", "cdxj-indexer")):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "warcio", "cdxj-indexer"],
                       check=True)
    return python


def same_index(files):
    """Files whose CDXJ differs from cdxj-indexer's, and lines compared."""
    indexer = os.path.join(VENV, "bin", "cdxj-indexer")
    differ, lines = [], 0
    for f in files:
        theirs = subprocess.run([indexer, "--sort", f], capture_output=True, text=True,
                                check=True).stdout
        ours_path = f[: -len(".warc.gz")] + ".cdxj"
        ours = open(ours_path).read() if os.path.exists(ours_path) else ""
        lines += theirs.count("\n")
        if ours != theirs:
            differ.append(os.path.basename(ours_path))
    return differ, lines


def served_digests(python, files, n):
    """(checked, equal): payload digests against the bodies served now."""
    script = f"""
import base64, hashlib, sys, urllib.request
from warcio.archiveiterator import ArchiveIterator
checked = equal = 0
for f in {files!r}:
    with open(f, 'rb') as fh:
        for r in ArchiveIterator(fh):
            if r.rec_type != 'response' or checked >= {n}:
                continue
            body = urllib.request.urlopen(r.rec_headers.get_header('WARC-Target-URI')).read()
            digest = 'sha1:' + base64.b32encode(hashlib.sha1(body).digest()).decode()
            checked += 1
            equal += digest == r.rec_headers.get_header('WARC-Payload-Digest')
print(checked, equal)
"""
    out = subprocess.run([python, "-c", script], check=True, capture_output=True, text=True)
    checked, equal = map(int, out.stdout.split())
    return checked, equal


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--served", type=int, default=0)
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.out, "*.warc.gz")))
    if not files:
        sys.exit(f"no WARC files in {args.out}")
    python = warcio_python()
    warcio = os.path.join(VENV, "bin", "warcio")
    check = subprocess.run([warcio, "check", "-v", *files], capture_output=True, text=True)
    passed = check.stdout.count("digest pass")
    failed = check.stdout.count("digest failed")
    records = check.stdout.count("WARC-Record-ID")
    print(f"warcio check: {len(files)} files, {records} records, {passed} digests pass, "
          f"{failed} fail, exit {check.returncode}")
    ok = check.returncode == 0 and failed == 0 and passed > 0
    differ, lines = same_index(files)
    print(f"CDXJ: {lines} lines, {len(files) - len(differ)} of {len(files)} files the same as "
          f"cdxj-indexer --sort" + (f"; differ: {', '.join(differ)}" if differ else ""))
    ok = ok and not differ
    if args.served:
        checked, equal = served_digests(python, files, args.served)
        print(f"payload digests equal to SHA-1 of the body as served: {equal} of {checked}")
        ok = ok and checked == equal
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
