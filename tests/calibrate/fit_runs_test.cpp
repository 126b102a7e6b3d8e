// Fitting the fitted factors to measured runs (lostflops/calibrate_runs.h):
// the table of fitted factors agrees with the profile's keys and defaults,
// a profile that generated synthetic runs is recovered, no component factor
// is ever fitted, and the acceptance test on the published runs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibration_fields.h"
#include "calibrate/fitted_fields.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/validate.h"
#include "test_util.h"

namespace lostflops {
namespace {

const std::string kPublished = "data/published/published-runs.csv";

const std::vector<MeasuredRun>& published_runs() {
    static const std::vector<MeasuredRun> runs = load_run_table(test::source_path(kPublished));
    return runs;
}

// A modest search, so the tests stay quick under the sanitizers.
FitOptions quick() {
    FitOptions o;
    o.grid_points = 9;
    o.max_sweeps = 4;
    o.refine_points = 5;
    o.refine_rounds = 2;
    return o;
}

TEST(FittedFields, DefaultsLieInTheirRanges) {
    const Calibration d = default_calibration();
    for (const auto& f : calib::kFittedFields) {
        const double v = calib::fitted_value(d, f);
        EXPECT_LT(f.lo, f.hi) << f.key;
        EXPECT_GE(v, f.lo) << f.key << " default below its fitted range";
        EXPECT_LE(v, f.hi) << f.key << " default above its fitted range";
    }
}

TEST(FittedFields, KeysNameTheMembersOfTheProfileTable) {
    for (const auto& f : calib::kFittedFields) {
        const std::string key = f.key;
        bool found = false;
        for (const auto& s : calib::kScalarFields)
            if (key == s.key) {
                found = true;
                EXPECT_TRUE(s.member == f.member) << key;
            }
        EXPECT_TRUE(found) << key << " is not a key of calibration_fields.h";
    }
}

TEST(FitRuns, RecoversTheProfileThatGeneratedTheRuns) {
    Calibration truth = default_calibration();
    truth.kernel_overhead_us = 8;
    std::vector<MeasuredRun> runs = published_runs();
    for (auto& r : runs) r.measured_tokens_per_s_per_gpu = estimate(r.job, truth).tokens_per_s_per_gpu;

    const FitResult fit = fit_runs(runs, default_calibration(), quick());
    EXPECT_GT(fit.before.mape_pct, 1.0) << "the perturbation should be visible before the fit";
    EXPECT_LT(fit.after.mape_pct, 1.0);
    EXPECT_LE(fit.after.mape_pct, fit.before.mape_pct);
    ASSERT_EQ(fit.factors.size(), calib::kFittedFields.size());
    for (const auto& f : fit.factors) {
        if (f.status == FactorStatus::fitted) {
            EXPECT_GE(f.value, f.lo) << f.key;
            EXPECT_LE(f.value, f.hi) << f.key;
        } else {
            EXPECT_EQ(f.value, f.base) << f.key;
        }
    }
    // The reported "after" error is what the written profile really gives.
    EXPECT_NEAR(validate_runs(runs, fit.calibration).mape_pct, fit.after.mape_pct, 1e-9);
    // The non-fitted factors are the base profile's.
    EXPECT_EQ(fit.calibration.bus_eff_intra, default_calibration().bus_eff_intra);
    EXPECT_EQ(calibration_to_yaml(Calibration{default_calibration().source, fit.calibration.devices}),
              calibration_to_yaml(Calibration{default_calibration().source, default_calibration().devices}));

    // Deterministic: the same input gives the same profile.
    const FitResult again = fit_runs(runs, default_calibration(), quick());
    EXPECT_EQ(calibration_to_yaml(again.calibration), calibration_to_yaml(fit.calibration));
}

TEST(FitRuns, NeverTouchesAComponentFactor) {
    // Every device-family factor comes from component micro-benchmarks: a fit
    // to runs on one architecture leaves all families as they were.
    std::vector<MeasuredRun> ampere_only;
    for (const auto& r : published_runs())
        if (r.job.cluster.gpu.arch == "ampere" && ampere_only.size() < 6) ampere_only.push_back(r);
    ASSERT_GE(ampere_only.size(), 2u);
    Calibration base = default_calibration();
    base.find_family("ampere")->gemm_max[0] = 0.5;
    const FitResult fit = fit_runs(ampere_only, base, quick());
    EXPECT_EQ(fit.calibration.device("ampere").gemm_max[0], 0.5);
    for (const auto& f : fit.factors) EXPECT_EQ(std::string(f.key).find('.'), std::string::npos) << f.key;
}

TEST(FitRuns, RejectsBadInput) {
    EXPECT_THROW(fit_runs({}, default_calibration()), InputError);
    FitOptions bad;
    bad.grid_points = 1;
    EXPECT_THROW(fit_runs(published_runs(), default_calibration(), bad), InputError);
    const std::vector<MeasuredRun> three(published_runs().begin(), published_runs().begin() + 3);
    EXPECT_THROW(cross_validate(three, default_calibration(), 0, quick()), InputError);
    EXPECT_THROW(cross_validate(three, default_calibration(), 1, quick()), InputError);
    EXPECT_THROW(cross_validate(three, default_calibration(), 4, quick()), InputError);
}

TEST(FitRuns, CrossValidationPredictsEveryRunOnce) {
    const std::vector<MeasuredRun> six(published_runs().begin(), published_runs().begin() + 6);
    const CrossValidation cv = cross_validate(six, default_calibration(), 3, quick());
    ASSERT_EQ(cv.per_fold.size(), 3u);
    EXPECT_EQ(cv.per_fold[1].held_out, (std::vector<std::size_t>{1, 4}));
    ASSERT_EQ(cv.held_out_error_pct.size(), 6u);
    double sum = 0, worst = 0;
    for (double e : cv.held_out_error_pct) {
        sum += std::fabs(e);
        worst = std::max(worst, std::fabs(e));
    }
    EXPECT_DOUBLE_EQ(cv.mape_pct, sum / 6);
    EXPECT_EQ(cv.max_abs_error_pct, worst);
    EXPECT_EQ(std::fabs(cv.held_out_error_pct[cv.worst_run]), worst);
}

// The acceptance test: fitted on half of the published runs (alternate
// rows), the profile predicts the other half within 12 % MAPE, both ways.
TEST(FitRuns, HalfOfThePublishedRunsPredictsTheOtherHalf) {
    // The project copy must be the shared reference table.
    const auto& all = published_runs();
    ASSERT_EQ(all.size(), 29u);
    std::vector<MeasuredRun> even, odd;
    for (std::size_t i = 0; i < all.size(); ++i) (i % 2 == 0 ? even : odd).push_back(all[i]);
    const double even_to_odd = validate_runs(odd, fit_runs(even, default_calibration()).calibration).mape_pct;
    const double odd_to_even = validate_runs(even, fit_runs(odd, default_calibration()).calibration).mape_pct;
    EXPECT_LE(even_to_odd, 12.0) << "fit on even rows, odd rows predicted";
    EXPECT_LE(odd_to_even, 12.0) << "fit on odd rows, even rows predicted";

    // The same split is 2-fold cross-validation (run i in fold i % 2).
    const CrossValidation cv = cross_validate(all, default_calibration(), 2);
    EXPECT_DOUBLE_EQ(cv.per_fold[1].mape_pct, even_to_odd);
    EXPECT_DOUBLE_EQ(cv.per_fold[0].mape_pct, odd_to_even);
}

}  // namespace
}  // namespace lostflops
