#!/usr/bin/env bash
# Old and new `dedust learn` timed alternately on the same synthetic input (this machine drifts
# 10-30 % between runs, so each claim compares runs taken side by side).
# Usage: benches/learn_compare.sh OLD_BIN NEW_BIN [RUNS] [SITES]
#   default: 3 runs each on `synth --sites 100 --pages 3600 --seed 3` (about 1 M URLs).
# Prints one line per run (seconds, CPU seconds, peak RSS, stage times from -v), then the median
# of each binary and the new/old ratios of wall time and of CPU time (user + system, summed over
# threads: less sensitive to how evenly the two cores split the work).
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
    /usr/bin/time -f "%e %M %U %S" -o "$tmp/time" "$bin" learn "$dir/clusters.tsv" -o "$tmp/rules-$which.json" -q -v 2> "$tmp/log"
    read -r secs kb user sys < "$tmp/time"
    cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
    stages=$(grep -o '[a-z]* took [0-9.]*s' "$tmp/log" | awk '{printf "%s %s  ", $1, $3}')
    echo "$which run $i: ${secs} s, CPU ${cpu} s, $(( kb / 1024 )) MB   $stages"
    echo "$which $secs $kb $cpu" >> "$tmp/times"
  done
done
python3 - "$tmp/times" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {w: statistics.median(float(r[1]) for r in rows if r[0] == w) for w in ("old", "new")}
cpu = {w: statistics.median(float(r[3]) for r in rows if r[0] == w) for w in ("old", "new")}
rss = {w: max(int(r[2]) for r in rows if r[0] == w) // 1024 for w in ("old", "new")}
print(f"median wall: old {med['old']:.1f} s ({rss['old']} MB), new {med['new']:.1f} s ({rss['new']} MB); new/old = {med['new'] / med['old']:.2f}")
print(f"median CPU: old {cpu['old']:.1f} s, new {cpu['new']:.1f} s; new/old = {cpu['new'] / cpu['old']:.2f}")
PY
