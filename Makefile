# Thin wrapper over CMake (as duckdb does). `make` builds release into build/,
# `make test` builds and runs every test, `make sanitize` does the same under
# ASan + UBSan in build-asan/, `make bench` runs the benchmarks.
JOBS ?= $(shell nproc)
GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build test sanitize bench clean
all: build

build:
	cmake -S . -B build $(GEN) -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)

test: build
	cd build && ctest --output-on-failure -j $(JOBS)

sanitize:
	cmake -S . -B build-asan $(GEN) -DCMAKE_BUILD_TYPE=Debug -DLOSTFLOPS_SANITIZE=ON -DLOSTFLOPS_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

bench: build
	./build/bench_estimate

clean:
	rm -rf build build-asan build-fuzz
