#!/usr/bin/env bash
# Configures build-asan/: clang with AddressSanitizer + UBSan (UB aborts) and
# libFuzzer's coverage instrumentation (-DLOSTFLOPS_FUZZ=ON), at -O1
# -gline-tables-only. One build serves both sanitized jobs: `make sanitize`
# builds and runs the unit tests in it, scripts/fuzz.sh (`make fuzz`,
# `make fuzz-ci`) builds the fuzz targets in it against the same objects of
# the library, so `make check` compiles the library twice (release, this),
# not three times (docs/code-health.md, "Build and test time").
#   scripts/configure-asan.sh            keep the dir's -Werror setting
#   WERROR=ON scripts/configure-asan.sh  -Werror (make check)
set -euo pipefail
cd "$(dirname "$0")/.."
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
werror=()
[ -n "${WERROR:-}" ] && werror=(-DLOSTFLOPS_WERROR="$WERROR")
# -O1 -gline-tables-only: libFuzzer's own usage line ("clang -g -O1
# -fsanitize=fuzzer,address", llvm.org/docs/LibFuzzer.html), and clang's
# AddressSanitizer manual ("to get a reasonable performance add -O1 or
# higher"), with line tables only (a report's stack needs no more).
CC=clang CXX=clang++ cmake -S . -B build-asan "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DLOSTFLOPS_FUZZ=ON -DLOSTFLOPS_BENCH=OFF -DLOSTFLOPS_PYTHON=OFF "${werror[@]}" >/dev/null
