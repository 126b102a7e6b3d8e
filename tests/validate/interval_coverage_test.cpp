// The share of a run table inside its printed 80 % interval
// (lostflops/interval_coverage.h), hand-computed: the run's own source's
// residuals are left out of its interval, the others give its conformal band,
// put around the run's held-out prediction; counted per regime too.
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
    // A run of a third source keeps "mine": its nine runs weigh one unit
    // together (1/9 each); ten units and the new one, 0.8 * 11 = 8.8: the
    // nine others' scores reach 9 at ln 1.4 (8 at ln 1.35), and 730 is
    // inside [714.29, 1400].
    const MeasuredRun third{"third-run", 730, run.job};
    r.rows[0].name = third.name;
    c = interval_coverage({third}, r, cal, residuals);
    EXPECT_NEAR(c.rows[0].lo, 1000 / 1.4, 1e-9);
    EXPECT_EQ(c.rows[0].residuals, 18);
    EXPECT_TRUE(c.rows[0].inside);
    r.rows[0].name = run.name;
    EXPECT_FALSE(c.held_out_centre);
    EXPECT_DOUBLE_EQ(c.rows[0].centre, 1000);
    // Only its own family's residuals: no interval, counted outside.
    residuals.erase(residuals.begin(), residuals.begin() + 9);
    c = interval_coverage({run}, r, cal, residuals);
    EXPECT_EQ(c.rows[0].residuals, 0);
    EXPECT_FALSE(c.rows[0].inside);
}

// Out of sample on both counts: the interval is put around the run's
// held-out prediction when one is given, and the runs are counted per regime.
TEST(IntervalCoverage, AroundTheHeldOutPredictionPerRegime) {
    const Calibration cal = default_calibration();
    const Job job = parse_job(test::small_job_text(), "job.yaml");
    Job eight = job;
    eight.cluster.num_gpus = 8;  // one node: scale band <=8, another regime than 16 GPUs' <=64
    ASSERT_NE(to_string(regime_of(eight, cal)), to_string(regime_of(job, cal)));
    std::vector<Residual> residuals;
    // Nine other sources, errors 0, 5, ..., 40 %: q = ln 1.35 (as above).
    for (int i = 0; i < 9; ++i) residuals.push_back({"o" + std::to_string(i) + "-run", regime_of(job, cal), 5.0 * i});
    const std::vector<MeasuredRun> runs = {{"mine-a", 900, job}, {"mine-b", 900, job}, {"mine-c", 900, eight}};
    ValidationResult r;
    for (const auto& run : runs) {
        ValidationRow row;
        row.name = run.name;
        row.predicted_tokens_per_s_per_gpu = 1000;  // in sample: 900 inside [740.7, 1350]
        row.published_tokens_per_s_per_gpu = 900;
        r.rows.push_back(row);
    }
    // Held out, mine-a is predicted 1300: [962.96, 1755], 900 outside;
    // mine-b 1200: [888.9, 1620], inside; mine-c 1250: [925.9, 1687.5], outside.
    const IntervalCoverage c = interval_coverage(runs, r, cal, residuals, {1300, 1200, 1250});
    EXPECT_TRUE(c.held_out_centre);
    ASSERT_EQ(c.rows.size(), 3u);
    EXPECT_DOUBLE_EQ(c.rows[0].centre, 1300);
    EXPECT_NEAR(c.rows[0].lo, 1300 / 1.35, 1e-9);
    EXPECT_FALSE(c.rows[0].inside);
    EXPECT_TRUE(c.rows[1].inside);
    EXPECT_FALSE(c.rows[2].inside);
    EXPECT_EQ(c.inside, 1);
    ASSERT_EQ(c.regimes.size(), 2u);
    EXPECT_EQ(c.regimes[0].regime, to_string(regime_of(job, cal)));
    EXPECT_EQ(c.regimes[0].runs, 2);
    EXPECT_EQ(c.regimes[0].inside, 1);
    EXPECT_EQ(c.regimes[1].runs, 1);
    EXPECT_EQ(c.regimes[1].inside, 0);
    // 16 GPUs share the residuals' framework, family and scale band: calibrated;
    // 8 GPUs (<=8) have no residual of their band: outside calibration.
    EXPECT_EQ(c.regimes[0].uncalibrated, 0);
    EXPECT_EQ(c.regimes[0].inside_calibrated, 1);
    EXPECT_EQ(c.regimes[1].uncalibrated, 1);
    EXPECT_EQ(c.regimes[1].inside_calibrated, 0);
    // In sample, all three are inside.
    EXPECT_EQ(interval_coverage(runs, r, cal, residuals).inside, 3);
}

}  // namespace
}  // namespace lostflops
