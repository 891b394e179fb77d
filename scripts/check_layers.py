#!/usr/bin/env python3
"""The engine modules (the future `dedust-core` crate, issue 16) import no module outside the
engine, and no crate the engine must not depend on. Fails (exit 1) naming each offending import.

Engine: model, url_parts, base, normalize, javaregex, render, rulefile, judge, tier, merge, site,
hash, error. Checked: `crate::MODULE` paths and `use crate::{…}` groups in each engine file's code
(doc comments and `#[cfg(test)] mod tests` left out: doctests and tests may use the whole crate),
and external crate paths against the engine's allowed dependencies.
Usage: python3 scripts/check_layers.py   (from the repository root)
"""
import re
import sys

CORE = {"model", "url_parts", "base", "normalize", "javaregex", "render", "rulefile", "judge",
        "tier", "merge", "site", "hash", "error"}
FORBIDDEN = {"rayon", "petgraph", "clap", "anyhow", "indicatif", "html5gum", "roxmltree", "flate2",
             "rust_stemmers"}

bad = []
for m in sorted(CORE):
    path = f"src/{m}.rs"
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
for b in bad:
    print(b)
print(f"check_layers: {len(CORE)} engine modules, {len(bad)} offending imports")
sys.exit(1 if bad else 0)
