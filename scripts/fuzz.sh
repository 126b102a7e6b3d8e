#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, build-asan/) and runs
# each for SECONDS (default 60) from its seed corpus (real inputs of the
# project, read only; new inputs go to a scratch corpus). A crash, a
# sanitizer report, a leak, a timeout of one input (-timeout) or more memory
# than -rss_limit_mb fails the run: the input is left in build-asan/findings/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]       e.g. scripts/fuzz.sh 600 fuzz_toml
# FUZZ_SEED=N makes a run repeatable: libFuzzer's -seed=N from an empty
# scratch corpus (build-asan/corpus-seedN/, wiped first), so the inputs tried
# are those of any other run with that seed, up to the shorter run's length.
# CI uses it (make fuzz-ci: seed 1, 30 s): a CI finding is reproducible here,
# and a longer clean run here with the same seed covers what CI will try.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
jobs=${JOBS:-$(nproc)}
# The sanitized build dir, shared with the unit tests (scripts/configure-asan.sh).
scripts/configure-asan.sh
# The fuzz targets only (`make sanitize` builds the rest: the executable and
# the unit tests).
mapfile -t all < <(grep -ho 'lostflops_fuzzer(fuzz_[a-z_]*' fuzz/CMakeLists.txt fuzz/*.cmake | sed 's/lostflops_fuzzer(//')
cmake --build build-asan -j "$jobs" --target "${all[@]}"

# Seed directories of each target (every file in them is an input).
seeds() {
  case "$1" in
    fuzz_job) echo data/jobs examples data/published/runs ;;
    fuzz_toml) echo tests/data/interop/torchtitan ;;
    fuzz_maxtext) echo tests/data/interop/maxtext ;;
    fuzz_torchtitan_cli) echo tests/data/interop/torchtitan-cli ;;
    fuzz_components) echo tests/data/calibrate/components-fuzz ;;
    fuzz_megatron) echo tests/data/interop/megatron ;;
    fuzz_csv) echo data/published ;;
    fuzz_calibration) echo data/calibration ;;
    fuzz_nccl) echo tests/data/calibrate ;;
    fuzz_trace) echo tests/data/trace ;;
  esac
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
mkdir -p build-asan/findings
for t in "${targets[@]}"; do
  corpus=build-asan/corpus/$t
  seed=()
  if [ -n "${FUZZ_SEED:-}" ]; then
    corpus=build-asan/corpus-seed$FUZZ_SEED/$t
    rm -rf "$corpus"
    seed=(-seed="$FUZZ_SEED")
  fi
  mkdir -p "$corpus"
  dirs=()
  for d in $(seeds "$t"); do [ -d "$d" ] && dirs+=("$d"); done
  echo "== $t: ${seconds} s${FUZZ_SEED:+, -seed=$FUZZ_SEED} (seeds: ${dirs[*]:-none})"
  # -rss_limit_mb: the readers' bound is 256 MB on the real executable; the
  # sanitizers' shadow memory and libFuzzer's corpus need more.
  log=build-asan/$t.log
  status=0
  "build-asan/fuzz/$t" "$corpus" "${dirs[@]}" -max_total_time="$seconds" "${seed[@]}" -rss_limit_mb=2048 -timeout=30 \
    -max_len=1048576 -print_final_stats=1 -artifact_prefix="build-asan/findings/$t-" >"$log" 2>&1 || status=$?
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY|fuzz invariant|Test unit written" "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log"
    echo "$t: finding (exit $status); the input is in build-asan/findings/"
    exit 1
  fi
done
