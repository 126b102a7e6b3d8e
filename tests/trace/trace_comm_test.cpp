// Bandwidth per collective (trace.h CollectiveStats): nccl-tests' bus
// bandwidth factors on a synthetic trace, and the sizes of a real trace
// (../shared/traces/a100-2rank-nccl records "In msg nelems" on its NCCL
// kernels; skipped when absent) summed directly from its JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_report.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

std::string nccl_event(const char* name, const char* coll, double ts, double dur, long corr, long in_n, long out_n,
                       int group, const char* dtype) {
    return nlohmann::json{{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"ts", ts}, {"dur", dur},
                          {"args", {{"stream", 20}, {"correlation", corr}, {"Collective name", coll},
                                    {"In msg nelems", in_n}, {"Out msg nelems", out_n}, {"Group size", group},
                                    {"dtype", dtype}}}}
        .dump();
}

TEST(TraceComm, BusBandwidthFactors) {
    // all-reduce of 1e6 floats over 8 ranks in 1000 us: 4 GB/s algorithm, x 2*7/8 bus;
    // all-gather to 8e6 bf16 (out) in 2000 us: 8 GB/s, x 7/8; broadcast x 1; no dtype: not counted.
    const std::string trace = "{\"traceEvents\": [" +
        nccl_event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "allreduce", 0, 1000, 1, 1000000, 1000000, 8, "Float") + "," +
        nccl_event("ncclDevKernel_AllGather_RING_LL", "_allgather_base", 2000, 2000, 2, 1000000, 8000000, 8, "BFloat16") + "," +
        nccl_event("ncclDevKernel_Broadcast_RING_LL", "broadcast", 5000, 100, 3, 1000, 1000, 8, "Long") + "," +
        nccl_event("ncclDevKernel_Broadcast_RING_LL", "broadcast", 6000, 100, 4, 1000, 1000, 8, "NoSuchType") + "]}";
    const auto rep = analyze(read_trace_bytes(trace, "t.json"));
    std::map<std::string, CollectiveStats> by;
    for (const auto& c : rep.collectives) by[c.collective] = c;
    ASSERT_EQ(by.size(), 3u);
    EXPECT_EQ(by["all_reduce"].calls, 1);
    EXPECT_EQ(by["all_reduce"].group_size, 8);
    EXPECT_DOUBLE_EQ(by["all_reduce"].algbw_gbps, 4.0);
    EXPECT_DOUBLE_EQ(by["all_reduce"].busbw_gbps, 4.0 * 2 * 7 / 8);
    EXPECT_DOUBLE_EQ(by["all_gather"].bytes, 16e6);
    EXPECT_DOUBLE_EQ(by["all_gather"].algbw_gbps, 8.0);
    EXPECT_DOUBLE_EQ(by["all_gather"].busbw_gbps, 7.0);
    EXPECT_EQ(by["broadcast"].calls, 1);  // the unknown dtype is left out
    EXPECT_DOUBLE_EQ(by["broadcast"].busbw_gbps, by["broadcast"].algbw_gbps);
}

TEST(TraceComm, RealTraceSizesSummedDirectly) {
    LOSTFLOPS_SHARED_TRACE(file, "a100-2rank-nccl.rank0.json.gz");
    const auto j = nlohmann::json::parse(test::gunzip_file(file));
    double bytes = 0, time = 0;
    int64_t calls = 0;
    for (const auto& e : j["traceEvents"]) {
        if (e.value("cat", "") != "kernel" || !e.contains("args")) continue;
        const auto& a = e["args"];
        if (a.value("Collective name", "") != "allreduce" || !a.contains("In msg nelems")) continue;
        ASSERT_EQ(a.value("dtype", ""), "Float");
        ++calls;
        bytes += 4.0 * std::max(a["In msg nelems"].get<double>(), a["Out msg nelems"].get<double>());
        time += e["dur"].get<double>();
    }
    ASSERT_GT(calls, 0);
    const auto rep = analyze(read_trace(file));
    const auto it = std::find_if(rep.collectives.begin(), rep.collectives.end(),
                                 [](const CollectiveStats& c) { return c.collective == "all_reduce"; });
    ASSERT_NE(it, rep.collectives.end());
    EXPECT_EQ(it->calls, calls);
    EXPECT_EQ(it->group_size, 2);
    EXPECT_DOUBLE_EQ(it->bytes, bytes);
    EXPECT_NEAR(it->time_us, time, 1e-6 * time);
    EXPECT_NEAR(it->algbw_gbps, bytes / (time * 1e-6) / 1e9, 1e-6 * it->algbw_gbps);
    EXPECT_DOUBLE_EQ(it->busbw_gbps, it->algbw_gbps);  // two ranks: 2(n-1)/n = 1
    // JSON and the summary round trip.
    const auto out = nlohmann::json::parse(report_json(std::vector<RankReport>{rep}));
    EXPECT_TRUE(out["ranks"][0]["collectives"].is_array());
    const auto back = summary_from_json(summary_to_json({rep}), "s.json");
    ASSERT_EQ(back[0].collectives.size(), rep.collectives.size());
    EXPECT_DOUBLE_EQ(back[0].collectives[0].busbw_gbps, rep.collectives[0].busbw_gbps);
}

}  // namespace
}  // namespace lostflops::trace
