// Idle-time breakdown per stream (trace.h StreamIdle): with --hta-compatible
// conventions it agrees with what HTA's get_idle_time_breakdown reports for
// the real traces of ../shared/traces/hta-idle-reference.json (HTA's own
// figures, per stream; skipped without them)
// within 0.5 % of each stream's idle time; on a small synthetic trace each
// gap lands in the category its cause says.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>

#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_report.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

double value_or_zero(const nlohmann::json& j, const char* key) { return j.contains(key) ? j[key].get<double>() : 0.0; }

TEST(TraceIdle, AgreesWithHtaIdleReference) {
    LOSTFLOPS_SHARED_TRACE(ref_path, "hta-idle-reference.json");
    std::ifstream in(ref_path);
    const auto ref = nlohmann::json::parse(in);
    ASSERT_EQ(ref["traces"].size(), 5u);
    for (const auto& t : ref["traces"]) {
        const std::string file = t["trace"].get<std::string>();
        SCOPED_TRACE(file);
        LOSTFLOPS_SHARED_TRACE(path, file);
        const auto rep = analyze(read_trace(path), AnalyzeOptions{true});
        std::map<int64_t, StreamIdle> got;
        for (const auto& s : rep.idle_breakdown) got[s.stream] = s;
        ASSERT_EQ(got.size(), t["streams"].size()) << "one entry per stream with kernels";
        for (const auto& s : t["streams"]) {
            const int64_t stream = s["stream"].get<int64_t>();
            SCOPED_TRACE("stream " + std::to_string(stream));
            ASSERT_TRUE(got.count(stream));
            const StreamIdle& g = got[stream];
            const double host = value_or_zero(s, "host_wait_us"), kernel = value_or_zero(s, "kernel_wait_us"),
                         other = value_or_zero(s, "other_us");
            const double tol = 0.005 * std::fabs(host + kernel + other) + 1e-9;
            EXPECT_LE(std::fabs(g.host_wait_us - host), tol) << "host wait " << g.host_wait_us << " vs HTA " << host;
            EXPECT_LE(std::fabs(g.kernel_wait_us - kernel), tol) << "kernel wait " << g.kernel_wait_us << " vs HTA " << kernel;
            EXPECT_LE(std::fabs(g.other_us - other), tol) << "other " << g.other_us << " vs HTA " << other;
        }
    }
}

// Stream 7: k1 [0, 10); k2 launched at 5 (before k1 ends), starts 20 -> 10 us
// kernel wait; k3 launched at 100 (after k2 ends at 30), starts 110 -> 80 us
// host wait; k4 launched at 115, starts 200 (after k3 ends at 120) -> 80 us
// other. Stream 9: one kernel, no gap.
std::string synthetic() {
    using test::Ev;
    return test::make_trace({
        {"cudaLaunchKernel", "cuda_runtime", -1, 1, -1, 1}, {"k1", "kernel", 0, 10, 7, 1},
        {"cudaLaunchKernel", "cuda_runtime", 5, 1, -1, 2}, {"k2", "kernel", 20, 10, 7, 2},
        {"cudaLaunchKernel", "cuda_runtime", 100, 1, -1, 3}, {"k3", "kernel", 110, 10, 7, 3},
        {"cudaLaunchKernel", "cuda_runtime", 115, 1, -1, 4}, {"k4", "kernel", 200, 10, 7, 4},
        {"cudaLaunchKernel", "cuda_runtime", 116, 1, -1, 5}, {"k5", "kernel", 150, 10, 9, 5},
    });
}

TEST(TraceIdle, EachGapGoesToItsCause) {
    for (const bool hta : {false, true}) {
        SCOPED_TRACE(hta ? "hta" : "native");
        const auto rep = analyze(read_trace_bytes(synthetic(), "synthetic.json"), AnalyzeOptions{hta});
        ASSERT_EQ(rep.idle_breakdown.size(), 2u);
        const StreamIdle& s7 = rep.idle_breakdown[0];
        EXPECT_EQ(s7.stream, 7);
        EXPECT_EQ(s7.kernels, 4);
        EXPECT_DOUBLE_EQ(s7.kernel_wait_us, 10);
        EXPECT_DOUBLE_EQ(s7.host_wait_us, 80);
        EXPECT_DOUBLE_EQ(s7.other_us, 80);
        const StreamIdle& s9 = rep.idle_breakdown[1];
        EXPECT_EQ(s9.stream, 9);
        EXPECT_EQ(s9.kernels, 1);
        EXPECT_DOUBLE_EQ(s9.idle_us(), 0);
    }
}

// The threshold is HTA's: a 30 us gap of a queued kernel is "other", 29 us "kernel wait".
TEST(TraceIdle, KernelWaitIsBelowThreshold) {
    using test::Ev;
    const auto trace = test::make_trace({
        {"cudaLaunchKernel", "cuda_runtime", 0, 1, -1, 1}, {"a", "kernel", 10, 10, 7, 1},
        {"cudaLaunchKernel", "cuda_runtime", 1, 1, -1, 2}, {"b", "kernel", 49, 10, 7, 2},
        {"cudaLaunchKernel", "cuda_runtime", 2, 1, -1, 3}, {"c", "kernel", 89, 10, 7, 3},
    });
    const auto rep = analyze(read_trace_bytes(trace, "t.json"));
    ASSERT_EQ(rep.idle_breakdown.size(), 1u);
    EXPECT_DOUBLE_EQ(rep.idle_breakdown[0].kernel_wait_us, 29);
    EXPECT_DOUBLE_EQ(rep.idle_breakdown[0].other_us, 30);
    EXPECT_DOUBLE_EQ(rep.idle_breakdown[0].host_wait_us, 0);
}

// The contract: every object of "ranks" carries idle_breakdown, a list of
// {stream, host_wait_us, kernel_wait_us, other_us}; it survives a summary
// round trip; the text output has the table.
TEST(TraceIdle, JsonContractAndSummaryRoundTrip) {
    SynthSpec spec;
    spec.ranks = 16;
    spec.tp = 8;
    const auto rep = analyze(read_trace_bytes(synth_trace(spec, 1), "rank1.json"), AnalyzeOptions{true});
    ASSERT_EQ(rep.idle_breakdown.size(), 2u);  // streams 7 and 20
    const auto j = nlohmann::json::parse(report_json(std::vector<RankReport>{rep}));
    const auto& idle = j["ranks"][0]["idle_breakdown"];
    ASSERT_TRUE(idle.is_array());
    ASSERT_EQ(idle.size(), rep.idle_breakdown.size());
    for (const auto& s : idle) {
        for (const char* key : {"stream", "host_wait_us", "kernel_wait_us", "other_us"}) {
            EXPECT_TRUE(s.contains(key)) << key;
        }
    }
    const auto back = summary_from_json(summary_to_json({rep}), "summary.json");
    ASSERT_EQ(back[0].idle_breakdown.size(), rep.idle_breakdown.size());
    for (std::size_t i = 0; i < rep.idle_breakdown.size(); ++i) {
        EXPECT_EQ(back[0].idle_breakdown[i].stream, rep.idle_breakdown[i].stream);
        EXPECT_DOUBLE_EQ(back[0].idle_breakdown[i].host_wait_us, rep.idle_breakdown[i].host_wait_us);
        EXPECT_DOUBLE_EQ(back[0].idle_breakdown[i].other_us, rep.idle_breakdown[i].other_us);
    }
    const std::string text = report_table(std::vector<RankReport>{rep});
    EXPECT_NE(text.find("Idle time by stream"), std::string::npos);
}

TEST(TraceIdle, BadSummaryEntryIsNamed) {
    const auto rep = analyze(read_trace_bytes(synthetic(), "synthetic.json"));
    auto j = nlohmann::json::parse(summary_to_json({rep}));
    j["ranks"][0]["idle_breakdown"][0]["host_wait_us"] = "x";
    try {
        summary_from_json(j.dump(), "s.json");
        FAIL() << "expected InputError";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("idle_breakdown"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace lostflops::trace
