#!/usr/bin/env python3
"""Generate crates/dedust-content/data/wordnet-synonyms.tsv.gz: each English word that has a strictly shorter
WordNet synonym, mapped to its shortest one (ties: alphabetical), for the content verifier's word
mapping (src/tdw.rs embeds the table).

Input: WordNet 3.0's data.{noun,verb,adj,adv} as Debian's `wordnet-base` package installs them
(/usr/share/wordnet). Only single lower-case alphabetic words are kept (no collocations, no
proper nouns). Output: gzip'd `word<TAB>synonym` lines, sorted, deterministic (gzip mtime 0).

Usage: apt-get install wordnet-base && scripts/wordnet_synonyms.py [WORDNET_DIR] [OUT]
WordNet 3.0 license (Princeton, BSD-like) permits redistribution with its notice: see
datasets/README.md.
"""
import collections
import gzip
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(__file__), "..", "crates", "dedust-content", "data", "wordnet-synonyms.tsv.gz"
)
word_re = re.compile(r"^[a-z]+$")
synonyms = collections.defaultdict(set)
synsets = 0
for pos in ("noun", "verb", "adj", "adv"):
    with open(os.path.join(src, f"data.{pos}"), encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue  # license header
            fields = line.split()
            n = int(fields[3], 16)
            words = []
            for i in range(n):
                w = re.sub(r"\(.*\)$", "", fields[4 + 2 * i])  # adjective markers like (a)
                if word_re.match(w):
                    words.append(w)
            synsets += 1
            for w in words:
                synonyms[w].update(words)
mapping = {}
for w, syns in synonyms.items():
    best = min(syns, key=lambda s: (len(s), s))
    if len(best) < len(w):
        mapping[w] = best
data = "".join(f"{w}\t{mapping[w]}\n" for w in sorted(mapping)).encode("utf-8")
with open(out, "wb") as raw:
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
print(f"{synsets} synsets, {len(synonyms)} words, {len(mapping)} mapped -> {out}", file=sys.stderr)
