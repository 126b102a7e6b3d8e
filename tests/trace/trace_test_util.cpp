// Test helpers for the trace reader (see trace_test_util.h).
#include "trace/trace_test_util.h"

#include <fmt/format.h>
#include <zlib.h>

#include <stdexcept>

namespace lostflops::trace::test {

std::string data_path(const std::string& name) {
    return std::string(LOSTFLOPS_SOURCE_DIR) + "/tests/data/trace/" + name;
}

std::string gunzip_file(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) throw std::runtime_error("cannot open " + path);
    std::string out;
    char buf[1 << 16];
    int n = 0;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    gzclose(f);
    return out;
}

std::string make_trace(const std::vector<Ev>& events, int rank, const std::string& unit) {
    std::string s = "{\n  \"schemaVersion\": 1,\n";
    if (rank >= 0) {
        s += fmt::format("  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": 8}},\n", rank);
    }
    s += "  \"traceEvents\": [\n";
    for (std::size_t i = 0; i < events.size(); ++i) {
        const Ev& e = events[i];
        std::string args;
        if (e.stream >= 0) args += fmt::format("\"stream\": {}", e.stream);
        if (e.correlation >= 0) args += fmt::format("{}\"correlation\": {}", args.empty() ? "" : ", ", e.correlation);
        if (!e.collective.empty()) {
            args += fmt::format("{}\"Collective name\": \"{}\"", args.empty() ? "" : ", ", e.collective);
        }
        s += fmt::format("    {{\"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": 0, \"tid\": 7, "
                         "\"ts\": {}, \"dur\": {}, \"args\": {{{}}}}}{}\n",
                         e.cat, e.name, e.ts, e.dur, args, i + 1 < events.size() ? "," : "");
    }
    s += fmt::format("  ],\n  \"displayTimeUnit\": \"{}\"\n}}\n", unit);
    return s;
}

}  // namespace lostflops::trace::test
