#!/usr/bin/env python3
"""URLs per second from Python: dedust's `normalize` per call and `normalize_many` on a list,
beside `w3lib.url.canonicalize_url` (Scrapy's canonicalizer) on the same URLs.

Usage (after `pip install ./python w3lib`):
    python3 benches/python_normalize.py [URL_FILE] [RULES...]
Defaults: ../shared/datasets/urls/page-links.txt and rules/demo.json. Best of 3 runs each.
"""
import os
import sys
import time

import dedust

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "datasets", "urls", "page-links.txt")
rules = sys.argv[2:] or [os.path.join(root, "rules", "demo.json")]
with open(path, "rb") as f:
    urls = [l.decode("utf-8", "replace").rstrip("\r") for l in f.read().split(b"\n") if l]
n = dedust.Normalizer.from_file(rules)


def best(fn):
    t = min(_timed(fn) for _ in range(3))
    return len(urls) / t


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


rows = [
    ("dedust normalize (per call)", best(lambda: [n.normalize(u) for u in urls])),
    ("dedust normalize_many (batch)", best(lambda: n.normalize_many(urls))),
]
try:
    from w3lib.url import canonicalize_url

    def w3():
        for u in urls:
            try:
                canonicalize_url(u)
            except Exception:
                pass

    rows.append(("w3lib canonicalize_url (per call)", best(w3)))
except ImportError:
    print("SKIP w3lib: pip install w3lib", file=sys.stderr)
print(f"{len(urls)} URLs from {os.path.basename(path)}, rules {', '.join(map(os.path.basename, rules))}, "
      f"{os.cpu_count()} cores")
print("| method | URLs/s | × w3lib |")
print("|---|---|---|")
w = rows[-1][1] if len(rows) == 3 else None
for name, r in rows:
    print(f"| {name} | {r:,.0f} | {f'{r / w:.1f}×' if w else 'n/a'} |")
