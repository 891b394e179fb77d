#!/usr/bin/env bash
# Measures docs/evidence.md's targets: the two real web-archive indexes of the shared data,
# each learned on itself with the defaults, then normalized with the rules it gave.
# In:   ../shared/datasets/webarchive/{cc-main-2024-30-cdx-00187.cdxj,pywb-iana.cdxj,groups.jsonl}
# Out:  on stdout, for the Common Crawl shard: its http/https pairs (two status-200 captures
#       whose SURT keys are equal and whose URLs differ in the scheme alone) and how many share
#       a normalized URL, how many pairs of other SURT keys merge (want 0), and whether a
#       robots.txt capture is in a learned example; for pywb: how many of the multi-URL digest
#       groups `groups.jsonl` lists collapse to one normalized URL (and across how many sites).
# Needs: a dedust binary (DEDUST=path, default target/release/dedust), python3.
# Usage: scripts/index_evidence.sh [extra learn flags, e.g. --no-priors]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${DEDUST:-target/release/dedust}"
w=../shared/datasets/webarchive
[ -d "$w" ] || { echo "SKIP: $w not found" >&2; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in cc-main-2024-30-cdx-00187 pywb-iana; do
  "$bin" learn -q "$w/$name.cdxj" -o "$tmp/$name.json" "$@"
  # The index's URLs, and the URLs of groups.jsonl (as that file spells them).
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    p = l.split(" ", 2)
    if len(p) == 3 and p[2].startswith("{"): print(json.loads(p[2])["url"])
for l in open(sys.argv[2]):
    for u in json.loads(l)["urls"]: print(u)' "$w/$name.cdxj" "$w/groups.jsonl" \
    | "$bin" normalize -q -r "$tmp/$name.json" --tsv > "$tmp/$name.keys"
done
python3 - "$w" "$tmp" <<'EOF'
import json, sys
from collections import defaultdict
w, tmp = sys.argv[1], sys.argv[2]
def keys(name):
    k = {}
    for line in open(f"{tmp}/{name}.keys"):
        u, key = line.rstrip("\n").split("\t")[:2]
        k[u] = key
    return k
name = "cc-main-2024-30-cdx-00187"
k = keys(name)
by_surt = defaultdict(set)
for line in open(f"{w}/{name}.cdxj"):
    surt, _, j = line.split(" ", 2)
    d = json.loads(j)
    if d.get("status") == "200":
        by_surt[surt].add(d["url"])
pairs = [sorted(us) for us in by_surt.values()
         if len(us) == 2 and len({u.split("://", 1)[1] for u in us}) == 1]
shared = sum(1 for a, b in pairs if k[a] == k[b])
owner = defaultdict(set)
for s, us in by_surt.items():
    for u in us:
        owner[k[u]].add(s)
merged = sum(len(s) - 1 for s in owner.values() if len(s) > 1)
rules = json.load(open(f"{tmp}/{name}.json"))
robots = any("robots.txt" in u for r in rules["rules"] for ex in r.get("examples", []) for u in ex)
print(f"CC shard: {shared} of {len(pairs)} http/https pairs share a normalized URL; "
      f"{merged} other SURT keys merged; {len(rules['rules'])} rules; "
      f"robots.txt in a learned example: {robots}")
k = keys("pywb-iana")
groups = [json.loads(l) for l in open(f"{w}/groups.jsonl")]
groups = [g for g in groups if g.get("source") == "pywb" and len(g["urls"]) > 1]
def site(u):
    h = u.split("://", 1)[1].split("/", 1)[0].split("@")[-1]
    return ".".join(h.split(".")[-2:])
done = [g for g in groups if len({k[u] for u in g["urls"]}) == 1]
print(f"pywb iana.org: {len(done)} of {len(groups)} multi-URL digest groups collapse; "
      f"collapsed groups spanning two sites: {sum(1 for g in done if len({site(u) for u in g['urls']}) > 1)}")
EOF
