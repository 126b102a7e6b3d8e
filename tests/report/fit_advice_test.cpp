// The "does not fit" advice (src/report/fit_advice.cpp): each change it prints
// is re-estimated, lowers the memory, is only offered where it can act, and
// reads back through --set to the same memory; the GPU-count search finds a
// count that fits and none below it.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/report.h"
#include "test_util.h"

namespace lostflops {
namespace {

const std::string kGpt3 = "examples/gpt3-175b-8xa100.yaml";

Estimate run(const Job& job) { return estimate(job, default_calibration()); }

bool has_change(const FitAdvice& a, const std::string& prefix) {
    return std::any_of(a.changes.begin(), a.changes.end(),
                       [&](const PlanChange& c) { return c.change.rfind(prefix, 0) == 0; });
}

// Every change's --set arguments, applied to the job file, give the memory
// the advice states; every change lowers the peak; the order is best first.
void expect_consistent(const FitAdvice& a, const std::string& path, const std::vector<std::string>& base_set) {
    const Estimate now = run(load_job(path, base_set));
    for (const auto& c : a.changes) {
        std::vector<std::string> set = base_set;
        set.insert(set.end(), c.set.begin(), c.set.end());
        const Estimate e = run(load_job(path, set));
        EXPECT_NEAR(e.memory.peak_bytes, c.peak_bytes, 1e-9 * c.peak_bytes) << c.change;
        EXPECT_NEAR(e.step_time_s, c.step_time_s, 1e-9 * c.step_time_s) << c.change;
        EXPECT_EQ(e.memory.fits, c.fit == Fit::fits) << c.change;
        EXPECT_LT(c.peak_bytes, now.memory.peak_bytes) << c.change;
    }
    for (std::size_t i = 1; i < a.changes.size(); ++i) {
        const PlanChange& x = a.changes[i - 1];
        const PlanChange& y = a.changes[i];
        EXPECT_FALSE(x.fit == Fit::does_not_fit && y.fit == Fit::fits) << x.change << " before " << y.change;
        if (x.fit == y.fit && x.fit == Fit::does_not_fit) { EXPECT_LE(x.peak_bytes, y.peak_bytes); }
        if (x.fit == y.fit && x.fit == Fit::fits) { EXPECT_LE(x.step_time_s, y.step_time_s); }
    }
}

TEST(FitAdvice, OffersNoZeroWithoutDataParallelNorSmallerMicroBatchAtOne) {
    const std::string path = test::source_path(kGpt3);
    const Job job = load_job(path);
    ASSERT_EQ(job.plan.dp * job.plan.cp, 1);
    ASSERT_EQ(job.training.micro_batch, 1);
    ASSERT_FALSE(run(job).memory.fits);
    const FitAdvice a = fit_advice(job, default_calibration());
    EXPECT_FALSE(has_change(a, "zero")) << fit_advice_text(a);
    EXPECT_FALSE(has_change(a, "micro_batch_size")) << fit_advice_text(a);
    expect_consistent(a, path, {});
}

TEST(FitAdvice, EvaluatesZeroMicroBatchAndRecomputeWhereTheyAct) {
    // Data parallel, micro-batch 4, interleaved: activations do not fit.
    const std::vector<std::string> set = {"parallel.pp=8", "parallel.vpp=2", "training.micro_batch_size=4"};
    const Job job = default_job(set);
    ASSERT_FALSE(run(job).memory.fits);
    const FitAdvice a = fit_advice(job, default_calibration());
    EXPECT_TRUE(has_change(a, "micro_batch_size 2")) << fit_advice_text(a);
    EXPECT_TRUE(has_change(a, "micro_batch_size 1")) << fit_advice_text(a);
    EXPECT_TRUE(has_change(a, "recompute full")) << fit_advice_text(a);
    EXPECT_TRUE(std::any_of(a.changes.begin(), a.changes.end(), [](const PlanChange& c) { return c.fit == Fit::fits; }))
        << fit_advice_text(a);
    // Re-read from the built-in job text with the same overrides.
    const std::vector<std::string> base = set;
    const std::string text = default_job_text();
    for (const auto& c : a.changes) {
        std::vector<std::string> all = base;
        all.insert(all.end(), c.set.begin(), c.set.end());
        const Estimate e = run(parse_job(text, "default.yaml", all));
        EXPECT_NEAR(e.memory.peak_bytes, c.peak_bytes, 1e-9 * c.peak_bytes) << c.change;
        EXPECT_NEAR(e.step_time_s, c.step_time_s, 1e-9 * c.step_time_s) << c.change;
    }
}

// The default job at tp 1: its TP comm overlap is off (the loader's default
// at tp 1) and stays off in the advice's tp 8 and in the nearest and
// fewest-GPU plans; their --set arguments say so, or `estimate` would load
// tp 8 with the overlap on (tp 8: 9.32 s advised, 8.39 s estimated before).
TEST(FitAdvice, EveryPrintedSetGivesTheAdvisedStepTime) {
    const std::string path = test::source_path("data/jobs/default.yaml");
    const std::vector<std::string> base = {"parallel.tp=1", "parallel.pp=1", "parallel.vpp=1", "parallel.zero=0"};
    const Job job = load_job(path, base);
    ASSERT_FALSE(job.plan.tp_comm_overlap);
    const FitAdvice a = fit_advice(job, default_calibration());
    ASSERT_TRUE(has_change(a, "tp 8")) << fit_advice_text(a);
    expect_consistent(a, path, base);
    const auto step_of = [&](const std::vector<std::string>& set) {
        std::vector<std::string> all = base;
        all.insert(all.end(), set.begin(), set.end());
        return run(load_job(path, all)).step_time_s;
    };
    ASSERT_TRUE(a.nearest.has_value());
    EXPECT_NEAR(step_of(a.nearest->set), a.nearest->step_time_s, 1e-9 * a.nearest->step_time_s);
    ASSERT_GT(a.min_gpus.num_gpus, 0);
    EXPECT_NEAR(step_of(a.min_gpus.set), a.min_gpus.step_time_s, 1e-9 * a.min_gpus.step_time_s);
}

TEST(FitAdvice, FollowingAChangeDoesNotOfferItAgain) {
    const std::string path = test::source_path(kGpt3);
    const FitAdvice first = fit_advice(load_job(path), default_calibration());
    ASSERT_FALSE(first.changes.empty());
    for (const auto& c : first.changes) {
        const Job next = load_job(path, c.set);
        if (run(next).memory.fits) continue;
        const FitAdvice again = fit_advice(next, default_calibration());
        for (const auto& d : again.changes) EXPECT_NE(d.set, c.set) << c.change << " offered again";
        expect_consistent(again, path, c.set);
    }
}

TEST(FitAdvice, SmallestGpuCountFitsAndNoneBelowIt) {
    const std::string path = test::source_path(kGpt3);
    const Job job = load_job(path);
    const MinGpus m = fit_advice(job, default_calibration()).min_gpus;
    ASSERT_GT(m.num_gpus, job.cluster.num_gpus);  // 175e9 x 18 bytes do not fit on one node
    EXPECT_GE(m.num_gpus, m.searched_from);
    const Estimate at = run(load_job(path, m.set));
    EXPECT_TRUE(at.memory.fits);
    EXPECT_NEAR(at.memory.peak_bytes, m.peak_bytes, 1e-9 * m.peak_bytes);
    // One node fewer: no plan of the family fits (checked through --set).
    const int fewer = m.num_gpus - job.cluster.gpus_per_node;
    for (int tp = 1; tp <= job.cluster.gpus_per_node; tp *= 2) {
        for (int pp = 1; pp <= fewer / tp; ++pp) {
            if (fewer % (tp * pp) != 0) continue;
            const int dp = fewer / (tp * pp);
            std::vector<std::string> set = {"cluster.num_gpus=" + std::to_string(fewer),
                                            "parallel.tp=" + std::to_string(tp),
                                            "parallel.pp=" + std::to_string(pp),
                                            "parallel.dp=" + std::to_string(dp),
                                            "parallel.zero=" + std::string(dp > 1 ? "3" : "0"),
                                            "parallel.recompute=full",
                                            "parallel.sequence_parallel=" + std::string(tp > 1 ? "true" : "false")};
            Job j;
            try {
                j = load_job(path, set);
            } catch (const InputError&) {
                continue;  // the plan does not divide
            }
            EXPECT_FALSE(run(j).memory.fits) << "fits on " << fewer << " GPUs with tp " << tp << " pp " << pp;
        }
    }
}

TEST(FitAdvice, SearchesOnlyWhileCheapUnlessAskedAndAgreesWhenBothRun) {
    // 11e12 parameters on 1,024 H100: nothing fits, so the nearest plan needs
    // the whole search and the fewest GPUs many counts: both over the bounds.
    const Job huge = default_job({"model={num_hidden_layers: 256, hidden_size: 65536, intermediate_size: 262144, "
                                  "num_attention_heads: 512, num_key_value_heads: 8, vocab_size: 128256}",
                                  "parallel.tp=8", "parallel.pp=16", "parallel.vpp=1", "parallel.zero=1"});
    ASSERT_FALSE(run(huge).memory.fits);
    const FitAdvice cheap = fit_advice(huge, default_calibration(), AdviceSearch::if_cheap);
    EXPECT_FALSE(cheap.nearest_searched);
    EXPECT_FALSE(cheap.min_gpus_searched);
    EXPECT_FALSE(cheap.nearest.has_value());
    EXPECT_NE(fit_advice_text(cheap).find("not searched"), std::string::npos);
    const FitAdvice full = fit_advice(huge, default_calibration(), AdviceSearch::full);
    EXPECT_TRUE(full.nearest_searched);
    EXPECT_TRUE(full.min_gpus_searched);
    EXPECT_FALSE(full.nearest.has_value());  // no plan fits on 1,024 GPUs
    // The fewest-GPUs search starts at the fully sharded states' bound, above 1,024.
    EXPECT_GT(full.min_gpus.searched_from, 1024);
    EXPECT_GE(full.min_gpus.searched_up_to, full.min_gpus.searched_from);
    EXPECT_TRUE(full.min_gpus.num_gpus == 0 || full.min_gpus.num_gpus >= full.min_gpus.searched_from);
    ASSERT_EQ(cheap.changes.size(), full.changes.size());  // the single changes are always given
    // The default job made not to fit: cheap enough, the same advice either way.
    const Job job = default_job({"parallel.recompute=none", "parallel.zero=0", "training.micro_batch_size=4"});
    const FitAdvice a = fit_advice(job, default_calibration(), AdviceSearch::if_cheap);
    const FitAdvice b = fit_advice(job, default_calibration(), AdviceSearch::full);
    ASSERT_TRUE(a.nearest_searched && a.min_gpus_searched);
    EXPECT_EQ(fit_advice_json(a), fit_advice_json(b));
}

}  // namespace
}  // namespace lostflops
