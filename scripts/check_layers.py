#!/usr/bin/env python3
"""The engine crate (`crates/dedust-core`, issue 16) imports no crate it must not depend on:
`cargo tree -p dedust-core -e normal` lists none of the forbidden crates, and no engine source
names one (the crate boundary already keeps learning, content and interop modules out).
Fails (exit 1) naming each offence.

Engine: model, moves, url_parts, key_index, base, normalize, javaregex, render, rulefile, judge, tier, merge, site, stream, trust,
hash, error. Checked: `crate::MODULE` paths and `use crate::{…}` groups in each engine file's code
(doc comments and `#[cfg(test)] mod tests` left out: doctests and tests may use the whole crate),
external crate paths against the forbidden ones, every `.rs` file of the crate (a new module must
be added to the list), and the crate's direct dependencies against an allowlist.
The other library crates depend on their allowed siblings only (`cargo metadata`: normal and
build dependencies; dev-dependencies too, so no test pulls a sibling in), no library crate
depends on a binary-only crate (clap, anyhow, indicatif, mimalloc), and no crate's code names a
sibling it may not use (`dedust_learn::` in `dedust-content`…).
Usage: python3 scripts/check_layers.py   (from the repository root)
"""
import glob
import os
import re
import subprocess
import sys

CORE = {"model", "url_parts", "key_index", "base", "normalize", "javaregex", "render", "rulefile", "judge",
        "tier", "merge", "site", "hash", "error", "stream", "trust", "moves"}
FORBIDDEN = {"rayon", "petgraph", "clap", "anyhow", "indicatif", "html5gum", "roxmltree", "flate2",
             "rust_stemmers", "mimalloc"}

ALLOWED_DIRECT = {"url", "serde", "serde_json", "memchr", "psl", "fancy-regex", "regex"}
files = sorted(glob.glob("crates/dedust-core/src/**/*.rs", recursive=True))
found = {os.path.basename(f)[:-3] for f in files} - {"lib"}
bad = [f"crates/dedust-core/src/{m}.rs: not in this script's engine list (add it)"
       for m in sorted(found - CORE)]
for path in files:
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
    names = set(re.findall(r"\b([a-z_][a-z0-9_]*)::", code))
    names |= set(re.findall(r"extern crate ([a-z_][a-z0-9_]*)", code))
    for ext in sorted(names):
        if ext in FORBIDDEN:
            bad.append(f"{path}: uses {ext} (the engine must not depend on it)")
tree = subprocess.run(["cargo", "tree", "-p", "dedust-core", "-e", "normal", "--prefix", "none"],
                      capture_output=True, text=True, check=True).stdout
direct = subprocess.run(["cargo", "tree", "-p", "dedust-core", "-e", "normal", "--depth", "1",
                         "--prefix", "none"], capture_output=True, text=True, check=True).stdout
for line in direct.splitlines()[1:]:
    name = line.split(" ")[0]
    if name and name not in ALLOWED_DIRECT:
        bad.append(f"dedust-core: new direct dependency {name} (README lists the allowed ones)")
for line in tree.splitlines():
    name = line.split(" ")[0].replace("-", "_")
    if name in FORBIDDEN or name == "dedust":
        bad.append(f"cargo tree -p dedust-core: depends on {line.split(' (')[0]}")
# The crates by role: each library crate may use only these workspace siblings.
SIBLINGS = {
    "dedust-core": set(),
    "dedust-io": {"dedust-core"},
    "dedust-content": {"dedust-core", "dedust-io"},
    "dedust-interop": {"dedust-core"},
    "dedust-learn": {"dedust-core", "dedust-io"},
    # The Python extension module (python/): the engine, and the learner for `dedust.learn`.
    "dedust-python": {"dedust-core", "dedust-learn"},
}
BINARY_ONLY = {"clap", "anyhow", "indicatif", "mimalloc"}
import json
meta = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                                 capture_output=True, text=True, check=True).stdout)
workspace = {p["name"] for p in meta["packages"]}
missing = set(SIBLINGS) - workspace
bad += [f"{m}: listed in this script but not in the workspace" for m in sorted(missing)]
for pkg in meta["packages"]:
    name = pkg["name"]
    if name == "dedust":
        continue
    if name not in SIBLINGS:
        bad.append(f"{name}: a workspace crate this script does not know (add it to SIBLINGS)")
        continue
    for dep in pkg["dependencies"]:
        d = dep["name"]
        if d in workspace and d not in SIBLINGS[name]:
            bad.append(f"{name}: depends on {d} ({dep['kind'] or 'normal'}); allowed: "
                       f"{', '.join(sorted(SIBLINGS[name])) or 'none'}")
        if d in BINARY_ONLY and dep["kind"] is None:
            bad.append(f"{name}: depends on {d}, which only the binary may use")
    src = os.path.join(os.path.dirname(pkg["manifest_path"]), "src")
    for path in sorted(glob.glob(f"{src}/**/*.rs", recursive=True)):
        code = "\n".join(l for l in open(path, encoding="utf-8").read().split("\n")
                         if not l.lstrip().startswith("//"))
        for other in sorted(workspace - SIBLINGS[name] - {name}):
            if re.search(rf"\b{other.replace('-', '_')}::", code):
                bad.append(f"{os.path.relpath(path)}: names {other.replace('-', '_')}")
for b in bad:
    print(b)
print(f"check_layers: {len(files)} engine files, {len(meta['packages'])} crates, {len(bad)} offences")
sys.exit(1 if bad else 0)
