// `lostflops validate TABLE.csv [--fit-on TABLE]...`: published vs predicted
// tokens/s per GPU, in sample (the profile as it is) and leave-one-source-out
// (each source family of TABLE predicted by the profile's fitted factors
// fitted again without that family, on the profile's `fitted_on` tables or
// the --fit-on ones; lostflops/calibrate_runs.h). Exit 0 whenever the table
// was read, runs that do not fit included (each row says so; docs/commands.md "Exit
// codes").
#include <cmath>
#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/interval_coverage.h"
#include "lostflops/report.h"
#include "lostflops/validate.h"

namespace lostflops::cli {

namespace {

struct Opts {
    std::string table;
    std::string calibration;
    std::vector<std::string> fit_on;
    Format format = Format::table;
};

std::string worst_name(const ValidationResult& r) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < r.rows.size(); ++i)
        if (std::fabs(r.rows[i].error_pct) > std::fabs(r.rows[w].error_pct)) w = i;
    return r.rows.empty() ? "" : r.rows[w].name;
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("validate", "predict published runs and report the error (MAPE), in sample "
                                               "and leave-one-source-out");
    cmd->add_option("table", opts->table, "CSV of published runs; job files in runs/ beside it")->required();
    cmd->add_option("--calibration", opts->calibration, "calibration profile (YAML; default: built in)");
    cmd->add_option("--fit-on", opts->fit_on,
                    "run table the profile's fitted factors were fitted on (repeatable; default: the profile's "
                    "fitted_on)");
    add_format_option(cmd, opts->format);
    cmd->callback([opts, &exit_code] {
        const Calibration cal = load_calibration_for(opts->calibration);
        const std::vector<MeasuredRun> runs = load_run_table(opts->table);
        const ValidationResult r = validate_runs(runs, cal);
        std::string why;
        std::optional<LeaveOneSourceOut> loso;
        if (auto fs = fit_set_runs(opts->fit_on, cal, why)) loso = leave_one_source_out(*fs, runs, cal);
        // The interval each estimate prints, its own source's residuals held out.
        const IntervalCoverage cover = interval_coverage(runs, r, cal, builtin_residuals());
        if (opts->format == Format::json) {
            nlohmann::json j;
            j["schema_version"] = kJsonSchemaVersion;
            j["runs"] = nlohmann::json::array();
            for (std::size_t i = 0; i < r.rows.size(); ++i) {
                const auto& row = r.rows[i];
                nlohmann::json x{{"name", row.name},
                                 {"source_family", source_family(row.name)},
                                 {"gpu", row.gpu},
                                 {"num_gpus", row.num_gpus},
                                 {"published_tokens_per_s_per_gpu", row.published_tokens_per_s_per_gpu},
                                 {"predicted_tokens_per_s_per_gpu", row.predicted_tokens_per_s_per_gpu},
                                 {"error_pct", row.error_pct},
                                 {"mfu", row.mfu},
                                 {"fits", row.fits}};
                if (loso) x["held_out_error_pct"] = loso->held_out_error_pct[i];
                x["interval_tokens_per_s_per_gpu"] = {cover.rows[i].lo, cover.rows[i].hi};
                x["inside_interval"] = cover.rows[i].inside;
                j["runs"].push_back(x);
            }
            j["mape_pct"] = r.mape_pct;
            j["mean_signed_error_pct"] = r.mean_signed_pct;
            j["max_abs_error_pct"] = r.max_abs_error_pct;
            j["interval_coverage"] = {{"runs", cover.rows.size()}, {"inside", cover.inside}, {"share", cover.share}};
            if (loso) {
                nlohmann::json fam = nlohmann::json::array();
                for (const auto& f : loso->families)
                    fam.push_back({{"source_family", f.family}, {"runs", f.runs}, {"mape_pct", f.mape_pct},
                                   {"mean_signed_error_pct", f.mean_signed_pct},
                                   {"max_abs_error_pct", f.max_abs_error_pct},
                                   {"undetermined_factors", f.undetermined}});
                j["leave_one_source_out"] = {{"mape_pct", loso->mape_pct},
                                             {"mean_signed_error_pct", loso->mean_signed_pct},
                                             {"max_abs_error_pct", loso->max_abs_error_pct},
                                             {"worst_run", runs[loso->worst_run].name},
                                             {"fits", loso->fits},
                                             {"families", fam}};
            } else {
                j["leave_one_source_out"] = {{"skipped", why}};
            }
            std::printf("%s\n", j.dump(2).c_str());
        } else {
            std::string out = fmt::format("{:<40} {:>6} {:<14} {:>12} {:>12} {:>8} {:>9} {:>6}\n", "run", "GPUs",
                                          "gpu", "published", "predicted", "error", "held-out", "MFU");
            for (std::size_t i = 0; i < r.rows.size(); ++i) {
                const auto& row = r.rows[i];
                out += fmt::format("{:<40} {:>6} {:<14} {:>12.2f} {:>12.2f} {:>7.1f}% {:>9} {:>5.1f}%{}\n", row.name,
                                   row.num_gpus, row.gpu, row.published_tokens_per_s_per_gpu,
                                   row.predicted_tokens_per_s_per_gpu, row.error_pct,
                                   loso ? fmt::format("{:.1f}%", loso->held_out_error_pct[i]) : "-", 100 * row.mfu,
                                   row.fits ? "" : "  (does not fit)");
            }
            out += fmt::format("\ntokens/s per GPU over {} runs (error > 0: predicted too fast)\n", r.rows.size());
            out += fmt::format("  in sample:                 MAPE {:.1f} %, mean signed {:+.1f} %, worst {:.1f} % ({})\n",
                               r.mape_pct, r.mean_signed_pct, r.max_abs_error_pct, worst_name(r));
            out += fmt::format("  inside the 80 % interval:  {} of {} runs ({:.0f} %; each interval drawn without "
                               "its own source's residuals)\n",
                               cover.inside, cover.rows.size(), 100 * cover.share);
            if (loso) {
                out += fmt::format("  leave-one-source-out:      MAPE {:.1f} %, mean signed {:+.1f} %, worst {:.1f} % "
                                   "({}); {} refits\n",
                                   loso->mape_pct, loso->mean_signed_pct, loso->max_abs_error_pct,
                                   runs[loso->worst_run].name, loso->fits);
                for (const auto& f : loso->families) {
                    out += fmt::format("    {:<22} {:>3} runs: MAPE {:5.1f} %, mean signed {:+6.1f} %, worst {:5.1f} %\n",
                                       f.family, f.runs, f.mape_pct, f.mean_signed_pct, f.max_abs_error_pct);
                    if (!f.undetermined.empty())
                        out += fmt::format("      only this source sets {} (without it: the middle of each range)\n",
                                           fmt::join(f.undetermined, ", "));
                }
            } else {
                out += "  leave-one-source-out:      skipped: " + why + "\n";
            }
            std::printf("%s", out.c_str());
        }
        exit_code = 0;
    });
}

}  // namespace lostflops::cli
