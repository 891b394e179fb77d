#!/usr/bin/env python3
"""dedust on Apache Spark: learn rules from Common Crawl duplicate clusters, normalize frontiers.

The work is done by the `dedust` binary itself (shipped with `--files`, found with
`SparkFiles.get`); Spark only shards the data and pipes each shard through it.

learn
    Input: the Common Crawl columnar-index columns `url`, `content_digest`, `fetch_status`
    (Parquet, or CSV with a header). Captures with `fetch_status = 200` are grouped by
    `content_digest` into duplicate clusters. `dedust learn` never lets a cluster's evidence cross
    registrable domains (it learns a cluster spanning several sites as one cluster per site), so
    rows are keyed by site — computed by the binary itself on the executors (`dedust site
    --with-host`, the site and host after base normalization, exactly as learn splits), never by a
    driver-side union of hosts. A digest on more than `--boilerplate-sites` sites (an empty body,
    a parked or 404 page) is boilerplate: learn splits it per host, so it joins no hosts; the
    job reports how many there are and the biggest. A site bigger than half a partition is split
    into its host groups (hosts joined by its other clusters: label propagation with Spark joins).
    Units (sites, host groups) bigger than 1/8 of a partition are packed largest first onto the
    least-loaded partition, smaller ones hashed; the driver holds O(partitions) numbers. Each
    partition's rows are streamed as `cluster<TAB>url` TSV into `dedust learn - --shard`; the
    partition rule files are combined on the executors by a tree of `dedust merge --partial`
    (`--merge-fanin` files a step) ending in one `dedust merge`, so the driver receives one
    merged file (and its slim tier file) per pass, never one file per partition. When the partitions learned
    cross-host candidates, pass 2 validates every partition's candidates on every partition
    (`--cross-host-candidates`: the tier is judged on all the data) and pass 3 learns host rules
    around the decided tier (`--cross-host-decided`); the merged pass-3 file is `--output`
    (written atomically): the rules a single `dedust learn` writes (README, "Running on Spark").
    `--stats FILE` writes the job's numbers (rows, partition skew, boilerplate, driver-collected
    rows, peak memory, seconds per pass).

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
import itertools
import json
import os
import shutil
import re
import shlex
import stat
import subprocess
import sys
import tempfile
import time

from pyspark import SparkFiles
from pyspark import StorageLevel
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


def site_keys(rows):
    """`(cluster, url)` rows → `(cluster, url, site, host)`: where `learn` puts each URL (its site and
    host after base normalization; empty when learn leaves the URL out), computed by
    `dedust site --with-host` on the executor. Streamed: a writer thread feeds the binary while
    its answers are read, so a partition is never held whole."""
    import collections
    import threading

    p = subprocess.Popen([dedust_bin(), "site", "-q", "--with-host", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pending = collections.deque()
    failed = []

    def feed():
        try:
            chunk, size = [], 0
            for row in rows:
                pending.append(row)
                chunk.append(row[1])
                size += len(row[1]) + 1
                if size >= 1 << 16:
                    p.stdin.write(("\n".join(chunk) + "\n").encode("utf-8"))
                    chunk, size = [], 0
            if chunk:
                p.stdin.write(("\n".join(chunk) + "\n").encode("utf-8"))
        except BaseException as e:  # surfaced by the reading side
            failed.append(e)
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    for line in p.stdout:
        cluster, url = pending.popleft()
        site, _, host = line.rstrip(b"\n").decode("utf-8").partition("\t")
        yield (cluster, url, site, host)
    t.join()
    err = p.stderr.read().decode("utf-8", "replace")
    if p.wait() != 0 or failed or pending:
        raise RuntimeError(f"dedust site failed ({p.returncode}, {len(pending)} rows unanswered): "
                           f"{failed[0] if failed else err}")


def learn_partition(learn_args, shipped_args=(), job_id=None):
    """A function (for `mapPartitionsWithIndex`) piping one partition's `(pid, (cluster, url))`
    rows as TSV into `dedust learn -` as they are read; yields `(partition rows, rule file text,
    child peak RSS KiB, worker peak RSS KiB, seconds)` (nothing for an empty partition).
    `shipped_args`: `(flag, file name)` pairs whose file was shipped with
    `SparkContext.addFile`, found on the executor. `job_id`: recorded in the rule file with the
    partition index (`--job-id`, `--partition`), so `merge` pools evidence within this job only."""

    def run_part(index, rows):
        import resource

        t0 = time.time()
        it = iter(rows)
        first = next(it, None)
        if first is None:
            return
        cmd = [dedust_bin(), "learn", "-", "--input-format", "tsv", "-q", "-v", "--threads", "1",
               *learn_args]
        if job_id is not None:
            cmd += ["--job-id", job_id, "--partition", str(index)]
        for flag, name in shipped_args:
            cmd += [flag, SparkFiles.get(name)]
        with tempfile.TemporaryFile() as err:
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
            n = 0
            try:
                chunk = ["cluster\turl\n"]
                size = 0
                for _, (c, u) in itertools.chain([first], it):
                    chunk.append(f"{c}\t{u}\n")
                    size += len(c) + len(u) + 2
                    n += 1
                    if size >= 1 << 16:
                        p.stdin.write("".join(chunk).encode("utf-8"))
                        chunk, size = [], 0
                p.stdin.write("".join(chunk).encode("utf-8"))
            except BrokenPipeError:
                pass  # learn stopped reading: its exit code and stderr say why, below
            finally:
                try:
                    p.stdin.close()
                except BrokenPipeError:
                    pass
            out = p.stdout.read()
            code = p.wait()
            err.seek(0)
            log = err.read().decode("utf-8", "replace")
            if code != 0:
                raise RuntimeError(f"{' '.join(cmd)} exited with {code}: {log}")
        # `learn -v` reports its peak (VmHWM); a child's ru_maxrss would include the worker's
        # (Linux carries the parent's high-water mark across fork).
        peaks = re.findall(r"peak RSS so far ([0-9.]+) GiB", log)
        peak = int(float(peaks[-1]) * 1048576) if peaks else 0
        yield (n, out.decode("utf-8"), peak,
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.time() - t0)

    return run_part


def host_components(spark, hc, max_rounds=50):
    """Connected components of hosts joined by clusters, as `(host, label)` with label = the
    least host of the component: label propagation with Spark joins (each round: a cluster takes
    the least label of its hosts, a host the least label of its clusters), on the executors.
    `hc` is a DataFrame of distinct `(ck, host)` (ck: a cluster part). Rounds ≤ the largest
    component's diameter + 1."""
    labels = hc.select("host").distinct().withColumn("label", F.col("host")).localCheckpoint()
    for r in range(max_rounds):
        per_cluster = hc.join(labels, "host").groupBy("ck").agg(F.min("label").alias("m"))
        per_host = hc.join(per_cluster, "ck").groupBy("host").agg(F.min("m").alias("new"))
        nxt = labels.join(per_host, "host", "left").select(
            "host", F.least(F.col("label"), F.coalesce(F.col("new"), F.col("label"))).alias("label"),
            (F.col("new") < F.col("label")).alias("moved"),
        ).localCheckpoint()
        moved = nxt.where(F.col("moved")).count()
        labels = nxt.select("host", "label")
        if moved == 0:
            return labels, r + 1
    raise RuntimeError(f"host components did not settle in {max_rounds} rounds")


def tier_text(merged):
    """A rule file holding only what the next pass reads from the merged file text `merged`: its
    cross-host rules and cross-host candidates (`evidence`), without their per-site lists
    (supporting, attested, except, examples: `learn` sets a foreign candidate's own) and without
    `exposure` — so every partition loads a file the size of the candidate list, not of the
    crawl's site lists. `None` when it holds neither a cross-host rule nor a cross-host
    candidate."""
    v = json.loads(merged)
    if not v.get("evidence") and not any(r.get("scope") == "*" for r in v.get("rules", [])):
        return None

    def slim(r):
        return dict(r, supporting=[], attested=[], examples=[], **{"except": []})

    v["rules"] = [slim(r) for r in v["rules"] if r.get("scope") == "*"]
    v["evidence"] = [slim(r) for r in v.get("evidence", [])]
    v.pop("exposure", None)
    return json.dumps(v)


def run_merge(files, out, partial):
    """`dedust merge [--partial]` of rule files into `out`; returns its peak RSS in KiB (`-v`)
    and its warnings. Raises on failure."""
    cmd = [dedust_bin(), "merge", "-q", "-v", *(["--partial"] if partial else []), *files,
           "-o", out]
    p = subprocess.run(cmd, capture_output=True)
    log = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        kind = "merge --partial" if partial else "merge"
        raise RuntimeError(f"dedust {kind} of {len(files)} files exited with {p.returncode}: {log}")
    peaks = re.findall(r"peak RSS so far ([0-9.]+) GiB", log)
    warnings = "".join(line + "\n" for line in log.splitlines() if "warning" in line)
    return (int(float(peaks[-1]) * 1048576) if peaks else 0), warnings


def write_parts(texts, tmp):
    """Rule file texts written to files in directory `tmp` as they arrive (one held at a
    time). Returns `(paths, last text or None)`."""
    files, last = [], None
    for i, text in enumerate(texts):
        f = os.path.join(tmp, f"part-{i:05d}.json")
        with open(f, "w", encoding="utf-8") as o:
            o.write(text)
        files.append(f)
        last = text
    return files, last


def final_merge_part(texts, want_tier=True):
    """The last step of the tree merge, on one executor: its rule file texts merged by
    `dedust merge` (the pass's result), and the slim tier file of it for the next pass
    ([`tier_text`]). Yields `(merged text, tier text or None, merge peak RSS KiB, warnings)`,
    nothing for no files. The driver then holds these two texts, nothing per partition."""
    with tempfile.TemporaryDirectory() as tmp:
        files, _ = write_parts(texts, tmp)
        if not files:
            return
        out = os.path.join(tmp, "merged.json")
        peak, warnings = run_merge(files, out, partial=False)
        with open(out, encoding="utf-8") as f:
            merged = f.read()
        yield (merged, tier_text(merged) if want_tier else None, peak, warnings)


def merge_partial_part(texts):
    """One step of the tree merge, on an executor: this partition's rule file texts written to
    temporary files as they arrive (one held at a time) and combined by `dedust merge --partial`
    into one partial file; a lone text passes as it is, an empty partition yields nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        files, last = write_parts(texts, tmp)
        if not files:
            return
        if len(files) == 1:
            yield last
            return
        last = None
        out = os.path.join(tmp, "merged.json")
        _, warnings = run_merge(files, out, partial=True)
        sys.stderr.write(warnings)  # conflict warnings, in the executor's log
        with open(out, encoding="utf-8") as f:
            yield f.read()


def tree_merge(texts, fanin, want_tier=True):
    """The partitions' rule files (an RDD of texts, at most one per partition) merged on the
    executors as a tree: while more than `fanin` partitions are left, each level sends
    partitions i·fanin … i·fanin + fanin − 1 to partition i and merges its files with
    `dedust merge --partial` (merge gives one result for any grouping and order of its inputs);
    the last `fanin` or fewer go to one executor for the final `dedust merge`
    ([`final_merge_part`]). Returns `(merged text, tier text or None, peak KiB, warnings)`, or
    `None` for no files: the driver receives one result per pass, not one file per partition."""
    def group(n):
        return lambda i, it: ((i // n, t) for t in it)

    n = texts.getNumPartitions()
    while n > fanin:
        n = -(-n // fanin)
        texts = (
            texts.mapPartitionsWithIndex(group(fanin)).partitionBy(n, lambda k: k).values()
            .mapPartitions(merge_partial_part)
        )
    out = (
        texts.mapPartitionsWithIndex(group(n)).partitionBy(1, lambda k: 0).values()
        .mapPartitions(lambda it: final_merge_part(it, want_tier)).collect()
    )
    return out[0] if out else None


def unit_name(unit):
    """A site, or `site (hosts joined with HOST)` for a host group of a split site."""
    site, _, label = unit.partition("\u0000")
    return f"{site} (hosts joined with {label})" if label else site


def learn(spark, a):
    t_start = time.time()
    learn_args = shlex.split(a.learn_args)
    if a.merge_fanin < 2:
        sys.exit("dedust_spark learn: --merge-fanin must be 2 or more")
    if "--allow-cross-site" in learn_args:
        sys.exit("dedust_spark learn: --allow-cross-site joins clusters across sites, and this job "
                 "shards by site; run `dedust learn --allow-cross-site` on one machine instead")
    if any(x == "--boilerplate-sites" or x.startswith("--boilerplate-sites=") for x in learn_args):
        sys.exit("dedust_spark learn: set --boilerplate-sites on the job (it passes it to learn)")
    learn_args += ["--boilerplate-sites", str(a.boilerplate_sites), "--shard"]
    reader = spark.read
    if a.input_format == "csv":
        df = reader.option("header", True).csv(a.input)
    else:
        df = reader.parquet(a.input)
    need = {"url", "content_digest", "fetch_status"}
    missing = need - set(df.columns)
    if missing:
        sys.exit(f"dedust_spark learn: {a.input} lacks columns {sorted(missing)}")
    rows = (
        df.where(F.col("fetch_status").cast("int") == 200)
        .where(~F.col("url").rlike("[\\t\\n\\r]") & ~F.col("content_digest").rlike("[\\t\\n\\r]"))
        .select(F.col("content_digest").alias("cluster"), F.col("url"))
    )
    collected = 0
    # 1. Where learn puts each URL (site, host), computed by the binary on the executors.
    keyed = spark.createDataFrame(
        rows.rdd.map(tuple).mapPartitions(site_keys),
        "cluster string, url string, site string, host string",
    )
    # Kept on disk, not in the heap: the keyed rows are the whole input (at 20 M rows in local
    # mode, MEMORY_AND_DISK ran 3 GiB and 4 GiB heaps out of memory); they are read a few times.
    keyed = keyed.where(F.col("site") != "").persist(StorageLevel.DISK_ONLY)
    total = keyed.count()
    if total == 0:
        sys.exit("dedust_spark learn: no captures with fetch_status 200 that learn can use")
    parts = a.partitions or spark.sparkContext.defaultParallelism
    mean = total / parts
    # 2. Boilerplate: a digest on more sites than the bound joins no hosts (learn splits it per
    #    host too); reported with its size, the driver sees only the top few.
    per_digest = keyed.groupBy("cluster").agg(
        F.countDistinct("site").alias("sites"), F.count(F.lit(1)).alias("rows"))
    boiler = per_digest.where(F.col("sites") > a.boilerplate_sites).persist()
    b = boiler.agg(F.count(F.lit(1)).alias("n"), F.sum("rows").alias("rows")).first()
    top = boiler.orderBy(F.desc("rows"), "cluster").limit(5).collect()
    collected += 1 + len(top)
    # 3. Sites bigger than half a partition are split into their host groups (hosts joined by
    #    the clusters learn keeps whole within the site), found on the executors.
    site_rows = keyed.groupBy("site").agg(F.count(F.lit(1)).alias("rows"))
    split_sites = site_rows.where(F.col("rows") > mean * a.split_factor).select("site")
    in_split = keyed.join(F.broadcast(split_sites), "site")
    hc = (
        in_split.join(boiler.select("cluster"), "cluster", "left_anti")
        .select(F.concat_ws("\u0000", "cluster", "site").alias("ck"), "host")
        .distinct()
    )
    labels, rounds = host_components(spark, hc)
    keyed_u = keyed.join(labels, "host", "left").withColumn(
        "unit",
        F.when(F.col("label").isNull(), F.col("site")).otherwise(
            F.concat_ws("\u0000", "site", "label")),
    ).drop("label")
    # 4. Balanced assignment: units (a site, or a host group of a split site) bigger than
    #    1/pack of a partition are packed largest first onto the least-loaded partition (LPT);
    #    the many small ones are hashed. The driver sees O(partitions) numbers.
    unit_rows = keyed_u.groupBy("unit").agg(F.count(F.lit(1)).alias("rows"))
    big = unit_rows.where(F.col("rows") > mean / a.pack).collect()
    small_pid = F.pmod(F.xxhash64("unit"), F.lit(parts)).cast("int")
    big_df = spark.createDataFrame([(r.unit, r.rows) for r in big] or [("", 0)],
                                   "unit string, rows long")
    loads = [0] * parts
    for r in (
        keyed_u.join(F.broadcast(big_df.select("unit")), "unit", "left_anti")
        .groupBy(small_pid.alias("pid")).count().collect()
    ):
        loads[r.pid] = r["count"]
    collected += len(big) + parts
    assign = []
    for r in sorted(big, key=lambda r: (-r.rows, r.unit)):
        i = min(range(parts), key=lambda k: (loads[k], k))
        loads[i] += r.rows
        assign.append((r.unit, i))
    unsplit = [r for r in big if r.rows > 3 * mean]
    assign_df = spark.createDataFrame(assign or [("", 0)], "unit string, big_pid int")
    placed = keyed_u.join(F.broadcast(assign_df), "unit", "left").select(
        F.coalesce(F.col("big_pid"), small_pid).alias("pid"), "cluster", "url")
    # 5. Each partition streamed into `dedust learn -`; the rule files merged. Cross-host
    #    candidates are learned per partition but judged on every partition's evidence: pass 2
    #    validates every partition's candidates everywhere (complete pooled evidence decides
    #    the tier), pass 3 learns host rules around the decided tier. Without cross-host
    #    candidates, pass 1 is the result.
    by_pid = (
        placed.rdd.map(lambda r: (r.pid, (r.cluster, r.url)))
        .partitionBy(parts, lambda k: k)
        .persist(StorageLevel.DISK_ONLY)
    )
    tag = f"{os.getpid()}-{int(time.time() * 1000)}"
    # Every pass's partition files name this job: `merge` pools evidence within one job only.
    job_id = f"{spark.sparkContext.applicationId}-{tag}"
    passes = []

    def run_pass(n, shipped_args, want_tier=True):
        t = time.time()
        learned = by_pid.mapPartitionsWithIndex(
            learn_partition(learn_args, shipped_args, job_id)).persist(
            StorageLevel.DISK_ONLY)
        # The driver gets each partition's numbers, and one rule file: the partitions' files
        # are merged on the executors (a tree of `merge --partial`), the last step here.
        res = learned.map(lambda r: (r[0], None, r[2], r[3], r[4])).collect()
        try:
            top = tree_merge(learned.map(lambda r: r[1]), a.merge_fanin, want_tier)
        finally:
            learned.unpersist()
        if top is None:
            sys.exit("dedust_spark learn: no partition learned a rule file")
        merged, tier, peak, warnings = top
        sys.stderr.write(warnings)
        final_peaks.append(peak)
        f = os.path.join(tmp, f"dedust-pass{n}-{tag}.json")
        with open(f, "w", encoding="utf-8") as o:
            o.write(merged)
        slim = None
        if tier is not None:
            slim = f[: -len(".json")] + "-tier.json"
            with open(slim, "w", encoding="utf-8") as o:
                o.write(tier)
        passes.append(time.time() - t)
        return res, f, slim

    every = []  # every pass's per-partition results, for the peaks
    final_peaks = []  # every pass's final merge (on an executor)
    with tempfile.TemporaryDirectory() as tmp:
        results, merged, slim = run_pass(1, ())
        every += results
        if slim:
            spark.sparkContext.addFile(slim)
            results, merged, slim = run_pass(
                2, [("--cross-host-candidates", os.path.basename(slim))])
            every += results
            if slim:
                spark.sparkContext.addFile(slim)
                name = os.path.basename(slim)
                results, merged, _ = run_pass(
                    3, [("--cross-host-candidates", name), ("--cross-host-decided", name)],
                    want_tier=False)
                every += results
        # Atomic: the output appears whole or not at all.
        partial = f"{a.output}.partial-{tag}"
        shutil.copyfile(merged, partial)
        os.replace(partial, a.output)
    by_pid.unpersist()
    collected += (len(results) + 1) * len(passes)
    sizes = sorted((r[0] for r in results), reverse=True)
    stats = {
        "rows": total,
        "partitions": parts,
        "partitions_learned": len(results),
        "partition_rows_max": sizes[0] if sizes else 0,
        "partition_rows_mean": mean,
        "skew": (sizes[0] / mean) if sizes else 0.0,
        "boilerplate_digests": b["n"],
        "boilerplate_rows": b["rows"] or 0,
        "boilerplate_top": [(r.cluster, r.sites, r.rows) for r in top],
        "split_sites_rounds": rounds,
        "packed_units": len(big),
        "unsplittable_units": [(unit_name(r.unit), r.rows) for r in unsplit],
        "driver_collected_rows": collected,
        "learn_peak_rss_kib": max((r[2] for r in every), default=0),
        "worker_peak_rss_kib": max((r[3] for r in every), default=0),
        "learn_seconds_max": max((r[4] for r in every), default=0.0),
        "passes_seconds": passes,
        "driver_python_peak_rss_kib": __import__("resource").getrusage(
            __import__("resource").RUSAGE_SELF).ru_maxrss,
        # The tree merge's last step, `dedust merge` on one executor (`merge -v`).
        "final_merge_peak_rss_kib": max(final_peaks, default=0),
        "seconds": time.time() - t_start,
    }
    try:
        pid = spark.sparkContext._jvm.ProcessHandle.current().pid()
        with open(f"/proc/{pid}/status") as f:
            hwm = [line for line in f if line.startswith("VmHWM:")]
        stats["jvm_peak_rss_kib"] = int(hwm[0].split()[1]) if hwm else None
    except Exception:  # not Linux, or no access to the JVM
        stats["jvm_peak_rss_kib"] = None
    if a.stats:
        with open(a.stats, "w", encoding="utf-8") as f:
            json.dump(stats, f, indent=1)
    print(
        f"dedust_spark learn: {total} rows in {parts} partitions (largest {stats['partition_rows_max']}"
        f" rows = {stats['skew']:.2f}× the mean {mean:.0f}); {b['n']} boilerplate digests "
        f"({stats['boilerplate_rows']} rows, > {a.boilerplate_sites} sites each) joined no hosts"
        + "".join(f"; {c}: {s} sites, {n} rows" for c, s, n in stats["boilerplate_top"][:3])
        + f"; {len(big)} units packed; {len(passes)} learn passes "
        + "(" + ", ".join(f"{t:.0f} s" for t in passes) + f"); driver collected {collected} rows; "
        + f"merged into {a.output}",
        file=sys.stderr,
    )
    for unit, n in stats["unsplittable_units"]:
        print(f"dedust_spark learn: warning: {unit} ({n} rows, {n / mean:.1f}× a partition) is one "
              "group of hosts joined by clusters: learning it in pieces would change the rules",
              file=sys.stderr)


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
    lp.add_argument("--boilerplate-sites", type=int, default=20,
                    help="a digest on more registrable domains than this is boilerplate: it joins "
                         "no hosts (passed to dedust learn; default 20)")
    lp.add_argument("--split-factor", type=float, default=0.5,
                    help="sites over this share of a partition's mean rows are split into their "
                         "host groups (default 0.5)")
    lp.add_argument("--pack", type=float, default=8.0,
                    help="units over 1/PACK of a partition's mean rows are packed largest first; "
                         "smaller ones are hashed (default 8)")
    lp.add_argument("--merge-fanin", type=int, default=8,
                    help="rule files per `dedust merge --partial` in the executors' tree merge "
                         "(default 8; the driver reads one file per pass)")
    lp.add_argument("--stats", help="write the job's numbers (rows, skew, memory…) as JSON here")
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
