#!/usr/bin/env bash
# Reproduces README's "Small crawls: the priors" table: held-out reduction / lost on hosts never
# seen when learning sees few sites, with `--no-priors` and with the default (priors), and the web-archive key (SURT)
# on the same held-out half.
#   1. synthetic web (`synth --sites 100 --pages 60 --seed 1`), --split host, the test share
#      0.5, 0.9, 0.97 and 0.99 (learning on 50, 10, 3 and 1 % of the sites), seeds 1-5;
#   2. real URLs of 1,350 sites with declared-canonical-shaped variants
#      (scripts/canonical_shaped.py SEED), --split host, test share 0.5 and 0.95, seeds 1-5;
#   3. the forum crawl, --split url --test-fraction 0.5, seeds 1-5 (one host: what `--priors`
#      adds where every URL's host was seen).
# Each cell is the mean reduction over the seeds / the worst lost. The SURT column needs
# `python3 -m pip install surt` (skipped without it).
# Usage: scripts/priors.sh            (DEDUST=path/to/dedust to measure another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${DEDUST:-target/release/dedust}"
[ -n "${DEDUST:-}" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "r l r l …" -> "mean r / max l"
mean() { awk '{for(i=1;i<=NF;i+=2){r+=$i;c++; if($(i+1)>l) l=$(i+1)}} END{printf "%.3f / %.4f", r/c, l}'; }
surt_ok=$(python3 -c "import surt" 2>/dev/null && echo yes || echo no)
# row NAME TRUTH SPLIT SHARE [SEED_TRUTH_PREFIX]: one table row over seeds 1-5. With a prefix,
# seed s reads $PREFIX$s.tsv instead of TRUTH.
row() {
  local name=$1 truth=$2 split=$3 share=$4 prefix=${5:-} d="" p="" s="" t
  for seed in 1 2 3 4 5; do
    t=$truth
    [ -z "$prefix" ] || t="$prefix$seed.tsv"
    d="$d $("$bin" evaluate --truth "$t" --split "$split" --test-fraction "$share" --seed "$seed" --no-priors --save "$tmp/h" 2>/dev/null | awk '$1=="rules"{print $5, $6}')"
    p="$p $("$bin" evaluate --truth "$t" --split "$split" --test-fraction "$share" --seed "$seed" 2>/dev/null | awk '$1=="rules"{print $5, $6}')"
    if [ "$surt_ok" = yes ]; then
      s="$s $(python3 scripts/generic_baselines.py "$tmp/h/test.tsv" 2>/dev/null | awk '$1=="surt"{print $5, $6}')"
    fi
  done
  local sc="(surt not installed)"
  [ "$surt_ok" = no ] || sc=$(echo "$s" | mean)
  echo "| $name | $(echo "$d" | mean) | $(echo "$p" | mean) | $sc |"
}
echo "| held-out half (mean reduction / worst lost, seeds 1-5) | \`--no-priors\` | default (priors) | surt |"
echo "|---|---|---|---|"
"$bin" synth --sites 100 --pages 60 --seed 1 -o "$tmp/syn" 2>/dev/null
for share in 0.5 0.9 0.97 0.99; do
  row "synthetic web, learned on $(awk -v s="$share" 'BEGIN{printf "%g", (1-s)*100}') % of 100 sites" "$tmp/syn/clusters.tsv" host "$share"
done
if [ -f ../shared/datasets/urls/kasztp.txt ]; then
  for seed in 1 2 3 4 5; do python3 scripts/canonical_shaped.py "$seed" > "$tmp/k$seed.tsv"; done
  for share in 0.5 0.95; do
    row "canonical-shaped real URLs, learned on $(awk -v s="$share" 'BEGIN{printf "%g", (1-s)*100}') % of 1,350 sites" - host "$share" "$tmp/k"
  done
else
  echo "SKIP canonical-shaped rows: ../shared/datasets/urls/kasztp.txt not found" >&2
fi
forum=../shared/datasets/ubuntuforums/clusters.tsv
if [ -f "$forum" ]; then
  row "forum crawl (one host), url split 50/50" "$forum" url 0.5
else
  echo "SKIP forum row: $forum not found" >&2
fi
