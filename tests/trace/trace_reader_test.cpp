// Streaming reader: time units, timestamps, metadata, flows, damaged input.
#include <gtest/gtest.h>

#include <cmath>

#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

using test::Ev;
using test::make_trace;

bool has_warning(const TraceData& d, const std::string& prefix) {
    for (const auto& w : d.warnings) if (w.rfind(prefix, 0) == 0) return true;
    return false;
}

std::vector<Ev> two_kernels(double t0) {
    return {{"sgemm_128x128", "kernel", t0, 10.5, 7, 1},
            {"ncclKernel_AllReduce_RING_LL_Sum_float", "kernel", t0 + 5, 10, 20, 2}};
}

TEST(TraceReader, ReadsKernelsAndMetadata) {
    const auto d = read_trace_bytes(make_trace(two_kernels(1000), 3), "mem");
    EXPECT_EQ(d.rank.value_or(-1), 3);
    EXPECT_EQ(d.world_size.value_or(-1), 8);
    ASSERT_EQ(d.gpu.size(), 2u);
    EXPECT_DOUBLE_EQ(d.gpu[0].dur_us, 10.5);
    const auto r = analyze(d);
    EXPECT_DOUBLE_EQ(r.kernel_span_us, 15.0);  // 1000 to 1015
    EXPECT_DOUBLE_EQ(r.compute_us, 10.5);
    EXPECT_DOUBLE_EQ(r.comm_us, 10);
    ASSERT_TRUE(r.comm_comp_overlap_pct);
    EXPECT_NEAR(*r.comm_comp_overlap_pct, 55.0, 1e-9);  // 5.5 of 10 us under the GEMM
}

// Chrome trace "ts"/"dur" are microseconds whatever displayTimeUnit says; a
// "ns" file only carries more decimals. The same kernels give the same result.
TEST(TraceReader, DisplayTimeUnitDoesNotScale) {
    const auto ms = analyze(read_trace_bytes(make_trace(two_kernels(1000), 0, "ms"), "a"));
    const auto ns = analyze(read_trace_bytes(make_trace(two_kernels(1000), 0, "ns"), "b"));
    EXPECT_DOUBLE_EQ(ms.kernel_span_us, ns.kernel_span_us);
    EXPECT_EQ(read_trace_bytes(make_trace(two_kernels(1000), 0, "ns"), "b").display_time_unit, "ns");
}

// Absolute (epoch) and relative timestamps: only differences matter.
TEST(TraceReader, AbsoluteAndRelativeTimestampsAgree) {
    const auto rel = analyze(read_trace_bytes(make_trace(two_kernels(12.0)), "rel"));
    const auto abs = analyze(read_trace_bytes(make_trace(two_kernels(1.7e15)), "abs"));
    EXPECT_DOUBLE_EQ(rel.kernel_span_us, abs.kernel_span_us);
    EXPECT_DOUBLE_EQ(rel.compute_us, abs.compute_us);
}

// HTA rounds when timestamps are fractional: start up, end down.
TEST(TraceReader, HtaRoundsFractionalTimestamps) {
    const auto d = read_trace_bytes(make_trace({{"k1", "kernel", 100.4, 10.0, 7, 1}}), "f");
    EXPECT_TRUE(d.fractional_ts);
    EXPECT_DOUBLE_EQ(analyze(d, {true}).kernel_span_us, 9.0);   // ceil 101, floor 110
    EXPECT_DOUBLE_EQ(analyze(d, {false}).kernel_span_us, 10.0);
}

TEST(TraceReader, FlowsOfBothVintagesAreIgnored) {
    std::string t = make_trace(two_kernels(1000));
    const std::string flows =
        "{\"ph\": \"s\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"ts\": 999, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
        "{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 1000, \"cat\": \"async_cpu_to_gpu\", "
        "\"name\": \"async_cpu_to_gpu\", \"bp\": \"e\"},\n";
    t.insert(t.find("[\n") + 2, flows);
    const auto d = read_trace_bytes(t, "flows");
    EXPECT_EQ(d.events, 4u);
    EXPECT_EQ(d.gpu.size(), 2u);
}

TEST(TraceReader, MissingDistributedInfoIsNamedWarning) {
    const auto d = read_trace_bytes(make_trace(two_kernels(0), -1), "trace_rank5.json");
    EXPECT_FALSE(d.rank.has_value());
    const auto r = analyze(d);
    EXPECT_EQ(r.rank, 5);  // from the file name
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_EQ(r.warnings.back().rfind("no-distributed-info", 0), 0u);
}

// Rank 9 of a world of 8 was read as given; one of the two is wrong, and
// the rank names the file: the world size is dropped with a warning.
TEST(TraceReader, ARankOutsideItsWorldSizeIsNamed) {
    const auto d = read_trace_bytes(make_trace(two_kernels(0), 9), "bad");
    EXPECT_EQ(d.rank.value_or(-1), 9);
    EXPECT_FALSE(d.world_size.has_value());
    EXPECT_TRUE(has_warning(d, "metadata: distributedInfo.rank 9 is not below its world_size 8")) << d.warnings.size();
    const auto ok = read_trace_bytes(make_trace(two_kernels(0), 7), "ok");
    EXPECT_EQ(ok.world_size.value_or(-1), 8);
    EXPECT_FALSE(has_warning(ok, "metadata:"));
}

// Bytes after the last gzip member that are not another member were ignored
// without a word (gzip -d warns); a second member is read on, as from a file.
// An event named "ProfilerStep#abc" vanished from the steps without a word,
// and a second traceEvents array was read without one.
TEST(TraceReader, GzipTrailingGarbageUnnumberedStepsAndTwoEventArraysAreSaid) {
    const std::string gz = test::gzip_text(make_trace(two_kernels(0), 0));
    const auto clean = read_trace_bytes(gz, "a.gz");
    EXPECT_FALSE(has_warning(clean, "gzip:"));
    const auto garbage = read_trace_bytes(gz + "garbage\n", "b.gz");
    EXPECT_TRUE(has_warning(garbage, "gzip: bytes after the last gzip member are not gzip data; ignored"));
    EXPECT_EQ(garbage.gpu.size(), 2u);
    const auto two = read_trace_bytes(gz + test::gzip_text("\n"), "c.gz");
    EXPECT_FALSE(has_warning(two, "gzip:"));
    EXPECT_EQ(two.gpu.size(), 2u);
    const auto doubled = read_trace_bytes(gz + gz, "d.gz");  // the second member is JSON after the document
    EXPECT_TRUE(has_warning(doubled, "trailing-data")) << doubled.warnings.size();

    std::string steps = make_trace(two_kernels(0), 0);
    const std::string step = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#abc", "pid": 1, "tid": 1, "ts": 0, "dur": 100},)";
    steps.insert(steps.find('{', steps.find("traceEvents")) , step);
    const auto unnumbered = read_trace_bytes(steps, "e");
    EXPECT_TRUE(has_warning(unnumbered, "steps: 1 events named 'ProfilerStep#' without a step number (first: "
                                        "'ProfilerStep#abc')"));
    EXPECT_TRUE(unnumbered.steps.empty());

    // Two traceEvents arrays in one object: both read, said.
    std::string twice = make_trace(two_kernels(0), 0);
    twice.insert(twice.find("\"traceEvents\""), "\"traceEvents\": [],\n");
    const auto both = read_trace_bytes(twice, "f");
    EXPECT_TRUE(has_warning(both, "duplicate-key: \"traceEvents\" appears more than once"));
    EXPECT_EQ(both.gpu.size(), 2u);
    EXPECT_FALSE(has_warning(read_trace_bytes(make_trace(two_kernels(0), 0), "g"), "duplicate-key"));
}

TEST(TraceReader, TruncatedFileKeepsWhatWasRead) {
    const std::string t = make_trace(two_kernels(1000));
    const auto cut = t.substr(0, t.find("ncclKernel") + 5);
    const auto d = read_trace_bytes(cut, "cut");
    EXPECT_TRUE(has_warning(d, "truncated"));
    EXPECT_EQ(d.gpu.size(), 1u);
    EXPECT_THROW(read_trace_bytes(t.substr(0, 20), "early"), InputError);
}

TEST(TraceReader, TruncatedGzipIsNamedWarning) {
    const std::string full = synth_trace(SynthSpec{}, 0);
    const std::string gz = test::gzip_text(full);  // cut in the middle below
    const auto d = read_trace_bytes(gz.substr(0, gz.size() * 3 / 4), "cut.gz");
    EXPECT_TRUE(has_warning(d, "truncated"));
    EXPECT_GT(d.events, 0u);
    EXPECT_LT(d.bytes, full.size());
}

TEST(TraceReader, ControlCharactersAreNamedWarning) {
    std::string t = make_trace(two_kernels(1000));
    t.replace(t.find("sgemm"), 1, "\x01");
    const auto d = read_trace_bytes(t, "ctl");
    EXPECT_TRUE(has_warning(d, "control-characters"));
    EXPECT_EQ(d.gpu.size(), 2u);
}

TEST(TraceReader, EmptyAndBinaryFilesAreInputErrors) {
    EXPECT_THROW(read_trace_bytes("", "empty"), InputError);
    EXPECT_THROW(read_trace_bytes("   \n", "blank"), InputError);
    EXPECT_THROW(read_trace_bytes(std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10), "elf"), InputError);
    EXPECT_THROW(read_trace_bytes("{\"schemaVersion\": 1}", "noevents"), InputError);
    EXPECT_THROW(read_trace("/nonexistent/trace.json"), InputError);
    // A trace without kernels reads, but cannot be analysed.
    const auto d = read_trace_bytes("{\"traceEvents\": []}", "nokernels");
    EXPECT_THROW(analyze(d), InputError);
}

TEST(TraceReader, MalformedEventIsSkippedWithWarning) {
    std::string t = make_trace(two_kernels(1000));
    t.replace(t.find("\"dur\": 10.5"), 11, "\"dur\": 1x.5");
    const auto d = read_trace_bytes(t, "bad");
    EXPECT_TRUE(has_warning(d, "malformed-events"));
    EXPECT_EQ(d.gpu.size(), 1u);
}

TEST(TraceReader, JsonArrayFormatAndEscapes) {
    const std::string t =
        "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\\u0062c\\n\", \"ts\": 1, \"dur\": 2, "
        "\"args\": {\"stream\": \"7\", \"correlation\": 3}}]";
    const auto d = read_trace_bytes(t, "arr");
    ASSERT_EQ(d.gpu.size(), 1u);
    EXPECT_EQ(d.names[d.label(d.gpu[0]).name_id], "abc\n");
    EXPECT_EQ(d.label(d.gpu[0]).stream, 7);
}

// HTA drops kernels launched in the last ProfilerStep and kernels without a
// CPU launch, when there are at least two steps.
TEST(TraceReader, HtaDropsLastStepAndUncorrelatedKernels) {
    std::vector<Ev> ev = {
        {"ProfilerStep#1", "user_annotation", 0, 100, -1, -1},
        {"ProfilerStep#2", "user_annotation", 100, 100, -1, -1},
        {"cudaLaunchKernel", "cuda_runtime", 10, 1, -1, 11},
        {"cudaLaunchKernel", "cuda_runtime", 110, 1, -1, 12},
        {"k_step1", "kernel", 20, 10, 7, 11},
        {"k_step2", "kernel", 120, 10, 7, 12},
        {"k_orphan", "kernel", 50, 10, 7, 99},
    };
    const auto d = read_trace_bytes(make_trace(ev), "steps");
    EXPECT_EQ(analyze(d, {true}).kernels, 1);
    const auto native = analyze(d, {false});
    EXPECT_EQ(native.kernels, 3);
    ASSERT_EQ(native.iterations.size(), 2u);
    EXPECT_EQ(native.iterations[0].kernels, 2);  // k_step1, and k_orphan by its start time
    EXPECT_EQ(native.iterations[1].kernels, 1);
    EXPECT_DOUBLE_EQ(native.mean_step_us, 100);
}

}  // namespace
}  // namespace lostflops::trace
