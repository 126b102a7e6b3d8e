// The 80 % interval every estimate carries, from the model's out-of-sample
// (leave-one-source-out) residuals on published runs in the same regime.
//
// Regime of a job: framework, device family (calibration families), scale
// band (GPUs: <= 8, <= 64, <= 512, more), dense or MoE, context band (tokens
// per sequence: <= 4,096, <= 16,384, more). The residual table
// (data/calibration/residuals.csv, embedded; made by `lostflops calibrate
// residuals`, scripts/make-residuals.sh) holds one held-out error per
// published run with its regime. The interval uses the runs of the job's
// regime; with fewer than kMinResiduals of them it drops the context band,
// then the scale band, dense/MoE, framework and family, in that order, until
// enough remain (all runs at last), and says which regime it used. Its ends
// are the 10th and 90th percentiles e10, e90 of the errors e = predicted /
// measured - 1 (linear interpolation between order statistics), so that the
// measured value lies in [predicted / (1 + e90), predicted / (1 + e10)] for
// 80 % of those runs; step time scales the other way.
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
    std::string scale;       // "<=8", "<=64", "<=512", ">512"
    std::string moe;         // "dense" or "moe"
    std::string context;     // "<=4k", "<=16k", ">16k"
};
Regime regime_of(const Job& job, const Calibration& cal);

struct Residual {
    std::string name;        // run
    Regime regime;
    double error_pct = 0;    // held-out (predicted - measured) / measured * 100
};

inline constexpr int kMinResiduals = 8;

struct PredictionInterval {
    double tokens_per_s_per_gpu_lo = 0, tokens_per_s_per_gpu_hi = 0;
    double step_time_s_lo = 0, step_time_s_hi = 0;
    double error_p10_pct = 0, error_p90_pct = 0;  // of the residuals used
    int residuals = 0;                            // how many
    std::string regime;                           // "fsdp, hopper, <=8 GPUs, dense, any context"
};

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

}  // namespace lostflops
