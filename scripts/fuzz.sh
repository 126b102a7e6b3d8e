#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, build-fuzz/) and runs
# each for SECONDS (default 60) from its seed corpus (real inputs of the
# project, read only; new inputs go to a scratch corpus). A crash, a
# sanitizer report, a leak, a timeout of one input (-timeout) or more memory
# than -rss_limit_mb fails the run: the input is left in build-fuzz/findings/.
#   scripts/fuzz.sh [SECONDS] [TARGET...]       e.g. scripts/fuzz.sh 600 fuzz_toml
# FUZZ_SEED=N makes a run repeatable: libFuzzer's -seed=N from an empty
# scratch corpus (build-fuzz/corpus-seedN/, wiped first), so the inputs tried
# are those of any other run with that seed, up to the shorter run's length.
# CI uses it (make fuzz-ci: seed 1, 30 s): a CI finding is reproducible here,
# and a longer clean run here with the same seed covers what CI will try.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
jobs=${JOBS:-$(nproc)}
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 -gline-tables-only: libFuzzer's own usage line ("clang -g -O1
# -fsanitize=fuzzer,address", llvm.org/docs/LibFuzzer.html) with line tables
# only (a report's stack needs no more); a fifth less build time than -O2 -g.
CC=clang CXX=clang++ cmake -S . -B build-fuzz "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DLOSTFLOPS_FUZZ=ON -DLOSTFLOPS_TESTS=OFF -DLOSTFLOPS_BENCH=OFF -DLOSTFLOPS_PYTHON=OFF >/dev/null
# The fuzz targets only (not the executable: its CLI11 code is slow to build
# under the sanitizers and no target needs it).
mapfile -t all < <(grep -ho 'lostflops_fuzzer(fuzz_[a-z_]*' fuzz/CMakeLists.txt fuzz/*.cmake | sed 's/lostflops_fuzzer(//')
cmake --build build-fuzz -j "$jobs" --target "${all[@]}"

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
mkdir -p build-fuzz/findings
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  seed=()
  if [ -n "${FUZZ_SEED:-}" ]; then
    corpus=build-fuzz/corpus-seed$FUZZ_SEED/$t
    rm -rf "$corpus"
    seed=(-seed="$FUZZ_SEED")
  fi
  mkdir -p "$corpus"
  dirs=()
  for d in $(seeds "$t"); do [ -d "$d" ] && dirs+=("$d"); done
  echo "== $t: ${seconds} s${FUZZ_SEED:+, -seed=$FUZZ_SEED} (seeds: ${dirs[*]:-none})"
  # -rss_limit_mb: the readers' bound is 256 MB on the real executable; the
  # sanitizers' shadow memory and libFuzzer's corpus need more.
  log=build-fuzz/$t.log
  status=0
  "build-fuzz/fuzz/$t" "$corpus" "${dirs[@]}" -max_total_time="$seconds" "${seed[@]}" -rss_limit_mb=2048 -timeout=30 \
    -max_len=1048576 -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" >"$log" 2>&1 || status=$?
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY|fuzz invariant|Test unit written" "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log"
    echo "$t: finding (exit $status); the input is in build-fuzz/findings/"
    exit 1
  fi
done
