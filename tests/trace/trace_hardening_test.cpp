// Hardening of the trace reader and summaries (issue 7): paths that are not
// regular files, bounded values and white space, junk, implausible events
// skipped and counted, byte-order marks, out-of-range ranks, compact storage.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

namespace fs = std::filesystem;

using test::error_of;

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("lostflops_trace_hardening_" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
};

std::string kernel(double ts, double dur, const std::string& name = "sgemm_128x128") {
    return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name + "\", \"ts\": " + std::to_string(ts) +
           ", \"dur\": " + std::to_string(dur) + ", \"args\": {\"stream\": 7}}";
}

std::string trace_of(const std::vector<std::string>& events, const std::string& head = "") {
    std::string s = "{" + head + "\"distributedInfo\": {\"rank\": 3}, \"traceEvents\": [";
    for (std::size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "\n") + events[i];
    return s + "]}";
}

// Devices, FIFOs, link loops and directories are refused before any read
// (a FIFO with no writer would block forever; /dev/zero never ends).
TEST(TraceHardening, NonRegularPathsAreRejected) {
    TempDir dir;
    const auto fifo = (dir.path / "pipe.json").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto loop = (dir.path / "loop.json").string();
    fs::create_symlink(loop, loop);
    EXPECT_TRUE(contains(error_of([] { read_trace("/dev/zero"); }), "device"));
    EXPECT_TRUE(contains(error_of([] { read_trace("/dev/urandom"); }), "device"));
    EXPECT_TRUE(contains(error_of([&] { read_trace(fifo); }), "pipe"));
    EXPECT_TRUE(contains(error_of([&] { read_trace(loop); }), "loop"));
    EXPECT_TRUE(contains(error_of([&] { read_trace(dir.path.string()); }), "directory"));
    EXPECT_TRUE(contains(error_of([] { load_summary("/dev/zero"); }), "device"));
    EXPECT_TRUE(contains(error_of([&] { load_summary(fifo); }), "pipe"));
}

// A summary larger than kMaxSummaryBytes is refused while reading (a sparse
// file: no disk used), not read whole.
TEST(TraceHardening, OversizedSummaryIsRejected) {
    TempDir dir;
    const auto big = (dir.path / "big.json").string();
    {
        std::ofstream f(big);
    }
    fs::resize_file(big, (64u << 20) + 1);
    EXPECT_TRUE(contains(error_of([&] { load_summary(big); }), "more than"));
}

// One value (here a kernel name) or one run of white space over 16 MiB is an
// error, not a buffer that grows with the input.
TEST(TraceHardening, HugeValuesAndWhiteSpaceAreBounded) {
    const std::string huge_name(kMaxTraceValueBytes + 10, 'a');
    EXPECT_TRUE(contains(error_of([&] { read_trace_bytes(trace_of({kernel(0, 1, huge_name)}), "n"); }),
                         "larger than"));
    const std::string blank = "{\"traceEvents\": [" + std::string(kMaxTraceValueBytes + 10, ' ') + "]}";
    EXPECT_TRUE(contains(error_of([&] { read_trace_bytes(blank, "w"); }), "white space"));
    // A value under a key the reader does not need is skipped as it streams,
    // within the same bound.
    const auto other = [](std::size_t n) { return "\"otherKey\": \"" + std::string(n, 'x') + "\", "; };
    EXPECT_EQ(read_trace_bytes(trace_of({kernel(0, 1)}, other(12u << 20)), "o").gpu.size(), 1u);
    EXPECT_TRUE(contains(error_of([&] { read_trace_bytes(trace_of({kernel(0, 1)}, other(20u << 20)), "o"); }),
                         "larger than"));
}

// A file of non-events is "not a trace" once junk passes the limit.
TEST(TraceHardening, EndlessJunkIsNotATrace) {
    std::string junk = "[";
    for (uint64_t i = 0; i <= kMaxTraceJunkItems + 1; ++i) junk += "1,";
    junk += "1]";
    EXPECT_TRUE(contains(error_of([&] { read_trace_bytes(junk, "j"); }), "not a trace"));
}

// Absurd starts and durations are skipped with a counted, named warning; the
// breakdown is that of the sane kernels.
TEST(TraceHardening, ImplausibleEventsAreSkippedAndCounted) {
    std::vector<std::string> ev;
    for (int i = 0; i < 10; ++i) ev.push_back(kernel(1000.0 + 20 * i, 10));  // 50 % busy
    ev.push_back(kernel(1e300, 5));
    ev.push_back(kernel(-1e15, 5));
    ev.push_back(kernel(1100, 1e12));
    ev.push_back(kernel(1100, -5));
    ev.push_back(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": "1100", "dur": 3, "args": {"stream": 7}})");
    const auto d = read_trace_bytes(trace_of(ev), "absurd");
    EXPECT_EQ(d.gpu.size(), 10u);
    EXPECT_EQ(d.skipped.total(), 5u);
    EXPECT_EQ(d.skipped.count[static_cast<int>(SkipReason::ts_not_number)], 1u);
    EXPECT_EQ(d.skipped.count[static_cast<int>(SkipReason::dur_negative)], 1u);
    EXPECT_EQ(d.skipped.count[static_cast<int>(SkipReason::dur_too_long)], 1u);
    EXPECT_EQ(d.skipped.count[static_cast<int>(SkipReason::ts_out_of_range)] +
                  d.skipped.count[static_cast<int>(SkipReason::ts_far_from_median)], 2u);
    const auto r = analyze(d);
    EXPECT_EQ(r.skipped_events, 5u);
    EXPECT_NEAR(r.idle_us / r.kernel_span_us, 90.0 / 190.0, 1e-9);
    bool named = false;
    for (const auto& w : r.warnings) {
        named = named || (contains(w, "rank 3: skipped 5 events") && contains(w, "dur negative (1)") &&
                          contains(w, "ts not a number (1)"));
    }
    EXPECT_TRUE(named);
    // A start far from the rest, though under 2^53, is skipped by the median rule.
    std::vector<std::string> ev2(ev.begin(), ev.begin() + 10);
    ev2.push_back(kernel(1e15, 5));
    EXPECT_EQ(read_trace_bytes(trace_of(ev2), "far").skipped.count[static_cast<int>(SkipReason::ts_far_from_median)],
              1u);
}

TEST(TraceHardening, ByteOrderMarkIsAccepted) {
    const std::string bom = "\xEF\xBB\xBF";
    const auto d = read_trace_bytes(bom + test::make_trace({{"sgemm", "kernel", 0, 10, 7, 1}}), "bom");
    EXPECT_EQ(d.gpu.size(), 1u);
    const auto s = summary_to_json({analyze(d)});
    EXPECT_EQ(summary_from_json(bom + s, "bom-summary").size(), 1u);
}

// Ranks outside [0, 2^24] are not wrapped into some other rank.
TEST(TraceHardening, RanksOutOfRangeAreRefused) {
    std::string t = test::make_trace({{"sgemm", "kernel", 0, 10, 7, 1}}, 1);
    t.replace(t.find("\"rank\": 1"), 9, "\"rank\": 4294967297");
    const auto d = read_trace_bytes(t, "bigrank");
    EXPECT_FALSE(d.rank.has_value());
    std::string s = summary_to_json({analyze(read_trace_bytes(test::make_trace({{"k", "kernel", 0, 1, 7, 1}}, 1), "x"))});
    s.replace(s.find("\"rank\": 1"), 9, "\"rank\": 4294967297");
    EXPECT_TRUE(contains(error_of([&] { summary_from_json(s, "s"); }), "integer in"));
}

// The per-kernel record kept by the reader is 24 bytes (it was 48).
TEST(TraceHardening, KeptKernelRecordIsCompact) {
    EXPECT_LE(sizeof(GpuEvent), 24u);
    EXPECT_LE(sizeof(CpuLaunch), 16u);
}

// Correlation ids outside 32 bits still match their CPU launch exactly.
TEST(TraceHardening, LargeCorrelationIdsKeepTheirIdentity) {
    const std::vector<test::Ev> ev = {
        {"ProfilerStep#1", "user_annotation", 0, 100, -1, -1},
        {"ProfilerStep#2", "user_annotation", 100, 100, -1, -1},
        {"cudaLaunchKernel", "cuda_runtime", 10, 1, -1, (1L << 40)},
        {"k_a", "kernel", 20, 10, 7, (1L << 40)},
        {"k_b", "kernel", 40, 10, 7, (1L << 40) + 1},
    };
    EXPECT_EQ(analyze(read_trace_bytes(test::make_trace(ev), "corr"), {true}).kernels, 1);
}

}  // namespace
}  // namespace lostflops::trace
