// `lostflops validate TABLE.csv`: published vs predicted tokens/s per GPU.
// Exit 0 whenever the table was read, runs that do not fit included (each row
// says so; README "Exit codes").
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "lostflops/report.h"
#include "lostflops/validate.h"

namespace lostflops::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
    struct Opts {
        std::string table;
        std::string calibration;
        Format format = Format::table;
    };
    auto opts = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("validate", "predict published runs and report the error (MAPE)");
    cmd->add_option("table", opts->table, "CSV of published runs; job files in runs/ beside it")->required();
    cmd->add_option("--calibration", opts->calibration, "calibration profile (YAML; default: built in)");
    add_format_option(cmd, opts->format);
    cmd->callback([opts, &exit_code] {
        const ValidationResult r = validate_table(opts->table, load_calibration_for(opts->calibration));
        if (opts->format == Format::json) {
            nlohmann::json j;
            j["schema_version"] = kJsonSchemaVersion;
            j["runs"] = nlohmann::json::array();
            for (const auto& row : r.rows)
                j["runs"].push_back({{"name", row.name}, {"gpu", row.gpu}, {"num_gpus", row.num_gpus},
                                     {"published_tokens_per_s_per_gpu", row.published_tokens_per_s_per_gpu},
                                     {"predicted_tokens_per_s_per_gpu", row.predicted_tokens_per_s_per_gpu},
                                     {"error_pct", row.error_pct}, {"mfu", row.mfu}, {"fits", row.fits}});
            j["mape_pct"] = r.mape_pct;
            j["max_abs_error_pct"] = r.max_abs_error_pct;
            std::printf("%s\n", j.dump(2).c_str());
        } else {
            std::string out = fmt::format("{:<40} {:>6} {:<14} {:>12} {:>12} {:>8} {:>6}\n", "run", "GPUs", "gpu",
                                          "published", "predicted", "error", "MFU");
            for (const auto& row : r.rows)
                out += fmt::format("{:<40} {:>6} {:<14} {:>12.2f} {:>12.2f} {:>7.1f}% {:>5.1f}%{}\n", row.name,
                                   row.num_gpus, row.gpu, row.published_tokens_per_s_per_gpu,
                                   row.predicted_tokens_per_s_per_gpu, row.error_pct, 100 * row.mfu,
                                   row.fits ? "" : "  (does not fit)");
            out += fmt::format("\ntokens/s per GPU: MAPE {:.1f} %, worst {:.1f} % over {} runs\n", r.mape_pct,
                               r.max_abs_error_pct, r.rows.size());
            std::printf("%s", out.c_str());
        }
        exit_code = 0;
    });
}

}  // namespace lostflops::cli
