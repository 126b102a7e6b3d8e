// The share of a run table inside its printed 80 % interval
// (lostflops/interval_coverage.h), hand-computed: the run's own source's
// residuals are left out of its interval, the others give its conformal band.
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
    // Nine other sources, one run each: errors 0, 5, ..., 40 %; scores
    // ln 1.00 .. ln 1.40; rank ceil(10 * 0.8) = 8 of 9: ln 1.35. Family
    // "mine": -50 % each (score ln 2), which would widen the interval were
    // they used.
    for (int i = 0; i < 9; ++i) residuals.push_back({"o" + std::to_string(i) + "-run", regime, 5.0 * i});
    for (int i = 0; i < 9; ++i) residuals.push_back({"mine-" + std::to_string(i), regime, -50});
    ValidationResult r;
    ValidationRow row;
    row.name = run.name;
    row.predicted_tokens_per_s_per_gpu = 1000;
    row.published_tokens_per_s_per_gpu = 900;
    r.rows.push_back(row);
    IntervalCoverage c = interval_coverage({run}, r, cal, residuals);
    ASSERT_EQ(c.rows.size(), 1u);
    EXPECT_NEAR(c.rows[0].lo, 1000 / 1.35, 1e-9);  // 740.74
    EXPECT_NEAR(c.rows[0].hi, 1000 * 1.35, 1e-9);
    EXPECT_EQ(c.rows[0].residuals, 9);
    EXPECT_TRUE(c.rows[0].inside);
    EXPECT_DOUBLE_EQ(c.share, 1.0);
    // 730 lies below 740.74: outside.
    r.rows[0].published_tokens_per_s_per_gpu = 730;
    c = interval_coverage({run}, r, cal, residuals);
    EXPECT_FALSE(c.rows[0].inside);
    EXPECT_EQ(c.inside, 0);
    // A run of a third source keeps "mine": its nine identical scores make
    // rho 1, so they weigh one run together; weight 10, tau 9/10: ln 1.4,
    // and 730 is inside [714.29, 1400].
    const MeasuredRun third{"third-run", 730, run.job};
    r.rows[0].name = third.name;
    c = interval_coverage({third}, r, cal, residuals);
    EXPECT_NEAR(c.rows[0].lo, 1000 / 1.4, 1e-9);
    EXPECT_EQ(c.rows[0].residuals, 18);
    EXPECT_TRUE(c.rows[0].inside);
    r.rows[0].name = run.name;
    // Only its own family's residuals: no interval, counted outside.
    residuals.erase(residuals.begin(), residuals.begin() + 9);
    c = interval_coverage({run}, r, cal, residuals);
    EXPECT_EQ(c.rows[0].residuals, 0);
    EXPECT_FALSE(c.rows[0].inside);
}

}  // namespace
}  // namespace lostflops
