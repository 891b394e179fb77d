#!/usr/bin/env bash
# Cost of the content join as the page count grows (README table "content join at scale"):
# synthetic webs of 2, 8 and 72 sites x 500 pages (`dedust synth --html`), clustered with the
# default TDW measure; prints pages, pairs verified against all n(n-1)/2 pairs, and the times.
# Usage: benches/join_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=$PWD/target/release/dedust
tmp=${TMPDIR:-/tmp}/dedust-bench-join
mkdir -p "$tmp"
echo "| sites | pages | pairs verified | all pairs | share | features s | join s | wall s | peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|"
for sites in 2 8 72; do
  d=$tmp/s$sites
  [ -s "$d/pages.jsonl.gz" ] || "$bin" synth --sites "$sites" --pages 500 --seed 2 --html -o "$d" 2>/dev/null
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" cluster --pages "$d/pages.jsonl.gz" -o /dev/null 2> "$tmp/err"
  read -r wall kb < "$tmp/time"
  python3 - "$sites" "$wall" "$kb" "$tmp/err" <<'PY'
import re, sys
line = open(sys.argv[4]).read()
m = re.search(r"cluster: (\d+) pages.*?: (\d+) pairs verified of (\d+).*features ([\d.]+)s, join ([\d.]+)s", line)
pages, ver, allp, feat, join = m.groups()
sites, wall, kb = sys.argv[1:4]
print(f"| {sites} | {pages} | {int(ver):,} | {int(allp):,} | {int(ver)/int(allp):.2%} | {feat} | {join} | {wall} | {int(kb)//1024} MB |")
PY
done
