// CUDA launch statistics (trace.h LaunchStats): on a synthetic trace each
// figure is the one its definition gives; on a real trace they agree with a
// direct count over the events read, and survive the summary round trip.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <unordered_map>

#include "lostflops/trace.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_report.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

// k1: launched at 0 for 5 us, runs [10, 12): delay 10, launch bound (2 < 5).
// k2: launched at 20 for 1 us, runs [21, 51): delay 1, not bound.
// k1 again: launched at 60 for 4 us, runs [70, 73): delay 10, bound.
// k3 has no CPU launch in the trace: not counted.
TEST(TraceLaunch, SyntheticFigures) {
    using test::Ev;
    const auto trace = test::make_trace({
        {"cudaLaunchKernel", "cuda_runtime", 0, 5, -1, 1}, {"k1", "kernel", 10, 2, 7, 1},
        {"cudaLaunchKernel", "cuda_runtime", 20, 1, -1, 2}, {"k2", "kernel", 21, 30, 7, 2},
        {"cudaLaunchKernel", "cuda_runtime", 60, 4, -1, 3}, {"k1", "kernel", 70, 3, 7, 3},
        {"k3", "kernel", 80, 3, 7, 99},
    });
    const auto l = analyze(read_trace_bytes(trace, "t.json")).launches;
    EXPECT_EQ(l.launched, 3);
    EXPECT_DOUBLE_EQ(l.mean_launch_us, (5.0 + 1 + 4) / 3);
    EXPECT_DOUBLE_EQ(l.mean_gpu_us, (2.0 + 30 + 3) / 3);
    EXPECT_DOUBLE_EQ(l.mean_delay_us, (10.0 + 1 + 10) / 3);
    EXPECT_DOUBLE_EQ(l.median_delay_us, 10);
    EXPECT_EQ(l.launch_bound, 2);
    EXPECT_DOUBLE_EQ(l.launch_bound_gpu_us, 5);
    ASSERT_EQ(l.kernels.size(), 2u);
    EXPECT_EQ(l.kernels[0].name, "k1");  // most launch-bound calls first
    EXPECT_EQ(l.kernels[0].count, 2);
    EXPECT_EQ(l.kernels[0].launch_bound, 2);
    EXPECT_DOUBLE_EQ(l.kernels[0].delay_us, 10);
    EXPECT_EQ(l.kernels[1].name, "k2");
    EXPECT_EQ(l.kernels[1].launch_bound, 0);
}

TEST(TraceLaunch, RealTraceAgreesWithDirectCount) {
    LOSTFLOPS_SHARED_TRACE(path, "v100-2rank-allreduce.rank1.json.gz");
    const auto d = read_trace(path);
    const auto rep = analyze(d);
    // Direct count: native kernels (kernel, memcpy, memset; not sync) whose correlation a CPU event carries.
    std::unordered_map<uint32_t, const CpuLaunch*> cpu;
    for (const auto& c : d.cpu_launches) cpu[c.correlation] = &c;
    int64_t launched = 0, bound = 0;
    double delay = 0;
    for (const auto& g : d.gpu) {
        const GpuLabel& l = d.label(g);
        if (l.kind != EventKind::kernel && l.kind != EventKind::gpu_memcpy && l.kind != EventKind::gpu_memset) continue;
        if (classify_kernel(d.names[l.name_id], l.kind, d.names[l.collective_id], false) == KernelCategory::sync) continue;
        const auto it = cpu.find(g.correlation);
        if (g.correlation == kNoCorrelation || it == cpu.end()) continue;
        ++launched;
        bound += g.dur_us < it->second->dur_us ? 1 : 0;
        delay += g.ts_us - it->second->ts_us;
    }
    ASSERT_GT(launched, 1000);
    EXPECT_EQ(rep.launches.launched, launched);
    EXPECT_EQ(rep.launches.launch_bound, bound);
    EXPECT_NEAR(rep.launches.mean_delay_us, delay / static_cast<double>(launched), 1e-6);
    EXPECT_LE(rep.launches.kernels.size(), kMaxLaunchKernels);
    for (std::size_t i = 1; i < rep.launches.kernels.size(); ++i) {
        EXPECT_GE(rep.launches.kernels[i - 1].launch_bound, rep.launches.kernels[i].launch_bound);
    }
    // JSON and the summary round trip.
    const auto j = nlohmann::json::parse(report_json(std::vector<RankReport>{rep}));
    EXPECT_EQ(j["ranks"][0]["launch_stats"]["launched"].get<int64_t>(), launched);
    const auto back = summary_from_json(summary_to_json({rep}), "s.json");
    EXPECT_EQ(back[0].launches.launch_bound, rep.launches.launch_bound);
    ASSERT_EQ(back[0].launches.kernels.size(), rep.launches.kernels.size());
    EXPECT_EQ(back[0].launches.kernels[0].name, rep.launches.kernels[0].name);
    EXPECT_NE(report_table(std::vector<RankReport>{rep}).find("CUDA launches"), std::string::npos);
}

}  // namespace
}  // namespace lostflops::trace
