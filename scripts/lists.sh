#!/usr/bin/env bash
# Reproduces README's "Hand-kept lists" table: the ClearURLs list and Scrapy's
# duplicate-url-discarder (DUD) rules imported with `dedust import`, then
#   - on labelled URLs (`dedust validate --json`): rules the data leaves untested (no merge),
#     supports and refutes (fpr above --max-fpr), and the rules kept, by default and with
#     --keep-untested (every rule not refuted);
#   - on the 148,903 real URLs of ../shared/datasets/urls (no labels): URLs the list changes
#     beyond dedust's base layer, and distinct rules seen changing a URL (last rule applied).
# Needs ../shared/datasets and `python3 -m pip install duplicate-url-discarder-rules`.
# Usage: scripts/lists.sh            (DEDUST=path/to/dedust to measure another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${DEDUST:-target/release/dedust}"
[ -n "${DEDUST:-}" ] || cargo build --release --quiet
data=../shared/datasets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dud=$(python3 -c "import os, duplicate_url_discarder_rules as d; print(os.path.dirname(d.__file__))")
"$bin" import --from clearurls "$data/lists/clearurls-data.min.json" -o "$tmp/clearurls.json" 2> "$tmp/cu.log"
dargs=()
for f in queryRemoval/article.json queryRemoval/product.json queryRemoval/utm.json \
         queryRemovalExcept/product.json subpathRemoval/product.json normalizer/main.json; do
  out="$tmp/dud-${f//\//-}"
  "$bin" import --from dud "$dud/$f" -o "$out" 2>> "$tmp/dud.log"
  dargs+=(-r "$out")
done
"$bin" synth --sites 100 --pages 60 --seed 1 -o "$tmp/syn" 2>/dev/null
cat "$data"/urls/*.txt > "$tmp/urls.txt"
"$bin" normalize --tsv "$tmp/urls.txt" 2>/dev/null | cut -f2 > "$tmp/base.txt"
labelled=()
real=()
row() { # name skipped-log rule-args...
  local name=$1 log=$2; shift 2
  local n skipped
  n=$(grep -ho 'import: [0-9]* rules' "$log" | awk '{s+=$2} END{print s}')
  skipped=$(grep -c 'import: skipped' "$log" || true)
  "$bin" normalize --tsv "$@" "$tmp/urls.txt" 2>/dev/null | cut -f2,3 > "$tmp/out.txt"
  real+=("| $name | $n | $skipped | $(paste "$tmp/base.txt" "$tmp/out.txt" | awk -F'\t' '$1!=$2{n++; ids[$3]=1} END{printf "%d of %d | %d", n, NR, length(ids)}') |")
  for truth in "$tmp/syn/clusters.tsv:synthetic web (100 sites, seed 1)" \
               "$data/ubuntuforums/clusters.tsv:forum crawl" \
               "$data/webarchive/cc-main-2024-30-cdx-00187.cdxj:Common Crawl CDXJ"; do
    local file=${truth%%:*} label=${truth#*:}
    "$bin" validate "$@" --truth "$file" -o "$tmp/kept.json" --json > "$tmp/v.json" 2>/dev/null
    "$bin" validate "$@" --truth "$file" -o "$tmp/kept.json" --json --keep-untested \
      > "$tmp/v2.json" 2>/dev/null
    local cells
    cells=$(python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
e = a["evidence"]
print(" | ".join(str(x) for x in (e["untested"], e["supported"], e["refuted"], a["kept"], b["kept"])))
' "$tmp/v.json" "$tmp/v2.json")
    labelled+=("| $name | $label | $cells |")
  done
}
row ClearURLs "$tmp/cu.log" -r "$tmp/clearurls.json"
row "DUD 2024.11.5" "$tmp/dud.log" "${dargs[@]}"
echo "| list | labelled data (validate) | untested | supported | refuted | kept | kept with --keep-untested |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${labelled[@]}"
echo
echo "| list | rules | entries skipped | real URLs changed beyond the base layer | rules seen changing one |"
echo "|---|---|---|---|---|"
printf '%s\n' "${real[@]}"
