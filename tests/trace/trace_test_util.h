// Helpers of the trace tests: where the real traces are (../shared/traces,
// outside the project: Holistic Trace Analysis' test data), generated traces
// written to files, gzip, and small hand-made traces.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lostflops/trace.h"
#include "lostflops/trace_synth.h"
#include "test_util.h"

namespace lostflops::trace::test {

std::string data_path(const std::string& name);    // tests/data/trace/<name> (the project's own inputs)
// ../shared/traces/<name> relative to the repository root; "" when absent.
std::string shared_trace(const std::string& name);
std::string gunzip_file(const std::string& path);  // whole file, decompressed
std::string gzip_text(const std::string& text);    // gzip bytes (zlib, level 6)
std::string read_bytes(const std::string& path);   // whole file as it is
// A fresh directory under the test temp dir ("" removes nothing; removed by the caller).
std::string temp_dir(const std::string& name);
// Writes the generated traces of `ranks` into `dir` (trace synth's names); returns their paths.
std::vector<std::string> write_synth(const SynthSpec& s, const std::vector<int>& ranks, const std::string& dir);

struct Ev {
    std::string name;
    std::string cat = "kernel";
    double ts = 0;
    double dur = 0;
    int stream = 7;          // < 0: no stream argument
    long correlation = -1;   // < 0: none
    std::string collective;  // args["Collective name"], empty: none
};
// A Kineto-like trace; rank < 0 leaves out distributedInfo.
std::string make_trace(const std::vector<Ev>& events, int rank = 0, const std::string& unit = "ms");

// Measured memory's invariants (trace_memory.h), as gtest expectations: a
// timeline in time order of at most kMaxMemoryTimelinePoints points, each
// with allocated <= reserved, holding both peaks, the allocated one at its time.
void expect_memory_invariants(const DeviceMemory& m);

}  // namespace lostflops::trace::test

// Skips the test, saying why, when ../shared/traces/NAME is absent; else
// declares `const std::string VAR` = its path.
#define LOSTFLOPS_SHARED_TRACE(VAR, NAME)                                                                  \
    const std::string VAR = ::lostflops::trace::test::shared_trace(NAME);                                   \
    if (VAR.empty())                                                                                       \
    GTEST_SKIP() << "../shared/traces/" << (NAME)                                                         \
                 << " not found (real traces are kept outside the project): skipped"

namespace lostflops::trace::test {
using ::lostflops::test::error_of;  // test_util.h
// Runs `shell_command` (/bin/sh -c, started by python3 so that its peak is
// its own) and returns its peak resident set in KiB; `code` gets its exit
// status. Throws std::runtime_error when it cannot be run.
long child_peak_rss_kib(const std::string& shell_command, int& code);
// Whether a peak measured that way means anything: not under the sanitizers
// (their shadow memory alone is about 230 MB; tests/CMakeLists.txt defines
// LOSTFLOPS_SANITIZED in the sanitized build).
constexpr bool rss_is_meaningful() {
#ifdef LOSTFLOPS_SANITIZED
    return false;
#else
    return true;
#endif
}
}  // namespace lostflops::trace::test
