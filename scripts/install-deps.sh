#!/usr/bin/env bash
# Installs the Debian 12 packages lostflops needs to build and test, if any
# are missing. Needs root (or sudo).
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config
          libyaml-cpp-dev nlohmann-json3-dev zlib1g-dev libisal-dev
          libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          libdeflate-dev  # only the gzip comparison of bench_trace
          chromium  # the test that renders `lostflops report` headless (tests/explain)
          pybind11-dev python3-dev  # the Python module (docs/python.md)
          clang libclang-rt-14-dev)  # the sanitized build (make sanitize, make fuzz; both in make check): clang 14 and its runtimes
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
