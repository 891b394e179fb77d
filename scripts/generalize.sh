#!/usr/bin/env bash
# Reproduces README's "Generalization" table: held-out reduction / lost where users need it.
#   1. forum crawl, --split url --test-fraction 0.5, seeds 1-5 (default flags);
#   2. its showthread.php rows only, same split, seeds 1-5;
#   3. synthetic web, --split host (whole sites on one side: rules tested on hosts never seen),
#      seeds 1-5, with generic canonicalizers on the same held-out half when the Python packages
#      surt, courlan and w3lib are installed (python3 -m pip install surt courlan w3lib);
#   4. real URLs of 1,350 sites with declared-canonical-shaped variants (scripts/canonical_shaped.py),
#      --split host, seeds 1-5, with the same generic canonicalizers; and the same with IIS pages'
#      lower-case spelling as their variant (--case);
#   5. real static-file URLs of 600 sites with cache-buster variants, shaped like a web archive's
#      digest groups (scripts/archive_shaped.py), --split host, seeds 1-5.
# Usage: scripts/generalize.sh            (DEDUST=path/to/dedust to measure another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${DEDUST:-target/release/dedust}"
[ -n "${DEDUST:-}" ] || cargo build --release --quiet
forum=../shared/datasets/ubuntuforums/clusters.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cell() { awk '$1=="rules"{printf "%s / %s", $5, $6}'; }
# "r / l r / l …" -> "mean r / max l"
mean() { tr -d '/' | awk '{for(i=1;i<=NF;i+=2){r+=$i;c++; if($(i+1)>l) l=$(i+1)}} END{printf "%.3f / %.4f", r/c, l}'; }
row() { # name truth split
  local r="| $1 |" cells=""
  for seed in 1 2 3 4 5; do
    c=$("$bin" evaluate --truth "$2" --split "$3" --test-fraction 0.5 --seed "$seed" | cell)
    r="$r $c |"
    cells="$cells $c"
  done
  echo "$r $(echo "$cells" | mean) |"
}
echo "| data (reduction / lost) | seed 1 | seed 2 | seed 3 | seed 4 | seed 5 | mean / worst lost |"
echo "|---|---|---|---|---|---|---|"
if [ -f "$forum" ]; then
  row "forum, url split 50/50" "$forum" url
  { head -1 "$forum"; grep showthread.php "$forum"; } > "$tmp/threads.tsv"
  row "forum thread views, url split 50/50" "$tmp/threads.tsv" url
else
  echo "SKIP forum rows: $forum not found" >&2
fi
"$bin" synth --sites 100 --pages 60 --seed 1 -o "$tmp/syn" 2>/dev/null
row "synthetic web (100 sites), host split 50/50" "$tmp/syn/clusters.tsv" host
# Sets a script writes from real URL lists, one per seed, host split: `shaped NAME PREFIX SCRIPT
# [ARGS]` runs `python3 SCRIPT ARGS SEED` for seeds 1-5 (the clusters kept as $tmp/PREFIX$seed.tsv,
# the halves in $tmp/PREFIX$seed/).
shaped() {
  local r="| $1 |" pre=$2 cells="" c
  shift 2
  for seed in 1 2 3 4 5; do
    python3 "$@" "$seed" > "$tmp/$pre$seed.tsv"
    c=$("$bin" evaluate --truth "$tmp/$pre$seed.tsv" --split host --test-fraction 0.5 --seed "$seed" --save "$tmp/$pre$seed" 2>/dev/null | cell)
    r="$r $c |"
    cells="$cells $c"
  done
  echo "$r $(echo "$cells" | mean) |"
}
if [ -f ../shared/datasets/urls/kasztp.txt ]; then
  shaped "real URLs, canonical-shaped variants (1,350 sites), host split 50/50" k scripts/canonical_shaped.py
  # The same with IIS pages' lower-case spelling as their variant (`--case`).
  shaped "real URLs, canonical-shaped variants with IIS case variants (--case), host split 50/50" kc scripts/canonical_shaped.py --case
else
  echo "SKIP canonical-shaped row: ../shared/datasets/urls/kasztp.txt not found" >&2
fi
if [ -f ../shared/datasets/urls/page-links.txt ]; then
  shaped "real static-file URLs, archive-shaped (600 sites), host split 50/50" a scripts/archive_shaped.py
else
  echo "SKIP archive-shaped row: ../shared/datasets/urls/page-links.txt not found" >&2
fi
# Generic canonicalizers on the same held-out halves (mean over the seeds).
if python3 -c "import surt, courlan, w3lib" 2>/dev/null; then
  echo
  echo "| synthetic web, host split: held-out half of seed | dedust rules | surt | courlan | w3lib |"
  echo "|---|---|---|---|---|"
  for seed in 1 2 3 4 5; do
    d=$("$bin" evaluate --truth "$tmp/syn/clusters.tsv" --split host --test-fraction 0.5 --seed "$seed" --save "$tmp/s$seed" | cell)
    g=$(python3 scripts/generic_baselines.py "$tmp/s$seed/test.tsv" --json)
    pick() { python3 -c "import json,sys; r={x['method']:x for x in json.loads(sys.argv[1])}['$1']; print(f\"{r['reduction']:.3f} / {r['lost']:.4f}\")" "$g"; }
    echo "| $seed | $d | $(pick surt) | $(pick courlan) | $(pick w3lib) |"
  done
  # `versus TITLE PREFIX`: the same for a set `shaped` wrote (clusters $tmp/PREFIX$seed.tsv,
  # held-out halves $tmp/PREFIX$seed/test.tsv).
  versus() {
    echo
    echo "| $1, host split: held-out half of seed | dedust rules | surt | courlan | w3lib |"
    echo "|---|---|---|---|---|"
    for seed in 1 2 3 4 5; do
      d=$("$bin" evaluate --truth "$tmp/$2$seed.tsv" --split host --test-fraction 0.5 --seed "$seed" 2>/dev/null | cell)
      g=$(python3 scripts/generic_baselines.py "$tmp/$2$seed/test.tsv" --json)
      echo "| $seed | $d | $(pick surt) | $(pick courlan) | $(pick w3lib) |"
    done
  }
  if [ -d "$tmp/k1" ]; then versus canonical-shaped k; fi
  if [ -d "$tmp/a1" ]; then versus archive-shaped a; fi
else
  echo "SKIP generic canonicalizers: python3 -m pip install surt courlan w3lib" >&2
fi
