#!/usr/bin/env python3
"""How generic URL canonicalizers do on ground-truth clusters, with dedust's metrics.

In:  a TSV file with header `cluster<TAB>url`, one URL per line with its true content
     cluster (e.g. the `test.tsv` written by `dedust evaluate --save DIR`). A URL repeated
     within one cluster counts once (as dedust's reader does).
Out: one row per canonicalizer: method, urls, clusters, buckets, reduction, lost
     (an aligned table, or a JSON list of rows with --json).

Usage:   python3 scripts/generic_baselines.py CLUSTERS.tsv [--json]
Needs:   python3 -m pip install --quiet surt courlan w3lib
         (a package that cannot be imported is reported on stderr and its row skipped).

Each canonicalizer maps a URL to a key; URLs with one key form one bucket:
  none            the URL as is
  surt            surt.surt(url), defaults (the web-archive dedup key)
  courlan         courlan.normalize_url(url)
  courlan-strict  courlan.normalize_url(url, strict=True)
  courlan-clean   courlan.clean_url(url) (None -> the URL itself)
  w3lib           w3lib.url.canonicalize_url(url)
A URL on which a canonicalizer raises keeps itself as its key (counted on stderr).

Metrics (as src/metrics.rs): per bucket b with its majority true cluster t*,
  reduction = sum_b (n_b,t* - 1) / (|URLs| - |true clusters|)   (1.0 if that is 0)
  lost      = sum_b (n_b - n_b,t*) / |URLs|
"""
import csv
import inspect
import json
import sys
import time
from collections import Counter, defaultdict


def canonicalizers():
    out = [("none", lambda u: u)]
    try:
        import surt
        out.append(("surt", surt.surt))
    except ImportError as e:
        print(f"notice: surt not importable ({e}); row skipped", file=sys.stderr)
    try:
        import courlan
        out.append(("courlan", courlan.normalize_url))
        if "strict" in inspect.signature(courlan.normalize_url).parameters:
            out.append(("courlan-strict", lambda u: courlan.normalize_url(u, strict=True)))
        out.append(("courlan-clean", lambda u: courlan.clean_url(u) or u))
    except ImportError as e:
        print(f"notice: courlan not importable ({e}); rows skipped", file=sys.stderr)
    try:
        from w3lib.url import canonicalize_url
        out.append(("w3lib", canonicalize_url))
    except ImportError as e:
        print(f"notice: w3lib not importable ({e}); row skipped", file=sys.stderr)
    return out


def metrics(items):
    """items: (bucket key, true cluster) pairs -> (urls, clusters, buckets, reduction, lost)."""
    buckets = defaultdict(Counter)
    for key, c in items:
        buckets[key][c] += 1
    n, nclusters = len(items), len({c for _, c in items})
    red = lost = 0
    for counts in buckets.values():
        # majority cluster; ties -> smaller cluster id (does not change the numbers)
        _, top = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        red += top - 1
        lost += sum(counts.values()) - top
    removable = n - nclusters
    return (n, nclusters, len(buckets),
            red / removable if removable else 1.0, lost / n if n else 0.0)


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 1:
        sys.exit("usage: generic_baselines.py CLUSTERS.tsv [--json]")
    with open(args[0], newline="", encoding="utf-8") as f:
        rows = [(r["cluster"], r["url"]) for r in csv.DictReader(f, delimiter="\t")]
    rows = list(dict.fromkeys(rows))  # repeated URL in one cluster counts once, as dedust reads it
    out = []
    for name, canon in canonicalizers():
        t0, errors, items = time.perf_counter(), 0, []
        for cluster, url in rows:
            try:
                key = canon(url)
            except Exception:
                key, errors = url, errors + 1
            items.append((key, cluster))
        n, k, b, red, lost = metrics(items)
        secs = time.perf_counter() - t0
        if errors:
            print(f"notice: {name}: {errors} URL(s) raised; kept as their own key", file=sys.stderr)
        out.append(dict(method=name, urls=n, clusters=k, buckets=b,
                        reduction=round(red, 6), lost=round(lost, 6), seconds=round(secs, 3)))
    if "--json" in sys.argv[1:]:
        print(json.dumps(out, indent=1))
        return
    print(f"{'method':<15} {'urls':>7} {'clusters':>8} {'buckets':>7} {'reduction':>9} {'lost':>7}")
    for r in out:
        print(f"{r['method']:<15} {r['urls']:>7} {r['clusters']:>8} {r['buckets']:>7} "
              f"{r['reduction']:>9.3f} {r['lost']:>7.4f}")


if __name__ == "__main__":
    main()
