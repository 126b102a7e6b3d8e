#!/usr/bin/env bash
# Re-derive the device families of data/calibration/default.yaml from the
# component micro-benchmark tables (data/calibration/gemm.csv, attention.csv,
# memory_bound.csv, and any measured folder data/measured/GPU/ written by
# scripts/measure/gpu_components.py), never from end-to-end runs:
#   scripts/fit-components.sh [OUT.yaml]   (default: /tmp/lostflops-components.yaml)
# It prints every GEMM row with its fit and the values per family; copy
# gemm_max, memory_bound, reference_w_per_tflop, power_exponent and
# gemm_k_half into data/calibration/default.yaml by hand (a test,
# CalibrateComponents.DefaultProfileIsTheFitOfTheTables, fails until they agree).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/lostflops-components.yaml}
args=()
for d in data/measured/*/; do
  [ -f "$d/meta.json" ] && args+=(--measured "${d%/}")
done
build/lostflops calibrate components "${args[@]}" -o "$out"
