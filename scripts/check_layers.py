#!/usr/bin/env python3
"""The engine crate (`crates/dedust-core`, issue 16) imports no crate it must not depend on:
`cargo tree -p dedust-core -e normal` lists none of the forbidden crates, and no engine source
names one (the crate boundary already keeps learning, content and interop modules out).
Fails (exit 1) naming each offence.

Engine: model, url_parts, base, normalize, javaregex, render, rulefile, judge, tier, merge, site, stream,
hash, error. Checked: `crate::MODULE` paths and `use crate::{…}` groups in each engine file's code
(doc comments and `#[cfg(test)] mod tests` left out: doctests and tests may use the whole crate),
and external crate paths against the engine's allowed dependencies.
Usage: python3 scripts/check_layers.py   (from the repository root)
"""
import re
import sys

CORE = {"model", "url_parts", "base", "normalize", "javaregex", "render", "rulefile", "judge",
        "tier", "merge", "site", "hash", "error", "stream"}
FORBIDDEN = {"rayon", "petgraph", "clap", "anyhow", "indicatif", "html5gum", "roxmltree", "flate2",
             "rust_stemmers", "mimalloc"}

bad = []
for m in sorted(CORE):
    path = f"crates/dedust-core/src/{m}.rs"
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]\nmod tests")
    body = text if cut < 0 else text[:cut]
    code = "\n".join(l for l in body.split("\n") if not l.lstrip().startswith("//"))
    refs = set(re.findall(r"crate::([a-z_]+)", code))
    for group in re.findall(r"use crate::\{([^}]*)\}", code, re.S):
        refs |= {x.strip().split("::")[0] for x in group.split(",") if x.strip()}
    for r in sorted(refs):
        if r and r[0].islower() and r not in CORE:
            bad.append(f"{path}: imports crate::{r} (not an engine module)")
    for ext in sorted(set(re.findall(r"\b([a-z_][a-z0-9_]*)::", code))):
        if ext in FORBIDDEN:
            bad.append(f"{path}: uses {ext} (the engine must not depend on it)")
import subprocess
tree = subprocess.run(["cargo", "tree", "-p", "dedust-core", "-e", "normal", "--prefix", "none"],
                      capture_output=True, text=True, check=True).stdout
for line in tree.splitlines():
    name = line.split(" ")[0].replace("-", "_")
    if name in FORBIDDEN or name == "dedust":
        bad.append(f"cargo tree -p dedust-core: depends on {line.split(' (')[0]}")
for b in bad:
    print(b)
print(f"check_layers: {len(CORE)} engine modules, {len(bad)} offending imports")
sys.exit(1 if bad else 0)
