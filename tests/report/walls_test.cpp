// The table of walls (lostflops/walls.h) against Breakdown and every surface
// that lists walls: each field has exactly one row, the JSON of schema v1
// keeps its keys, and the trace groups partition the step.
#include <array>
#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/explain.h"
#include "lostflops/report.h"
#include "lostflops/search_report.h"
#include "lostflops/walls.h"
#include "test_util.h"

namespace lostflops {
namespace {

// Every field a distinct power of two: a sum says which fields it holds.
Breakdown powers_of_two() {
    Breakdown b;
    double v = 1;
    for (const WallInfo& w : kWalls) {
        b.*w.seconds = v;
        v *= 2;
    }
    return b;
}

TEST(Walls, TableCoversEveryBreakdownField) {
    // Each field set by its row alone: a field without a row stays 0 and is
    // missed by the table's sum, a field with two rows is set twice and
    // counted twice; total_s() adds the struct's fields by name.
    const Breakdown b = powers_of_two();
    double table = 0;
    for (const WallInfo& w : kWalls) table += b.*w.seconds;
    EXPECT_EQ(table, b.total_s());
    EXPECT_EQ(table, std::pow(2.0, std::size(kWalls)) - 1);
    // A Breakdown is nothing but its walls: no field outside the table.
    EXPECT_EQ(sizeof(Breakdown), std::size(kWalls) * sizeof(double));
    std::set<std::string> names, keys;
    for (const WallInfo& w : kWalls) {
        EXPECT_TRUE(names.insert(w.name).second) << w.name;
        EXPECT_TRUE(keys.insert(w.estimate_key).second) << w.estimate_key;
    }
}

TEST(Walls, TraceGroupsPartitionTheStep) {
    const Breakdown b = powers_of_two();
    const double sum = trace_group_s(b, TraceGroup::compute) + trace_group_s(b, TraceGroup::memory_bound) +
                       trace_group_s(b, TraceGroup::comm) + trace_group_s(b, TraceGroup::idle);
    EXPECT_EQ(sum, b.total_s());
    // compute and recompute are the GEMM and attention kernels a trace counts.
    EXPECT_EQ(trace_group_s(b, TraceGroup::compute), b.compute_s + b.recompute_s);
}

// trace --job's groups of an estimate: a recomputed forward's memory-bound
// kernels and launches are counted where a profiler finds them, not with
// its GEMMs (Estimate::recompute_memory_bound_s, recompute_overhead_s).
TEST(Walls, RecomputeIsSplitByWhatItsKernelsAre) {
    const Calibration cal = default_calibration();
    const auto groups = [](const Estimate& e) {
        return std::array<double, 4>{trace_group_s(e, TraceGroup::compute), trace_group_s(e, TraceGroup::memory_bound),
                                     trace_group_s(e, TraceGroup::comm), trace_group_s(e, TraceGroup::idle)};
    };
    const Estimate none = estimate(default_job({"parallel.recompute=none"}), cal);
    EXPECT_EQ(none.recompute_memory_bound_s, 0);
    EXPECT_EQ(none.recompute_overhead_s, 0);
    EXPECT_EQ(groups(none)[0], trace_group_s(none.breakdown, TraceGroup::compute));

    const Estimate full = estimate(default_job({"parallel.recompute=full"}), cal);
    const Breakdown& b = full.breakdown;
    ASSERT_GT(b.recompute_s, 0);
    EXPECT_GT(full.recompute_memory_bound_s, 0);
    EXPECT_GT(full.recompute_overhead_s, 0);
    EXPECT_LT(full.recompute_memory_bound_s + full.recompute_overhead_s, b.recompute_s);
    // The forward redone: its memory-bound kernels are a share of the
    // forward's, which is a third of the step's layer memory-bound time at
    // most (backward moves twice the forward's bytes, stage_time.cpp).
    EXPECT_LT(full.recompute_memory_bound_s, b.memory_bound_s);
    const auto g = groups(full);
    EXPECT_NEAR(g[0] + g[1] + g[2] + g[3], full.step_time_s, 1e-12 * full.step_time_s);
    EXPECT_DOUBLE_EQ(g[0], b.compute_s + b.recompute_s - full.recompute_memory_bound_s - full.recompute_overhead_s);
    // (And the optimizer's launch gaps, Estimate::optimizer_overhead_s, from memory-bound to idle.)
    EXPECT_DOUBLE_EQ(g[1], trace_group_s(b, TraceGroup::memory_bound) + full.recompute_memory_bound_s -
                               full.optimizer_overhead_s);
    EXPECT_DOUBLE_EQ(g[3], trace_group_s(b, TraceGroup::idle) + full.recompute_overhead_s + full.optimizer_overhead_s);

    // Selective recompute of the attention core (flash: one kernel, no
    // memory-bound part) and of the MLP (its GEMMs, its activation and their launches).
    const Estimate core = estimate(default_job({"parallel.recompute=selective"}), cal);
    EXPECT_EQ(core.recompute_memory_bound_s, 0);
    const Estimate mlp =
        estimate(default_job({"parallel.recompute=selective", "parallel.recompute_modules=[core_attn,mlp]"}), cal);
    EXPECT_GT(mlp.recompute_memory_bound_s, 0);
    EXPECT_GT(mlp.recompute_overhead_s, 0);
    EXPECT_LT(mlp.recompute_memory_bound_s + mlp.recompute_overhead_s,
              mlp.breakdown.recompute_s - core.breakdown.recompute_s);
}

TEST(Walls, SurfacesKeepTheirSchemaV1Keys) {
    const Job job = default_job();
    const Estimate e = estimate(job, default_calibration());
    const auto j = estimate_json(job, e);
    ASSERT_EQ(j["breakdown"].size(), std::size(kWalls));
    for (const char* key : {"compute_s", "kernel_overhead_s", "host_bound_s", "pp_bubble_s", "optimizer_s"})
        EXPECT_TRUE(j["breakdown"].contains(key)) << key;
    for (const WallInfo& w : kWalls) EXPECT_EQ(j["breakdown"][w.estimate_key].get<double>(), e.breakdown.*w.seconds);
    // explain's waterfall: every non-zero wall but compute, under its v1 key.
    const auto steps = mfu_waterfall(job, default_calibration(), e);
    std::set<std::string> keys;
    for (const WaterfallStep& s : steps) keys.insert(s.key);
    for (const WallInfo& w : kWalls) {
        if (w.seconds != &Breakdown::compute_s && e.breakdown.*w.seconds != 0) {
            EXPECT_TRUE(keys.count(w.waterfall_key)) << w.waterfall_key;
        }
    }
    EXPECT_TRUE(keys.count("gemm"));
    // search's costliest wall: the text name and the v1 JSON key of one row.
    Breakdown b;
    b.overhead_s = 2;
    b.compute_s = 9;  // compute is never the costliest wall
    const Wall w = costliest_wall(b);
    EXPECT_EQ(w.name, "kernel_overhead");
    EXPECT_EQ(w.json_key, "overhead");
    EXPECT_EQ(w.seconds, 2);
}

}  // namespace
}  // namespace lostflops
