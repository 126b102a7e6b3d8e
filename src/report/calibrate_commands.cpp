// The profiles the `calibrate` commands write (lostflops/command_reports.h),
// for the command line and the Python module alike: nccl-tests outputs ->
// bus-bandwidth curves merged into a base profile (nccl_tests.h); measured
// runs -> the fitted factors (calibrate_runs.h fit_runs) with a k-fold
// cross-validation (run i in fold i mod K, K = 5 or the number of runs if
// fewer) and leave-one-source-out; component micro-benchmark tables -> the
// device families' factors (calibrate_components.h); the out-of-sample
// residual table of the prediction intervals (prediction_interval.h).
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/component_tables.h"
#include "lostflops/command_reports.h"
#include "lostflops/error.h"
#include "lostflops/prediction_interval.h"

namespace lostflops {

namespace {

constexpr int kDefaultFolds = 5;

Calibration base_profile(const std::string& base) {
    return base.empty() ? default_calibration() : load_calibration(base);
}

std::string base_name(const std::string& base) { return base.empty() ? std::string("defaults") : base; }

}  // namespace

NcclCalibration calibrate_nccl(const std::vector<std::string>& files, const NcclTestsOptions& parse,
                               const std::string& base) {
    NcclCalibration out;
    std::vector<NcclTestsRun> runs;
    for (const auto& f : files) {
        NcclTestsResult r = read_nccl_tests(f, parse);
        out.warnings.insert(out.warnings.end(), r.warnings.begin(), r.warnings.end());
        for (auto& run : r.runs) runs.push_back(std::move(run));
    }
    out.curves = curves_from_runs(runs, out.warnings);
    Calibration cal = base_profile(base);
    merge_curves(cal, out.curves);
    cal.source = base_name(base) + " + nccl-tests " + fmt::format("{}", fmt::join(files, ", "));
    out.profile_curves = cal.nccl.size();
    out.yaml = calibration_to_yaml(cal);
    return out;
}

RunsCalibration calibrate_runs(const std::string& table, const std::string& base, std::optional<int> given) {
    RunsCalibration out;
    out.runs = throughput_runs(load_run_table(table, &out.warnings));
    const Calibration b = base_profile(base);
    int folds = given.value_or(0);
    if (given) {
        if (folds < 2 || static_cast<std::size_t>(folds) > out.runs.size())
            throw InputError(table, "--folds",
                             fmt::format("{} folds given; expected 2 to {} (the number of runs in the table)", folds,
                                         out.runs.size()));
    } else {
        folds = static_cast<int>(std::min<std::size_t>(kDefaultFolds, out.runs.size()));
    }
    out.fit = fit_runs(out.runs, b);
    if (folds >= 2) out.cv = cross_validate(out.runs, b, folds);
    std::set<std::string> families;
    for (const auto& r : out.runs) families.insert(source_family(r.name));
    if (families.size() >= 2) out.loso = leave_one_source_out(out.runs, out.runs, b);
    out.base_name = base_name(base);
    out.fit.calibration.source = out.base_name + ", fitted factors by calibrate runs on " + table;
    out.yaml = calibration_to_yaml(out.fit.calibration);
    return out;
}

ComponentsCalibration calibrate_components(const std::vector<std::string>& measured,
                                           const std::vector<std::string>& gpus, const std::string& base) {
    if (!gpus.empty() && gpus.size() != measured.size())
        throw InputError("--gpu", "", "give one --gpu per --measured folder, or none (folders named after catalog GPUs)");
    calib::ComponentTables tables = calib::builtin_component_tables();
    for (std::size_t i = 0; i < measured.size(); ++i)
        tables = calib::merge_tables(tables, calib::read_measured_tables(measured[i], gpus.empty() ? "" : gpus[i]));
    ComponentsCalibration out{"", fit_components(tables, base_profile(base))};
    out.fit.calibration.source = base_name(base) + ", device families by calibrate components";
    out.yaml = calibration_to_yaml(out.fit.calibration);
    return out;
}

ResidualTable residual_table(const std::vector<std::string>& tables, const std::string& calibration,
                             const std::vector<std::string>& fit_on) {
    ResidualTable out;
    std::string& note = out.note;
    std::string& csv = out.csv;
    const Calibration cal = base_profile(calibration);
    std::vector<MeasuredRun> runs;
    std::set<std::string> names;
    for (const auto& t : tables)
        for (auto& r : throughput_runs(load_run_table(t))) {
            if (!names.insert(r.name).second) throw InputError(t, r.name, "a run named twice across the tables");
            runs.push_back(std::move(r));
        }
    const auto fit_set = fit_set_runs(fit_on, cal, note);
    // A profile that fits nothing: every prediction is already out of sample.
    const LeaveOneSourceOut loso =
        fit_set ? leave_one_source_out(*fit_set, runs, cal) : leave_one_source_out(runs, runs, cal);
    if (fit_set) note.clear();
    csv += "# Out-of-sample residuals of lostflops: each run predicted by the profile's fitted factors fitted\n";
    csv += "# again on the profile's fit tables without the run's source family (leave-one-source-out).\n";
    csv += "# The 80 % interval of every estimate is drawn from these (lostflops/prediction_interval.h).\n";
    csv += fmt::format("# Made by: lostflops calibrate residuals {} (scripts/make-residuals.sh), profile {}, fit on {}.\n",
                       fmt::join(tables, " "), calibration.empty() ? "built in" : calibration,
                       fmt::join(fit_on.empty() ? cal.fitted_on : fit_on, " "));
    csv += fmt::format("# {} runs, {} source families, {} refits; held-out MAPE {:.2f} %, mean signed {:+.2f} %.\n",
                       runs.size(), loso.families.size(), loso.fits, loso.mape_pct, loso.mean_signed_pct);
    csv += "# Re-make it whenever the model changes: the test Residuals.TableIsCurrent fails until then.\n";
    csv += "name,framework,family,scale,moe,context,measured_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu,"
           "error_pct\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const Regime r = regime_of(runs[i].job, cal);
        csv += fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.3f}\n", runs[i].name, r.framework, r.family, r.scale,
                           r.moe, r.context, runs[i].measured_tokens_per_s_per_gpu,
                           loso.held_out_tokens_per_s_per_gpu[i], loso.held_out_error_pct[i]);
    }
    out.runs = runs.size();
    out.families = loso.families.size();
    out.mape_pct = loso.mape_pct;
    out.mean_signed_pct = loso.mean_signed_pct;
    return out;
}

}  // namespace lostflops
