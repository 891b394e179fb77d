#!/usr/bin/env bash
# Makes the table of docs/measurements/real-sparse.md: dedust against generic canonicalizers and
# the name-pooling baseline on real sparse sets (many sites, one or two duplicates each).
# In:   truth TSVs `cluster<TAB>url`: ../shared/datasets/canonical/news_canonical.tsv and the sets
#       scripts/real_corpus.py writes to ../real-corpus/ (articles.tsv, recipes.tsv); a missing
#       file is reported and skipped. Extra TSVs may be named as arguments.
# Out:  a Markdown table on stdout: per set and split (url, host), mean reduction over seeds 1-5
#       and the worst (max) lost, for dedust's learned rules (`evaluate --json`, row `rules`, its
#       defaults; also with `--no-priors`),
#       surt, courlan, courlan-strict (scripts/generic_baselines.py on the same held-out half)
#       and scripts/name_pooler.py (learned on the same training half). All methods see the halves
#       `dedust evaluate --save` writes, so the split is dedust's own.
# Needs: a dedust binary (DEDUST=path, default target/release/dedust; built if absent and
#       DEDUST unset), python3 with `pip install surt courlan w3lib` (tldextract optional).
# Usage: scripts/real_sparse.sh [EXTRA.tsv ...]     (SEEDS="1 2 3" to shorten)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${DEDUST:-target/release/dedust}"
[ -n "${DEDUST:-}" ] || [ -x "$bin" ] || cargo build --release --quiet
seeds="${SEEDS:-1 2 3 4 5}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sets=(../shared/datasets/canonical/news_canonical.tsv ../real-corpus/articles.tsv
      ../real-corpus/recipes.tsv "$@")
for t in "${sets[@]}"; do
  if [ ! -f "$t" ]; then echo "SKIP $t: not found (python3 scripts/real_corpus.py builds it)" >&2; continue; fi
  name=$(basename "$t" .tsv)
  for split in url host; do
    for seed in $seeds; do
      d="$tmp/$name-$split-$seed"
      "$bin" evaluate -q --truth "$t" --split "$split" --test-fraction 0.5 --seed "$seed" \
        --json --save "$d" > "$d.dedust.json"
      "$bin" evaluate -q --truth "$t" --split "$split" --test-fraction 0.5 --seed "$seed" \
        --json --no-priors > "$d.nopriors.json"
      python3 scripts/generic_baselines.py "$d/test.tsv" --json > "$d.generic.json"
      python3 scripts/name_pooler.py "$d/train.tsv" "$d/test.tsv" --json > "$d.pooler.json"
      echo "$name $split $seed $d" >> "$tmp/runs"
    done
  done
done
python3 - "$tmp/runs" <<'EOF'
import json, sys
from collections import defaultdict
cols = [("dedust", "dedust", "rules"), ("dedust --no-priors", "nopriors", "rules"), ("surt", "generic", "surt"), ("courlan", "generic", "courlan"),
        ("courlan-strict", "generic", "courlan-strict"), ("name pooler", "pooler", "name-pooler")]
cells, sizes = defaultdict(list), {}
for line in open(sys.argv[1]):
    name, split, seed, d = line.split()
    rows = {}
    dd = json.load(open(d + ".dedust.json"))
    rows["dedust"] = {r["method"]: r for r in dd["rows"]}
    rows["nopriors"] = {r["method"]: r for r in json.load(open(d + ".nopriors.json"))["rows"]}
    rows["generic"] = {r["method"]: r for r in json.load(open(d + ".generic.json"))}
    rows["pooler"] = {r["method"]: r for r in json.load(open(d + ".pooler.json"))}
    t = rows["dedust"]["rules"]
    sizes.setdefault((name, split), []).append((t["urls"], t["urls"] - t["clusters"]))
    for label, src, m in cols:
        r = rows[src].get(m)
        if r:
            cells[(name, split, label)].append((r["reduction"], r["lost"]))
print("| set | split | test URLs / removable (mean) | " + " | ".join(c[0] for c in cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for (name, split), sz in sizes.items():
    n = sum(a for a, _ in sz) / len(sz)
    rem = sum(b for _, b in sz) / len(sz)
    out = []
    for label, _, _ in cols:
        v = cells.get((name, split, label))
        out.append(f"{sum(r for r, _ in v) / len(v):.3f} / {max(l for _, l in v):.4f}" if v else "—")
    print(f"| {name} | {split} | {n:.0f} / {rem:.1f} | " + " | ".join(out) + " |")
print()
print("Cells: mean reduction over the seeds / worst (max) lost; test half 50 %.")
EOF
