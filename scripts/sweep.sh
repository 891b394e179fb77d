#!/usr/bin/env bash
# Reproduces README's "Measured" and "Choosing the thresholds" tables:
# held-out reduction/lost for several seeds, test shares and --max-fpr values.
# Usage: scripts/sweep.sh [TRUTH.tsv]   (default: ../shared/datasets/ubuntuforums/clusters.tsv)
set -euo pipefail
cd "$(dirname "$0")/.."
truth="${1:-../shared/datasets/ubuntuforums/clusters.tsv}"
cargo build --release --quiet
bin=target/release/dedust
echo "| max-fpr | test share | seed 1 | seed 2 | seed 3 | seed 4 | seed 5 |"
echo "|---|---|---|---|---|---|---|"
for fpr in 0.05 0.1 0.15 0.2 0.3; do
  for tf in 0.2 0.5; do
    row="| $fpr | $tf |"
    for seed in 1 2 3 4 5; do
      cell=$("$bin" evaluate --truth "$truth" --seed "$seed" --test-fraction "$tf" --max-fpr "$fpr" | awk '$1=="rules"{printf "%s / %s", $5, $6}')
      row="$row $cell |"
    done
    echo "$row"
  done
done
