// The share of a run table inside its printed 80 % interval
// (lostflops/interval_coverage.h), hand-computed: the run's own source's
// residuals are left out of its interval, the others give its quantiles.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lostflops/calibration.h"
#include "lostflops/interval_coverage.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops {
namespace {

TEST(IntervalCoverage, OwnSourceHeldOut) {
    const Calibration cal = default_calibration();
    MeasuredRun run{"mine-run", 900, parse_job(test::small_job_text(), "job.yaml")};
    const Regime regime = regime_of(run.job, cal);
    std::vector<Residual> residuals;
    // Family "other": errors 0, 5, ..., 40 %; p10 at index 0.8 = 4 %, p90 at
    // index 7.2 = 36 %. Family "mine": -50 % each, which would widen the
    // interval to twice the prediction were they used.
    for (int i = 0; i < 9; ++i) residuals.push_back({"other-" + std::to_string(i), regime, 5.0 * i});
    for (int i = 0; i < 9; ++i) residuals.push_back({"mine-" + std::to_string(i), regime, -50});
    ValidationResult r;
    ValidationRow row;
    row.name = run.name;
    row.predicted_tokens_per_s_per_gpu = 1000;
    row.published_tokens_per_s_per_gpu = 900;
    r.rows.push_back(row);
    IntervalCoverage c = interval_coverage({run}, r, cal, residuals);
    ASSERT_EQ(c.rows.size(), 1u);
    EXPECT_NEAR(c.rows[0].lo, 1000 / 1.36, 1e-9);  // 735.29
    EXPECT_NEAR(c.rows[0].hi, 1000 / 1.04, 1e-9);  // 961.54
    EXPECT_EQ(c.rows[0].residuals, 9);
    EXPECT_TRUE(c.rows[0].inside);
    EXPECT_DOUBLE_EQ(c.share, 1.0);
    // 970 lies above 961.54: outside (with family "mine" kept it would be inside).
    r.rows[0].published_tokens_per_s_per_gpu = 970;
    c = interval_coverage({run}, r, cal, residuals);
    EXPECT_FALSE(c.rows[0].inside);
    EXPECT_EQ(c.inside, 0);
    // Only its own family's residuals: no interval, counted outside.
    residuals.erase(residuals.begin(), residuals.begin() + 9);
    c = interval_coverage({run}, r, cal, residuals);
    EXPECT_EQ(c.rows[0].residuals, 0);
    EXPECT_FALSE(c.rows[0].inside);
}

}  // namespace
}  // namespace lostflops
