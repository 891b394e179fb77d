#!/usr/bin/env bash
# Learn time on one host with many candidates (docs/measurements/validate-scale.md): N clusters
# of two URLs, `https://h.org/p?id=I` and the same with its own parameter `xI=1`, so one host
# carries N one-parameter drops and N templates to validate. A hostile site can publish exactly
# this; the time must grow near-linearly in N.
# Prints a Markdown table (best wall time of RUNS runs, default 3, and the largest peak RSS) and
# the exponent of a least-squares fit of log(time) on log(N), then the sha256 of each rule file
# (SOURCE_DATE_EPOCH=0: a checksum changes only when the rules do).
# Usage: [RUNS=N] [SIZES="5000 10000 20000 40000"] [DEDUST=path/to/dedust] benches/validate_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
sizes=${SIZES:-5000 10000 20000 40000}
[ "$runs" -ge 1 ] 2>/dev/null || { echo "RUNS must be a number >= 1" >&2; exit 2; }
bin="${DEDUST:-}"
[ -n "$bin" ] || { cargo build --release --quiet; bin=$PWD/target/release/dedust; }
bin=$(realpath "$bin")
tmp=${TMPDIR:-/tmp}/dedust-bench-validate
mkdir -p "$tmp"
rows=$tmp/rows.tsv
: > "$rows"
for n in $sizes; do
  in=$tmp/pairs-$n.tsv
  [ -s "$in" ] || python3 - "$n" > "$in" <<'PY'
import sys
n = int(sys.argv[1])
print("cluster\turl")
for i in range(n):
    print(f"c{i}\thttps://h.org/p?id={i}")
    print(f"c{i}\thttps://h.org/p?id={i}&x{i}=1")
PY
  best="" peak=0
  for _ in $(seq "$runs"); do
    # From the directory, by relative names: the rule file records its input's path.
    out=$(cd "$tmp" && { SOURCE_DATE_EPOCH=0 /usr/bin/time -f "%e %M" "$bin" learn "pairs-$n.tsv" -o "rules-$n.json" 2>&1 >/dev/null; } | tail -1)
    read -r wall kb <<< "$out"
    best=$(python3 -c "print(min(float('$wall'), float('${best:-inf}')))")
    [ "$kb" -gt "$peak" ] && peak=$kb
  done
  printf '%s\t%s\t%s\n' "$n" "$best" "$peak" >> "$rows"
done
python3 - "$rows" <<'PY'
import math, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
print("| one-host pairs | URLs | learn wall s (best) | peak MiB |")
print("|---:|---:|---:|---:|")
xs, ys = [], []
for n, wall, kb in rows:
    print(f"| {int(n):,} | {2 * int(n):,} | {float(wall):.2f} | {int(kb) / 1024:.0f} |")
    xs.append(math.log(int(n))); ys.append(math.log(max(float(wall), 1e-3)))
if len(xs) > 1:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"\nfitted exponent (time ~ N^k): k = {slope:.2f}")
PY
echo
for n in $sizes; do sha256sum "$tmp/rules-$n.json" | sed "s|$tmp/||"; done
