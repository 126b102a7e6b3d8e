// Helpers of the trace tests: test-data paths and small synthetic traces.
#pragma once

#include <string>
#include <vector>

namespace lostflops::trace::test {

std::string data_path(const std::string& name);   // tests/data/trace/<name>
std::string gunzip_file(const std::string& path); // whole file, decompressed

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

}  // namespace lostflops::trace::test
