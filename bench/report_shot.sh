#!/usr/bin/env bash
# Renders a crawl's HTML report in headless Chromium and saves a screenshot,
# to look at the report the way a browser shows it.
#
#   bench/report_shot.sh CRAWL_DIR [OUT.png]
#
# Needs chromium (apt-get install -y chromium) and a release build
# (cargo build --release -p nearcrawl-cli). The page must render with the
# network off: Chromium runs with every proxy pointed nowhere.
set -euo pipefail
dir=${1:?usage: bench/report_shot.sh CRAWL_DIR [OUT.png]}
png=${2:-$dir/report.png}
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${NEARCRAWL:-$repo/target/release/nearcrawl}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "chromium is missing: apt-get install -y chromium" >&2; exit 1; }
"$bin" report "$dir" -o "$dir/report.html"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --proxy-server=127.0.0.1:9 --window-size=1100,3000 \
    --screenshot="$png" "file://$(realpath "$dir/report.html")" 2>/dev/null
echo "screenshot: $png"
