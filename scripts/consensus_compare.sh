#!/usr/bin/env bash
# Makes the tables of docs/measurements/consensus.md: two dedust binaries side by side on every
# real set, same seeds: the pair generator alone (OLD, a build before the family consensus) and
# with the consensus (NEW).
# In:   OLD and NEW binaries; truth TSVs `cluster<TAB>url`: ../shared/datasets/ubuntuforums
#       (forum, dense), ../shared/datasets/canonical/news_canonical.tsv (sparse), and the sets
#       scripts/real_corpus.py writes to ../real-corpus/ (articles, recipes, migration); the real
#       indexes in ../shared/datasets/webarchive/ (*.cdxj). A missing file is reported, skipped.
# Out:  Markdown on stdout. Table 1: per set and split, mean reduction over seeds 1-5 and the worst
#       lost (`evaluate --json`, row `rules`), OLD and NEW. Table 2: per input learned whole
#       (`learn`), the kept rules of each and how many differ once the `consensus` record (new
#       provenance) is left out; the differing patterns are listed below the table.
# Usage: scripts/consensus_compare.sh OLD NEW      (SEEDS="1 2" to shorten)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2
seeds="${SEEDS:-1 2 3 4 5}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh=../shared/datasets
sets=("forum:$sh/ubuntuforums/clusters.tsv:url" "news:$sh/canonical/news_canonical.tsv:url host"
      "articles:../real-corpus/articles.tsv:url host" "recipes:../real-corpus/recipes.tsv:url host"
      "migration:../real-corpus/migration.tsv:url host")
mean() { python3 -c "
import sys, json
dec = json.JSONDecoder(); t = sys.stdin.read(); i = 0; red = []; lost = []
while i < len(t):
    s = t[i:].lstrip()
    if not s: break
    o, n = dec.raw_decode(s); i = len(t) - len(s) + n
    r = [x for x in o['rows'] if x['method'] == 'rules'][0]
    # n/a (None): the held-out half holds no duplicate.
    if r['reduction'] is not None: red.append(r['reduction']); lost.append(r['lost'])
print('%.3f / %.4f (%d seeds)' % (sum(red) / len(red), max(lost), len(red)) if red else 'n/a')"; }
echo "| set | split | pairs only: reduction / worst lost | with consensus | "
echo "|---|---|---|---|"
for spec in "${sets[@]}"; do
  IFS=: read -r name t splits <<< "$spec"
  if [ ! -f "$t" ]; then echo "SKIP $t: not found" >&2; continue; fi
  for split in $splits; do
    row="| $name | $split"
    for b in "$old" "$new"; do
      cell=$(for s in $seeds; do "$b" evaluate -q --truth "$t" --split "$split" --test-fraction 0.5 --seed "$s" --json; done | mean)
      row="$row | $cell"
    done
    echo "$row |"
  done
done
echo
echo "| input (learned whole) | kept rules, pairs only | with consensus | differing (consensus record left out) |"
echo "|---|---|---|---|"
inputs=("$sh/ubuntuforums/clusters.tsv" "$sh/canonical/news_canonical.tsv" ../real-corpus/articles.tsv
        ../real-corpus/recipes.tsv ../real-corpus/migration.tsv $sh/webarchive/*.cdxj)
for t in "${inputs[@]}"; do
  [ -f "$t" ] || { echo "SKIP $t: not found" >&2; continue; }
  n=$(basename "$t")
  "$old" learn -q "$t" -o "$tmp/old.json" --warcs none 2>/dev/null || "$old" learn -q "$t" -o "$tmp/old.json"
  "$new" learn -q "$t" -o "$tmp/new.json" --warcs none 2>/dev/null || "$new" learn -q "$t" -o "$tmp/new.json"
  python3 - "$tmp/old.json" "$tmp/new.json" "$n" >> "$tmp/diffs" <<'PY' | tee -a /dev/null
import json, sys
def rules(p):
    out = {}
    for r in json.load(open(p))["rules"]:
        r.pop("consensus", None); r.pop("learned", None)
        out[r["id"]] = r
    return out
a, b = rules(sys.argv[1]), rules(sys.argv[2])
diff = sorted(set(a) ^ set(b)) + sorted(i for i in set(a) & set(b) if a[i] != b[i])
print("| %s | %d | %d | %d |" % (sys.argv[3], len(a), len(b), len(diff)))
for i in diff:
    r = a.get(i) or b.get(i)
    side = "pairs only" if i not in b else ("consensus only" if i not in a else "numbers differ")
    print("DIFF %s: %s: `%s` → `%s`" % (sys.argv[3], side, r["pattern"], r["target"]), file=sys.stderr)
PY
done 2> "$tmp/difflist"
cat "$tmp/diffs"
echo
sed 's/^DIFF /- /' "$tmp/difflist" | grep '^- ' || echo "(no differing rule)"
