#!/usr/bin/env python3
"""Duplicate clusters shaped like a web archive's payload-digest groups of static files.

A crawl that fetches page requisites (an archive's crawl) holds the same stylesheet, script or
image under several query strings: cache busters (`style.css?ver=4.9.13`, `logo.png?v=1578…`)
and players' parameters (`players.js?mediatype=audio`), which a plain file server ignores. Each
site shows one or two such pairs, so only evidence pooled across sites can name the mechanism
for a site never seen. This script builds a stand-in from real URLs nobody on the team wrote
(`../shared/datasets/urls/page-links.txt`: real static-file paths of real sites, many with real
cache-buster queries): up to 600 hosts with up to three static files each. A file given with a
query keeps it and gets its bare form as a duplicate; a bare file gets a cache buster on half of
the sites. The site's other real links stay alone (pages with content parameters a rule must
not merge). One site in ten serves images through a resizer (`img.jpg?w=200` and `?w=400`: two
different files, kept apart), the trap the mechanism has.

The mechanism and its share are this script's choice, so the set measures whether one or two
pairs per site add up across sites, not how often archives meet it. Writes `cluster<TAB>url`.

Usage: scripts/archive_shaped.py [SEED] > clusters.tsv
Then:  dedust evaluate --truth clusters.tsv --split host --test-fraction 0.5 --seed S
"""
import random
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SOURCE = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "urls" / "page-links.txt"
SITES = 600
STATIC = re.compile(r"\.(css|js|gif|jpe?g|png|ico|svg|webp|woff2?|ttf|swf)$")


def buster(rng):
    return rng.choice([
        lambda: "ver=" + rng.choice(["4.9.13", "5.8.1", "1.5.7", "3.0.0", "6.2"]),
        lambda: "v=" + str(rng.randint(10**9, 2 * 10**9)),
        lambda: "v=" + str(rng.randint(1, 40)),
        lambda: format(rng.getrandbits(32), "x"),
    ])()


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    if not SOURCE.exists():
        sys.exit(f"SKIP: {SOURCE} not found")
    rng = random.Random(seed)
    files, pages = {}, {}
    for line in SOURCE.read_text(errors="replace").splitlines():
        u = line.strip()
        try:
            s = urlsplit(u)
            host = s.hostname
        except ValueError:
            continue
        if s.scheme not in ("http", "https") or not host or s.fragment or " " in u:
            continue
        if STATIC.search(s.path):
            files.setdefault(host, set()).add(u)
        else:
            pages.setdefault(host, set()).add(u)
    hosts = sorted(files)
    rng.shuffle(hosts)
    out = ["cluster\turl"]
    c = 0

    def cluster(*urls):
        nonlocal c
        c += 1
        out.extend(f"c{c}\t{u}" for u in urls)

    for h in hosts[:SITES]:
        mine = sorted(files[h])
        rng.shuffle(mine)
        busted = rng.random() < 0.5
        resizer = rng.random() < 0.1
        seen = set()
        for u in mine[:3]:
            s = urlsplit(u)
            bare = urlunsplit((s.scheme, s.netloc, s.path, "", ""))
            if bare in seen:
                continue
            seen.add(bare)
            if resizer and re.search(r"\.(jpe?g|png|webp)$", s.path):
                cluster(bare + "?w=200")
                cluster(bare + "?w=400")
            elif s.query:
                cluster(u, bare)
            elif busted:
                cluster(bare, bare + "?" + buster(rng))
            else:
                cluster(bare)
        others = sorted(pages.get(h, ()))
        rng.shuffle(others)
        for u in others[:3]:
            cluster(u)
    print("\n".join(out))


if __name__ == "__main__":
    main()
