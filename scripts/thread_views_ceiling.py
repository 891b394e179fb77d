#!/usr/bin/env python3
"""Ceiling of parameter-drop rule sets on the forum's thread views (README, "Generalization").

Applies hand-written drop sets to the held-out half of each seed (as `dedust evaluate --save`
writes it) and prints reduction / lost with the metric of `src/metrics.rs`. It answers "what is
the best an honest learner can reach here": which value drops are right on held-out URLs, and how
much they are worth, independent of what `learn` finds in the training half.

Usage: scripts/thread_views_ceiling.py [FORUM_CLUSTERS_TSV]   (needs target/release/dedust)
"""
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

forum = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/datasets/ubuntuforums/clusters.tsv")
if not forum.exists():
    sys.exit(f"SKIP: {forum} not found")
dedust = Path("target/release/dedust")


def metrics(items):
    buckets, clusters = defaultdict(Counter), set()
    for key, c in items:
        buckets[key][c] += 1
        clusters.add(c)
    red = lost = 0
    for cnt in buckets.values():
        top = max(cnt.values())
        red += top - 1
        lost += sum(cnt.values()) - top
    removable = len(items) - len(clusters)
    return (red / removable if removable else 1.0), lost / len(items)


def drop(url, pattern):
    base, _, query = url.partition("?")
    kept = sorted(p for p in query.split("&") if p and not re.fullmatch(pattern, p))
    return base + ("?" + "&".join(kept) if kept else "")


SETS = {
    "nothing": r"(?!)",
    "mode=hybrid": r"mode=hybrid",
    "mode (both values)": r"mode=.*",
    "mode=hybrid, highlight=": r"mode=hybrid|highlight=",
    "mode=hybrid, page": r"mode=hybrid|page=.*",
    "p (a trap)": r"p=.*",
}
with tempfile.TemporaryDirectory() as tmp:
    lines = forum.read_text().splitlines()
    threads = Path(tmp, "threads.tsv")
    threads.write_text("\n".join([lines[0]] + [l for l in lines[1:] if "showthread.php" in l]) + "\n")
    halves = []
    for seed in range(1, 6):
        out = Path(tmp, f"s{seed}")
        subprocess.run([str(dedust), "evaluate", "--truth", str(threads), "--split", "url",
                        "--test-fraction", "0.5", "--seed", str(seed), "--save", str(out)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = [l.split("\t") for l in (out / "test.tsv").read_text().splitlines()[1:]]
        halves.append([(c, u) for c, u in rows])
    print("| drop set (held-out half) | seed 1 | seed 2 | seed 3 | seed 4 | seed 5 | mean / worst lost |")
    print("|---|---|---|---|---|---|---|")
    for name, pattern in SETS.items():
        cells = [metrics([(drop(u, pattern), c) for c, u in half]) for half in halves]
        mean = sum(r for r, _ in cells) / len(cells)
        worst = max(l for _, l in cells)
        print(f"| {name} | " + " | ".join(f"{r:.3f} / {l:.4f}" for r, l in cells)
              + f" | {mean:.3f} / {worst:.4f} |")
