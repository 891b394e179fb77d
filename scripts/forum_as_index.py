#!/usr/bin/env python3
"""The forum crawl as a web-archive index and as a WARC: what `dedust learn` gets from them.

In:   ../shared/datasets/ubuntuforums/clusters.tsv (content-derived true duplicate clusters,
      `cluster<TAB>url`) and pages.jsonl.gz (one page a line: id, url, title, referer, html);
      a dedust binary (--dedust, default `dedust` on PATH).
Out:  under --out (default /tmp/fai/run, never inside the repository), per seed S:
        seedS/split/{train,test}.tsv,rules.json  `dedust evaluate --split url --test-fraction
                                 0.5 --seed S --save` (the 50/50 URL split, and its own rules)
        seedS/train.cdxj         the train URLs as a CDXJ index (pywb/CC style, sorted by key)
        seedS/forum.warc.gz      the train URLs' pages as a WARC (one gzip member a record)
        seedS/<exp>-rules.json, <exp>-explain.json  `dedust learn` on each, with --explain
        seedS/<exp>-eval.json    `dedust evaluate --truth test.tsv --rules <exp>-rules.json`
        seedS/<exp>-missed.tsv   each test cluster of >= 2 URLs with the share of its
                                 removable duplicates the rules remove (cluster, urls, removed,
                                 digest-shared in the index or not, example URLs)
      and results.json (every row) plus a table on stdout: per seed and mean, reduction and
      lost on the held-out half, rules, and the rules dropping `page`, `p` or `goto`.
What: experiment `cdxj`: every train URL one status-200 text/html capture. For half of the true
      clusters of >= 2 URLs (chosen by random.Random(S); floor of half), all members carry one
      digest (the sha1 of the first member's html, by URL order); every other URL carries the
      sha1 of its own html (no two pages of this crawl are byte-identical, so these are all
      distinct). `length` is the size of the page's html gzipped (zlib level 6, mtime 0),
      `offset` the running sum of lengths in key order, `filename` forum-train.warc.gz. Every URL
      of clusters.tsv has a page in pages.jsonl.gz; a URL without one would be written with
      the digest of its cluster choice and no `length` (the reader then has no length for it).
      Experiment `warc`: the train pages as WARC/1.0 response records (HTTP/1.1 200, the html
      as body, WARC-Payload-Digest = sha1 base32 of the body), plus one warcinfo record; learn
      clusters the pages by content and lets them decide the crawl's own signals (digests,
      redirects, declared canonicals); `--learn-args=--no-content` reads those signals alone.
      Experiment `cdxj-pages`: the `cdxj` index written as Common Crawl writes one: each page
      a WARC response record (one gzip member) in forum-pages.warc.gz, in key order, the
      CDXJ's `filename`/`offset`/`length` naming that member (length = the compressed record,
      headers included); learn finds the WARC beside the index and judges a sample of each
      rule's different-digest merges by the pages. Experiment `cdxj-lengths`: the same index
      with `--warcs none` (record lengths alone), the baseline.
      Experiment `warc-verify`: the `warc` rules checked by `dedust verify --prune` against the
      same WARC's bodies (rules whose merges the content refutes dropped).
      Experiment `warc-cluster`: the same WARC through `dedust cluster --pages` (content
      clusters from the bodies, tdw defaults) and `dedust learn` on those clusters.
      Reference `evaluate`: the `rules` row of `dedust evaluate` itself (learning from train.tsv).
      Scores are `dedust evaluate --truth test.tsv --rules R --json`, i.e. exactly evaluate's
      definitions: reduction = sum over buckets of (URLs of the bucket's majority true cluster
      - 1) / (test URLs - true clusters among them); lost = sum over buckets of (URLs not of
      the majority cluster) / test URLs.
Needs: python3 (stdlib only).

Usage: python3 scripts/forum_as_index.py --dedust /tmp/dedust-exp [--out DIR] [--seeds 1,2,3,4,5]
                                         [--data DIR] [--experiments cdxj,warc,warc-verify,warc-cluster]
                                         [--learn-args "--fpr-bound"] [--force-shared c0000]
                                         [--force-unshared c0000] [--shared-length own|first]
"""
import argparse
import base64
import datetime
import gzip
import hashlib
import json
import random
import shlex
import subprocess
import sys
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "datasets" / "ubuntuforums"
WATCH = {"page", "p", "goto"}
T0 = datetime.datetime(2018, 9, 1, 0, 0, 0)


def sha1_b32(data: bytes) -> str:
    return base64.b32encode(hashlib.sha1(data).digest()).decode()


def surt(url: str) -> str:
    s = urlsplit(url)
    host = (s.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    key = ",".join(reversed(host.split("."))) + ")" + (s.path or "/").lower()
    if s.query:
        key += "?" + "&".join(sorted(s.query.lower().split("&")))
    return key


def read_truth(path):
    truth = {}
    with open(path, encoding="utf-8") as f:
        next(f)
        for line in f:
            c, u = line.rstrip("\n").split("\t")
            truth[u] = c
    return truth


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {shlex.join(cmd)}\n{r.stderr}")
    return r


def digests_of(urls, pages, truth, shared):
    """Per URL: (digest, the page whose body the digest is of, or None). A shared cluster's
    members carry the sha1 of its first member's html (by URL order); every other URL the sha1
    of its own html."""
    members = defaultdict(list)
    for u, c in truth.items():
        members[c].append(u)
    out = {}
    for u in urls:
        c = truth[u]
        if c in shared:
            first = min((m for m in members[c] if m in pages), default=None)
            digest = sha1_b32(pages[first].encode()) if first else sha1_b32(("cluster:" + c).encode())
        else:
            first = None
            digest = sha1_b32(pages[u].encode()) if u in pages else sha1_b32(("url:" + u).encode())
        out[u] = (digest, first)
    return out


def write_cdxj(path, urls, pages, truth, shared, shared_length="own"):
    """One status-200 capture per URL; `shared`: cluster ids whose members share a digest;
    `shared_length`: `own` (each page's gzip size) or `first` (the digest's page's size, what
    byte-identical payloads would give)."""
    digests = digests_of(urls, pages, truth, shared)
    lines = []
    for i, u in enumerate(sorted(urls)):
        c = truth[u]
        page = pages.get(u)
        digest, first = digests[u]
        rec = {"url": u, "mime": "text/html", "status": "200", "digest": digest}
        body = pages[first] if c in shared and shared_length == "first" and first else page
        if body is not None:
            rec["length"] = str(len(gzip.compress(body.encode(), compresslevel=6, mtime=0)))
        ts = (T0 + datetime.timedelta(seconds=7 * i)).strftime("%Y%m%d%H%M%S")
        lines.append([surt(u), ts, rec])
    lines.sort(key=lambda x: (x[0], x[1]))
    offset = 0
    with open(path, "w", encoding="utf-8") as f:
        for key, ts, rec in lines:
            rec["offset"] = str(offset)
            rec["filename"] = "forum-train.warc.gz"
            offset += int(rec.get("length", "0"))
            f.write(f"{key} {ts} {json.dumps(rec)}\n")


def write_cdxj_pages(path, warc_path, urls, pages, truth, shared):
    """As `write_cdxj`, with each page also written as a WARC response record (one gzip member)
    to `warc_path`, in key order, and the CDXJ's `filename`, `offset` and `length` naming that
    member, as a Common Crawl index does. Shared clusters' captures keep their shared digest."""
    digests = digests_of(urls, pages, truth, shared)
    lines = []
    for i, u in enumerate(sorted(urls)):
        digest = digests[u][0]
        ts = (T0 + datetime.timedelta(seconds=7 * i)).strftime("%Y%m%d%H%M%S")
        lines.append([surt(u), ts, {"url": u, "mime": "text/html", "status": "200", "digest": digest}])
    lines.sort(key=lambda x: (x[0], x[1]))
    offset = 0
    with open(warc_path, "wb") as w, open(path, "w", encoding="utf-8") as f:
        for key, ts, rec in lines:
            u = rec["url"]
            if u in pages:
                body = pages[u].encode()
                http = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n").encode() + body
                member = warc_record([
                    ("WARC-Type", "response"),
                    ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, u)}>"),
                    ("WARC-Date", f"{ts[:4]}-{ts[4:6]}-{ts[6:8]}T{ts[8:10]}:{ts[10:12]}:{ts[12:]}Z"),
                    ("WARC-Target-URI", u),
                    ("Content-Type", "application/http; msgtype=response"),
                    ("WARC-Payload-Digest", "sha1:" + sha1_b32(body)),
                ], http)
                w.write(member)
                rec["length"] = str(len(member))
                rec["offset"] = str(offset)
                rec["filename"] = warc_path.name
                offset += len(member)
            f.write(f"{key} {ts} {json.dumps(rec)}\n")


def warc_record(headers, block: bytes) -> bytes:
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    return gzip.compress(head.encode() + block + b"\r\n\r\n", compresslevel=6, mtime=0)


def write_warc(path, urls, pages):
    with open(path, "wb") as f:
        info = b"software: scripts/forum_as_index.py\r\nformat: WARC File Format 1.0\r\n"
        f.write(warc_record([
            ("WARC-Type", "warcinfo"),
            ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, 'warcinfo:' + path.name)}>"),
            ("WARC-Date", T0.strftime("%Y-%m-%dT%H:%M:%SZ")),
            ("WARC-Filename", path.name),
            ("Content-Type", "application/warc-fields"),
        ], info))
        for i, u in enumerate(sorted(urls)):
            if u not in pages:
                continue  # no body to write: the URL is simply not in the crawl
            body = pages[u].encode()
            http = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode() + body
            f.write(warc_record([
                ("WARC-Type", "response"),
                ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, u)}>"),
                ("WARC-Date", (T0 + datetime.timedelta(seconds=7 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")),
                ("WARC-Target-URI", u),
                ("Content-Type", "application/http; msgtype=response"),
                ("WARC-Payload-Digest", "sha1:" + sha1_b32(body)),
                ("WARC-Block-Digest", "sha1:" + sha1_b32(http)),
            ], http))


def qnames(s):
    """Parameter names of a rule pattern's or target's query (placeholders left out)."""
    if "?" not in s:
        return set()
    q = s.split("?", 1)[1]
    # `[p]`: an optional parameter of the pattern; `{rest}`, `{?query}`: placeholders
    return {p.split("=", 1)[0].strip("[]") for p in q.split("&") if p and not p.startswith("{")}


def path_of(s):
    return s.split("?", 1)[0].split("{?", 1)[0]


def summarize_rules(path):
    d = json.load(open(path))
    out, watch = [], []
    for r in d["rules"]:
        if r.get("revoked"):
            continue
        dropped = sorted(qnames(r["pattern"]) - qnames(r["target"]))
        same_path = path_of(r["pattern"]) == path_of(r["target"])
        out.append({"kind": r["kind"], "pattern": r["pattern"], "target": r["target"],
                    "support": r.get("support"), "fpr": r.get("fpr"), "dropped": dropped,
                    "same_path": same_path})
        if same_path and WATCH & set(dropped):
            watch.append(f"{r['pattern']} -> {r['target']}")
    return out, watch


def coverage(dedust, rules, test_tsv, truth_test, shared):
    """Per test cluster of >= 2 URLs: removable duplicates, and how many the rules remove."""
    urls = sorted(truth_test)
    r = run([dedust, "normalize", "-q", "-r", str(rules), "--tsv"], input="\n".join(urls) + "\n")
    key = {}
    for line in r.stdout.splitlines():
        f = line.split("\t")
        key[f[0]] = f[1]
    by = defaultdict(list)
    for u in urls:
        by[truth_test[u]].append(u)
    rows = []
    for c, us in sorted(by.items(), key=lambda x: -len(x[1])):
        if len(us) < 2:
            continue
        keys = defaultdict(int)
        for u in us:
            keys[key.get(u, u)] += 1
        removed = len(us) - len(keys)
        rows.append({"cluster": c, "urls": len(us), "removable": len(us) - 1, "removed": removed,
                     "shared_digest": c in shared, "examples": us[:3]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dedust", default="dedust")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--out", default="/tmp/fai/run")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--experiments", default="cdxj,warc,warc-verify,warc-cluster")
    ap.add_argument("--learn-args", default="", help="extra options for every `dedust learn`")
    ap.add_argument("--force-shared", default="", help="cluster ids always given one digest (added to the half)")
    ap.add_argument("--force-unshared", default="", help="cluster ids never given one digest (taken out of the half)")
    ap.add_argument("--shared-length", choices=["own", "first"], default="own",
                    help="length of a shared-digest capture: its own page's gzip size (default) or the digest page's")
    a = ap.parse_args()
    out = Path(a.out).resolve()
    if ROOT in out.parents or out == ROOT:
        sys.exit("--out must lie outside the repository")
    data = Path(a.data)
    truth = read_truth(data / "clusters.tsv")
    pages = {}
    with gzip.open(data / "pages.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            pages[p["url"]] = p["html"]
    missing = [u for u in truth if u not in pages]
    print(f"# {len(truth)} truth URLs, {len(pages)} pages, {len(missing)} truth URLs without a page")
    sizes = defaultdict(int)
    for c in truth.values():
        sizes[c] += 1
    multi = sorted(c for c, n in sizes.items() if n >= 2)
    extra = shlex.split(a.learn_args)
    exps = [e for e in a.experiments.split(",") if e]
    results = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        sd = out / f"seed{seed}"
        sd.mkdir(parents=True, exist_ok=True)
        rng = random.Random(seed)
        order = multi[:]
        rng.shuffle(order)
        shared = set(order[: len(order) // 2])
        shared |= {c for c in a.force_shared.split(",") if c}
        shared -= {c for c in a.force_unshared.split(",") if c}
        (sd / "shared-clusters.txt").write_text(
            "".join(f"{c}\t{sizes[c]}\n" for c in sorted(shared)))
        ev = run([a.dedust, "evaluate", "-q", "--truth", str(data / "clusters.tsv"), "--split", "url",
                  "--test-fraction", "0.5", "--seed", str(seed), "--save", str(sd / "split"),
                  "--json"])
        row = next(r for r in json.loads(ev.stdout)["rows"] if r["method"] == "rules")
        train = read_truth(sd / "split" / "train.tsv")
        test_tsv = sd / "split" / "test.tsv"
        truth_test = read_truth(test_tsv)
        _, watch = summarize_rules(sd / "split" / "rules.json")
        results.append({"seed": seed, "exp": "evaluate", "reduction": row["reduction"],
                        "lost": row["lost"], "rules": json.loads(ev.stdout)["rules"],
                        "watch": watch, "shared_in_train": None})
        shared_train = sum(1 for u in train if truth[u] in shared)
        for exp in exps:
            extra_exp = []
            if exp == "cdxj":
                src = sd / "train.cdxj"
                write_cdxj(src, train, pages, truth, shared, a.shared_length)
            elif exp == "cdxj-pages":
                src = sd / "train-pages.cdxj"
                write_cdxj_pages(src, sd / "forum-pages.warc.gz", train, pages, truth, shared)
            elif exp == "cdxj-lengths":
                # the same index, its WARC not at hand: record lengths alone
                src = sd / "train-pages.cdxj"
                write_cdxj_pages(src, sd / "forum-pages.warc.gz", train, pages, truth, shared)
                extra_exp = ["--warcs", "none"]
            elif exp in ("warc", "warc-verify", "warc-cluster"):
                src = sd / "forum.warc.gz"
                write_warc(src, train, pages)
                if exp == "warc-cluster":
                    run([a.dedust, "cluster", "-q", "--pages", str(src), "-o", str(sd / "warc-clusters.tsv")])
                    src = sd / "warc-clusters.tsv"
            else:
                sys.exit(f"unknown experiment {exp}")
            rules = sd / f"{exp}-rules.json"
            run([a.dedust, "learn", "-q", str(src), "-o", str(rules),
                 "--explain", str(sd / f"{exp}-explain.json")] + extra + extra_exp)
            if exp == "warc-verify":
                # check each learned rule's merges on the WARC's own bodies; drop refuted rules
                run([a.dedust, "verify", "-q", "-r", str(rules), "--pages", str(src), "--prune",
                     "-o", str(sd / "warc-verify-pruned.json")])
                rules = sd / "warc-verify-pruned.json"
            r = run([a.dedust, "evaluate", "-q", "--truth", str(test_tsv), "--rules", str(rules), "--json"])
            j = json.loads(r.stdout)
            (sd / f"{exp}-eval.json").write_text(r.stdout)
            row = next(x for x in j["rows"] if x["method"] == "rules")
            summary, watch = summarize_rules(rules)
            cov = coverage(a.dedust, rules, test_tsv, truth_test, shared)
            with open(sd / f"{exp}-missed.tsv", "w") as f:
                f.write("cluster\turls\tremovable\tremoved\tshared_digest\texamples\n")
                for c in cov:
                    f.write(f"{c['cluster']}\t{c['urls']}\t{c['removable']}\t{c['removed']}\t"
                            f"{c['shared_digest']}\t{' '.join(c['examples'])}\n")
            results.append({"seed": seed, "exp": exp, "reduction": row["reduction"], "lost": row["lost"],
                            "rules": j["rules"], "watch": watch, "rule_list": summary,
                            "shared_in_train": shared_train})
    (out / "results.json").write_text(json.dumps(results, indent=1))
    names = ["evaluate"] + exps
    print(f"{'experiment':<14}" + "".join(f"  seed{r['seed']:<2} red/lost     " for r in results if r["exp"] == "evaluate") + "  mean red  max lost")
    for n in names:
        rows = [r for r in results if r["exp"] == n]
        cells = "".join(f"  {r['reduction'] or 0:.3f}/{r['lost']:.4f} ({r['rules']:>2}r)" for r in rows)
        mean = sum((r["reduction"] or 0) for r in rows) / len(rows)
        print(f"{n:<14}{cells}  {mean:8.3f}  {max(r['lost'] for r in rows):.4f}")
    for r in results:
        if r["watch"]:
            print(f"# seed {r['seed']} {r['exp']}: rules dropping page/p/goto: {'; '.join(r['watch'])}")
    print(f"# files under {out}")


if __name__ == "__main__":
    main()
