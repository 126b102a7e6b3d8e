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

#include <fmt/format.h>

#include "cli/commands.h"
#include "lostflops/command_reports.h"
#include "lostflops/error.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

namespace {

struct ResidualOptions {
    std::vector<std::string> tables;
    std::vector<std::string> fit_on;
    std::string output;
    std::string calibration;
};

int run_residuals(const ResidualOptions& o) {
    const ResidualTable t = residual_table(o.tables, o.calibration, o.fit_on);
    const std::string& csv = t.csv;
    if (!t.note.empty()) fmt::print(stderr, "lostflops: note: {}\n", terminal_text(t.note));
    if (o.output.empty()) {
        std::fwrite(csv.data(), 1, csv.size(), stdout);
        return 0;
    }
    std::ofstream f(o.output, std::ios::binary);
    f << csv;
    f.close();
    if (!f) throw InputError(o.output, "", "cannot write the residual table");
    fmt::print("{} runs, {} source families: held-out MAPE {:.1f} %, mean signed {:+.1f} %; wrote {}\n", t.runs,
               t.families, t.mape_pct, t.mean_signed_pct, o.output);
    return 0;
}

}  // namespace

void add_calibrate_residuals_command(CLI::App* calibrate, int& exit_code) {
    auto o = std::make_shared<ResidualOptions>();
    auto* cmd = calibrate->add_subcommand(
        "residuals", "out-of-sample (leave-one-source-out) residuals of run tables, for the prediction intervals");
    cmd->add_option("tables", o->tables, "run tables (CSV as for validate)")->required();
    cmd->add_option("-o,--output", o->output, "CSV to write (default: stdout)")->check(file_name());
    cmd->add_option("--calibration", o->calibration, "calibration profile (YAML; default: built in)")
        ->check(file_name());
    cmd->add_option("--fit-on", o->fit_on,
                    "run table the profile's fitted factors were fitted on (repeatable; default: its fitted_on)");
    cmd->callback([o, &exit_code] { exit_code = run_residuals(*o); });
}

}  // namespace lostflops::cli
