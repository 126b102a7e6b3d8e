// How often a table's published value lies inside the 80 % interval the
// estimate prints for it (lostflops/prediction_interval.h). Each run's
// interval is drawn from the residuals of the other source families only
// (source_family of the residual's and the run's names): a run's own source
// never narrows its interval, as leave-one-source-out never fits on it.
// Units: tokens/s per GPU.
#pragma once

#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/validate.h"

namespace lostflops {

struct IntervalCheck {
    double lo = 0, hi = 0;  // tokens/s per GPU around the predicted value
    int residuals = 0;      // residuals the interval was drawn from
    bool inside = false;    // lo <= published <= hi
    bool calibrated = true; // PredictionInterval::calibrated
    std::string outside;    // ... and why not
};

struct IntervalCoverage {
    std::vector<IntervalCheck> rows;  // as r.rows
    int inside = 0;
    double share = 0;  // inside / rows, 0..1
    int uncalibrated = 0;          // rows outside calibration (their interval borrowed)
    int inside_calibrated = 0;     // rows inside, of the calibrated ones
    double share_calibrated = 0;   // inside_calibrated / calibrated rows, 0..1 (0 when none)
};

// Precondition: runs and r from the same table (validate_runs(runs, ...)).
// Residuals of every other family; when none is left (a table of one family
// only), the run's interval is empty and counts as outside.
IntervalCoverage interval_coverage(const std::vector<MeasuredRun>& runs, const ValidationResult& r,
                                   const Calibration& cal, const std::vector<Residual>& residuals);

}  // namespace lostflops
