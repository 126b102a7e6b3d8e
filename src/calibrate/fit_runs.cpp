// Fitting the fitted factors of a calibration profile to measured runs:
// deterministic coordinate descent on grids, from the middle of each range.
// Objective: mean absolute percentage error of tokens/s per GPU. Phase 1
// sweeps the factors in
// kFittedFields order, each over an even grid of its range, until a sweep
// changes nothing; phase 2 repeats the sweeps on local grids around the
// current point, each round (refine_points - 1) / 2 times finer. The runs'
// jobs are parsed once; every evaluation is estimate() calls with a modified
// Calibration.
#include "lostflops/calibrate_runs.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "calibrate/fitted_fields.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"

namespace lostflops {

const char* to_string(FactorStatus s) {
    switch (s) {
        case FactorStatus::fitted: return "fitted";
        case FactorStatus::insensitive: return "no run is sensitive to it";
    }
    return "unknown";
}

namespace {

using calib::FittedField;
using calib::kFittedFields;

constexpr double kImprovement = 1e-12;  // a candidate must lower the MAPE by more (in %)
constexpr double kSameRelative = 1e-9;  // predictions this close count as unchanged

double prediction(const MeasuredRun& run, const Calibration& cal) {
    return estimate(run.job, cal).tokens_per_s_per_gpu;
}

double abs_error_pct(const MeasuredRun& run, double predicted) {
    return std::fabs(100.0 * (predicted - run.measured_tokens_per_s_per_gpu) / run.measured_tokens_per_s_per_gpu);
}

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

struct SearchResult {
    Calibration calibration;
    std::vector<FactorFit> factors;
    long evaluations = 0;
};

// The working point of the search and the error of every run there.
class Search {
public:
    Search(const std::vector<const MeasuredRun*>& runs, const Calibration& start, double min_gain_pct)
        : runs_(runs), cal_(start), min_gain_pct_(min_gain_pct) {
        abs_err_.reserve(runs_.size());
        for (const MeasuredRun* r : runs_) abs_err_.push_back(abs_error_pct(*r, prediction(*r, cal_)));
    }

    Calibration& calibration() { return cal_; }
    long evaluations() const { return evaluations_; }

    // Indices of the runs field f can change: all of them (every fitted
    // factor is system-level, fitted_fields.h).
    std::vector<std::size_t> reach(const FittedField&) const {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < runs_.size(); ++i) out.push_back(i);
        return out;
    }

    // Whether any run of `reach` predicts differently at lo, midpoint or hi.
    bool sensitive(const FittedField& f, const std::vector<std::size_t>& reach) {
        double& x = calib::fitted_value(cal_, f);
        const double saved = x;
        bool changes = false;
        for (std::size_t i : reach) {
            std::array<double, 3> p{};
            const std::array<double, 3> at{f.lo, 0.5 * (f.lo + f.hi), f.hi};
            for (std::size_t j = 0; j < at.size(); ++j) {
                x = at[j];
                p[j] = prediction(*runs_[i], cal_);
            }
            const double scale = std::max({std::fabs(p[0]), std::fabs(p[1]), std::fabs(p[2]), 1e-300});
            const double spread = std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]});
            if (spread > kSameRelative * scale) {
                changes = true;
                break;
            }
        }
        x = saved;
        return changes;
    }

    // One coordinate step: the candidate of field f that lowers the MAPE most
    // (the first of equals), if any lowers it. Returns whether x moved.
    bool step(const FittedField& f, const std::vector<std::size_t>& reach, const std::vector<double>& candidates) {
        double& x = calib::fitted_value(cal_, f);
        const double start = x;
        double best_x = start;
        double best = mean(abs_err_);
        std::vector<double> trial = abs_err_, best_err;
        for (double v : candidates) {
            if (v == start) continue;
            x = v;
            for (std::size_t i : reach) trial[i] = abs_error_pct(*runs_[i], prediction(*runs_[i], cal_));
            ++evaluations_;
            const double obj = mean(trial);
            if (obj < best - kImprovement) {
                best = obj;
                best_x = v;
                best_err = trial;
            }
        }
        if (mean(abs_err_) - best < min_gain_pct_) best_x = start;
        x = best_x;
        if (best_x == start) return false;
        abs_err_ = std::move(best_err);
        return true;
    }

private:
    const std::vector<const MeasuredRun*>& runs_;
    Calibration cal_;
    std::vector<double> abs_err_;
    long evaluations_ = 0;
    double min_gain_pct_ = 0;
};

void check_options(const FitOptions& o) {
    auto bad = [](const char* key, int v, const char* expected) {
        return InputError("<fit options>", key, fmt::format("{} given; expected {}", v, expected));
    };
    if (o.grid_points < 2 || o.grid_points > 10000) throw bad("grid_points", o.grid_points, "2 to 10000");
    if (o.max_sweeps < 1 || o.max_sweeps > 1000) throw bad("max_sweeps", o.max_sweeps, "1 to 1000");
    if (o.refine_points < 3 || o.refine_points > 10000) throw bad("refine_points", o.refine_points, "3 to 10000");
    if (o.refine_rounds < 0 || o.refine_rounds > 100) throw bad("refine_rounds", o.refine_rounds, "0 to 100");
}

SearchResult search(const std::vector<const MeasuredRun*>& runs, const Calibration& base, const FitOptions& opt) {
    check_options(opt);
    if (runs.empty()) throw InputError("", "runs", "no measured runs to fit");

    // Which factors can be fitted, probed with every fitted factor clamped
    // into its range.
    Calibration clamped = base;
    for (const auto& f : kFittedFields) {
        double& x = calib::fitted_value(clamped, f);
        x = std::clamp(x, f.lo, f.hi);
    }
    Search probe(runs, clamped, 0.0);
    struct Active {
        const FittedField* field;
        std::vector<std::size_t> reach;
    };
    std::vector<Active> active;
    SearchResult out;
    Calibration start = base;  // factors not searched keep their base value, even outside the range
    for (const auto& f : kFittedFields) {
        FactorFit ff{f.key, f.lo, f.hi, calib::fitted_value(base, f), 0, FactorStatus::fitted, false};
        std::vector<std::size_t> reach = probe.reach(f);
        if (!probe.sensitive(f, reach)) {
            ff.status = FactorStatus::insensitive;
        } else {
            active.push_back({&f, std::move(reach)});
            // From the middle of the range: the fit does not depend on the
            // profile it starts from, so a refit without some runs
            // (leave-one-source-out) is the same procedure as the fit itself.
            calib::fitted_value(start, f) = 0.5 * (f.lo + f.hi);
        }
        out.factors.push_back(ff);
    }
    Search s(runs, start, opt.min_gain_pct);

    auto sweeps = [&](auto&& candidates_of) {
        for (int sweep = 0; sweep < opt.max_sweeps; ++sweep) {
            bool moved = false;
            for (const auto& a : active) moved |= s.step(*a.field, a.reach, candidates_of(*a.field));
            if (!moved) break;
        }
    };
    // Phase 1: even grid over each range.
    sweeps([&](const FittedField& f) {
        std::vector<double> c(static_cast<std::size_t>(opt.grid_points));
        for (int j = 0; j < opt.grid_points; ++j) c[j] = f.lo + (f.hi - f.lo) * j / (opt.grid_points - 1);
        c.back() = f.hi;
        return c;
    });
    // Phase 2: local grids of half-width `h` (in units of the range) around
    // the current value, h shrinking each round.
    double h = 1.0 / (opt.grid_points - 1);
    for (int round = 0; round < opt.refine_rounds; ++round) {
        const double step = 2 * h / (opt.refine_points - 1);
        sweeps([&](const FittedField& f) {
            const double x = calib::fitted_value(s.calibration(), f), w = f.hi - f.lo;
            std::vector<double> c;
            for (int j = 0; j < opt.refine_points; ++j) {
                const double v = x + (j * step - h) * w;
                if (v >= f.lo && v <= f.hi) c.push_back(v);
            }
            return c;
        });
        h = step;
    }

    out.calibration = s.calibration();
    out.evaluations = s.evaluations();
    for (std::size_t k = 0; k < kFittedFields.size(); ++k) {
        FactorFit& ff = out.factors[k];
        ff.value = calib::fitted_value(out.calibration, kFittedFields[k]);
        const double tol = 1e-9 * (ff.hi - ff.lo);
        // A fitted factor that ended on a bound of its range (the search
        // starts in the middle, so it went there).
        ff.at_bound = ff.status == FactorStatus::fitted &&
                      (std::fabs(ff.value - ff.lo) <= tol || std::fabs(ff.value - ff.hi) <= tol);
    }
    return out;
}

}  // namespace

FitResult fit_runs(const std::vector<MeasuredRun>& runs, const Calibration& base, const FitOptions& options) {
    std::vector<const MeasuredRun*> ptrs;
    for (const auto& r : runs) ptrs.push_back(&r);
    SearchResult s = search(ptrs, base, options);
    FitResult out;
    out.before = validate_runs(runs, base);
    out.after = validate_runs(runs, s.calibration);
    out.calibration = std::move(s.calibration);
    out.factors = std::move(s.factors);
    out.evaluations = s.evaluations;
    return out;
}

CrossValidation cross_validate(const std::vector<MeasuredRun>& runs, const Calibration& base, int folds,
                               const FitOptions& options) {
    if (folds < 2 || static_cast<std::size_t>(folds) > runs.size())
        throw InputError("", "folds",
                         fmt::format("{} folds for {} runs; expected 2 to the number of runs", folds, runs.size()));
    CrossValidation cv;
    cv.folds = folds;
    cv.held_out_error_pct.assign(runs.size(), 0.0);
    for (int f = 0; f < folds; ++f) {
        std::vector<const MeasuredRun*> train;
        FoldResult fold;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            if (static_cast<int>(i % static_cast<std::size_t>(folds)) == f)
                fold.held_out.push_back(i);
            else
                train.push_back(&runs[i]);
        }
        const Calibration fitted = search(train, base, options).calibration;
        double sum = 0;
        for (std::size_t i : fold.held_out) {
            const double p = prediction(runs[i], fitted);
            const double e = 100.0 * (p - runs[i].measured_tokens_per_s_per_gpu) / runs[i].measured_tokens_per_s_per_gpu;
            cv.held_out_error_pct[i] = e;
            sum += std::fabs(e);
            fold.max_abs_error_pct = std::max(fold.max_abs_error_pct, std::fabs(e));
        }
        fold.mape_pct = sum / static_cast<double>(fold.held_out.size());
        cv.per_fold.push_back(std::move(fold));
    }
    double sum = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const double a = std::fabs(cv.held_out_error_pct[i]);
        sum += a;
        if (a > cv.max_abs_error_pct) {
            cv.max_abs_error_pct = a;
            cv.worst_run = i;
        }
    }
    cv.mape_pct = sum / static_cast<double>(runs.size());
    return cv;
}

}  // namespace lostflops
