#!/usr/bin/env python3
"""Held-out URLs in the other scheme: do a site's rules still reach them? (README, "Generalization").

A frontier links a site over both schemes: old links say `http://`, new ones `https://`, while
the training crawl saw one. This script takes a held-out half written by `dedust evaluate
--save DIR` and spells a share of its URLs in the other scheme (the same page: the cluster
labels stay), learns on DIR/train.tsv with the given binary and prints reduction / lost of the
rules' keys on the re-spelled half, with the metric of `src/metrics.rs` (as
`generic_baselines.py` computes it).

Usage: scripts/scheme_flip.py DEDUST DIR [SHARE] [SEED]   (SHARE of URLs re-spelled, default 0.5)
"""
import random
import subprocess
import sys
from pathlib import Path

from generic_baselines import metrics

dedust, d = sys.argv[1], Path(sys.argv[2])
share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)


def flip(u):
    if u.startswith("https://"):
        return "http://" + u[8:]
    if u.startswith("http://"):
        return "https://" + u[7:]
    return u


rows = [l.split("\t") for l in (d / "test.tsv").read_text().splitlines()[1:]]
rows = [(c, flip(u) if rng.random() < share else u) for c, u in rows]
rules = subprocess.run([dedust, "learn", "-q", str(d / "train.tsv")], check=True,
                       capture_output=True, text=True).stdout
rules_file = d / "flip-rules.json"
rules_file.write_text(rules)
keys = subprocess.run([dedust, "normalize", "-q", "-r", str(rules_file)], check=True,
                      input="\n".join(u for _, u in rows) + "\n", capture_output=True,
                      text=True).stdout.splitlines()
_, _, _, reduction, lost = metrics([(k, c) for (c, _), k in zip(rows, keys)])
print(f"{reduction:.3f} / {lost:.4f}")
