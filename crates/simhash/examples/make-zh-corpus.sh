#!/usr/bin/env bash
# Renders Debian's Simplified Chinese manual pages (package manpages-zh) to
# plain UTF-8 text files, one per page, for the CJK tokenizer comparison:
#   apt-get install -y manpages-zh && bash make-zh-corpus.sh /tmp/zh-corpus
# Keeps pages with at least 300 Han characters.
set -euo pipefail
out=${1:?usage: make-zh-corpus.sh OUT_DIR}
mkdir -p "$out"
for f in /usr/share/man/zh_CN/man*/*.gz; do
  name=$(basename "$f" .gz)
  MANWIDTH=2000 man -E UTF-8 -l "$f" 2>/dev/null | col -b >"$out/$name.txt" || true
  han=$(python3 -c 'import re,sys; print(len(re.findall("[\u4e00-\u9fff]", open(sys.argv[1], encoding="utf-8", errors="replace").read())))' "$out/$name.txt")
  if [ "$han" -lt 300 ]; then rm -f "$out/$name.txt"; fi
done
ls "$out" | wc -l
