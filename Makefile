# Thin wrapper over CMake (as duckdb does).
#   make          release build in build/ (build/lostflops)
#   make run      build the executable only and estimate the built-in default job
#   make test     build and run every unit test
#   make sanitize the unit tests under AddressSanitizer + UBSan (clang, build-asan/)
#   make check    test + sanitize + fuzz-ci (what CI runs), with -Werror
#                 (WERROR=ON: any compiler warning of the gcc builds fails it)
#   make bench    Google Benchmark programs
#   make fuzz     libFuzzer targets in the same build-asan/ (FUZZ_SECONDS each, default 60)
#   make fuzz-ci  the same, 30 s each from libFuzzer seed 1 (CI: every target, 11 today, about 7 minutes)
#   make tidy     clang-tidy (.clang-tidy: the cognitive-complexity ceiling) over src/ and python/,
#                 from build-tidy/compile_commands.json; not in `make check` (docs/code-health.md)
JOBS ?= $(shell nproc)
GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

FUZZ_SECONDS ?= 60
# -Werror for the gcc builds (cmake/warnings.cmake); `make check` turns it on.
# Unset, a build dir keeps what it was configured with (no rebuild after check).
WERROR ?=
werror = $(if $(WERROR),-DLOSTFLOPS_WERROR=$(WERROR))
.PHONY: all build run test sanitize check bench fuzz fuzz-ci tidy clean
all: build

build:
	cmake -S . -B build $(GEN) -DCMAKE_BUILD_TYPE=Release $(werror)
	cmake --build build -j $(JOBS)

# The first command builds only what it runs: the executable (not the tests,
# benchmarks or Python module that `make build` also builds).
run:
	cmake -S . -B build $(GEN) -DCMAKE_BUILD_TYPE=Release $(werror)
	cmake --build build -j $(JOBS) --target lostflops
	./build/lostflops estimate

test: build
	cd build && ctest --output-on-failure -j $(JOBS)

# One sanitized build for the unit tests and the fuzz targets (scripts/configure-asan.sh).
sanitize:
	WERROR=$(WERROR) ./scripts/configure-asan.sh
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

check: WERROR = ON
check: test sanitize fuzz-ci

bench: build
	./build/bench_estimate
	./build/bench_search
	./build/bench_goodput
	[ -x ./build/bench_trace ] && ./build/bench_trace || true

fuzz:
	JOBS=$(JOBS) ./scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-ci:
	FUZZ_SEED=1 JOBS=$(JOBS) ./scripts/fuzz.sh 30

# run-clang-tidy (Debian's clang-tidy package) over every translation unit of
# src/ and python/ in the compile database; exits non-zero on a finding.
CLANG_TIDY ?= clang-tidy
RUN_CLANG_TIDY ?= run-clang-tidy
# Its own build dir, configured only (clang-tidy reads compile_commands.json):
# under -Werror clang stops on gcc 12's -Wno-stringop-overread (cmake/warnings.cmake).
tidy:
	cmake -S . -B build-tidy $(GEN) -DCMAKE_BUILD_TYPE=Release -DLOSTFLOPS_WERROR=OFF
	$(RUN_CLANG_TIDY) -clang-tidy-binary $(CLANG_TIDY) -p build-tidy -quiet -j $(JOBS) '$(CURDIR)/(src|python)/'

clean:
	rm -rf build build-asan build-tidy
