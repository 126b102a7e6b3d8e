// `lostflops validate TABLE.csv [--fit-on TABLE]...`: published vs predicted
// tokens/s per GPU, in sample (the profile as it is) and leave-one-source-out
// (each source family of TABLE predicted by the profile's fitted factors
// fitted again without that family, on the profile's `fitted_on` tables or
// the --fit-on ones; lostflops/calibrate_runs.h). Exit 0 whenever the table
// was read, runs that do not fit included (each row says so; docs/commands.md "Exit
// codes").
#include <cstdio>
#include <set>
#include <string>

#include "cli/commands.h"
#include "lostflops/command_reports.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

namespace {

struct Opts {
    std::string table;
    std::string calibration;
    std::vector<std::string> fit_on;
    Format format = Format::table;
};

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("validate", "predict published runs and report the error (MAPE), in sample "
                                               "and leave-one-source-out");
    cmd->add_option("table", opts->table, "CSV of published runs; job files in runs/ beside it")->required();
    cmd->add_option("--calibration", opts->calibration, "calibration profile (YAML; default: built in)")
        ->check(file_name());
    cmd->add_option("--fit-on", opts->fit_on,
                    "run table the profile's fitted factors were fitted on (repeatable; default: the profile's "
                    "fitted_on)");
    add_format_option(cmd, opts->format);
    cmd->callback([opts, &exit_code] {
        const Calibration cal = load_calibration_for(opts->calibration);
        const ValidationReport v = validation_report(opts->table, cal, opts->fit_on);
        for (const auto& w : v.warnings) std::fprintf(stderr, "lostflops: warning: %s\n", terminal_text(w).c_str());
        // The runs' own warnings, as estimate prints them, are many on a big
        // table: counted here, listed in the JSON.
        if (!v.run_warnings.empty() && opts->format != Format::json) {
            std::set<std::string> runs;
            for (const auto& w : v.run_warnings) runs.insert(w.run);
            const auto& first = v.run_warnings.front();
            std::fprintf(stderr,
                         "lostflops: note: %zu warning(s) on %zu run file(s), as estimate prints them (first: %s: "
                         "%s); --format json lists them in run_warnings\n",
                         v.run_warnings.size(), runs.size(), terminal_text(first.run).c_str(),
                         terminal_text(first.key).c_str());
        }
        if (opts->format == Format::json) std::printf("%s\n", validation_json(v).c_str());
        else std::printf("%s", validation_table(v).c_str());
        exit_code = 0;
    });
}

}  // namespace lostflops::cli
