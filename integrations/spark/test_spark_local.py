#!/usr/bin/env python3
"""Local-mode proof that the Spark jobs give what single-process dedust gives.

Run by tests/spark.rs (so by `cargo test --release`): needs `pyspark` (installed from PyPI by
.ci/run) and Java 17. For two data sets — the real forum crawl (../shared/datasets/ubuntuforums/
clusters.tsv) and a synthetic multi-site web (`dedust synth --sites 8`, mirrors and www aliases
included) — it writes Parquet files with the columnar-index columns `url, url_host_name,
content_digest=cluster, fetch_status=200` (plus non-200 rows that must be ignored), runs
`spark-submit --master local[2] dedust_spark.py learn` and compares the rule file with
`dedust learn` on the TSV (the rules byte for byte when no cross-host rule is kept; with cross-host
rules, every Spark cross-host rule must be the single run's with the same pooled numbers: a
candidate that only some partitions validated is left out); then runs `dedust_spark.py normalize` over the 150k-line
urls/page-links.txt plus the forum URLs, as text and as Parquet, and compares with
`dedust normalize`. Prints every command it runs.

Usage: test_spark_local.py DEDUST_BIN SHARED_DATASETS_DIR WORK_DIR
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "dedust_spark.py")


def cross_host(text):
    """The cross-host rules of a rule file by id: pattern, target, support, fp."""
    v = json.loads(text)
    return {r["id"]: (r["pattern"], r["target"], r.get("support"), r.get("fp"))
            for r in v["rules"] if r["scope"] == "*" and r["kind"] != "regex"}


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    t = time.time()
    subprocess.run(cmd, check=True, **kw)
    print(f"  ({time.time() - t:.1f} s)", flush=True)


def spark_submit():
    import pyspark

    p = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    return p if os.path.exists(p) else "spark-submit"


def submit(dedust, files, args, conf=()):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    sh(
        [spark_submit(), "--master", "local[2]", "--conf", "spark.ui.enabled=false", *conf,
         "--files", ",".join([dedust, *files]), JOB, *args],
        env=env,
    )


def write_parquet(tsv, out):
    """The columnar-index columns from a `cluster<TAB>url` file, plus 404 rows to be ignored."""
    from pyspark.sql import SparkSession

    rows = []
    with open(tsv, encoding="utf-8") as f:
        next(f)
        for i, line in enumerate(f):
            cluster, url = line.rstrip("\n").split("\t")[:2]
            host = urllib.parse.urlsplit(url).hostname or ""
            rows.append((url, host, cluster, "200"))
            if i % 7 == 0:
                # A failed capture of the same URL under a fresh digest: filtered out by the job.
                rows.append((url + "?x404=1", host, f"err-{i}", "404"))
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    )
    spark.createDataFrame(
        rows, "url string, url_host_name string, content_digest string, fetch_status string"
    ).repartition(3).write.mode("overwrite").parquet(out)
    spark.stop()
    print(f"wrote {out}: {len(rows)} rows from {tsv}", flush=True)


def main():
    dedust, shared, work = sys.argv[1:4]
    dedust = os.path.abspath(dedust)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    synth = os.path.join(work, "synth")
    sh([dedust, "synth", "--sites", "8", "--pages", "60", "--seed", "5", "-o", synth])
    sets = {
        "forum": os.path.join(shared, "ubuntuforums", "clusters.tsv"),
        "synth": os.path.join(synth, "clusters.tsv"),
    }
    for name, tsv in sets.items():
        pq = os.path.join(work, f"{name}.parquet")
        write_parquet(tsv, pq)
        got = os.path.join(work, f"{name}-spark.json")
        want = os.path.join(work, f"{name}-single.json")
        submit(dedust, [], ["learn", "--input", pq, "--output", got, "--partitions", "4"])
        sh([dedust, "learn", tsv, "-q", "-o", want])
        a, b = open(got, "rb").read(), open(want, "rb").read()
        n = json.loads(b)["rules"]
        assert n, f"{name}: no rules learned, the comparison proves nothing"
        if not cross_host(b):
            # No cross-host rule: the rules are the single run's byte for byte (the evidence
            # counts may differ where a candidate was validated on some partitions only).
            # Provenance (`learned`) names each run's own input (`-` for a partition's pipe).
            def strip(t):
                v = {k: x for k, x in json.loads(t).items() if k not in ("evidence", "exposure")}
                for r in v["rules"]:
                    r.pop("learned", None)
                return json.dumps(v)
            assert strip(a) == strip(b), f"{name}: Spark rules differ from dedust learn ({got} vs {want})"
            how = "rules byte for byte"
        else:
            # Each Spark cross-host rule is the single run's, with the same pooled numbers (a
            # candidate only some partitions validated is left out, never kept on partial
            # evidence); host rules the single run drops as covered may stay.
            sa, sb = cross_host(a), cross_host(b)
            assert sa, f"{name}: no cross-host rule after pooling"
            for rid, r in sa.items():
                assert sb.get(rid) == r, f"{name}: cross-host rule {rid} differs ({got} vs {want})"
            how = f"{len(sa)} of {len(sb)} cross-host rules, identical"
        print(f"OK learn {name}: Spark = dedust learn ({how}), {len(n)} rules, {len(b)} bytes", flush=True)

    # normalize: the frontier = page-links + forum URLs, with the forum rules.
    frontier = os.path.join(work, "frontier.txt")
    with open(frontier, "wb") as out:
        out.write(open(os.path.join(shared, "urls", "page-links.txt"), "rb").read())
        with open(sets["forum"], "rb") as f:
            next(f)
            for line in f:
                out.write(line.rstrip(b"\n").split(b"\t")[1] + b"\n")
    rules = os.path.join(work, "forum-single.json")
    want = subprocess.run(
        [dedust, "normalize", "--rules", rules, frontier], check=True, capture_output=True
    ).stdout.decode("utf-8")
    lines = want.count("\n")
    text_out = os.path.join(work, "normalized-text")
    submit(dedust, [rules], ["normalize", "--rules", rules, "--input", frontier,
                             "--output", text_out], ["--conf", "spark.sql.files.maxPartitionBytes=2m"])
    got = "".join(
        open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(text_out, "part-*")))
    )
    if got != want:
        for i, (g, w) in enumerate(zip(got.split("\n"), want.split("\n"))):
            if g != w:
                sys.exit(f"normalize text: line {i + 1}: Spark {g!r}, dedust {w!r}")
        sys.exit(f"normalize text: {got.count(chr(10))} lines from Spark, {lines} from dedust")
    changed = sum(1 for a, b in zip(open(frontier, encoding="utf-8", newline="").read().split("\n"),
                                    want.split("\n")) if a != b)
    print(f"OK normalize (text): {lines} lines, {changed} changed, Spark = dedust", flush=True)

    pq_out = os.path.join(work, "normalized-parquet")
    submit(dedust, [rules], ["normalize", "--rules", rules, "--input", frontier,
                             "--output", pq_out, "--output-format", "parquet"])
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    rows = spark.read.parquet(pq_out).collect()
    spark.stop()
    want_lines = want.split("\n")[:-1]
    src_lines = open(frontier, encoding="utf-8", newline="").read().split("\n")[:-1]
    assert len(rows) == len(want_lines), (len(rows), len(want_lines))
    pairs = {(r.url, r.canonical) for r in rows}
    assert pairs == set(zip(src_lines, want_lines)), "Parquet url/canonical pairs differ"
    print(f"OK normalize (parquet): {len(rows)} rows of url, canonical = dedust", flush=True)


if __name__ == "__main__":
    main()
