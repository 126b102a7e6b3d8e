// One pipeline truth (issue 37): on 1,000 random valid plans (Llama 3.1 8B,
// 70B and 405B; tp, pp, dp, vpp, micro-batches and recompute drawn, seeded),
// the step time of estimate() under the closed-form schedule
// (schedule/pipeline_closed_form.cpp) against the event simulation
// (ScheduleModel::simulation, the judge). Within 1 % of the step for every
// plan whose virtual stages hold the same layers on every rank (vpp 1, or
// pp x vpp dividing the layers). Not yet for the others: interleaving with
// uneven chunks within a rank (80 layers on pp 4 x vpp 11) is the closed
// form's known weak spot, whose bubble it underestimates by up to 4x (13 % of
// the step at worst here); held to what it gives today so that it cannot grow
// unseen. Simulating those plans in the search costs 400x (the 405B search
// 0.55 s -> 203 s, measured 2026-11-29), so the fix is a better closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"

namespace lostflops {
namespace {

TEST(PipelineTruth, ClosedFormAndSimulationAgreeOnRandomPlans) {
    std::mt19937 rng(20261129);
    const Calibration cal = default_calibration();
    const std::vector<std::string> models = {"llama3.1-8b", "llama3.1-70b", "llama3.1-405b"};
    auto pick = [&](const std::vector<int>& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
    int tried = 0, priced = 0, over = 0, uneven = 0;
    double worst = 0, worst_uneven = 0;
    std::string worst_plan;
    while (priced < 1000 && tried < 20000) {
        ++tried;
        const std::string model = models[std::uniform_int_distribution<size_t>(0, models.size() - 1)(rng)];
        const int pp = pick({2, 3, 4, 5, 6, 8, 16});
        const int tp = pick({1, 2, 4, 8});
        const int dp = pick({1, 2, 4});
        const int m = pp * pick({1, 2, 3, 4, 8}) + (std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 1 : 0);
        const int vpp = m % pp == 0 ? pick({1, 1, 2, 3, 4, 5, 8, 11, 20}) : 1;
        const std::string rc = std::vector<std::string>{"none", "selective", "full"}[std::uniform_int_distribution<int>(0, 2)(rng)];
        const int gpus = tp * pp * dp;
        const std::string text = "name: t\nmodel: {preset: " + model + "}\ncluster: {preset: dgx-h100, num_gpus: " +
                                 std::to_string(gpus) + "}\ntraining: {seq_length: 4096, global_batch_size: " +
                                 std::to_string(m * dp) + ", micro_batch_size: 1}\n" +
                                 "parallel: {tp: " + std::to_string(tp) + ", pp: " + std::to_string(pp) +
                                 ", vpp: " + std::to_string(vpp) + ", dp: " + std::to_string(dp) +
                                 ", recompute: " + rc + (tp > 1 ? ", sequence_parallel: true" : "") + "}\n";
        Job job;
        try {
            job = parse_job(text, "t.yaml");
        } catch (const InputError&) {
            continue;
        }
        const Estimate c = estimate(job, cal, ScheduleModel::closed_form);
        const Estimate s = estimate(job, cal, ScheduleModel::simulation);
        ++priced;
        const double err = std::abs(c.step_time_s - s.step_time_s) / s.step_time_s;
        if (vpp > 1 && job.model.layers % (pp * vpp) != 0) {
            ++uneven;
            worst_uneven = std::max(worst_uneven, err);
            continue;
        }
        over += err > 0.01;
        if (err > worst) {
            worst = err;
            worst_plan = model + " tp " + std::to_string(tp) + " pp " + std::to_string(pp) + " vpp " +
                         std::to_string(vpp) + " m " + std::to_string(m) + " " + rc + ": closed " +
                         std::to_string(c.breakdown.pp_bubble_s) + " s, simulated " +
                         std::to_string(s.breakdown.pp_bubble_s) + " s of " + std::to_string(s.step_time_s);
        }
    }
    EXPECT_GE(priced, 1000);
    EXPECT_GT(priced - uneven, 500);
    EXPECT_EQ(over, 0) << "worst " << 100 * worst << " %: " << worst_plan;
    // The open case (see the top): 172 of the 371 uneven plans drawn are off by more than 1 %, 13.2 % at worst;
    // the 629 others within 0.34 %.
    EXPECT_GT(uneven, 100);
    EXPECT_LT(worst_uneven, 0.14);
}

}  // namespace
}  // namespace lostflops
