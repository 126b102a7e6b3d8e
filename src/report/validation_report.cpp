// `lostflops validate TABLE.csv`: published vs predicted tokens/s per GPU, in
// sample (the profile as it is) and leave-one-source-out (each source family
// predicted by the profile's fitted factors fitted again without it, on the
// profile's fitted_on tables or the given ones; calibrate_runs.h), and the
// share of runs inside their 80 % interval (interval_coverage.h); as the
// command prints it, for the command line and the Python module alike.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "lostflops/command_reports.h"
#include "lostflops/prediction_interval.h"
#include "lostflops/report.h"
#include "lostflops/terminal_text.h"

namespace lostflops {

namespace {

std::string worst_name(const ValidationResult& r) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < r.rows.size(); ++i)
        if (std::fabs(r.rows[i].error_pct) > std::fabs(r.rows[w].error_pct)) w = i;
    return r.rows.empty() ? "" : r.rows[w].name;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

nlohmann::json memory_json(const MemoryValidation& m) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : m.rows) {
        nlohmann::json x{{"name", r.name}, {"measured_oom", r.measured_oom}, {"predicted_fits", r.predicted_fits}};
        if (r.measured_bytes > 0 && !r.measured_oom) {
            x["measured"] = r.reserved ? "max_reserved" : "max_allocated";
            x["measured_bytes"] = r.measured_bytes;
            x["predicted_bytes"] = r.predicted_bytes;
            x["error_pct"] = r.error_pct;
        }
        rows.push_back(x);
    }
    return {{"runs", rows},
            {"measured", m.measured},
            {"within_5_pct", m.within_5_pct},
            {"within_10_pct", m.within_10_pct},
            {"mape_pct", m.mape_pct},
            {"mean_signed_error_pct", m.mean_signed_pct},
            {"max_abs_error_pct", m.max_abs_error_pct},
            {"ran_but_does_not_fit", m.ran_but_does_not_fit},
            {"oom_rows", m.oom_rows},
            {"oom_predicted", m.oom_predicted}};
}

std::string memory_table(const MemoryValidation& m) {
    if (m.rows.empty() || (m.measured == 0 && m.oom_rows == 0)) return "";
    std::string out = fmt::format("\n{:<44} {:<14} {:>10} {:>10} {:>8}\n", "run (memory per GPU)", "measured",
                                  "GiB", "predicted", "error");
    for (const auto& r : m.rows) {
        if (r.measured_oom) {
            out += fmt::format("{:<44} {:<14} {:>10} {:>10} {:>8}\n", terminal_text(r.name), "out of memory", "-",
                               r.predicted_fits ? "fits" : "no fit", r.predicted_fits ? "WRONG" : "right");
            continue;
        }
        if (r.measured_bytes <= 0) continue;
        out += fmt::format("{:<44} {:<14} {:>10.2f} {:>10.2f} {:>7.1f}%{}\n", terminal_text(r.name),
                           r.reserved ? "max reserved" : "max allocated", r.measured_bytes / kGiB,
                           r.predicted_bytes / kGiB, r.error_pct, r.predicted_fits ? "" : "  (does not fit)");
    }
    out += fmt::format("\npeak memory over {} measured runs: MAPE {:.1f} %, mean signed {:+.1f} %, worst {:.1f} %; "
                       "{} within 5 %, {} within 10 %\n",
                       m.measured, m.mape_pct, m.mean_signed_pct, m.max_abs_error_pct, m.within_5_pct,
                       m.within_10_pct);
    if (m.oom_rows > 0)
        out += fmt::format("  out of memory as measured: {} of {} predicted \"does not fit\"\n", m.oom_predicted,
                           m.oom_rows);
    if (m.ran_but_does_not_fit > 0)
        out += fmt::format("  runs that ran but are predicted \"does not fit\": {}\n", m.ran_but_does_not_fit);
    return out;
}

}  // namespace

std::optional<std::vector<MeasuredRun>> fit_set_runs(const std::vector<std::string>& fit_on, const Calibration& cal,
                                                     std::string& why) {
    const std::vector<std::string>& tables = fit_on.empty() ? cal.fitted_on : fit_on;
    if (tables.empty()) {
        why = "the profile fits nothing (no fitted_on tables): in-sample is out of sample";
        return std::nullopt;
    }
    std::vector<MeasuredRun> out;
    for (const auto& t : tables) {
        if (fit_on.empty() && !std::filesystem::exists(t)) {
            why = "the profile's fit table " + t + " is not here (run from the repository root, or give --fit-on)";
            return std::nullopt;
        }
        for (auto& r : throughput_runs(load_run_table(t))) out.push_back(std::move(r));
    }
    return out;
}

ValidationReport validation_report(const std::string& table, const Calibration& cal,
                                   const std::vector<std::string>& fit_on) {
    ValidationReport v;
    const std::vector<MeasuredRun> all = load_run_table(table, &v.warnings);
    for (const MeasuredRun& run : all)
        for (const JobWarning& w : estimate_warnings(run.job, {})) v.run_warnings.push_back({run.name, w.key, w.message});
    v.runs = throughput_runs(all);
    v.memory = validate_memory(all, cal);
    if (v.runs.empty()) {
        v.why = "no run of the table has a measured throughput";
        return v;
    }
    v.result = validate_runs(v.runs, cal);
    if (auto fs = fit_set_runs(fit_on, cal, v.why)) v.loso = leave_one_source_out(*fs, v.runs, cal);
    // The interval each estimate prints, its own source's residuals held
    // out, around the held-out prediction (out of sample on both counts).
    v.coverage = interval_coverage(v.runs, v.result, cal, builtin_residuals(),
                                   v.loso ? v.loso->held_out_tokens_per_s_per_gpu : std::vector<double>{});
    return v;
}

std::string validation_json(const ValidationReport& v) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["memory"] = memory_json(v.memory);
    j["warnings"] = v.warnings;
    j["run_warnings"] = nlohmann::json::array();
    for (const auto& w : v.run_warnings) j["run_warnings"].push_back({{"run", w.run}, {"key", w.key}, {"message", w.message}});
    if (v.runs.empty()) {
        j["runs"] = nlohmann::json::array();
        j["skipped"] = v.why;
        return json_text(j);
    }
    j["runs"] = nlohmann::json::array();
    for (std::size_t i = 0; i < v.result.rows.size(); ++i) {
        const auto& row = v.result.rows[i];
        nlohmann::json x{{"name", row.name},
                         {"source_family", source_family(row.name)},
                         {"gpu", row.gpu},
                         {"num_gpus", row.num_gpus},
                         {"published_tokens_per_s_per_gpu", row.published_tokens_per_s_per_gpu},
                         {"predicted_tokens_per_s_per_gpu", row.predicted_tokens_per_s_per_gpu},
                         {"error_pct", row.error_pct},
                         {"mfu", row.mfu},
                         {"fits", row.fits}};
        if (v.loso) x["held_out_error_pct"] = v.loso->held_out_error_pct[i];
        if (v.loso) x["held_out_tokens_per_s_per_gpu"] = v.loso->held_out_tokens_per_s_per_gpu[i];
        x["regime"] = v.coverage.rows[i].regime;
        x["interval_centre_tokens_per_s_per_gpu"] = v.coverage.rows[i].centre;
        x["interval_tokens_per_s_per_gpu"] = {v.coverage.rows[i].lo, v.coverage.rows[i].hi};
        x["inside_interval"] = v.coverage.rows[i].inside;
        x["interval_calibrated"] = v.coverage.rows[i].calibrated;
        if (!v.coverage.rows[i].calibrated) x["interval_outside"] = v.coverage.rows[i].outside;
        j["runs"].push_back(x);
    }
    j["mape_pct"] = v.result.mape_pct;
    j["mean_signed_error_pct"] = v.result.mean_signed_pct;
    j["max_abs_error_pct"] = v.result.max_abs_error_pct;
    nlohmann::json regimes = nlohmann::json::array();
    for (const auto& g : v.coverage.regimes)
        regimes.push_back({{"regime", g.regime}, {"runs", g.runs}, {"inside", g.inside},
                           {"uncalibrated", g.uncalibrated}, {"inside_calibrated", g.inside_calibrated}});
    j["interval_coverage"] = {{"runs", v.coverage.rows.size()},
                              {"centre", v.coverage.held_out_centre ? "held_out" : "in_sample"},
                              {"inside", v.coverage.inside},
                              {"share", v.coverage.share},
                              {"uncalibrated", v.coverage.uncalibrated},
                              {"inside_calibrated", v.coverage.inside_calibrated},
                              {"share_calibrated", v.coverage.share_calibrated},
                              {"regimes", regimes}};
    if (v.loso) {
        nlohmann::json fam = nlohmann::json::array();
        for (const auto& f : v.loso->families)
            fam.push_back({{"source_family", f.family}, {"runs", f.runs}, {"mape_pct", f.mape_pct},
                           {"mean_signed_error_pct", f.mean_signed_pct},
                           {"max_abs_error_pct", f.max_abs_error_pct},
                           {"undetermined_factors", f.undetermined}});
        j["leave_one_source_out"] = {{"mape_pct", v.loso->mape_pct},
                                     {"mean_signed_error_pct", v.loso->mean_signed_pct},
                                     {"max_abs_error_pct", v.loso->max_abs_error_pct},
                                     {"worst_run", v.runs[v.loso->worst_run].name},
                                     {"fits", v.loso->fits},
                                     {"families", fam}};
    } else {
        j["leave_one_source_out"] = {{"skipped", v.why}};
    }
    return json_text(j);
}

std::string validation_table(const ValidationReport& v) {
    if (v.runs.empty()) return "throughput: " + v.why + "\n" + memory_table(v.memory);
    std::string out = fmt::format("{:<40} {:>6} {:<14} {:>12} {:>12} {:>8} {:>9} {:>6}\n", "run", "GPUs",
                                  "gpu", "published", "predicted", "error", "held-out", "MFU");
    for (std::size_t i = 0; i < v.result.rows.size(); ++i) {
        const auto& row = v.result.rows[i];
        out += fmt::format("{:<40} {:>6} {:<14} {:>12.2f} {:>12.2f} {:>7.1f}% {:>9} {:>5.1f}%{}\n",
                           terminal_text(row.name), row.num_gpus, terminal_text(row.gpu), row.published_tokens_per_s_per_gpu,
                           row.predicted_tokens_per_s_per_gpu, row.error_pct,
                           v.loso ? fmt::format("{:.1f}%", v.loso->held_out_error_pct[i]) : "-", 100 * row.mfu,
                           row.fits ? "" : "  (does not fit)");
    }
    out += fmt::format("\ntokens/s per GPU over {} runs (error > 0: predicted too fast)\n", v.result.rows.size());
    out += fmt::format("  in sample:                 MAPE {:.1f} %, mean signed {:+.1f} %, worst {:.1f} % ({})\n",
                       v.result.mape_pct, v.result.mean_signed_pct, v.result.max_abs_error_pct, terminal_text(worst_name(v.result)));
    out += fmt::format("  inside the 80 % interval:  {} of {} runs ({:.0f} %; each interval drawn without "
                       "its own source's residuals, around its {} prediction)\n",
                       v.coverage.inside, v.coverage.rows.size(), 100 * v.coverage.share,
                       v.coverage.held_out_centre ? "held-out" : "in-sample");
    const size_t calibrated = v.coverage.rows.size() - static_cast<size_t>(v.coverage.uncalibrated);
    if (v.coverage.uncalibrated > 0 && calibrated == 0)
        out += fmt::format("    outside calibration:     all {} runs (no published run like them: their intervals "
                           "are borrowed)\n",
                           v.coverage.uncalibrated);
    else if (v.coverage.uncalibrated > 0)
        out += fmt::format("    outside calibration:     {} runs (no published run like them: their intervals are "
                           "borrowed); of the {} others, {} inside ({:.0f} %)\n",
                           v.coverage.uncalibrated, calibrated, v.coverage.inside_calibrated,
                           100 * v.coverage.share_calibrated);
    bool regime_header = false;
    for (const auto& g : v.coverage.regimes) {
        if (g.runs < kMinRegimeRows) continue;
        if (!regime_header)
            out += fmt::format("    per regime of {} runs or more:\n", kMinRegimeRows), regime_header = true;
        const int calibrated_runs = g.runs - g.uncalibrated;
        out += fmt::format("      {:<52} {:>3} of {:>3} inside ({:.0f} %){}{}\n", terminal_text(g.regime), g.inside,
                           g.runs, 100.0 * g.inside / g.runs,
                           g.uncalibrated > 0 ? fmt::format("; {} outside calibration", g.uncalibrated) : "",
                           g.uncalibrated > 0 && calibrated_runs > 0
                               ? fmt::format("; of the {} others, {} inside ({:.0f} %)", calibrated_runs,
                                             g.inside_calibrated, 100.0 * g.inside_calibrated / calibrated_runs)
                               : "");
    }
    if (v.loso) {
        out += fmt::format("  leave-one-source-out:      MAPE {:.1f} %, mean signed {:+.1f} %, worst {:.1f} % "
                           "({}); {} refits\n",
                           v.loso->mape_pct, v.loso->mean_signed_pct, v.loso->max_abs_error_pct,
                           terminal_text(v.runs[v.loso->worst_run].name), v.loso->fits);
        for (const auto& f : v.loso->families) {
            out += fmt::format("    {:<22} {:>3} runs: MAPE {:5.1f} %, mean signed {:+6.1f} %, worst {:5.1f} %\n",
                               f.family, f.runs, f.mape_pct, f.mean_signed_pct, f.max_abs_error_pct);
            if (!f.undetermined.empty())
                out += fmt::format("      only this source sets {} (without it: the middle of each range)\n",
                                   fmt::join(f.undetermined, ", "));
        }
    } else {
        out += "  leave-one-source-out:      skipped: " + v.why + "\n";
    }
    return out + memory_table(v.memory);
}

}  // namespace lostflops
