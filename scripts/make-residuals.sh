#!/usr/bin/env bash
# Re-make data/calibration/residuals.csv, the out-of-sample residual table the
# 80 % interval of every estimate is drawn from: every run of the project's
# run tables (issue 39: every table, each source family left out once)
# predicted by a fit made without its source family.
# Run it whenever the model or the default profile changes (the test
# Residuals.TableIsCurrent fails until then), then rebuild:
#   scripts/make-residuals.sh && ninja -C build
set -euo pipefail
cd "$(dirname "$0")/.."
build/lostflops calibrate residuals data/published/published-runs.csv \
  data/measured/vtrain-train/measured-runs.csv data/published/modern/published-runs.csv \
  data/published/maxtext/published-runs.csv data/measured/h200-steps/measured-runs.csv \
  -o data/calibration/residuals.csv
