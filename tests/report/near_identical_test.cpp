// The search listing's near-identical groups (report/near_identical.h), by
// hand: which plans are one knob apart and within the better plan's
// interval, and under which plan each folds.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/job.h"
#include "report/near_identical.h"
#include "test_util.h"

namespace lostflops {
namespace {

PlanScore plan(int tp, int vpp, int mbs, double tokens) {
    PlanScore s;
    s.plan.tp = tp;
    s.plan.pp = 4;
    s.plan.vpp = vpp;
    s.micro_batch = mbs;
    s.tokens_per_s_per_gpu = tokens;
    return s;
}

TEST(NearIdentical, OneKnobApartWithinTheIntervalFoldsUnderTheFirst) {
    const Job job = parse_job(test::small_job_text(), "small");
    PlanScore layout = plan(2, 2, 1, 97);  // rank 4: rank 1 and a stage layout
    layout.plan.first_stage_layers = 5;
    PlanScore layout8 = plan(8, 2, 1, 90);
    layout8.plan.first_stage_layers = 7;
    const std::vector<PlanScore> listed = {
        plan(2, 2, 1, 100),  // rank 1
        plan(2, 3, 1, 99),   // rank 2: vpp apart from rank 1
        plan(2, 2, 1, 98),   // rank 3: the same arguments as rank 1, no knob apart
        layout,              // rank 4: rank 1's arguments and one more
        plan(4, 3, 1, 96),   // rank 5: tp and vpp apart from rank 1, tp from rank 2 (folded), nothing else
        plan(2, 2, 2, 95),   // rank 6: micro-batch apart from ranks 1 and 3: the first, rank 1
        plan(2, 4, 1, 89),   // rank 7: vpp apart from rank 1 but outside its interval (89 < 0.9 x 100),
                             // and from rank 3, inside its (89 >= 0.9 x 98)
        plan(2, 5, 1, 91),   // rank 8: vpp apart from rank 1, inside
        layout8,             // rank 9: tp and a stage layout apart from every plan before: not folded
        plan(8, 2, 1, 87),   // rank 10: rank 9 without its stage layout (a key fewer: not one knob apart),
                             // tp apart from ranks 1 and 3 but outside their intervals: not folded
    };
    EXPECT_EQ(near_identical(job, listed, 0.9),
              "  near-identical (one knob apart, within the better plan's 80 % interval):\n"
              "    ranks 2, 8: rank 1 with vpp 3, 5\n"
              "    rank 4: rank 1 with first_stage_layers 5\n"
              "    rank 6: rank 1 with micro_batch_size 2\n"
              "    rank 7: rank 3 with vpp 4\n");
}

}  // namespace
}  // namespace lostflops
