// Test helpers for the trace reader (see trace_test_util.h).
#include "trace/trace_test_util.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <stdexcept>

#include "lostflops/error.h"

namespace lostflops::trace::test {

std::string data_path(const std::string& name) {
    return std::string(LOSTFLOPS_SOURCE_DIR) + "/tests/data/trace/" + name;
}

std::string shared_trace(const std::string& name) {
    const std::string p = std::string(LOSTFLOPS_SOURCE_DIR) + "/../shared/traces/" + name;
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) ? p : std::string();
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

std::string gzip_text(const std::string& text) {
    z_stream zs{};
    if (deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    std::string out(deflateBound(&zs, static_cast<uLong>(text.size())), '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs.avail_in = static_cast<uInt>(text.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
    return out;
}

std::string read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string temp_dir(const std::string& name) {
    const auto p = std::filesystem::temp_directory_path() /
                   ("lostflops_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p.string();
}

std::vector<std::string> write_synth(const SynthSpec& s, const std::vector<int>& ranks, const std::string& dir) {
    const SynthJob job(s);
    std::vector<std::string> paths;
    for (const int r : ranks) {
        paths.push_back(dir + "/" + synth_file_name(r));
        std::ofstream(paths.back(), std::ios::binary) << job.trace(r);
    }
    return paths;
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

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

long child_peak_rss_kib(const std::string& shell_command, int& code) {
    // A child forked from this (large) test process would start its peak at
    // ours and keep it through exec(2): python3 starts the command afresh and
    // reports its children's peak (getrusage RUSAGE_CHILDREN).
    const std::string dir = temp_dir("rss");
    const std::string script = dir + "/rss.py", out = dir + "/rss.txt";
    std::ofstream(script) << "import resource, subprocess, sys\n"
                             "rc = subprocess.run(['/bin/sh', '-c', sys.argv[1]]).returncode\n"
                             "open(sys.argv[2], 'w').write('%d %d' % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n";
    std::string quoted = "'";
    for (const char c : shell_command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    const int status = std::system(("python3 " + script + " " + quoted + " " + out).c_str());
    long kib = -1;
    code = -1;
    std::ifstream in(out);
    if (status != 0 || !(in >> code >> kib)) throw std::runtime_error("cannot measure " + shell_command);
    std::filesystem::remove_all(dir);
    return kib;
}

void expect_memory_invariants(const DeviceMemory& m) {
    EXPECT_FALSE(m.timeline.empty());
    EXPECT_LE(m.timeline.size(), kMaxMemoryTimelinePoints);
    double alloc = 0, resv = 0;
    bool peak_point = false;
    for (std::size_t i = 0; i < m.timeline.size(); ++i) {
        const MemoryPoint& p = m.timeline[i];
        if (i > 0) {
            EXPECT_LT(m.timeline[i - 1].ts_us, p.ts_us);
        }
        EXPECT_LE(p.allocated_bytes, p.reserved_bytes);
        alloc = std::max(alloc, p.allocated_bytes);
        resv = std::max(resv, p.reserved_bytes);
        peak_point = peak_point || (p.ts_us == m.peak_allocated_ts_us && p.allocated_bytes == m.peak_allocated_bytes);
    }
    EXPECT_EQ(alloc, m.peak_allocated_bytes);
    EXPECT_EQ(resv, m.peak_reserved_bytes);
    EXPECT_TRUE(peak_point);
}

}  // namespace lostflops::trace::test
