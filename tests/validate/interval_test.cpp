// Honest error: the 80 % prediction interval (prediction_interval.h) against
// hand-computed conformal ranks, its regime fallback by source families, the residual table that ships
// is current (re-made by the same computation), the leave-one-source-out
// error (calibrate_runs.h), and the interval in estimate's output.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/validate.h"
#include "test_util.h"

namespace lostflops {
namespace {

TEST(Percentile, LinearBetweenOrderStatistics) {
    // Sorted 1..11: the 10th percentile sits at index 1.0, the 90th at 9.0.
    std::vector<double> v;
    for (int i = 11; i >= 1; --i) v.push_back(i);
    EXPECT_DOUBLE_EQ(percentile(v, 10), 2);
    EXPECT_DOUBLE_EQ(percentile(v, 90), 10);
    // Four values: index 0.3 and 2.7.
    EXPECT_DOUBLE_EQ(percentile({0, 10, 20, 30}, 10), 3);
    EXPECT_DOUBLE_EQ(percentile({0, 10, 20, 30}, 90), 27);
    EXPECT_DOUBLE_EQ(percentile({5}, 90), 5);
}

// Megatron-Core on 48 H100 (Megatron-LM README 2024): regime megatron-core,
// hopper, <=64 GPUs, dense, context <=4k.
const char* kJob = "data/published/runs/megatron24-h100-gpt-1.7b.json";
Job h100_job() { return load_job(test::source_path(kJob)); }

// The weighted split-conformal quantile: the smallest score whose cumulative
// weight reaches 0.8 (total + new weight), the new point's at +infinity.
TEST(ConformalScore, WeightedReachesFourFifthsWithTheNewPoint) {
    // Ten scores of weight 1, a new point of 1: 0.8 * 11 = 8.8, reached at
    // the 9th smallest (split conformal's ceil(11 * 0.8) = 9); without the
    // new point's weight 0.8 * 10 = 8, the 8th.
    const std::vector<double> ten = {10, 3, 7, 1, 9, 2, 8, 4, 6, 5};
    EXPECT_DOUBLE_EQ(weighted_conformal_score(ten, std::vector<double>(10, 1), 1), 9);
    EXPECT_DOUBLE_EQ(weighted_conformal_score(ten, std::vector<double>(10, 1), 0), 8);
    // Nine: 0.8 * 10 = 8.0 exactly, the 8th (no rounding up to the 9th).
    EXPECT_DOUBLE_EQ(weighted_conformal_score({9, 8, 7, 6, 5, 4, 3, 2, 1}, std::vector<double>(9, 1), 1), 8);
    // Weight 3 on score 1, 1 on 2..7 (total 9), the new point 1: 0.8 * 10 = 8;
    // cumulative 3, 4, 5, 6, 7, 8 at scores 1..6: q = 6.
    EXPECT_DOUBLE_EQ(weighted_conformal_score({7, 6, 5, 4, 3, 2, 1}, {1, 1, 1, 1, 1, 1, 3}, 1), 6);
    // Four units and the new one: 0.8 * 5 = 4 = the whole weight, the largest;
    // three: 3.2 is never reached, the largest too (no guarantee).
    EXPECT_DOUBLE_EQ(weighted_conformal_score({1, 2, 3, 4}, {1, 1, 1, 1}, 1), 4);
    EXPECT_DOUBLE_EQ(weighted_conformal_score({1, 2, 3}, {1, 1, 1}, 1), 3);
    EXPECT_DOUBLE_EQ(weighted_conformal_score({0.3}, {1}, 1), 0.3);
}

// Each source is one unit however many runs it has: hand-computed.
TEST(ConformalScore, EachSourceWeighsOne) {
    // Eight sources with one run each, scores 1..8, and source "big" with
    // four runs 0.5, 9, 10, 11 (1/4 each). Nine sources and the new one:
    // 0.8 * 10 = 8. Ascending, cumulative: 0.5 -> 0.25, 1 -> 1.25, ...,
    // 7 -> 7.25, 8 -> 8.25 >= 8: q = 8. Counted run by run (12 runs and the
    // new one: 0.8 * 13 = 10.4) it would be the 11th smallest, 10.
    std::vector<double> scores;
    std::vector<std::string> sources;
    for (int i = 1; i <= 8; ++i) scores.push_back(i), sources.push_back("s" + std::to_string(i));
    for (double x : {0.5, 9.0, 10.0, 11.0}) scores.push_back(x), sources.push_back("big");
    EXPECT_DOUBLE_EQ(source_conformal_score(scores, sources), 8);
    EXPECT_DOUBLE_EQ(weighted_conformal_score(scores, std::vector<double>(scores.size(), 1), 1), 10);
    // A tenth source of one run, score 0: 0.8 * 11 = 8.8; cumulative 1 at 0,
    // 1.25 at 0.5, then 2.25 ... 9.25 at 8 >= 8.8: still 8; with score 12
    // instead it sits above: 8.25 at 8 < 8.8, 8.5 at 9 ... 8.75 at 10, 9.0
    // at 11 >= 8.8: q = 11.
    scores.push_back(0), sources.push_back("s9");
    EXPECT_DOUBLE_EQ(source_conformal_score(scores, sources), 8);
    scores.back() = 12;
    EXPECT_DOUBLE_EQ(source_conformal_score(scores, sources), 11);
}

TEST(PredictionInterval, ConformalBandOfTheRegimesHeldOutErrors) {
    const Calibration cal = default_calibration();
    const Job job = h100_job();
    const Regime r = regime_of(job, cal);
    EXPECT_EQ(r.family, "hopper");
    EXPECT_EQ(r.framework, "megatron-core");
    EXPECT_EQ(r.context, "<=4k");
    EXPECT_EQ(r.scale, "<=64");
    EXPECT_EQ(r.moe, "dense");
    // Eleven residuals of this regime from eleven sources: -10, -5, 0, ... +40 %.
    std::vector<Residual> res;
    for (int i = 0; i < 11; ++i) res.push_back({"run" + std::to_string(i), r, -10.0 + 5 * i});
    // Noise of other regimes must not enter.
    Regime other = r;
    other.family = "ampere";
    for (int i = 0; i < 20; ++i) res.push_back({"a" + std::to_string(i), other, 90});
    Estimate e;
    e.tokens_per_s_per_gpu = 1000;
    e.step_time_s = 2;
    const PredictionInterval iv = prediction_interval(job, e, cal, res);
    EXPECT_EQ(iv.residuals, 11);
    EXPECT_EQ(iv.sources, 11);
    // Scores |ln(1 + e)| sorted: 0, ln 1.05, -ln 0.95, ln 1.1, -ln 0.9, ln 1.15,
    // ln 1.2, ln 1.25, ln 1.3, ln 1.35, ln 1.4; rank ceil(12 * 0.8) = 10 of 11:
    // q = ln 1.35, measured in [1000 / 1.35, 1000 * 1.35].
    EXPECT_NEAR(iv.error_p10_pct, 100 * (1 / 1.35 - 1), 1e-9);
    EXPECT_NEAR(iv.error_p90_pct, 35, 1e-9);
    EXPECT_NEAR(iv.tokens_per_s_per_gpu_lo, 1000 / 1.35, 1e-9);
    EXPECT_NEAR(iv.tokens_per_s_per_gpu_hi, 1000 * 1.35, 1e-9);
    EXPECT_NEAR(iv.step_time_s_lo, 2 / 1.35, 1e-12);
    EXPECT_NEAR(iv.step_time_s_hi, 2 * 1.35, 1e-12);
    EXPECT_EQ(iv.regime.find("any"), std::string::npos) << iv.regime;
}

TEST(PredictionInterval, FallsBackDimensionByDimension) {
    const Calibration cal = default_calibration();
    const Job job = h100_job();
    const Regime r = regime_of(job, cal);
    std::vector<Residual> res;
    // Too few (4 sources) of the exact regime; enough (9 residuals of 9
    // sources) once the scale band is dropped too (context first, then scale).
    for (int i = 0; i < 4; ++i) res.push_back({"x" + std::to_string(i), r, 0});
    Regime wider = r;
    wider.scale = ">512";
    for (int i = 0; i < 5; ++i) res.push_back({"y" + std::to_string(i), wider, 20});
    Estimate e;
    e.tokens_per_s_per_gpu = 100;
    e.step_time_s = 1;
    const PredictionInterval iv = prediction_interval(job, e, cal, res);
    EXPECT_EQ(iv.residuals, 9);
    EXPECT_EQ(iv.sources, 9);
    EXPECT_NE(iv.regime.find("any scale"), std::string::npos) << iv.regime;
    EXPECT_NE(iv.regime.find("any context"), std::string::npos) << iv.regime;
    EXPECT_EQ(iv.regime.find("any framework"), std::string::npos) << iv.regime;
    // Rank ceil(10 * 0.8) = 8 of 9: ln 1.2 (the four zeros come first).
    EXPECT_NEAR(iv.error_p90_pct, 20, 1e-9);
}

// Many runs of one source are one unit: a regime of 12 runs from 2 papers is
// not used alone, however many runs it holds.
TEST(PredictionInterval, CountsSourcesNotRuns) {
    const Calibration cal = default_calibration();
    const Job job = h100_job();
    const Regime r = regime_of(job, cal);
    std::vector<Residual> res;
    for (int i = 0; i < 12; ++i) res.push_back({std::string(i % 2 ? "paperA" : "paperB") + "-run" + std::to_string(i), r, 1});
    Regime fsdp = r;
    fsdp.framework = "fsdp";
    for (int i = 0; i < 7; ++i) res.push_back({"src" + std::to_string(i) + "-x", fsdp, -30});
    Estimate e;
    e.tokens_per_s_per_gpu = 100;
    e.step_time_s = 1;
    const PredictionInterval iv = prediction_interval(job, e, cal, res);
    EXPECT_EQ(iv.sources, 9);
    EXPECT_EQ(iv.residuals, 19);
    EXPECT_NE(iv.regime.find("any framework"), std::string::npos) << iv.regime;
    // Each paper's six runs weigh 1/6, together one unit: nine units and the
    // new one, 0.8 * 10 = 8; the two papers' ln 1.01 carry 2, so the 8th
    // unit of weight falls on the seven -ln 0.7: -ln 0.7 (counted run by run,
    // 0.8 * 20 = 16 of 19 would fall there too: the figures here do not tell
    // the two apart, EachSourceWeighsOne does).
    EXPECT_NEAR(iv.tokens_per_s_per_gpu_lo, 100 * 0.7, 1e-9);
    EXPECT_NEAR(iv.tokens_per_s_per_gpu_hi, 100 / 0.7, 1e-9);
}

// A job no published run is like says so instead of borrowing a band: one
// GPU (a scale band no residual has), or a step whose launches and host wait
// exceed the share of any published run's (kMaxCalibratedOverheadShare).
TEST(PredictionInterval, OutsideCalibrationIsSaid) {
    const Calibration cal = default_calibration();
    Job job = h100_job();
    const Regime r = regime_of(job, cal);
    std::vector<Residual> res;
    for (int i = 0; i < 11; ++i) res.push_back({"run" + std::to_string(i), r, 5});
    Estimate e;
    e.tokens_per_s_per_gpu = 1000;
    e.step_time_s = 1;
    e.breakdown.overhead_s = 0.05;
    e.breakdown.host_s = 0.05;  // 10 %: within the published runs' 12 %
    const PredictionInterval in = prediction_interval(job, e, cal, res);
    EXPECT_TRUE(in.calibrated) << in.outside;
    EXPECT_EQ(in.outside, "");
    e.breakdown.host_s = 0.25;  // 30 % of the step
    const PredictionInterval launch = prediction_interval(job, e, cal, res);
    EXPECT_FALSE(launch.calibrated);
    EXPECT_NE(launch.outside.find("take 30 % of the step"), std::string::npos) << launch.outside;
    EXPECT_EQ(launch.residuals, 11);  // the band is still given, for reference
    e.breakdown.host_s = 0.05;
    // Exposed communication: 36 % is inside the published runs' 37 %, 40 %
    // (0.1 + 0.05 + 0.2 + 0.02 + 0.03 of a 1 s step) is not.
    e.breakdown.tp_comm_s = 0.1;
    e.breakdown.cp_comm_s = 0.04;
    e.breakdown.ep_comm_s = 0.2;
    e.breakdown.pp_p2p_s = 0.01;
    e.breakdown.dp_comm_s = 0.01;
    EXPECT_NEAR(exposed_comm_share(e), 0.36, 1e-12);
    EXPECT_TRUE(prediction_interval(job, e, cal, res).calibrated);
    e.breakdown.cp_comm_s = 0.05;
    e.breakdown.pp_p2p_s = 0.02;
    e.breakdown.dp_comm_s = 0.03;
    const PredictionInterval comm = prediction_interval(job, e, cal, res);
    EXPECT_FALSE(comm.calibrated);
    EXPECT_NE(comm.outside.find("exposed communication takes 40 % of the step"), std::string::npos) << comm.outside;
    e.breakdown = Breakdown{};
    e.breakdown.overhead_s = 0.05;
    e.breakdown.host_s = 0.05;
    job.cluster.num_gpus = 1;
    EXPECT_EQ(regime_of(job, cal).scale, "1");
    const PredictionInterval one = prediction_interval(job, e, cal, res);
    EXPECT_FALSE(one.calibrated);
    EXPECT_NE(one.outside.find("at one GPU"), std::string::npos) << one.outside;
}

TEST(PredictionInterval, BuiltInTableCoversEveryEstimate) {
    const auto& res = builtin_residuals();
    EXPECT_GE(res.size(), 100u);
    const Calibration cal = default_calibration();
    const Job job = h100_job();
    const Estimate e = estimate(job, cal);
    const PredictionInterval iv = prediction_interval(job, e, cal);
    EXPECT_GE(iv.residuals, kMinResiduals);
    EXPECT_TRUE(iv.calibrated) << iv.outside;
    EXPECT_LT(iv.tokens_per_s_per_gpu_lo, iv.tokens_per_s_per_gpu_hi);
    EXPECT_LT(iv.step_time_s_lo, iv.step_time_s_hi);
    EXPECT_THROW(parse_residuals("name,x\n", "r.csv"), InputError);
    EXPECT_THROW(parse_residuals(std::string("name,framework,family,scale,moe,context,measured_tokens_per_s_per_gpu,"
                                             "predicted_tokens_per_s_per_gpu,error_pct\nr,f,h,s,m,c,1,1,oops\n"),
                                 "r.csv"),
                 InputError);
}

// The table in data/calibration/residuals.csv is what `calibrate residuals`
// makes from the model as it is now: re-made when the model changes.
TEST(Residuals, TableIsCurrent) {
    const std::vector<std::string> tables = {"data/published/published-runs.csv",
                                             "data/measured/vtrain-train/measured-runs.csv",
                                             "data/published/modern/published-runs.csv",
                                             "data/published/maxtext/published-runs.csv",
                                             "data/measured/h200-steps/measured-runs.csv"};
    std::vector<MeasuredRun> runs;
    for (const auto& t : tables) {
        const std::string path = test::source_path(t);
        if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here (../shared)";
        for (auto& r : load_run_table(path)) runs.push_back(std::move(r));
    }
    const Calibration cal = default_calibration();
    std::vector<MeasuredRun> fit_set;
    for (const auto& t : cal.fitted_on)
        for (auto& r : load_run_table(test::source_path(t))) fit_set.push_back(std::move(r));
    const LeaveOneSourceOut loso = leave_one_source_out(fit_set, runs, cal);
    std::map<std::string, double> stored;
    for (const auto& r : builtin_residuals()) stored[r.name] = r.error_pct;
    ASSERT_EQ(stored.size(), runs.size()) << "re-make it: scripts/make-residuals.sh";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        ASSERT_TRUE(stored.count(runs[i].name)) << runs[i].name;
        EXPECT_NEAR(stored[runs[i].name], loso.held_out_error_pct[i], 0.01)
            << runs[i].name << ": the model changed; re-make data/calibration/residuals.csv (scripts/make-residuals.sh)";
    }
}

// The two caps of the calibrated domain are the largest shares of the runs
// behind the residual table (prediction_interval.h): no such run is beyond
// them, and the largest comes within a point of each (a cap far above every
// run would call calibrated what no run has tested). Launches and host wait
// are capped over the published runs (the H200 steps and vTrain's Ampere
// runs hold host-bound ones, which the intervals mark outside).
TEST(Residuals, NoRunBehindTheTableIsBeyondTheCaps) {
    const std::vector<std::string> tables = {"data/published/published-runs.csv",
                                             "data/measured/vtrain-train/measured-runs.csv",
                                             "data/published/modern/published-runs.csv",
                                             "data/published/maxtext/published-runs.csv",
                                             "data/measured/h200-steps/measured-runs.csv"};
    const Calibration cal = default_calibration();
    double comm_max = 0, overhead_max = 0;
    for (const auto& t : tables) {
        const std::string path = test::source_path(t);
        if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
        const bool published = t.rfind("data/published/", 0) == 0;
        for (const MeasuredRun& run : load_run_table(path)) {
            const Estimate e = estimate(run.job, cal);
            SCOPED_TRACE(run.name);
            EXPECT_LE(exposed_comm_share(e), kMaxCalibratedCommShare);
            comm_max = std::max(comm_max, exposed_comm_share(e));
            if (!published) continue;
            const double overhead = (e.breakdown.overhead_s + e.breakdown.host_s) / e.step_time_s;
            EXPECT_LE(overhead, kMaxCalibratedOverheadShare);
            overhead_max = std::max(overhead_max, overhead);
        }
    }
    EXPECT_GT(comm_max, kMaxCalibratedCommShare - 0.01);
    EXPECT_GT(overhead_max, kMaxCalibratedOverheadShare - 0.01);
}

TEST(LeaveOneSourceOut, EachFamilyIsPredictedByAFitWithoutIt) {
    // Runs generated by a profile with another kernel overhead: every family's
    // held-out error is small (the others pin the factor down), and a family
    // alone in the judged set is predicted by the fit on the whole fit set.
    const std::vector<MeasuredRun> all = load_run_table(test::source_path("data/published/published-runs.csv"));
    Calibration truth = default_calibration();
    truth.kernel_overhead_us = 7;
    std::vector<MeasuredRun> runs = all;
    for (auto& r : runs) r.measured_tokens_per_s_per_gpu = estimate(r.job, truth).tokens_per_s_per_gpu;
    FitOptions quick;
    quick.grid_points = 9;
    quick.max_sweeps = 3;
    quick.refine_rounds = 1;
    const LeaveOneSourceOut loso = leave_one_source_out(runs, runs, default_calibration(), quick);
    ASSERT_EQ(loso.families.size(), 4u);  // narayanan21, korthikanti22, torchtitan24, megatron24
    EXPECT_EQ(loso.families[0].family, "narayanan21");
    EXPECT_EQ(loso.fits, 4);
    EXPECT_LT(loso.mape_pct, 1.5);
    int n = 0;
    for (const auto& f : loso.families) n += f.runs;
    EXPECT_EQ(n, static_cast<int>(runs.size()));
    // The held-out prediction of a run is its family's fit, not the whole one.
    const std::vector<MeasuredRun> one(runs.begin(), runs.begin() + 1);
    const LeaveOneSourceOut single = leave_one_source_out(runs, one, default_calibration(), quick);
    EXPECT_NEAR(single.held_out_error_pct[0], loso.held_out_error_pct[0], 1e-9);
    EXPECT_EQ(source_family("tt2412-h100-llama3.1-8b-fsdp-8"), "tt2412");
    EXPECT_EQ(source_family("nodash"), "nodash");
    EXPECT_THROW(leave_one_source_out({}, one, default_calibration(), quick), InputError);
}

TEST(LeaveOneSourceOut, HeldOutPredictionIgnoresTheProfilesFittedValues) {
    // The profile's fitted factors were fitted on every source, the held-out
    // one included: a refit without it must not inherit them. Every refit
    // starts from the prior (the middle of each range, fitted_fields.h), so
    // two profiles that differ only in a fitted value (kernel_overhead_us at
    // both ends of its range) give the same held-out vTrain predictions.
    std::vector<MeasuredRun> fit_set = load_run_table(test::source_path("data/published/published-runs.csv"));
    const std::vector<MeasuredRun> vtrain =
        load_run_table(test::source_path("data/measured/vtrain-train/measured-runs.csv"));
    fit_set.insert(fit_set.end(), vtrain.begin(), vtrain.end());
    const std::vector<MeasuredRun> judged(vtrain.begin(), vtrain.begin() + 6);
    FitOptions quick;
    quick.grid_points = 5;
    quick.max_sweeps = 2;
    quick.refine_rounds = 0;
    Calibration low = default_calibration(), high = default_calibration();
    low.kernel_overhead_us = 4;  // both ends of its range (4-16 us)
    high.kernel_overhead_us = 16;
    const LeaveOneSourceOut a = leave_one_source_out(fit_set, judged, low, quick);
    const LeaveOneSourceOut b = leave_one_source_out(fit_set, judged, high, quick);
    ASSERT_EQ(a.families.size(), 1u);
    for (std::size_t i = 0; i < judged.size(); ++i)
        EXPECT_DOUBLE_EQ(a.held_out_tokens_per_s_per_gpu[i], b.held_out_tokens_per_s_per_gpu[i]) << judged[i].name;
    // The host's costs per operator are component values (docs/host-time.md),
    // not fitted: the profile's own value is what the held-out runs see, and
    // no family is said to rest on a prior for them.
    Calibration slow_host = default_calibration();
    slow_host.host_op_us = 2 * default_calibration().host_op_us;
    const LeaveOneSourceOut c = leave_one_source_out(fit_set, judged, slow_host, quick);
    for (std::size_t i = 0; i < judged.size(); ++i)
        EXPECT_LT(c.held_out_tokens_per_s_per_gpu[i], a.held_out_tokens_per_s_per_gpu[i]) << judged[i].name;
    for (const auto* r : {&a, &c})
        for (const auto& k : r->families[0].undetermined) {
            EXPECT_NE(k, "host_op_us");
            EXPECT_NE(k, "host_bwd_op_us");
        }
}

TEST(EstimateOutput, CarriesTheIntervalInTableAndJson) {
    const std::string job = test::source_path(kJob);
    const test::CliRun j = test::run_cli("estimate --format json " + job);
    ASSERT_EQ(j.code, 0) << j.all();
    const auto doc = nlohmann::json::parse(j.out);
    ASSERT_TRUE(doc.contains("tokens_per_s_per_gpu_range"));
    ASSERT_TRUE(doc.contains("step_time_s_range"));
    const double t = doc["tokens_per_s_per_gpu"], lo = doc["tokens_per_s_per_gpu_range"][0],
                 hi = doc["tokens_per_s_per_gpu_range"][1];
    EXPECT_LT(lo, hi);
    EXPECT_GE(doc["prediction_interval"]["residuals"].get<int>(), kMinResiduals);
    EXPECT_LT(doc["step_time_s_range"][0].get<double>(), doc["step_time_s_range"][1].get<double>());
    (void)t;
    const test::CliRun table = test::run_cli("estimate " + job);
    EXPECT_NE(table.out.find("80 % interval from"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("–"), std::string::npos) << table.out;
}

TEST(SearchOutput, MarksThePlansWhoseIntervalOverlapsTheBestAsTies) {
    const test::CliRun r = test::run_cli("search --format json --top 50 " + test::source_path(kJob));
    ASSERT_EQ(r.code, 0) << r.all();
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_TRUE(doc.contains("best_interval"));
    const double min_tokens = doc["best_interval"]["tie_min_tokens_per_s_per_gpu"];
    const double lo = doc["best_interval"]["tokens_per_s_per_gpu_range"][0];
    const double best = doc["top"][0]["tokens_per_s_per_gpu"];
    EXPECT_LE(min_tokens, best);
    int ties = 0, others = 0;
    for (const auto& p : doc["plans"]) {
        const double t = p["tokens_per_s_per_gpu"];
        // Tie: the plan's upper end (t * best_hi / best) reaches the best plan's lower end.
        const bool tie = t * doc["best_interval"]["tokens_per_s_per_gpu_range"][1].get<double>() / best >= lo - 1e-9;
        EXPECT_EQ(p["tie_of_best"].get<bool>(), tie) << p.dump();
        (tie ? ties : others)++;
    }
    EXPECT_GT(ties, 1);
    EXPECT_GT(others, 0);
}

}  // namespace
}  // namespace lostflops
