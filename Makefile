# Thin wrapper over CMake (as duckdb does).
#   make          release build in build/ (build/lostflops)
#   make run      build and estimate the built-in default job
#   make test     build and run every unit test
#   make sanitize the same under AddressSanitizer + UBSan in build-asan/
#   make check    test + sanitize (what CI runs)
#   make bench    Google Benchmark programs
#   make fuzz     libFuzzer targets with clang in build-fuzz/ (60 s each)
JOBS ?= $(shell nproc)
GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build run test sanitize check bench fuzz clean
all: build

build:
	cmake -S . -B build $(GEN) -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)

run: build
	./build/lostflops estimate

test: build
	cd build && ctest --output-on-failure -j $(JOBS)

sanitize:
	cmake -S . -B build-asan $(GEN) -DCMAKE_BUILD_TYPE=Debug -DLOSTFLOPS_SANITIZE=ON -DLOSTFLOPS_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

check: test sanitize

bench: build
	./build/bench_estimate
	./build/bench_search
	./build/bench_goodput
	[ -x ./build/bench_trace ] && ./build/bench_trace || true

fuzz:
	CC=clang CXX=clang++ cmake -S . -B build-fuzz $(GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOSTFLOPS_FUZZ=ON -DLOSTFLOPS_TESTS=OFF -DLOSTFLOPS_BENCH=OFF
	cmake --build build-fuzz -j $(JOBS)
	for f in build-fuzz/fuzz/fuzz_*; do [ -x $$f ] && $$f -max_total_time=60 -rss_limit_mb=2048 || exit 1; done

clean:
	rm -rf build build-asan build-fuzz
