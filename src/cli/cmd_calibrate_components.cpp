// `lostflops calibrate components [--measured DIR [--gpu NAME]]... [-o OUT] [--base PROFILE]`:
// component micro-benchmark tables (data/calibration/*.csv, built in, plus
// each measured folder of scripts/measure/gpu_components.py, whose rows
// replace the published ones of the same GPU and kind) -> the device
// families' factors (lostflops/calibrate_components.h) -> a profile on OUT or
// stdout, with the fit of every GEMM row (measured, predicted, error) and the
// values per family.
#include <cmath>
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

struct ComponentsOptions {
    std::vector<std::string> measured;
    std::vector<std::string> gpus;
    std::string output;
    std::string base;
};

std::string report(const ComponentFit& fit) {
    std::string out = "component tables:";
    for (const auto& s : fit.sources) out += "\n  " + terminal_text(s);
    out += fmt::format("\n\nGEMM rows ({}), priced by the fitted profile:\n", fit.gemm.size());
    out += fmt::format("{:<10} {:<14} {:>6} {:<10} {:>24} {:>10} {:>10} {:>7}\n", "family", "gpu", "W", "dtype",
                       "m x n x k", "measured", "predicted", "error");
    for (const auto& r : fit.gemm)
        out += fmt::format("{:<10} {:<14} {:>6g} {:<10} {:>24} {:>10.1f} {:>10.1f} {:>6.1f}%\n", r.family,
                           terminal_text(r.gpu), r.power_w, to_string(r.dtype), fmt::format("{:g}x{:g}x{:g}", r.m, r.n, r.k),
                           r.measured_tflops, r.predicted_tflops,
                           100 * (r.predicted_tflops / r.measured_tflops - 1));
    out += fmt::format("rms log error {:.3f}; gemm_k_half {:g}; power exponent {:g} (from {} rows below their TDP)\n\n",
                       fit.gemm_rms_log_error, fit.gemm_k_half, fit.power_exponent, fit.power_rows);
    out += fmt::format("{:<10} {:<44} {:>13} {:>16} {:>10}\n", "family", "gemm_max (rows)", "memory_bound",
                       "W per TFLOP/s", "attention");
    for (const auto& f : fit.families) {
        std::string g;
        for (int d = 0; d < kGemmDtypeCount; ++d)
            if (f.gemm_rows[d])
                g += fmt::format("{}{} {:.3f} ({}{})", g.empty() ? "" : ", ", to_string(static_cast<GemmDtype>(d)),
                                 f.gemm_max[d], f.gemm_rows[d],
                                 f.gemm_ceiling[d] < 1 ? fmt::format("; best of sweep {:.3f}", f.gemm_ceiling[d]) : "");
        out += fmt::format("{:<10} {:<44} {:>13} {:>16} {:>10}\n", f.family, g.empty() ? "(no rows: base kept)" : g,
                           f.memory_rows ? fmt::format("{:.3f} ({})", f.memory_bound, f.memory_rows) : "base kept",
                           f.reference_w_per_tflop > 0 ? fmt::format("{:g}", f.reference_w_per_tflop) : "-",
                           fmt::format("{} points", f.attention_points));
    }
    return out;
}

int run_components(const ComponentsOptions& o) {
    const ComponentsCalibration c = calibrate_components(o.measured, o.gpus, o.base);
    const std::string& yaml = c.yaml;
    const std::string text = report(c.fit);
    if (o.output.empty()) {
        std::fwrite(yaml.data(), 1, yaml.size(), stdout);
        std::fwrite(text.data(), 1, text.size(), stderr);
        return 0;
    }
    std::ofstream f(o.output, std::ios::binary);
    f << yaml;
    f.close();
    if (!f) throw InputError(o.output, "", "cannot write the calibration profile");
    std::fwrite(text.data(), 1, text.size(), stdout);
    fmt::print("\nwrote {} (use it with --calibration {})\n", terminal_text(o.output), terminal_text(o.output));
    return 0;
}

}  // namespace

void add_calibrate_components_command(CLI::App* calibrate, int& exit_code) {
    auto o = std::make_shared<ComponentsOptions>();
    auto* cmd = calibrate->add_subcommand(
        "components", "device families from component micro-benchmarks (GEMM, attention, memory-bound tables)");
    cmd->add_option("--measured", o->measured,
                    "folder written by scripts/measure/gpu_components.py (data/measured/GPU); repeatable");
    cmd->add_option("--gpu", o->gpus, "catalog GPU of each --measured folder (default: the folder's name)");
    cmd->add_option("-o,--output", o->output, "profile to write (default: stdout)")->check(file_name());
    cmd->add_option("--base", o->base, "profile to start from (default: built-in defaults)");
    cmd->callback([o, &exit_code] { exit_code = run_components(*o); });
}

}  // namespace lostflops::cli
