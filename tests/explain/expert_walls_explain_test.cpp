// explain on an MoE job shows the expert walls apart (lostflops/explain.h
// ExpertWallsView): each wall's seconds are expert_walls()'s, each lever's
// figures are those of the job re-loaded with its --set arguments, the JSON
// gains expert_walls and keeps its keys; a dense job shows none.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lostflops/expert_walls.h"
#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

TEST(ExplainExpertWalls, DeepSeekV3WallsAndLeversReproduce) {
    const Calibration cal = default_calibration();
    const JobSource src{test::source_path("examples/deepseek-v3-2048xh800-goodput.yaml"), {}};
    const Job job = load_job_source(src);
    const Estimate e = estimate(job, cal);
    const Explanation x = explain(src, job, cal, e);
    ASSERT_TRUE(x.experts.moe);
    EXPECT_EQ(x.experts.dispatcher, "deepep");
    ASSERT_EQ(x.experts.walls.size(), static_cast<size_t>(kExpertWallCount));
    const ExpertWalls w = expert_walls(job, cal);
    double ep = 0;
    for (const ExpertWallRow& r : x.experts.walls) {
        SCOPED_TRACE(r.key);
        EXPECT_NEAR(r.share, r.s / e.step_time_s, 1e-12);
        if (r.key == "dispatch" || r.key == "combine") ep += r.s;
        if (!r.has_lever) continue;
        EXPECT_LT(r.lever.wall_s_after, r.s);
        const Job changed = load_job_source(src, r.lever.set);
        EXPECT_DOUBLE_EQ(estimate(changed, cal).step_time_s, r.lever.step_time_s);
        bool found = false;
        for (const ExpertWall& a : expert_walls(changed, cal).walls)
            if (key_of(a.id) == r.key) {
                found = true;
                EXPECT_DOUBLE_EQ(a.step_s(), r.lever.wall_s_after);
            }
        EXPECT_TRUE(found);
    }
    EXPECT_DOUBLE_EQ(ep, w[ExpertWallId::dispatch].step_s() + w[ExpertWallId::combine].step_s());
    EXPECT_NEAR(ep, e.breakdown.ep_comm_s, 1e-9 * e.step_time_s);  // DualPipe: scaled to what stays exposed
    // JSON: the v1 keys as they were, the walls under their own key.
    const nlohmann::json j = explain_json(x);
    for (const char* key : {"schema_version", "job", "mfu", "step_time_s", "ideal_s", "peak_tflops", "fits", "waterfall",
                            "levers"})
        EXPECT_TRUE(j.contains(key)) << key;
    ASSERT_TRUE(j.contains("expert_walls"));
    EXPECT_EQ(j["expert_walls"]["walls"].size(), static_cast<size_t>(kExpertWallCount));
    EXPECT_EQ(j["expert_walls"]["walls"][2]["key"], "dispatch");
    EXPECT_NE(explain_table(x).find("Expert walls (dispatcher deepep"), std::string::npos);
}

TEST(ExplainExpertWalls, DenseJobUnchanged) {
    const Explanation x = explain(JobSource{}, default_calibration());
    EXPECT_FALSE(x.experts.moe);
    EXPECT_FALSE(explain_json(x).contains("expert_walls"));
    EXPECT_EQ(explain_table(x).find("Expert walls"), std::string::npos);
    EXPECT_EQ(explain_markdown(x).find("Expert walls"), std::string::npos);
}

}  // namespace
}  // namespace lostflops
