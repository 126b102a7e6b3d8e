#!/usr/bin/env bash
# Refit the fitted (system-level) factors of data/calibration/default.yaml on
# the run tables it names under `fitted_on` (the 29 published runs and the 72
# small measured A100 runs of vTrain; the 26 modern runs of
# ../shared/reference/modern stay out, to judge the model), the way the
# default profile was made:
#   scripts/fit-default-profile.sh [OUT.yaml]   (default: /tmp/lostflops-fit.yaml)
# It writes the union table into a temporary folder, runs
# `lostflops calibrate runs` on it (MAPE over all runs, leave-one-source-out
# error) and prints the report; copy the fitted values into
# data/calibration/default.yaml by hand, with their comments. Device-family
# factors are never fitted here: `scripts/fit-components.sh` derives them from
# the component micro-benchmark tables.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/lostflops-fit.yaml}
tables=(data/published/published-runs.csv data/measured/vtrain-train/measured-runs.csv)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/runs"
head -1 "${tables[0]}" > "$dir/union.csv"
for t in "${tables[@]}"; do
  cp "$(dirname "$t")"/runs/*.json "$dir/runs/"
  tail -n +2 "$t" >> "$dir/union.csv"
done
build/lostflops calibrate runs "$dir/union.csv" -o "$out"
