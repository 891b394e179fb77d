#!/usr/bin/env python3
"""dedust on Apache Spark: learn rules from Common Crawl duplicate clusters, normalize frontiers.

The work is done by the `dedust` binary itself (shipped with `--files`, found with
`SparkFiles.get`); Spark only shards the data and pipes each shard through it.

learn
    Input: the Common Crawl columnar-index columns `url`, `url_host_name`, `content_digest`,
    `fetch_status` (Parquet, or CSV with a header). Captures with `fetch_status = 200` are grouped
    by `content_digest` into duplicate clusters. Hosts that share a cluster are joined into one
    shard key (connected components, computed on the driver from the digests that span several
    hosts), so every cluster and every host it touches land in the same partition: learning and
    validation never look across such groups, which is what makes the merged result byte for byte
    the rule file `dedust learn` writes from all the data at once. Each partition's rows are piped
    as `cluster<TAB>url` TSV into `dedust learn -`; the partition rule files are combined with
    `dedust merge` into `--output`.

normalize
    Input: a text file (or directory) of URLs, one per line (split at "\n" only; the split size is
    Spark's `spark.sql.files.maxPartitionBytes`). Each partition is piped through
    `dedust normalize --rules R --threads 1`: one line out per line in, order kept. Output: text
    (canonical URLs, part files in input order) or Parquet with `url, canonical`. Spark reads
    text as UTF-8, so bytes that are not UTF-8 arrive replaced (dedust alone passes them through).

Examples (local mode; on a cluster use `--master yarn` or `k8s://…` and S3 paths):

    spark-submit --master 'local[2]' --files target/release/dedust \
        integrations/spark/dedust_spark.py learn --input cc-index.parquet --output rules.json
    spark-submit --master 'local[2]' --files target/release/dedust,rules.json \
        integrations/spark/dedust_spark.py normalize --rules rules.json \
        --input frontier.txt --output frontier-normalized --output-format parquet
"""

import argparse
import os
import shlex
import stat
import subprocess
import sys
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def shipped(name, fallback=None):
    """Path of a file shipped with --files (executable bit restored), else `fallback`."""
    try:
        p = SparkFiles.get(os.path.basename(name))
    except Exception:  # no SparkContext on this side
        p = None
    if p and os.path.exists(p):
        if os.path.basename(name) == "dedust":
            os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return p
    if fallback and os.path.exists(fallback):
        return fallback
    raise FileNotFoundError(
        f"{name} is not shipped: pass it with spark-submit --files (or set DEDUST_BIN)"
    )


def dedust_bin():
    return shipped("dedust", os.environ.get("DEDUST_BIN"))


def run(cmd, stdin_bytes):
    p = subprocess.run(cmd, input=stdin_bytes, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited with {p.returncode}: {p.stderr.decode(errors='replace')}"
        )
    return p.stdout


def components(pairs):
    """Union-find over hosts: `pairs` are host lists of clusters that span several hosts."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for hosts in pairs:
        hosts = sorted(hosts)
        for h in hosts[1:]:
            a, b = find(hosts[0]), find(h)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {h: find(h) for h in parent}


def learn(spark, a):
    reader = spark.read
    if a.input_format == "csv":
        df = reader.option("header", True).csv(a.input)
    else:
        df = reader.parquet(a.input)
    need = {"url", a.host_column, "content_digest", "fetch_status"}
    missing = need - set(df.columns)
    if missing:
        sys.exit(f"dedust_spark learn: {a.input} lacks columns {sorted(missing)}")
    df = (
        df.where(F.col("fetch_status").cast("int") == 200)
        .where(~F.col("url").rlike("[\\t\\n\\r]") & ~F.col("content_digest").rlike("[\\t\\n\\r]"))
        .select(
            F.col("url"),
            F.col(a.host_column).alias("host"),
            F.col("content_digest").alias("cluster"),
        )
    ).cache()
    multi = (
        df.groupBy("cluster")
        .agg(F.collect_set("host").alias("hosts"))
        .where(F.size("hosts") > 1)
        .select("hosts")
        .collect()
    )
    comp = spark.sparkContext.broadcast(components(r.hosts for r in multi))
    parts = a.partitions or spark.sparkContext.defaultParallelism
    learn_args = shlex.split(a.learn_args)

    def learn_partition(rows):
        rows = list(rows)
        if not rows:
            return
        tsv = "cluster\turl\n" + "".join(f"{c}\t{u}\n" for _, (c, u) in rows)
        cmd = [dedust_bin(), "learn", "-", "--input-format", "tsv", "-q", "--threads", "1", *learn_args]
        yield run(cmd, tsv.encode("utf-8")).decode("utf-8")

    rule_texts = (
        df.rdd.map(lambda r: (comp.value.get(r.host, r.host), (r.cluster, r.url)))
        .partitionBy(parts)
        .mapPartitions(learn_partition)
        .collect()
    )
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, text in enumerate(rule_texts):
            f = os.path.join(tmp, f"part-{i:05d}.json")
            with open(f, "w", encoding="utf-8") as out:
                out.write(text)
            files.append(f)
        if not files:
            sys.exit("dedust_spark learn: no captures with fetch_status 200")
        p = subprocess.run([dedust_bin(), "merge", *files, "-o", a.output])
        if p.returncode != 0:
            sys.exit(p.returncode)
    print(f"dedust_spark learn: {len(files)} partitions learned, merged into {a.output}", file=sys.stderr)


def normalize(spark, a):
    rules = [shipped(r, r) for r in a.rules]
    extra = shlex.split(a.normalize_args)
    rules_names = [os.path.basename(r) for r in a.rules]
    local_rules = dict(zip(rules_names, rules))

    def normalize_partition(lines):
        lines = list(lines)
        if not lines:
            return
        paths = []
        for name in rules_names:
            try:
                paths.append(shipped(name, local_rules[name]))
            except FileNotFoundError:
                paths.append(local_rules[name])
        cmd = [dedust_bin(), "normalize", "--threads", "1", *extra]
        for p in paths:
            cmd += ["--rules", p]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        out = run(cmd, data).decode("utf-8").split("\n")
        if out and out[-1] == "":
            out.pop()
        if len(out) != len(lines):
            raise RuntimeError(f"dedust normalize gave {len(out)} lines for {len(lines)}")
        yield from zip(lines, out)

    # Lines end at "\n" only, as for `dedust normalize` (textFile would also split at a lone "\r").
    lines = spark.read.option("lineSep", "\n").text(a.input).rdd.map(lambda r: r.value)
    pairs = lines.mapPartitions(normalize_partition)
    if a.output_format == "parquet":
        spark.createDataFrame(pairs, "url string, canonical string").write.mode(
            "overwrite"
        ).parquet(a.output)
    else:
        pairs.map(lambda p: p[1]).saveAsTextFile(a.output)
    print(f"dedust_spark normalize: wrote {a.output} ({a.output_format})", file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="job", required=True)
    lp = sub.add_parser("learn", help="learn rules from columnar-index captures")
    lp.add_argument("--input", required=True, help="Parquet (or CSV with --input-format csv)")
    lp.add_argument("--input-format", choices=["parquet", "csv"], default="parquet")
    lp.add_argument("--host-column", default="url_host_name",
                    help="host column of the index (default url_host_name)")
    lp.add_argument("--output", required=True, help="merged rule file (local path)")
    lp.add_argument("--partitions", type=int, default=0, help="default: default parallelism")
    lp.add_argument("--learn-args", default="", help="extra flags for dedust learn, e.g. '--max-fpr 0.1'")
    np_ = sub.add_parser("normalize", help="normalize a URL list")
    np_.add_argument("--rules", action="append", required=True, help="rule file (repeatable)")
    np_.add_argument("--input", required=True)
    np_.add_argument("--output", required=True)
    np_.add_argument("--output-format", choices=["text", "parquet"], default="text")
    np_.add_argument("--normalize-args", default="", help="extra flags for dedust normalize")
    a = ap.parse_args(argv)
    spark = SparkSession.builder.appName(f"dedust-{a.job}").getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("DEDUST_SPARK_LOG", "WARN"))
    try:
        (learn if a.job == "learn" else normalize)(spark, a)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
