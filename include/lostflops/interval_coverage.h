// How often a table's published value lies inside the 80 % interval the
// estimate prints for it (lostflops/prediction_interval.h), out of sample
// on both counts: each run's interval is drawn from the residuals of the
// other source families only (source_family of the residual's and the run's
// names), and it is put around the run's held-out prediction (the profile's
// fitted factors fitted again without its source, calibrate_runs.h) when
// one is given, the in-sample prediction otherwise. Counted over the table
// and per regime (regime_of). Units: tokens/s per GPU.
#pragma once

#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/validate.h"

namespace lostflops {

struct IntervalCheck {
    double lo = 0, hi = 0;  // tokens/s per GPU around the centre
    double centre = 0;      // the prediction the interval is put around
    int residuals = 0;      // residuals the interval was drawn from
    std::string regime;     // the run's own regime, to_string(regime_of(job))
    bool inside = false;    // lo <= published <= hi
    bool calibrated = true; // PredictionInterval::calibrated
    std::string outside;    // ... and why not
};

struct RegimeCoverage {
    std::string regime;  // to_string(Regime)
    int runs = 0, inside = 0;
    int uncalibrated = 0;       // of the runs
    int inside_calibrated = 0;  // of the inside, those calibrated (the intervals estimate prints as such)
};

// Regimes need this many rows for their share to be printed (issue 39's
// "per regime with at least 8 rows"; kMinResiduals likewise).
inline constexpr int kMinRegimeRows = 8;

struct IntervalCoverage {
    std::vector<IntervalCheck> rows;  // as r.rows
    bool held_out_centre = false;     // centred on held-out predictions
    int inside = 0;
    double share = 0;  // inside / rows, 0..1
    int uncalibrated = 0;          // rows outside calibration (their interval borrowed)
    int inside_calibrated = 0;     // rows inside, of the calibrated ones
    double share_calibrated = 0;   // inside_calibrated / calibrated rows, 0..1 (0 when none)
    std::vector<RegimeCoverage> regimes;  // in order of first row
};

// Precondition: runs and r from the same table (validate_runs(runs, ...));
// held_out_tokens_per_s_per_gpu empty or one per row
// (LeaveOneSourceOut::held_out_tokens_per_s_per_gpu). Residuals of every
// other family; when none is left (a table of one family only), the run's
// interval is empty and counts as outside.
IntervalCoverage interval_coverage(const std::vector<MeasuredRun>& runs, const ValidationResult& r,
                                   const Calibration& cal, const std::vector<Residual>& residuals,
                                   const std::vector<double>& held_out_tokens_per_s_per_gpu = {});

}  // namespace lostflops
