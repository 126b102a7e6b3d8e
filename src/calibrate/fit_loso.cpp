// Leave-one-source-out error (contract: lostflops/calibrate_runs.h): for each
// source family of the judged runs, the fitted factors are fitted again on
// the fit set without that family's runs (fit_runs), and its runs predicted
// with that fit. Families are processed in order of first appearance; the
// fits are independent and deterministic, so the result is too.
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "lostflops/calibrate_runs.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"

namespace lostflops {

LeaveOneSourceOut leave_one_source_out(const std::vector<MeasuredRun>& fit_set,
                                       const std::vector<MeasuredRun>& judged, const Calibration& base,
                                       const FitOptions& options) {
    if (judged.empty()) throw InputError("", "runs", "no runs to judge");
    if (fit_set.empty()) throw InputError("", "runs", "no runs to fit");
    LeaveOneSourceOut out;
    out.held_out_error_pct.assign(judged.size(), 0.0);
    out.held_out_tokens_per_s_per_gpu.assign(judged.size(), 0.0);
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::size_t>> members;
    for (std::size_t i = 0; i < judged.size(); ++i) {
        const std::string f = source_family(judged[i].name);
        if (!members.count(f)) order.push_back(f);
        members[f].push_back(i);
    }
    std::optional<Calibration> whole;  // the fit on the whole fit set, made once if needed
    for (const std::string& family : order) {
        std::vector<MeasuredRun> train;
        for (const auto& r : fit_set)
            if (source_family(r.name) != family) train.push_back(r);
        if (train.empty())
            throw InputError("", "runs", fmt::format("every run of the fit set is of source '{}'; nothing left to fit "
                                                     "without it", family));
        Calibration fitted;
        if (train.size() == fit_set.size()) {
            if (!whole) {
                whole = fit_runs(fit_set, base, options).calibration;
                ++out.fits;
            }
            fitted = *whole;
        } else {
            fitted = fit_runs(train, base, options).calibration;
            ++out.fits;
        }
        SourceError se{family, 0, 0, 0, 0};
        for (std::size_t i : members[family]) {
            const double p = estimate(judged[i].job, fitted).tokens_per_s_per_gpu;
            const double m = judged[i].measured_tokens_per_s_per_gpu;
            const double e = 100.0 * (p - m) / m;
            out.held_out_tokens_per_s_per_gpu[i] = p;
            out.held_out_error_pct[i] = e;
            ++se.runs;
            se.mape_pct += std::fabs(e);
            se.mean_signed_pct += e;
            se.max_abs_error_pct = std::max(se.max_abs_error_pct, std::fabs(e));
        }
        se.mape_pct /= se.runs;
        se.mean_signed_pct /= se.runs;
        out.families.push_back(se);
    }
    double sum_abs = 0, sum = 0;
    for (std::size_t i = 0; i < judged.size(); ++i) {
        const double a = std::fabs(out.held_out_error_pct[i]);
        sum_abs += a;
        sum += out.held_out_error_pct[i];
        if (a > out.max_abs_error_pct) {
            out.max_abs_error_pct = a;
            out.worst_run = i;
        }
    }
    out.mape_pct = sum_abs / static_cast<double>(judged.size());
    out.mean_signed_pct = sum / static_cast<double>(judged.size());
    return out;
}

}  // namespace lostflops
