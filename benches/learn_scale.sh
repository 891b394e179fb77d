#!/usr/bin/env bash
# Learn time and peak RSS at ~10^4 … 10^7 URLs of synthetic data (README "learn at scale").
# Writes benches/learn_scale.svg and prints a Markdown table with the fitted exponent (overall and
# between the two largest sizes), then the sha256 of each rule file (learned with
# SOURCE_DATE_EPOCH=0, so a checksum changes only when the rules do).
# Each size is learned RUNS times (default 3): the table gives the fastest wall time (the run the
# machine disturbed least: on a shared 2-core VM one run can take 10-30 % longer) and the largest
# peak RSS of the runs.
# Usage: [RUNS=N] benches/learn_scale.sh [MAX_SITES]   (1000 sites ≈ 10 M URLs; default 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-1000}
runs=${RUNS:-3}
[ "$runs" -ge 1 ] 2>/dev/null || { echo "RUNS must be a number >= 1" >&2; exit 2; }
cargo build --release --quiet
bin=$PWD/target/release/dedust
tmp=${TMPDIR:-/tmp}/dedust-bench-learn
mkdir -p "$tmp"
rows=$tmp/rows.tsv
: > "$rows"
for sites in 1 10 100 1000; do
  [ "$sites" -le "$max" ] || break
  dir=$tmp/s$sites
  [ -s "$dir/clusters.tsv" ] || "$bin" synth --sites "$sites" --pages 3600 --seed 3 -o "$dir" 2>/dev/null
  urls=$(( $(wc -l < "$dir/clusters.tsv") - 1 ))
  secs=""; kb=0
  for _ in $(seq "$runs"); do
    SOURCE_DATE_EPOCH=0 /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" learn "$dir/clusters.tsv" -o "$tmp/rules-$sites.json" 2>/dev/null
    read -r s k < "$tmp/time"
    if [ -z "$secs" ] || awk -v a="$s" -v b="$secs" 'BEGIN{exit !(a < b)}'; then secs=$s; fi
    [ "$k" -gt "$kb" ] && kb=$k
  done
  nrules=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['rules']))" "$tmp/rules-$sites.json")
  quality="–"
  if [ "$sites" -le 10 ]; then
    quality=$("$bin" evaluate --truth "$dir/clusters.tsv" --test-fraction 0.5 | awk '$1=="rules"{printf "%s / %s", $5, $6}')
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$sites" "$urls" "$secs" "$kb" "$nrules" "$quality" >> "$rows"
done
python3 - "$rows" benches/learn_scale.svg "$runs" <<'PY'
import math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
xs = [math.log10(int(r[1])) for r in rows]; ys = [math.log10(max(float(r[2]), 0.01)) for r in rows]
n = len(rows)
if n >= 2:
    mx, my = sum(xs) / n, sum(ys) / n
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
else:
    k = float("nan")
runs = sys.argv[3]
print(f"| sites | URLs | seconds (fastest of {runs}) | peak RSS (MiB, largest of {runs}) | rules | held-out reduction / lost (50/50) |")
print("|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {int(r[1]):,} | {float(r[2]):.1f} | {int(r[3]) // 1024} | {r[4]} | {r[5]} |")
print(f"\nfitted exponent (time ∝ URLs^k, least squares on log-log): k = {k:.2f}")
if n >= 2:
    a, b = rows[-2], rows[-1]
    k2 = math.log(float(b[2]) / float(a[2])) / math.log(int(b[1]) / int(a[1]))
    print(f"between {int(a[1]):,} and {int(b[1]):,} URLs: k = {k2:.2f}")
# SVG: log-log plot of seconds against URLs.
W, H, L, R, T, B = 560, 360, 70, 20, 20, 50
x0, x1 = 4, 7.2
y0, y1 = -1.5, 2.5
X = lambda v: L + (W - L - R) * (v - x0) / (x1 - x0)
Y = lambda v: T + (H - T - B) * (1 - (v - y0) / (y1 - y0))
s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
     f'<rect x="{L}" y="{T}" width="{W-L-R}" height="{H-T-B}" fill="#fafafa" stroke="#999"/>']
for e in range(4, 8):
    s.append(f'<line x1="{X(e)}" x2="{X(e)}" y1="{T}" y2="{H-B}" stroke="#ddd"/><text x="{X(e)}" y="{H-B+16}" text-anchor="middle">10^{e}</text>')
for e, lab in [(-1, "0.1 s"), (0, "1 s"), (1, "10 s"), (2, "100 s")]:
    s.append(f'<line x1="{L}" x2="{W-R}" y1="{Y(e)}" y2="{Y(e)}" stroke="#ddd"/><text x="{L-6}" y="{Y(e)+4}" text-anchor="end">{lab}</text>')
s.append(f'<line x1="{L}" x2="{W-R}" y1="{Y(math.log10(60))}" y2="{Y(math.log10(60))}" stroke="#c33" stroke-dasharray="4 3"/><text x="{W-R-4}" y="{Y(math.log10(60))-4}" text-anchor="end" fill="#c33">60 s target</text>')
pts = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(xs, ys))
s.append(f'<polyline points="{pts}" fill="none" stroke="#36a" stroke-width="2"/>')
for x, y in zip(xs, ys):
    s.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="4" fill="#36a"/>')
s.append(f'<text x="{(L+W-R)/2}" y="{H-12}" text-anchor="middle">URLs (log scale)</text>')
s.append(f'<text x="{L+8}" y="{T+16}">dedust learn, 2 cores: time ∝ URLs^{k:.2f}</text></svg>')
open(sys.argv[2], "w").write("\n".join(s) + "\n")
PY
echo
echo "rule file checksums (SOURCE_DATE_EPOCH=0; equal before and after a speed change):"
for sites in 1 10 100 1000; do
  [ -s "$tmp/rules-$sites.json" ] && [ "$sites" -le "$max" ] || continue
  echo "  sites $sites: sha256 $(sha256sum "$tmp/rules-$sites.json" | cut -c1-64)"
done
