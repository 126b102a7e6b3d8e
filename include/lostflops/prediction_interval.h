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
// a split-conformal one (Vovk et al. 2005; Lei et al. 2018, "Distribution-free
// predictive inference for regression", JASA 113, sec. 2.2) whose
// exchangeable units are source families (source_family: residuals of one
// paper or benchmark share its errors; Dunn, Wasserman & Ramdas 2022,
// "Distribution-free prediction sets for two-layer hierarchical models",
// JASA 118: a new group is exchangeable with the groups seen, not with their
// members):
//  - pool: the residuals of the job's regime when they are at least
//    kMinResiduals from at least kMinSources source families; otherwise the
//    context band is dropped, then the scale band, dense/MoE, framework and
//    family, in that order (all residuals at last); the interval says which;
//  - score: s = |ln(1 + e)| of each error e = predicted / measured - 1 in the
//    pool (n scores, F source families), symmetric in the log so that "2x too
//    fast" and "2x too slow" weigh alike;
//  - level: tau = ceil((F + 1) * 0.8) / F, at most 1: split-conformal's
//    ceil((n + 1)(1 - alpha))-th of n with the F families as the n units;
//  - weights: runs of one source err alike, so each run weighs
//    1 / (1 + (n_f - 1) rho), n_f the runs of its source and rho the
//    intraclass correlation of the scores between sources (one-way ANOVA,
//    intraclass_correlation): a source counts as its effective sample size
//    (Kish 1965, "Survey Sampling", design effect 1 + (m - 1) rho); rho 0
//    weighs runs alike, rho 1 weighs sources alike (Dunn et al.'s pooled CDF);
//  - q: the smallest score whose cumulative weight reaches tau of the total
//    (weighted_conformal_score); with equal weights the ceil(tau * n)-th
//    smallest (conformal_score), for one residual per family exactly
//    split conformal's ceil((F + 1) * 0.8)-th smallest;
//  - interval: measured tokens/s in [predicted * e^-q, predicted * e^q],
//    step time likewise; errors band [e^-q - 1, e^q - 1].
// With F >= 4 this covers a new family's run at least 80 % of the time when
// families are exchangeable; from 4 to 8 families tau is 1 (the widest error
// of the pool), hence kMinSources; a pool of all residuals from fewer than 4
// families has tau 1 and no such guarantee.
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

struct Residual {
    std::string name;        // run
    Regime regime;
    double error_pct = 0;    // held-out (predicted - measured) / measured * 100
};

inline constexpr int kMinResiduals = 8;  // residuals a regime needs to be used alone
// ... and the source families it needs: the fewest F whose conformal rank
// ceil((F + 1) * 0.8) is below F (9: rank 8), so that the interval is not
// the single largest error of the pool, one outlying source's.
inline constexpr int kMinSources = 9;

struct PredictionInterval {
    double tokens_per_s_per_gpu_lo = 0, tokens_per_s_per_gpu_hi = 0;
    double step_time_s_lo = 0, step_time_s_hi = 0;
    // The error band the interval stands for, e^-q - 1 and e^q - 1 (x100);
    // named p10 / p90 for the JSON keys they fill (the band's low and high ends).
    double error_p10_pct = 0, error_p90_pct = 0;
    int residuals = 0;                            // how many
    int sources = 0;                              // from how many source families
    double source_correlation = 0;                // rho of the weights (see above)
    std::string regime;                           // "fsdp, hopper, <=8 GPUs, dense, any context"
    // False when no published run is like this job, so that the band above is
    // borrowed and says nothing of it (`outside` says why; the figures stay
    // for reference): no residual shares the job's framework, device family
    // and scale band (one GPU is a band of its own: no published run is on
    // one), or kernel launches and host wait take a larger share of its step
    // than of any published run's (kMaxCalibratedOverheadShare).
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

// The conformal score quantile of the method above: of `scores` (unsorted,
// not empty) drawn from `units` >= 1 exchangeable units, the ceil(tau * n)-th
// smallest with tau = min(1, ceil((units + 1) * 4 / 5) / units).
double conformal_score(std::vector<double> scores, int units);
// The same rank on a weighted empirical distribution: the smallest score
// whose cumulative weight (scores ascending) reaches tau of the total.
// Preconditions: as many weights as scores, all positive.
double weighted_conformal_score(const std::vector<double>& scores, const std::vector<double>& weights, int units);
// One-way ANOVA intraclass correlation of `values` grouped by `groups` (same
// length): (MSB - MSW) / (MSB + (n0 - 1) MSW), n0 = (N - sum n_g^2 / N) /
// (k - 1) for unequal groups (Donner 1986, Int. Stat. Rev. 54), clamped to
// [0, 1]; 0 with fewer than two groups or no group of two.
double intraclass_correlation(const std::vector<double>& values, const std::vector<std::string>& groups);

}  // namespace lostflops
