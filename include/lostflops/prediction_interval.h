// The 80 % interval every estimate carries, from the model's out-of-sample
// (leave-one-source-out) residuals on published runs in the same regime.
//
// Regime of a job: framework, device family (calibration families), scale
// band (GPUs: 1, <= 8, <= 64, <= 512, more), dense or MoE, context band (tokens
// per sequence: <= 4,096, <= 16,384, more). The residual table
// (data/calibration/residuals.csv, embedded; made by `lostflops calibrate
// residuals`, scripts/make-residuals.sh) holds one held-out error per
// published run with its regime.
//
// A job is a new run from a source the table may not hold, so the interval is
// a conformal one (Vovk et al. 2005; Lei et al. 2018, "Distribution-free
// predictive inference for regression", JASA 113, sec. 2.2) whose
// exchangeable units are source families (source_family: residuals of one
// paper or benchmark share its errors; a new source is exchangeable with the
// sources seen, not with their runs: Dunn, Wasserman & Ramdas 2022, JASA 118;
// Lee, Barber & Willett 2023, "Distribution-free inference with hierarchical
// data", arXiv 2306.06342, prediction for a new group):
//  - pool: the residuals of the job's regime when they are at least
//    kMinResiduals from at least kMinSources source families; otherwise the
//    context band is dropped, then the scale band, dense/MoE, framework and
//    family, in that order (all residuals at last); the interval says which;
//  - score: s = |ln(1 + e)| of each error e = predicted / measured - 1 in the
//    pool (F source families), symmetric in the log so that "2x too fast"
//    and "2x too slow" weigh alike;
//  - weights: each source is one unit, each of its n_f runs 1 / n_f;
//  - q: the smallest score whose cumulative weight (scores ascending)
//    reaches 0.8 (F + 1): the job's own source is the (F + 1)-th unit, its
//    mass put at +infinity (the weighted split-conformal quantile, Tibshirani,
//    Barber, Candes & Ramdas 2019, "Conformal prediction under covariate
//    shift", NeurIPS; source_conformal_score). With one run per source it is
//    split conformal's ceil((F + 1) * 0.8)-th smallest of F. Below F = 4 no
//    score reaches it: q is then the largest score, with no guarantee;
//  - interval: measured tokens/s in [predicted * e^-q, predicted * e^q],
//    step time likewise; errors band [e^-q - 1, e^q - 1].
// Why it covers: were the new source's runs known, the 0.8 quantile Q* of
// the F + 1 sources' scores, each source weighing 1, would leave at most 0.2
// of that weight above it; sources exchangeable and the job a run of its
// source, P(s_job > Q*) is that expected share, at most 0.2; putting the new
// source's weight at +infinity can only raise the quantile, so q >= Q* and
// P(s_job <= q) >= 0.8. The guarantee is over sources: a table of one
// accurate source is covered more often, one of an inaccurate source less.
// Before (to main 8842c8a, 2026-11-29), runs weighed 1 / (1 + (n_f - 1)
// rho), rho the intraclass correlation of the scores (0.04-0.14 on the
// residual table), so that runs counted nearly one by one: vTrain's 72
// runs, one source of ten and 43 of them host-bound, carried about a
// quarter of the weight and widened every other source's interval
// (docs/accuracy.md, issue 39).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/spec.h"

namespace lostflops {

struct Regime {
    std::string framework;   // to_string(Framework)
    std::string family;      // device family name
    std::string scale;       // "1", "<=8", "<=64", "<=512", ">512"
    std::string moe;         // "dense" or "moe"
    std::string context;     // "<=4k", "<=16k", ">16k"
};
Regime regime_of(const Job& job, const Calibration& cal);
// "megatron-lm, ampere, <=8 GPUs, dense, context <=4k".
std::string to_string(const Regime& r);

struct Residual {
    std::string name;        // run
    Regime regime;
    double error_pct = 0;    // held-out (predicted - measured) / measured * 100
};

inline constexpr int kMinResiduals = 8;  // residuals a regime needs to be used alone
// ... and the source families it needs: the fewest F whose weight to reach,
// 0.8 (F + 1), is at most F - 1 (9: 8 of 9), so that the interval may leave
// out one whole source's errors and is not one outlying source's widest.
inline constexpr int kMinSources = 9;

struct PredictionInterval {
    double tokens_per_s_per_gpu_lo = 0, tokens_per_s_per_gpu_hi = 0;
    double step_time_s_lo = 0, step_time_s_hi = 0;
    // The error band the interval stands for, e^-q - 1 and e^q - 1 (x100);
    // named p10 / p90 for the JSON keys they fill (the band's low and high ends).
    double error_p10_pct = 0, error_p90_pct = 0;
    int residuals = 0;                            // how many
    int sources = 0;                              // from how many source families
    std::string regime;                           // "fsdp, hopper, <=8 GPUs, dense, any context"
    // False when no published run is like this job, so that the band above is
    // borrowed and says nothing of it (`outside` says why; the figures stay
    // for reference): no residual shares the job's framework, device family
    // and scale band (one GPU is a band of its own: no published run is on
    // one), kernel launches and host wait take a larger share of its step
    // than of any published run's (kMaxCalibratedOverheadShare), or exposed
    // communication does (kMaxCalibratedCommShare).
    bool calibrated = true;
    std::string outside;
};

// The largest share of the step that kernel launches and host wait
// (Breakdown overhead_s + host_s) take in any run behind the residual table:
// 11.9 % (megatron24-h100-gpt-1.7b; every published run, 2026-11-29: `for f in
// data/published/runs/*.json data/published/*/runs/*.json; do lostflops
// estimate $f --format json; done`, breakdown kernel_overhead_s +
// host_bound_s over step_time_s). A step more launch- or host-bound than
// that is outside what the intervals were measured on.
inline constexpr double kMaxCalibratedOverheadShare = 0.12;

// The largest share of the step that exposed communication (Breakdown
// tp_comm_s + cp_comm_s + ep_comm_s + pp_p2p_s + dp_comm_s) takes in any run
// behind the residual table: 36.1 % (megatron24-h100-gpt-32b, tp 8 x pp 8
// over 384 H100; the largest of an MoE run 30.2 %, DeepSeek-V3 on 1,024
// H100; 2026-12-06, every run of scripts/make-residuals.sh's tables,
// `lostflops estimate RUN --format json`; the test
// Residuals.NoRunBehindTheTableIsBeyondTheCaps keeps it so). A step more
// communication-bound than that rests on the network model where no
// published run has tested it (a DeepSeek-V3 plan whose all-to-all crosses
// 16 nodes with no node-limited routing: 64 %).
inline constexpr double kMaxCalibratedCommShare = 0.37;

// Exposed communication's share of e's step (0 when the step is 0).
double exposed_comm_share(const Estimate& e);

// The interval of `e` from `residuals` (see above). Precondition: residuals
// not empty.
PredictionInterval prediction_interval(const Job& job, const Estimate& e, const Calibration& cal,
                                       const std::vector<Residual>& residuals);
// ... from the built-in table (parsed once; throws InputError if it is broken).
PredictionInterval prediction_interval(const Job& job, const Estimate& e, const Calibration& cal);
const std::vector<Residual>& builtin_residuals();

// The residual table: '#' comment lines (how it was made), then the header
// name,framework,family,scale,moe,context,measured_tokens_per_s_per_gpu,
// predicted_tokens_per_s_per_gpu,error_pct. Throws InputError.
std::vector<Residual> parse_residuals(std::string_view text, const std::string& source);

// Linear-interpolation percentile (0..100) of unsorted values; values not empty.
double percentile(std::vector<double> values, double pct);

// The weighted split-conformal quantile: the smallest of `scores` (unsorted,
// not empty) whose cumulative weight, scores ascending, reaches 0.8 (total +
// new_weight), the new point's weight put at +infinity; the largest score
// when none does. Preconditions: as many weights as scores, all positive;
// new_weight >= 0.
double weighted_conformal_score(const std::vector<double>& scores, const std::vector<double>& weights,
                                double new_weight);
// The method above: each run of source `sources[i]` weighs 1 / n_f, the new
// job's source 1. Precondition: as many sources as scores, not empty.
double source_conformal_score(const std::vector<double>& scores, const std::vector<std::string>& sources);

}  // namespace lostflops
