// Leave-one-source-out error (contract: lostflops/calibrate_runs.h): for each
// source family of the judged runs, the fitted factors are fitted again on
// the fit set without that family's runs (fit_runs), and its runs predicted
// with that fit. Families are processed in order of first appearance; the
// fits are independent and deterministic, so the result is too.
// Every refit starts from the prior, not from the profile: the profile's
// fitted factors were fitted on every source, the held-out one included, and
// a factor the remaining runs cannot move (fit_runs keeps the base value of a
// factor no run is sensitive to, and of one no step improves) would carry the
// held-out source's own fit into its prediction. The prior of a fitted factor
// is the middle of its physical range (fitted_fields.h), where fit_runs
// starts every factor it searches.
// Each family of the fit set also names the fitted factors its prediction
// rests on the prior for (SourceError::undetermined): moving one over its whole range moves the
// remaining runs' MAPE by less than the fit's min_gain_pct, so the refit
// cannot set it, while some held-out run's prediction moves by more than 1 %.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "calibrate/fitted_fields.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"

namespace lostflops {

namespace {

// `base` with every fitted factor at the middle of its range.
Calibration prior_of(const Calibration& base) {
    Calibration c = base;
    for (const auto& f : calib::kFittedFields) calib::fitted_value(c, f) = 0.5 * (f.lo + f.hi);
    return c;
}

double mape_pct(const std::vector<MeasuredRun>& runs, const Calibration& cal) {
    return validate_runs(runs, cal).mape_pct;
}

std::vector<std::string> undetermined(const std::vector<MeasuredRun>& train, const std::vector<MeasuredRun>& judged,
                                      const std::vector<std::size_t>& held, const Calibration& fitted,
                                      double min_gain_pct) {
    constexpr double kFelt = 0.01;  // a held-out prediction that moves by more than 1 %
    std::vector<std::string> out;
    for (const auto& f : calib::kFittedFields) {
        Calibration c = fitted;
        double lo_mape = 0, hi_mape = 0, mid_mape = 0;
        calib::fitted_value(c, f) = f.lo;
        lo_mape = mape_pct(train, c);
        std::vector<double> at_lo;
        for (std::size_t i : held) at_lo.push_back(estimate(judged[i].job, c).tokens_per_s_per_gpu);
        calib::fitted_value(c, f) = f.hi;
        hi_mape = mape_pct(train, c);
        bool felt = false;
        for (std::size_t k = 0; k < held.size(); ++k) {
            const double p = estimate(judged[held[k]].job, c).tokens_per_s_per_gpu;
            if (std::fabs(p - at_lo[k]) > kFelt * std::max(std::fabs(p), std::fabs(at_lo[k]))) felt = true;
        }
        if (!felt) continue;
        calib::fitted_value(c, f) = 0.5 * (f.lo + f.hi);
        mid_mape = mape_pct(train, c);
        const double spread = std::max({lo_mape, mid_mape, hi_mape}) - std::min({lo_mape, mid_mape, hi_mape});
        if (spread < min_gain_pct) out.push_back(f.key);
    }
    return out;
}

}  // namespace

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
    const Calibration prior = prior_of(base);
    std::optional<Calibration> whole;  // the fit on the whole fit set, made once if needed
    for (const std::string& family : order) {
        std::vector<MeasuredRun> train;
        for (const auto& r : fit_set)
            if (source_family(r.name) != family) train.push_back(r);
        if (train.empty())
            throw InputError("", "runs", fmt::format("every run of the fit set is of source '{}'; nothing left to fit "
                                                     "without it", family));
        Calibration fitted;
        const bool whole_set = train.size() == fit_set.size();
        if (whole_set) {
            if (!whole) {
                whole = fit_runs(fit_set, prior, options).calibration;
                ++out.fits;
            }
            fitted = *whole;
        } else {
            fitted = fit_runs(train, prior, options).calibration;
            ++out.fits;
        }
        SourceError se{family, 0, 0, 0, 0, {}};
        if (!whole_set) se.undetermined = undetermined(train, judged, members[family], fitted, options.min_gain_pct);
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
