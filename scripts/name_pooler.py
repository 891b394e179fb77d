#!/usr/bin/env python3
"""Name-pooling baseline: drop query parameter names that duplicates drop on >= 2 sites.

In:   TRAIN.tsv and TEST.tsv, header `cluster<TAB>url` (the halves `dedust evaluate --save DIR`
      writes as DIR/train.tsv and DIR/test.tsv, so the split is dedust's own).
Out:  rows method, urls, clusters, buckets, reduction, lost on TEST (the metric of
      scripts/generic_baselines.py, imported from it): `basics` (the SURT-like key alone) and
      `name-pooler` (the key with the learned names dropped); an aligned table, or JSON with
      --json; --show prints the learned names and their votes on stderr.
What: every URL gets a SURT-like key: scheme, `www.`, default port, fragment and a trailing
      slash ignored, host lower-cased, query parameters sorted. Learning on TRAIN: for each
      pair of URLs of one duplicate cluster on one registrable domain, a parameter name present
      on one side only is "dropped" there (one vote per site, however many pairs show it); a
      name is vetoed on a site when URLs of different clusters there differ in that name's value
      alone (kept with different content). A name with >= --min-sites votes and no veto is
      dropped from every URL of TEST. No path, host or value rewriting: that is the whole
      learner (the pooled-evidence baseline dedust is compared with).
Needs: python3 (3.11, stdlib); scripts/generic_baselines.py and scripts/real_corpus.py beside it
      (metric; registrable domain, by tldextract when installed, else the documented fallback).

Usage: python3 scripts/name_pooler.py TRAIN.tsv TEST.tsv [--min-sites N] [--json] [--show]
"""
import argparse
import csv
import json
import sys
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generic_baselines import metrics  # noqa: E402
from real_corpus import site_of  # noqa: E402


def parts(url):
    """-> (host without www./port, path without trailing slash, [(name, value)] sorted)."""
    p = urlsplit(url.strip())
    host = (p.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    if p.port and p.port not in (80, 443):
        host = f"{host}:{p.port}"
    path = p.path or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    return host, path, sorted(parse_qsl(p.query, keep_blank_values=True))


def key(url, drop=frozenset()):
    host, path, q = parts(url)
    qs = "&".join(f"{k}={v}" for k, v in q if k not in drop)
    return f"{host}{path}" + (f"?{qs}" if qs else "")


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(dict.fromkeys((r["cluster"], r["url"]) for r in csv.DictReader(f, delimiter="\t")))


def learn(rows, min_sites=2):
    """-> (dropped names, votes {name: sites}, vetoes {name: sites}, basics {what: sites})."""
    by_site = defaultdict(list)
    for c, u in rows:
        by_site[site_of(u)].append((c, u))
    votes, vetoes, basics = defaultdict(set), defaultdict(set), defaultdict(set)
    for site, items in by_site.items():
        clusters = defaultdict(list)
        for c, u in items:
            clusters[c].append(u)
        for urls in clusters.values():
            for a, b in combinations(urls, 2):
                pa, pb = urlsplit(a), urlsplit(b)
                na, nb = {k for k, _ in parts(a)[2]}, {k for k, _ in parts(b)[2]}
                for n in na ^ nb:
                    votes[n].add(site)
                for what, x, y in (("scheme", pa.scheme, pb.scheme),
                                   ("www.", (pa.hostname or "").startswith("www."),
                                    (pb.hostname or "").startswith("www.")),
                                   ("fragment", pa.fragment, pb.fragment),
                                   ("trailing slash", pa.path.endswith("/"), pb.path.endswith("/"))):
                    if x != y:
                        basics[what].add(site)
        # veto: some name whose value alone tells two clusters apart on this site
        for n in {k for _, u in items for k, _ in parts(u)[2]}:
            bucket = defaultdict(lambda: defaultdict(set))  # key without n -> full key -> clusters
            for c, u in items:
                if any(k == n for k, _ in parts(u)[2]):
                    bucket[key(u, frozenset([n]))][key(u)].add(c)
            for full in bucket.values():
                if any(c1 != c2 for (k1, s1), (k2, s2) in combinations(full.items(), 2)
                       for c1 in s1 for c2 in s2):
                    vetoes[n].add(site)
                    break
    dropped = {n for n, s in votes.items() if len(s) >= min_sites and n not in vetoes}
    return dropped, votes, vetoes, basics


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train")
    ap.add_argument("test")
    ap.add_argument("--min-sites", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args()
    train, test = read(a.train), read(a.test)
    dropped, votes, vetoes, basics = learn(train, a.min_sites)
    if a.show:
        for n in sorted(votes, key=lambda n: (-len(votes[n]), n)):
            state = "DROP" if n in dropped else ("veto" if n in vetoes else "keep")
            print(f"{state:4} {n!r}: {len(votes[n])} site(s); vetoed on {len(vetoes[n])}",
                  file=sys.stderr)
        print("basics seen: " + ", ".join(f"{k} {len(v)} site(s)" for k, v in basics.items()),
              file=sys.stderr)
    out = []
    for name, drop in (("basics", frozenset()), ("name-pooler", frozenset(dropped))):
        n, k, b, red, lost = metrics([(key(u, drop), c) for c, u in test])
        out.append(dict(method=name, urls=n, clusters=k, buckets=b, reduction=round(red, 6),
                        lost=round(lost, 6), dropped=sorted(drop)))
    if a.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{'method':<12} {'urls':>7} {'clusters':>8} {'buckets':>7} {'reduction':>9} {'lost':>7}")
    for r in out:
        print(f"{r['method']:<12} {r['urls']:>7} {r['clusters']:>8} {r['buckets']:>7} "
              f"{r['reduction']:>9.3f} {r['lost']:>7.4f}")
    print(f"dropped names: {', '.join(sorted(dropped)) or '(none)'}")


if __name__ == "__main__":
    main()
