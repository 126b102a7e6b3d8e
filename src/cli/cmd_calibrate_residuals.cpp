// `lostflops calibrate residuals TABLE... [-o OUT] [--calibration PROFILE] [--fit-on T]...`:
// the out-of-sample residual table the prediction intervals are drawn from
// (lostflops/prediction_interval.h): every run of the tables predicted by the
// profile's fitted factors fitted again on the profile's fit tables
// (fitted_on, or --fit-on) without the run's source family
// (leave-one-source-out), with the run's regime.
// scripts/make-residuals.sh writes data/calibration/residuals.csv with it; a
// test re-makes the table and fails when it is stale (the model changed).
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/commands.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/error.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/validate.h"

namespace lostflops::cli {

namespace {

struct ResidualOptions {
    std::vector<std::string> tables;
    std::vector<std::string> fit_on;
    std::string output;
    std::string calibration;
};

int run_residuals(const ResidualOptions& o) {
    const Calibration cal = load_calibration_for(o.calibration);
    std::vector<MeasuredRun> runs;
    std::set<std::string> names;
    for (const auto& t : o.tables)
        for (auto& r : load_run_table(t)) {
            if (!names.insert(r.name).second) throw InputError(t, r.name, "a run named twice across the tables");
            runs.push_back(std::move(r));
        }
    std::string why;
    const auto fit_set = fit_set_runs(o.fit_on, cal, why);
    // A profile that fits nothing: every prediction is already out of sample.
    const LeaveOneSourceOut loso = fit_set ? leave_one_source_out(*fit_set, runs, cal) : leave_one_source_out(runs, runs, cal);
    if (!fit_set) fmt::print(stderr, "lostflops: note: {}\n", why);
    std::string csv;
    csv += "# Out-of-sample residuals of lostflops: each run predicted by the profile's fitted factors fitted\n";
    csv += "# again on the profile's fit tables without the run's source family (leave-one-source-out).\n";
    csv += "# The 80 % interval of every estimate is drawn from these (lostflops/prediction_interval.h).\n";
    csv += fmt::format("# Made by: lostflops calibrate residuals {} (scripts/make-residuals.sh), profile {}, fit on {}.\n",
                       fmt::join(o.tables, " "), o.calibration.empty() ? "built in" : o.calibration,
                       fmt::join(o.fit_on.empty() ? cal.fitted_on : o.fit_on, " "));
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
    if (o.output.empty()) {
        std::fwrite(csv.data(), 1, csv.size(), stdout);
        return 0;
    }
    std::ofstream f(o.output, std::ios::binary);
    f << csv;
    f.close();
    if (!f) throw InputError(o.output, "", "cannot write the residual table");
    fmt::print("{} runs, {} source families: held-out MAPE {:.1f} %, mean signed {:+.1f} %; wrote {}\n", runs.size(),
               loso.families.size(), loso.mape_pct, loso.mean_signed_pct, o.output);
    return 0;
}

}  // namespace

void add_calibrate_residuals_command(CLI::App* calibrate, int& exit_code) {
    auto o = std::make_shared<ResidualOptions>();
    auto* cmd = calibrate->add_subcommand(
        "residuals", "out-of-sample (leave-one-source-out) residuals of run tables, for the prediction intervals");
    cmd->add_option("tables", o->tables, "run tables (CSV as for validate)")->required();
    cmd->add_option("-o,--output", o->output, "CSV to write (default: stdout)");
    cmd->add_option("--calibration", o->calibration, "calibration profile (YAML; default: built in)");
    cmd->add_option("--fit-on", o->fit_on,
                    "run table the profile's fitted factors were fitted on (repeatable; default: its fitted_on)");
    cmd->callback([o, &exit_code] { exit_code = run_residuals(*o); });
}

}  // namespace lostflops::cli
