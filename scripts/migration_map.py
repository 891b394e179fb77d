#!/usr/bin/env python3
"""Build a real redirect-map truth set (old URL -> new URL, 301) from a public site's nginx map.

In:   the bare git mirror of gwern/gwern.net as the search tool's `fetch` lays it out
      (`MIRRORS/gwern+gwern.net/repo`, default MIRRORS = /work/.mirror); the two files of the
      site's one redirect map (`map $request_uri $new_uri { include move.conf; include
      broken.conf; }` in nginx/gwern.net.conf, answered with `rewrite ... permanent`, i.e. 301)
      are read at the pinned COMMIT with `git show` (nothing is copied into this repository).
Out:  OUT/migration.tsv (default OUT = ../real-corpus/ from the repository root, i.e. outside it):
      header `cluster<TAB>url`, one cluster per final new URL holding that URL and every old URL
      the map sends to it (through chains), every URL once; OUT/migration.pairs.tsv (old, final
      new, file of the old URL's key, hops); OUT/migration.sources.txt (provenance: repo, commit,
      files, licence, and every count below). Prints the counts.
What: move.conf holds the site's moves (repository split, image/document renaming, directory
      renames such as /docs/ -> /doc/, /doc/X/index.html -> /doc/X/index); broken.conf maps
      mangled or dead incoming URLs (typos, encoding garbage, old feeds, bot probes) to the page
      meant, or to /404#N (gone). Keys are nginx regexes; a key is used when it names one URL:
        literal  `~^/a/b.html$`: the URL /a/b.html (an unescaped `.` taken as itself, `\\x` as x)
        prefix   `~^/a/b.pdf.*$` (or `~^/a/b` unanchored at the end): its bare prefix /a/b.pdf,
                 the one URL every such key surely matches;
      any other metacharacter (`* + ? ( ) [ ] { } |`) makes the key a real regex: skipped.
      Each URL so named is then answered as nginx would: the map's regexes in file order (move.conf
      first), first match wins (an earlier key may shadow the URL's own one: counted), `$u`
      captures substituted; the client follows the 301, so the answer is looked up again until no
      key matches (chains; at most MAX_HOPS). Skipped and counted: keys naming no usable URL
      (non-ASCII, whitespace, `/x?` = any query), URLs ending at /404 (gone: the site's 410),
      at another site (substack, ncbi, google, ...), in a loop, or at themselves. A fragment in
      a target is dropped (one page; counted), stray blanks around a target are stripped.
      Old URLs are https://gwern.net + the request URI as written; targets are resolved
      against https://gwern.net/ (a www.gwern.net target is kept and not looked up again).
Needs: python3 (3.11, stdlib), git.

Usage: python3 scripts/migration_map.py [--mirrors DIR] [--out DIR]
Mirror needed: gwern/gwern.net (fetch github:gwern/gwern.net); COMMIT must be in it.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent

REPO = "gwern/gwern.net"
COMMIT = "cdd6bf5795394ff3113dc40e73bb9ac651dd46a0"  # HEAD of the mirror, 2026-06-29
FILES = ["nginx/redirect/move.conf", "nginx/redirect/broken.conf"]  # include order of the map
CONF = "nginx/gwern.net.conf"  # where the map and its `rewrite ... permanent` are declared
LICENCE_FILE = "build/LICENSE"
BASE = "https://gwern.net/"
ORIGIN = BASE.rstrip("/")
SITE_HOSTS = {"gwern.net", "www.gwern.net"}
MAX_HOPS = 10

ENTRY = re.compile(r'"((?:[^"\\]|\\.)*)"\s+"((?:[^"\\]|\\.)*)"\s*;')  # nginx: several a line
META = re.compile(r"[*+?()\[\]{}|^$]")


def unquote(s):
    """Undo nginx's escapes in a quoted string (backslash before a backslash or a quote)."""
    return re.sub(r"""\\([\\"'])""", r"\1", s)


def git_show(gitdir, path):
    p = subprocess.run(["git", "--git-dir", str(gitdir), "show", f"{COMMIT}:{path}"],
                       capture_output=True)
    if p.returncode != 0:
        sys.exit(f"error: {REPO} mirror lacks {COMMIT}:{path} ({p.stderr.decode().strip()})")
    return p.stdout.decode("utf-8", "replace")


def licence(gitdir):
    head = " ".join(git_show(gitdir, LICENCE_FILE).split()[:8])
    return f"CC0-1.0 ({LICENCE_FILE})" if "CC0" in head else f"see {LICENCE_FILE}"


def named_url(key):
    """-> (kind, path): the one URL an nginx map key names, or (kind, None)."""
    if not key.startswith("~"):
        return "exact", key
    body = key[1:].lstrip("*")
    if not body.startswith("^"):
        return "regex", None
    body = body[1:]
    if body.endswith(".*$"):
        inner, kind = body[:-3], "prefix"
    elif body.endswith("$") and not body.endswith("\\$"):
        inner, kind = body[:-1], "literal"
    else:
        inner, kind = body, "prefix"
    if META.search(re.sub(r"\\.", "", inner)):
        return "regex", None
    return kind, re.sub(r"\\(.)", r"\1", inner)


class NginxMap:
    """The map's regexes in order; `answer(uri)` is what nginx sets $new_uri to ("" for none)."""

    def __init__(self, entries):
        self.rx, self.bad = [], 0
        for n, (key, target) in enumerate(entries):
            if not key.startswith("~"):
                continue  # only `default ""` here; no exact keys in these files
            flags = re.I if key.startswith("~*") else 0
            src = key[2:] if flags else key[1:]
            src = re.sub(r"\(\?<([A-Za-z_]\w*)>", r"(?P<\1>", src)  # PCRE named group
            try:
                rx = re.compile(src, flags)
            except re.error:
                self.bad += 1  # not Python-compilable: this key never answers here
                continue
            m = re.match(r"\^((?:[^\\.*+?()\[\]{}|^$]|\\.)*)", src)
            lead = re.sub(r"\\(.)", r"\1", m.group(1)) if (m and not flags) else ""
            self.rx.append((n, lead, rx, target))
        self.by_lead = defaultdict(list)  # a regex can only match URIs starting with its lead
        for r in self.rx:
            self.by_lead[r[1]].append(r)

    def answer(self, uri):
        cands = [r for i in range(len(uri) + 1) for r in self.by_lead.get(uri[:i], ())]
        for n, _, rx, target in sorted(cands, key=lambda r: r[0]):
            m = rx.search(uri)
            if m:
                out = re.sub(r"\$\{?(\w+)\}?",
                             lambda g: m.group(int(g.group(1)) if g.group(1).isdigit()
                                               else g.group(1)) or "", target)
                return n, out, out != target
        return None, "", False


def to_url(target):
    """Target as an absolute URL without fragment -> (url, had_fragment, was_relative_no_slash)."""
    frag = "#" in target
    target = target.split("#", 1)[0]
    rel = not re.match(r"^(https?:)?//|^/", target)
    url = urljoin(BASE, target if not rel else "/" + target)
    return url, frag, rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", default=os.environ.get("MIRRORS", "/work/.mirror"))
    ap.add_argument("--out", default=str(ROOT.parent / "real-corpus"))
    a = ap.parse_args()
    out = Path(a.out)
    if out.resolve().is_relative_to(ROOT):
        sys.exit(f"error: --out {out} is inside the repository; data stays outside it")
    base = Path(a.mirrors) / REPO.replace("/", "+") / "repo"
    gitdir = next((c for c in (base, base / ".git") if (c / "objects").exists()), None)
    if gitdir is None:
        sys.exit(f"error: no mirror of {REPO} under {a.mirrors} (fetch github:{REPO})")
    conf = git_show(gitdir, CONF)
    if not all(f"redirect/{Path(f).name}" in conf for f in FILES) or "permanent" not in conf:
        print(f"notice: {CONF} no longer includes {FILES} as a permanent map", file=sys.stderr)

    entries, named, counts = [], [], defaultdict(Counter)

    def add_entry(f, key, target):
        idx = len(entries)
        entries.append((key, target))
        counts[f]["entries"] += 1
        kind, path = named_url(key)
        if path is None:
            counts[f]["skip: regex key (names no one URL)"] += 1
            return
        counts[f][f"key: {kind}"] += 1
        if (not path.startswith("/") or re.search(r"[\s\x00-\x1f\x7f\"<>\\^`{|}#]", path)
                or not path.isascii()):
            counts[f]["skip: key's URL not a plain ASCII request URI"] += 1
            return
        if path.endswith("?"):  # `^/x\?.*$`: any query string on /x, a wildcard
            counts[f]["skip: any-query key (`/x\\?.*`)"] += 1
            return
        named.append((f, idx, path))

    for f in FILES:
        for line in git_show(gitdir, f).splitlines():
            s = line.strip()
            if not s or s.startswith("#") or s.startswith("default "):
                continue
            found = list(ENTRY.finditer(s))
            if not found or ENTRY.sub("", s).strip().split("#")[0].strip():
                counts[f]["unparsed line (e.g. an entry broken over two lines)"] += 1
                continue
            for m in found:
                add_entry(f, unquote(m.group(1)), unquote(m.group(2)))

    nmap = NginxMap(entries)
    final_of, source_of, seen = {}, {}, set()
    for f, idx, path in named:
        c = counts[f]
        if path in seen:
            c["skip: URL named by an earlier key too"] += 1
            continue
        seen.add(path)
        uri, hops, visited, why = path, 0, {path}, None
        url = old = ORIGIN + path  # the request URI as sent (urljoin would re-read `//host/...`)
        while True:
            n, ans, captured = nmap.answer(uri)
            if hops == 0:
                if n is None:
                    why = "skip: key does not match its own URL (Python regex)"
                    break
                if n != idx:
                    c["answered by an earlier key (shadowed)"] += 1
            if n is None:
                break
            hops += 1
            c["capture target ($u) substituted"] += captured
            if ans.strip() != ans:
                c["target with stray blanks (stripped)"] += 1
                ans = ans.strip()
            if re.search(r"\s", ans) or not ans:
                why = "skip: target not a URL (blank inside)"
                break
            nxt, frag, rel = to_url(ans)
            c["fragment dropped from target"] += frag
            c["target without leading slash (resolved from /)"] += rel
            host = (urlsplit(nxt).hostname or "").lower()
            if urlsplit(nxt).path.startswith("/404"):
                why = "skip: gone (/404 target)"
                break
            if host not in SITE_HOSTS:
                why = "skip: cross-site target"
                break
            url = nxt
            if host != "gwern.net":
                c["kept: ends on www.gwern.net"] += 1
                break  # www.gwern.net is its own host: the map is not asked about it here
            p = urlsplit(nxt)
            uri = p.path + (f"?{p.query}" if p.query else "")
            if uri in visited or hops > MAX_HOPS:
                why = "skip: redirect loop"
                break
            visited.add(uri)
        if why:
            c[why] += 1
            continue
        if url == old:
            c["skip: ends at itself"] += 1
            continue
        c["kept: old URL"] += 1
        c["kept: through a chain (> 1 hop)"] += hops > 1
        final_of[old] = url
        source_of[old] = (f, hops)

    clusters = defaultdict(set)
    for old, new in final_of.items():
        clusters[new].add(old)
    for new in clusters:
        clusters[new].add(new)
    # a final URL is never an old URL (it would have been followed), so every URL is once
    both = set(clusters) & set(final_of)
    assert not both, "a final URL is also an old one"
    ordered = sorted((sorted(g) for g in clusters.values()), key=lambda g: (g[0], len(g)))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "migration.tsv", "w", encoding="utf-8", newline="") as fh:
        fh.write("cluster\turl\n")
        for i, g in enumerate(ordered):
            fh.writelines(f"m{i:05d}\t{u}\n" for u in g)

    with open(out / "migration.pairs.tsv", "w", encoding="utf-8", newline="") as fh:
        fh.write("old\tnew\tfile\thops\n")
        fh.writelines(f"{o}\t{final_of[o]}\t{source_of[o][0]}\t{source_of[o][1]}\n"
                      for o in sorted(final_of))

    sizes = Counter(len(g) for g in ordered)
    nurls = sum(len(g) for g in ordered)
    many = sum(1 for g in ordered if len(g) >= 3)
    lines = [f"repo: {REPO}", f"commit: {COMMIT}", f"map: {CONF} (map $request_uri $new_uri, "
             f"rewrite ... permanent = 301)", f"files: {', '.join(FILES)}",
             f"licence: {licence(gitdir)}", f"host: {BASE}", ""]
    for f in FILES:
        lines.append(f"{f}:")
        lines += [f"  {k}: {v}" for k, v in sorted(counts[f].items())]
    lines += ["", f"regex keys Python could not compile (never answer): {nmap.bad}", "",
              f"out: {out / 'migration.tsv'}",
              f"URLs: {nurls}; clusters (new URLs): {len(ordered)}; old URLs: {len(final_of)}; "
              f"removable duplicates: {nurls - len(ordered)}",
              f"clusters with >= 2 old URLs (many -> one): {many}; largest: "
              f"{max(sizes) if sizes else 0} URLs",
              "cluster sizes (URLs: clusters): " + ", ".join(f"{k}: {v}" for k, v in
                                                             sorted(sizes.items()))]
    text = "\n".join(lines) + "\n"
    (out / "migration.sources.txt").write_text(text, encoding="utf-8")
    print(text, end="")


if __name__ == "__main__":
    main()
