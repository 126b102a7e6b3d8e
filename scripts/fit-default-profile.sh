#!/usr/bin/env bash
# Refit the fitted factors of data/calibration/default.yaml on both calibration
# tables at once (29 published large runs + 72 measured small A100 runs), the
# way the default profile was made:
#   scripts/fit-default-profile.sh [OUT.yaml]   (default: /tmp/lostflops-fit.yaml)
# It writes the union table into a temporary folder, runs
# `lostflops calibrate runs` on it (MAPE over all 101 runs, 5-fold
# cross-validation) and prints the report; copy the fitted values into
# data/calibration/default.yaml by hand, with their comments.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/lostflops-fit.yaml}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/runs"
cp data/published/runs/*.json data/measured/vtrain-train/runs/*.json "$dir/runs/"
{ cat data/published/published-runs.csv; tail -n +2 data/measured/vtrain-train/measured-runs.csv; } > "$dir/union.csv"
build/lostflops calibrate runs "$dir/union.csv" -o "$out"
