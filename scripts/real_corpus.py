#!/usr/bin/env python3
"""Build real sparse development sets (truth TSVs) from public test fixtures.

In:   bare git mirrors of public repositories, as the search tool's `fetch` lays them out
      (`MIRRORS/<owner>+<name>/repo`, default MIRRORS = /work/.mirror); each set reads the
      fixtures at the mirror's HEAD with `git show` (nothing is copied into this repository).
Out:  OUT/<set>.tsv (default OUT = ../real-corpus/ from the repository root, i.e. outside it):
      header `cluster<TAB>url`, every URL once, singletons are negatives, the format of
      ../shared/datasets/canonical/news_canonical.tsv; OUT/<set>.sources.tsv (one line per
      source page: set, repo, commit, file, fetch URL, declared URLs, verdict) and
      OUT/PROVENANCE.md. Prints per set: URLs, clusters with >= 2 URLs, hosts, registrable
      domains, and a provenance line per source (repo, commit, path, licence).
What: a stored page with the URL it was fetched from gives a pair, fetch URL == the
      `<link rel="canonical">` it declares, when both lie on one registrable domain and neither
      is the site root (a root canonical on an article, or an article canonical on a home page,
      is a template fault, not DUST); the canonical on another site, on the root or missing
      leaves the page a singleton. Pages whose fetch or canonical URL is already in the
      --exclude truth files are left out (no source counted twice). Sets:
        articles  news/article pages: microlinkhq/metascraper integration fixtures (URL in the
                  test file, page in input.html), karussell/snacktory extractor tests (URL in
                  the comment above the test, page in test resources), AndyTheFactory/newspaper4k
                  test data (URL in tests/data/metadata/X.json, page in tests/data/html/X.html).
        recipes   hhursev/recipe-scrapers test pages: no fetch URL is stored, so the page's own
                  declarations are the cluster: the canonical URL the test expects
                  (`canonical_url` in X.json), `<link rel=canonical>`, `<meta og:url>` and the
                  WordPress `<link rel=shortlink>` (`/?p=ID`, a real redirecting alias), each
                  when on the page's registrable domain and not the root.
Needs: python3 (3.11, stdlib), git. Optional: `pip install tldextract` (its bundled Public Suffix
      List snapshot is used offline, private suffixes included, as dedust's compiled-in list);
      without it a last-two-labels rule with a short list of multi-part suffixes (co.uk, com.au,
      ...) is used and a notice says so.

Usage: python3 scripts/real_corpus.py [--mirrors DIR] [--out DIR] [--sets articles,recipes]
                                      [--exclude TSV ...]
Mirrors needed: microlinkhq/metascraper, karussell/snacktory, AndyTheFactory/newspaper4k
(articles), hhursev/recipe-scrapers (recipes); a missing mirror is reported and skipped.
"""
import argparse
import csv
import html as htmllib
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------- registrable domain
_MULTI = {  # fallback only: common multi-label public suffixes
    "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "ltd.uk", "plc.uk", "com.au", "net.au",
    "org.au", "edu.au", "gov.au", "co.nz", "org.nz", "co.jp", "ne.jp", "or.jp", "ac.jp",
    "co.kr", "or.kr", "com.br", "com.cn", "com.mx", "com.ar", "com.tr", "com.tw", "com.hk",
    "com.sg", "com.my", "co.in", "co.za", "co.il", "com.pl", "com.ua", "co.id", "com.vn",
    "github.io", "blogspot.com", "wordpress.com", "substack.com",
}


def _make_site():
    try:
        import tldextract
        ex = tldextract.TLDExtract(suffix_list_urls=(), include_psl_private_domains=True)

        def site(host):
            r = ex(host)
            dom = getattr(r, "top_domain_under_public_suffix", None)
            if dom is None:
                dom = r.registered_domain
            return dom or host
        return site, "tldextract (bundled Public Suffix List snapshot, private suffixes included)"
    except ImportError:
        pass

    def site(host):
        labels = host.split(".")
        if re.fullmatch(r"[0-9.]+", host) or len(labels) <= 2:
            return host
        n = 3 if ".".join(labels[-2:]) in _MULTI else 2
        return ".".join(labels[-n:])
    return site, "fallback: last two labels (three under a short list of multi-part suffixes)"


SITE, SITE_HOW = _make_site()


def host_of(url):
    h = (urlsplit(url).hostname or "").lower().rstrip(".")
    return h


def site_of(url):
    h = host_of(url)
    return SITE(h) if h else ""


def is_root(url):
    p = urlsplit(url)
    return p.path in ("", "/") and not p.query


ERRORISH = re.compile(r"(^|/)(404|not[-_]?found|error)(\.html?)?/?$", re.I)

# ---------------------------------------------------------------- git mirror access


class Mirror:
    def __init__(self, mirrors, repo):
        self.repo = repo
        base = Path(mirrors) / repo.replace("/", "+") / "repo"
        cands = [base, base / ".git"]
        self.gitdir = next((c for c in cands if (c / "HEAD").exists() and (c / "objects").exists()),
                           None)
        if self.gitdir is None:
            raise FileNotFoundError(f"no mirror of {repo} under {mirrors} (fetch github:{repo})")
        self.commit = self._git("rev-parse", "HEAD").strip()
        self.files = self._git("ls-tree", "-r", "--name-only", "HEAD").splitlines()
        self.fileset = set(self.files)

    def _git(self, *args):
        return subprocess.run(["git", "--git-dir", str(self.gitdir), *args], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")

    def show(self, path):
        """File text at HEAD; None when the snapshot lacks it (large files are absent)."""
        p = subprocess.run(["git", "--git-dir", str(self.gitdir), "show", f"HEAD:{path}"],
                           capture_output=True)
        return p.stdout.decode("utf-8", "replace") if p.returncode == 0 else None

    def licence(self):
        for f in self.files:
            if re.fullmatch(r"(LICEN[CS]E|COPYING)(\.\w+)?", f, re.I):
                head = " ".join((self.show(f) or "").split()[:12])
                for name, pat in (("MIT", r"\bMIT\b"), ("Apache-2.0", r"Apache License"),
                                  ("BSD-3-Clause", r"BSD 3|Redistribution and use"),
                                  ("GPL-3.0", r"GNU GENERAL PUBLIC LICENSE")):
                    if re.search(pat, head, re.I):
                        return f"{name} ({f})"
                return f"see {f}"
        readme = next((f for f in self.files if f.lower().startswith("readme")), None)
        m = re.search(r"(Apache[- ]2(\.0)?|MIT|BSD)[^\n]{0,20}licen[cs]e", self.show(readme) or "",
                      re.I) if readme else None
        return f"{m.group(1)} (stated in {readme}; no licence file)" if m else "unknown"


# ---------------------------------------------------------------- HTML declarations
_TAG = {k: re.compile(rf"<{k}\b[^>]*>", re.I | re.S) for k in ("link", "meta", "base")}


def _attr(tag, name):
    m = re.search(rf"""\s{name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", tag, re.I | re.S)
    if not m:
        return None
    return htmllib.unescape(next(g for g in m.groups() if g is not None)).strip()


def declared(doc, base):
    """-> {canonical, og, shortlink}: absolute URLs the page declares (first of each)."""
    doc = re.sub(r"<!--.*?-->", "", doc, flags=re.S)
    head = re.split(r"<body\b", doc, maxsplit=1, flags=re.I)[0]
    out = {}
    b = next((_attr(t, "href") for t in _TAG["base"].findall(head) if _attr(t, "href")), None)
    if b and base:
        base = urljoin(base, b)
    for t in _TAG["link"].findall(head):
        rel = (_attr(t, "rel") or "").lower().split()
        href = _attr(t, "href")
        if not href:
            continue
        for k in ("canonical", "shortlink"):
            if k in rel and k not in out:
                out[k] = urljoin(base, href) if base else href
    for t in _TAG["meta"].findall(head):
        if (_attr(t, "property") or _attr(t, "name") or "").lower() == "og:url" and "og" not in out:
            c = _attr(t, "content")
            if c:
                out["og"] = urljoin(base, c) if base else c
    return {k: v for k, v in out.items() if urlsplit(v).scheme in ("http", "https")}


# ---------------------------------------------------------------- sources
def src_metascraper(m):
    pre = "packages/metascraper/test/integration/"
    for f in m.files:
        if f.startswith(pre) and f.endswith("/index.js") and f.count("/") == pre.count("/") + 1:
            d = f.rsplit("/", 1)[0]
            page = d + "/input.html"
            urls = re.findall(r"""\bconst\s+url\s*=\s*['"`]([^'"`]+)['"`]""", m.show(f) or "")
            if page in m.fileset and len(urls) == 1:
                yield urls[0], page


def src_snacktory(m):
    tf = "src/test/java/de/jetwick/snacktory/ArticleTextExtractorTest.java"
    for block in re.split(r"@Test", m.show(tf) or "")[1:]:
        # the URL in a comment line before the test reads its page; `// ? URL` (unsure) skipped
        u = re.search(r"^\s*//\s*(\?\s*)?(https?://[^\s()]+)", block, re.M)
        f = re.search(r"""(?:readFileAsString|getResourceAsStream)\("([^"]+)"\)""", block)
        if not (u and f) or u.group(1):
            continue
        name = f.group(1)
        for cand in (name, "src/test/resources/de/jetwick/snacktory/" + name):
            if cand in m.fileset:
                yield u.group(2), cand
                break


def src_newspaper4k(m):
    for f in m.files:
        mm = re.fullmatch(r"tests/data/metadata/(.+)\.json", f)
        if mm and f"tests/data/html/{mm.group(1)}.html" in m.fileset:
            try:
                url = json.loads(m.show(f) or "{}").get("url")
            except json.JSONDecodeError:
                url = None
            if url:
                yield url, f"tests/data/html/{mm.group(1)}.html"


SOURCES = {  # set -> [(repo, extractor)]
    "articles": [("microlinkhq/metascraper", src_metascraper),
                 ("karussell/snacktory", src_snacktory),
                 ("AndyTheFactory/newspaper4k", src_newspaper4k)],
    "recipes": [("hhursev/recipe-scrapers", None)],
}
PATHS = {"microlinkhq/metascraper": "packages/metascraper/test/integration/*/{index.js,input.html}",
         "karussell/snacktory": "src/test/java/.../ArticleTextExtractorTest.java + test resources",
         "AndyTheFactory/newspaper4k": "tests/data/{metadata/*.json,html/*.html}",
         "hhursev/recipe-scrapers": "tests/test_data/*/*.{json,testhtml}"}


# ---------------------------------------------------------------- clustering
class Clusters:
    def __init__(self):
        self.parent = {}

    def add(self, u):
        self.parent.setdefault(u, u)

    def find(self, u):
        while self.parent[u] != u:
            self.parent[u] = self.parent[self.parent[u]]
            u = self.parent[u]
        return u

    def union(self, a, b):
        self.add(a), self.add(b)
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def rows(self, prefix):
        groups = defaultdict(list)
        for u in self.parent:
            groups[self.find(u)].append(u)
        ordered = sorted(sorted(g) for g in groups.values())
        return [(f"{prefix}{i:05d}", u) for i, g in enumerate(ordered) for u in g]


def usable_alias(url, other):
    """Whether `other`, declared by the page at `url`, is an alias to pair with it."""
    if other == url:
        return False, "same"
    if site_of(other) != site_of(url):
        return False, "other-site"
    if is_root(other) or is_root(url):
        return False, "root"
    if ERRORISH.search(urlsplit(other).path):
        return False, "error-page"
    return True, "pair"


def build_articles(mirrors, excluded, log):
    cl, prov = Clusters(), []
    for repo, extract in SOURCES["articles"]:
        try:
            m = Mirror(mirrors, repo)
        except FileNotFoundError as e:
            print(f"notice: {e}; source skipped", file=sys.stderr)
            continue
        n = 0
        for url, page in extract(m):
            doc = m.show(page)
            if doc is None:
                log.append(("articles", repo, m.commit, page, url, "", "page-missing"))
                continue
            canon = declared(doc, url).get("canonical", "")
            if url in excluded or canon in excluded:
                log.append(("articles", repo, m.commit, page, url, canon, "excluded"))
                continue
            ok, why = usable_alias(url, canon) if canon else (False, "no-canonical")
            cl.add(url)
            if ok:
                cl.union(url, canon)
            log.append(("articles", repo, m.commit, page, url, canon, why))
            n += 1
        prov.append((repo, m.commit, PATHS[repo], m.licence(), n))
    return cl, prov


def build_recipes(mirrors, excluded, log):
    cl, prov = Clusters(), []
    repo = "hhursev/recipe-scrapers"
    try:
        m = Mirror(mirrors, repo)
    except FileNotFoundError as e:
        print(f"notice: {e}; set skipped", file=sys.stderr)
        return cl, prov
    n = 0
    for f in m.files:
        mm = re.fullmatch(r"(tests/test_data/[^/]+/.+)\.json", f)
        if not mm or mm.group(1) + ".testhtml" not in m.fileset:
            continue
        try:
            url = json.loads(m.show(f) or "{}").get("canonical_url") or ""
        except json.JSONDecodeError:
            url = ""
        page = mm.group(1) + ".testhtml"
        doc = m.show(page)
        if not url.startswith("http") or doc is None or is_root(url):
            log.append(("recipes", repo, m.commit, page, url, "", "no-url/page/root"))
            continue
        decl = declared(doc, url)
        if url in excluded:
            log.append(("recipes", repo, m.commit, page, url, "", "excluded"))
            continue
        cl.add(url)
        verdicts = []
        for k in ("canonical", "og", "shortlink"):
            other = decl.get(k)
            if not other:
                continue
            ok, why = usable_alias(url, other)
            if ok and other not in excluded:
                cl.union(url, other)
            verdicts.append(f"{k}:{why}")
        log.append(("recipes", repo, m.commit, page, url, " ".join(decl.values()),
                    ",".join(verdicts) or "none"))
        n += 1
    prov.append((repo, m.commit, PATHS[repo], m.licence(), n))
    return cl, prov


BUILDERS = {"articles": (build_articles, "a"), "recipes": (build_recipes, "r")}


def read_truth_urls(paths):
    out = set()
    for p in paths:
        if not Path(p).exists():
            print(f"notice: exclude file {p} not found; nothing excluded from it", file=sys.stderr)
            continue
        with open(p, newline="", encoding="utf-8") as f:
            out.update(r["url"] for r in csv.DictReader(f, delimiter="\t"))
    return out


def stats(rows):
    by = defaultdict(list)
    for c, u in rows:
        by[c].append(u)
    multi = [g for g in by.values() if len(g) >= 2]
    return dict(urls=len(rows), clusters=len(by), multi=len(multi),
                removable=sum(len(g) - 1 for g in multi),
                hosts=len({host_of(u) for _, u in rows}),
                domains=len({site_of(u) for _, u in rows}),
                dup_domains=len({site_of(g[0]) for g in multi}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", default=os.environ.get("MIRRORS", "/work/.mirror"))
    ap.add_argument("--out", default=str(ROOT.parent / "real-corpus"))
    ap.add_argument("--sets", default="articles,recipes")
    ap.add_argument("--exclude", nargs="*",
                    default=[str(ROOT.parent / "shared/datasets/canonical/news_canonical.tsv")])
    a = ap.parse_args()
    out = Path(a.out)
    if out.resolve().is_relative_to(ROOT):
        sys.exit(f"error: --out {out} is inside the repository; data stays outside it")
    out.mkdir(parents=True, exist_ok=True)
    if not SITE_HOW.startswith("tldextract"):
        print("notice: tldextract not importable (pip install tldextract); registrable domains "
              "by the " + SITE_HOW, file=sys.stderr)
    excluded = read_truth_urls(a.exclude)
    md = ["# Real sparse development sets (built by scripts/real_corpus.py)", "",
          f"Registrable domain: {SITE_HOW}.", ""]
    for name in a.sets.split(","):
        build, prefix = BUILDERS[name]
        log = []
        cl, prov = build(a.mirrors, excluded, log)
        rows = cl.rows(prefix)
        with open(out / f"{name}.tsv", "w", encoding="utf-8", newline="") as f:
            f.write("cluster\turl\n")
            f.writelines(f"{c}\t{u}\n" for c, u in rows)
        with open(out / f"{name}.sources.tsv", "w", encoding="utf-8", newline="") as f:
            f.write("set\trepo\tcommit\tfile\turl\tdeclared\tverdict\n")
            f.writelines("\t".join(r) + "\n" for r in log)
        s = stats(rows)
        verdicts = Counter(v for r in log for v in r[6].split(","))
        line = (f"{name}: {s['urls']} URLs, {s['clusters']} clusters, {s['multi']} with >= 2 URLs "
                f"({s['removable']} removable duplicates), {s['hosts']} hosts, {s['domains']} "
                f"registrable domains ({s['dup_domains']} with a duplicate) -> {out / name}.tsv")
        print(line)
        print(f"  verdicts: {dict(verdicts.most_common())}")
        md += [f"## {name}", "", line.split(" -> ")[0], "", f"Verdicts: {dict(verdicts.most_common())}", ""]
        for repo, commit, path, lic, n in prov:
            p = f"  provenance: {repo} @ {commit} {path} — licence {lic} — {n} pages"
            print(p)
            md.append("- " + p.strip())
        md.append("")
    (out / "PROVENANCE.md").write_text("\n".join(md), encoding="utf-8")


if __name__ == "__main__":
    main()
