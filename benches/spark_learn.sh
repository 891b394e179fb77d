#!/usr/bin/env bash
# Spark learn at Common Crawl index shape (README "Running on Spark"): for each size, writes an
# index-shaped Parquet with boilerplate (integrations/spark/gen_cc_index.py, cached), runs
# `dedust_spark.py learn` in local[2] with 32 partitions per 2 M rows, and prints a Markdown table:
# wall time, peak memory (the JVM that is driver and executor in local mode, the Python driver,
# the tree merge's final `dedust merge`, one `dedust learn` partition), partition skew (largest /
# mean rows), rows the driver collected;
# then the growth exponent of wall time between the two sizes.
# The JVM heap is DRIVER_MEMORY (default 4g; before the job kept its rows on disk, 3g and 4g heaps
# each ran out once at 20 M rows). Needs pyspark (pip install pyspark==3.5.3) and Java 17.
# Usage: benches/spark_learn.sh [ROWS...]   (default: 2000000 20000000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2000000 20000000)
cargo build --release --quiet
bin=$PWD/target/release/dedust
tmp=${TMPDIR:-/tmp}/dedust-bench-spark
mkdir -p "$tmp"
submit=$(python3 -c "import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), 'bin', 'spark-submit'))")
export PYSPARK_PYTHON=python3 PYSPARK_DRIVER_PYTHON=python3
rows_file=$tmp/rows.tsv
: > "$rows_file"
for n in "${sizes[@]}"; do
  pq=$tmp/cc-$n.parquet
  [ -d "$pq" ] || python3 integrations/spark/gen_cc_index.py --rows "$n" --output "$pq" --dedust "$bin" \
    --files $(( n / 125000 > 16 ? n / 125000 : 16 )) 2>&1 | grep '^gen_cc_index' || true
  parts=$(( n / 62500 > 32 ? n / 62500 : 32 ))
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$submit" --master 'local[2]' --driver-memory "${DRIVER_MEMORY:-4g}" \
    --conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false \
    --conf spark.sql.shuffle.partitions=$(( parts / 2 )) --files "$bin" \
    integrations/spark/dedust_spark.py learn --input "$pq" --output "$tmp/rules-$n.json" \
    --partitions "$parts" --stats "$tmp/stats-$n.json" 2> "$tmp/log-$n.txt" \
    || { tail -30 "$tmp/log-$n.txt"; exit 1; }
  read -r secs kb < "$tmp/time"
  printf '%s\t%s\t%s\t%s\n' "$n" "$secs" "$kb" "$tmp/stats-$n.json" >> "$rows_file"
done
python3 - "$rows_file" <<'PY'
import json, math, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
print("| index rows | status-200 rows | partitions | wall (s) | JVM peak (MiB) | Python driver peak (MiB) | final `dedust merge` peak (MiB, an executor) | one `dedust learn` peak (MiB) | largest / mean partition | driver-collected rows | boilerplate digests (rows) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
pts = []
for n, secs, kb, path in rows:
    st = json.load(open(path))
    pts.append((st["rows"], float(secs)))
    print(f"| {int(n):,} | {st['rows']:,} | {st['partitions']} | {float(secs):.0f} | "
          f"{int(kb) / 1024:.0f} | {st['driver_python_peak_rss_kib'] / 1024:.0f} | "
          f"{st.get('final_merge_peak_rss_kib', 0) / 1024:.0f} | "
          f"{st['learn_peak_rss_kib'] / 1024:.0f} | {st['skew']:.2f} | "
          f"{st['driver_collected_rows']} | {st['boilerplate_digests']} ({st['boilerplate_rows']:,}) |")
if len(pts) >= 2:
    (a, ta), (b, tb) = pts[0], pts[-1]
    k = math.log(tb / ta) / math.log(b / a)
    print(f"\nwall time grows as rows^{k:.2f} between {a:,} and {b:,} rows (2 cores, local mode)")
    cc = 3e9
    core_hours = tb * 2 / 3600 * (cc / b) ** k
    print(f"one Common Crawl crawl (~3e9 captures) at that exponent: {core_hours:,.0f} core-hours, "
          f"{core_hours / 800:.1f} h on 100 executors x 8 cores")
PY
