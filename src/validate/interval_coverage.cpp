// Coverage of the 80 % interval on a run table (lostflops/interval_coverage.h):
// for each run, prediction_interval over the residuals whose source family
// differs from the run's, around the predicted tokens/s per GPU, and whether
// the published value falls inside it. An interval that holds 80 % of
// held-out errors should hold about 80 % of a table it was not drawn from.
#include "lostflops/interval_coverage.h"

#include <string>

#include "lostflops/estimate.h"

namespace lostflops {

IntervalCoverage interval_coverage(const std::vector<MeasuredRun>& runs, const ValidationResult& r,
                                   const Calibration& cal, const std::vector<Residual>& residuals) {
    IntervalCoverage out;
    for (std::size_t i = 0; i < r.rows.size() && i < runs.size(); ++i) {
        const ValidationRow& row = r.rows[i];
        const std::string family = source_family(row.name);
        std::vector<Residual> others;
        for (const Residual& x : residuals)
            if (source_family(x.name) != family) others.push_back(x);
        IntervalCheck c;
        if (!others.empty()) {
            // The run's breakdown (whether it is outside calibration), around the table's prediction.
            Estimate e = estimate(runs[i].job, cal);
            e.tokens_per_s_per_gpu = row.predicted_tokens_per_s_per_gpu;
            const PredictionInterval pi = prediction_interval(runs[i].job, e, cal, others);
            c.calibrated = pi.calibrated;
            c.outside = pi.outside;
            c.lo = pi.tokens_per_s_per_gpu_lo;
            c.hi = pi.tokens_per_s_per_gpu_hi;
            c.residuals = pi.residuals;
            c.inside = c.lo <= row.published_tokens_per_s_per_gpu && row.published_tokens_per_s_per_gpu <= c.hi;
        }
        out.inside += c.inside ? 1 : 0;
        out.uncalibrated += c.calibrated ? 0 : 1;
        out.inside_calibrated += c.inside && c.calibrated ? 1 : 0;
        out.rows.push_back(c);
    }
    if (!out.rows.empty()) out.share = static_cast<double>(out.inside) / static_cast<double>(out.rows.size());
    const auto calibrated = static_cast<int>(out.rows.size()) - out.uncalibrated;
    if (calibrated > 0) out.share_calibrated = static_cast<double>(out.inside_calibrated) / calibrated;
    return out;
}

}  // namespace lostflops
