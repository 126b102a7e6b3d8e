// Coverage of the 80 % interval on a run table (lostflops/interval_coverage.h):
// for each run, prediction_interval over the residuals whose source family
// differs from the run's, around its held-out predicted tokens/s per GPU
// (its in-sample one when none is given), and whether the published value
// falls inside it; counted over the table and per regime. An interval that
// holds 80 % of held-out errors should hold about 80 % of a table it was not
// drawn from, the more so the more sources the table has.
#include "lostflops/interval_coverage.h"

#include <string>

#include "lostflops/estimate.h"

namespace lostflops {

IntervalCoverage interval_coverage(const std::vector<MeasuredRun>& runs, const ValidationResult& r,
                                   const Calibration& cal, const std::vector<Residual>& residuals,
                                   const std::vector<double>& held_out_tokens_per_s_per_gpu) {
    IntervalCoverage out;
    out.held_out_centre =
        !held_out_tokens_per_s_per_gpu.empty() && held_out_tokens_per_s_per_gpu.size() == r.rows.size();
    for (std::size_t i = 0; i < r.rows.size() && i < runs.size(); ++i) {
        const ValidationRow& row = r.rows[i];
        const std::string family = source_family(row.name);
        std::vector<Residual> others;
        for (const Residual& x : residuals)
            if (source_family(x.name) != family) others.push_back(x);
        IntervalCheck c;
        c.regime = to_string(regime_of(runs[i].job, cal));
        c.centre = out.held_out_centre ? held_out_tokens_per_s_per_gpu[i] : row.predicted_tokens_per_s_per_gpu;
        if (!others.empty()) {
            // The run's breakdown (whether it is outside calibration), around the centre.
            Estimate e = estimate(runs[i].job, cal);
            e.tokens_per_s_per_gpu = c.centre;
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
        RegimeCoverage* g = nullptr;
        for (auto& x : out.regimes)
            if (x.regime == c.regime) g = &x;
        if (!g) g = &out.regimes.emplace_back(RegimeCoverage{c.regime});
        ++g->runs;
        g->inside += c.inside ? 1 : 0;
        g->uncalibrated += c.calibrated ? 0 : 1;
        g->inside_calibrated += c.inside && c.calibrated ? 1 : 0;
        out.rows.push_back(c);
    }
    if (!out.rows.empty()) out.share = static_cast<double>(out.inside) / static_cast<double>(out.rows.size());
    const auto calibrated = static_cast<int>(out.rows.size()) - out.uncalibrated;
    if (calibrated > 0) out.share_calibrated = static_cast<double>(out.inside_calibrated) / calibrated;
    return out;
}

}  // namespace lostflops
