// Measured peak memory against the prediction (lostflops/validate.h
// validate_memory): each row with a measured peak is compared with the
// figure it measured (max allocated against Memory::allocated_bytes, max
// reserved against Memory::reserved_bytes); a row that ran out of memory
// should be predicted "does not fit", and one that ran should fit.
#include <algorithm>
#include <cmath>

#include "lostflops/estimate.h"
#include "lostflops/validate.h"

namespace lostflops {

MemoryValidation validate_memory(const std::vector<MeasuredRun>& runs, const Calibration& cal) {
    MemoryValidation out;
    double sum_abs = 0, sum = 0;
    for (const MeasuredRun& run : runs) {
        const bool measured = run.measured_allocated_bytes > 0 || run.measured_reserved_bytes > 0;
        if (!measured && !run.oom && !run.has_throughput()) continue;
        const Estimate e = estimate(run.job, cal);
        MemoryValidationRow row;
        row.name = run.name;
        row.measured_oom = run.oom;
        row.predicted_fits = e.memory.fits;
        if (run.oom) {
            ++out.oom_rows;
            if (!e.memory.fits) ++out.oom_predicted;
        } else if (!e.memory.fits) {
            ++out.ran_but_does_not_fit;
        }
        // An oom row's peak is what was allocated when it failed: a lower bound, not compared.
        if (measured && !run.oom) {
            row.reserved = run.measured_allocated_bytes <= 0;
            row.measured_bytes = row.reserved ? run.measured_reserved_bytes : run.measured_allocated_bytes;
            row.predicted_bytes = row.reserved ? e.memory.reserved_bytes : e.memory.allocated_bytes;
            row.error_pct = 100.0 * (row.predicted_bytes - row.measured_bytes) / row.measured_bytes;
            ++out.measured;
            const double a = std::fabs(row.error_pct);
            if (a <= 5) ++out.within_5_pct;
            if (a <= 10) ++out.within_10_pct;
            sum_abs += a;
            sum += row.error_pct;
            out.max_abs_error_pct = std::max(out.max_abs_error_pct, a);
        } else if (run.oom) {
            row.measured_bytes = run.measured_allocated_bytes;
            row.predicted_bytes = e.memory.allocated_bytes;
        }
        out.rows.push_back(row);
    }
    if (out.measured > 0) {
        out.mape_pct = sum_abs / out.measured;
        out.mean_signed_pct = sum / out.measured;
    }
    return out;
}

}  // namespace lostflops
