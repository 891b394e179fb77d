#!/usr/bin/env python3
"""URLs per second from Python: dedust's `normalize` per call and `normalize_many` on a list,
beside `w3lib.url.canonicalize_url` (Scrapy's canonicalizer) on the same URLs.

Usage (after `pip install ./python w3lib`):
    python3 benches/python_normalize.py [--rounds N] [URL_FILE] [RULES...]
Defaults: ../shared/datasets/urls/page-links.txt, rules/demo.json, 10 rounds. Each round times
every method over the whole list, in a shuffled order, so a slow spell of a shared machine falls
on all methods alike; dedust's methods go over the list as many times as it takes them to run
about as long as w3lib's one pass (a short timing would catch a quiet moment that a long one
averages out). The table gives each method's best and median round, and the ratio to w3lib's
best and median round.
"""
import os
import random
import statistics
import sys
import time

import dedust

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
args = sys.argv[1:]
rounds = 10
if args[:1] == ["--rounds"]:
    rounds = int(args[1])
    args = args[2:]
path = args[0] if args else os.path.join(root, "..", "shared", "datasets", "urls", "page-links.txt")
rules = args[1:] or [os.path.join(root, "rules", "demo.json")]
with open(path, "rb") as f:
    urls = [l.decode("utf-8", "replace").rstrip("\r") for l in f.read().split(b"\n") if l]
n = dedust.Normalizer.from_file(rules)


def per_call():
    f = n.normalize
    for u in urls:
        f(u)


def batch():
    n.normalize_many(urls)


methods = [("dedust normalize (per call)", per_call), ("dedust normalize_many (batch)", batch)]
try:
    from w3lib.url import canonicalize_url

    def w3():
        for u in urls:
            try:
                canonicalize_url(u)
            except Exception:
                pass

    methods.append(("w3lib canonicalize_url (per call)", w3))
except ImportError:
    print("SKIP w3lib: pip install w3lib", file=sys.stderr)



def timed(fn, reps=1):
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


# Passes per timing: enough for about a second, w3lib's time for one pass over page-links.
reps = {name: max(1, round(1.0 / timed(fn))) for name, fn in methods}
times = {name: [] for name, _ in methods}
for _ in range(rounds):
    order = methods[:]
    random.shuffle(order)
    for name, fn in order:
        times[name].append(timed(fn, reps[name]))

rate = {name: (len(urls) / min(t), len(urls) / statistics.median(t)) for name, t in times.items()}
print(f"{len(urls)} URLs from {os.path.basename(path)}, rules {', '.join(map(os.path.basename, rules))}, "
      f"{os.cpu_count()} cores, {rounds} rounds")
print("| method | URLs/s, best round | × w3lib | URLs/s, median round | × w3lib |")
print("|---|---|---|---|---|")
w = rate.get(methods[-1][0]) if len(methods) == 3 else None
for name, (best, med) in rate.items():
    print(f"| {name} | {best:,.0f} | {f'{best / w[0]:.1f}×' if w else 'n/a'} "
          f"| {med:,.0f} | {f'{med / w[1]:.1f}×' if w else 'n/a'} |")
