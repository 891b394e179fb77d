#!/usr/bin/env bash
# Old and new `dedust learn` timed alternately on the same synthetic input (this machine drifts
# 10-30 % between runs, so each claim compares runs taken side by side).
# Usage: benches/learn_compare.sh OLD_BIN NEW_BIN [RUNS] [SITES]
#   default: 3 runs each on `synth --sites 100 --pages 3600 --seed 3` (about 1 M URLs).
# Prints one line per run (seconds, peak RSS, stage times from -v), then the median of each
# binary and the new/old ratio.
set -euo pipefail
old=${1:?old binary}; new=${2:?new binary}; runs=${3:-3}; sites=${4:-100}
tmp=${TMPDIR:-/tmp}/dedust-bench-compare
mkdir -p "$tmp"
dir=$tmp/s$sites
[ -s "$dir/clusters.tsv" ] || "$new" synth --sites "$sites" --pages 3600 --seed 3 -o "$dir" 2>/dev/null
echo "input: $dir/clusters.tsv ($(( $(wc -l < "$dir/clusters.tsv") - 1 )) URLs)"
: > "$tmp/times"
for i in $(seq 1 "$runs"); do
  for which in old new; do
    bin=${!which}
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" learn "$dir/clusters.tsv" -o "$tmp/rules-$which.json" -q -v 2> "$tmp/log"
    read -r secs kb < "$tmp/time"
    stages=$(grep -o '[a-z]* took [0-9.]*s' "$tmp/log" | awk '{printf "%s %s  ", $1, $3}')
    echo "$which run $i: ${secs} s, $(( kb / 1024 )) MB   $stages"
    echo "$which $secs $kb" >> "$tmp/times"
  done
done
python3 - "$tmp/times" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {w: statistics.median(float(s) for x, s, _ in rows if x == w) for w in ("old", "new")}
rss = {w: max(int(k) for x, _, k in rows if x == w) // 1024 for w in ("old", "new")}
print(f"median: old {med['old']:.1f} s ({rss['old']} MB), new {med['new']:.1f} s ({rss['new']} MB); new/old = {med['new'] / med['old']:.2f}")
PY
