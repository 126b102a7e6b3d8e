// `lostflops calibrate nccl FILE... [-o OUT] [--base PROFILE] [--scope S] [--op OP] [--ranks N]`:
// nccl-tests outputs -> bus-bandwidth curves -> a calibration profile (the
// base profile or the built-in defaults, with the curves added or replaced),
// written as YAML to OUT or stdout, plus a short summary of each curve. The
// profile is what `--calibration FILE` reads (see lostflops/calibration.h).
//
// `lostflops calibrate runs TABLE.csv [-o OUT] [--base PROFILE] [--folds K]`:
// measured runs (the `validate` table layout) -> the fitted factors of the
// profile (lostflops/calibrate_runs.h) -> YAML to OUT or stdout, with the error
// of each run before and after the fit, the fitted values against their ranges,
// a k-fold cross-validated error (run i in fold i mod K; K = 5 by default,
// or the number of runs if fewer) and the leave-one-source-out error (each
// source family predicted by a fit without it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "lostflops/calibrate_runs.h"
#include "lostflops/command_reports.h"
#include "lostflops/error.h"
#include "lostflops/nccl_tests.h"
#include "lostflops/validate.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

namespace {

struct NcclOptions {
    std::vector<std::string> files;
    std::string output;
    std::string base;
    std::string scope;
    std::string op;
    int ranks = 0;
};

std::string human_bytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    return b == static_cast<long long>(b) ? fmt::format("{} {}", static_cast<long long>(b), units[u])
                                          : fmt::format("{:.1f} {}", b, units[u]);
}

void print_summary(std::FILE* out, const std::vector<BusBwCurve>& curves) {
    for (const auto& c : curves) {
        fmt::print(out, "{} {} on {} ranks: {} sizes\n", to_string(c.op), to_string(c.scope), c.ranks,
                   c.points.size());
        fmt::print(out, "  {:>10}  {:>12}  {:>12}\n", "size", "busbw GB/s", "time us");
        // At most about a dozen rows: every k-th point and always the last.
        const std::size_t step = std::max<std::size_t>(1, (c.points.size() + 11) / 12);
        for (std::size_t i = 0; i < c.points.size(); ++i) {
            if (i % step != 0 && i + 1 != c.points.size()) continue;
            const auto& p = c.points[i];
            fmt::print(out, "  {:>10}  {:>12.4g}  {:>12.4g}\n", human_bytes(p.bytes), p.busbw_GBps, p.time_us);
        }
    }
}

void write_profile(const std::string& path, const std::string& yaml) {
    std::ofstream out(path, std::ios::binary);
    out << yaml;
    out.close();
    if (!out) throw InputError(path, "", "cannot write the calibration profile");
}

int run_nccl(const NcclOptions& o) {
    std::vector<std::string> inputs = o.files;
    inputs.push_back(o.base);
    check_output_not_input(o.output, "-o", inputs);
    NcclTestsOptions parse_opt;
    if (!o.op.empty()) parse_opt.op = collective_from_string(o.op);
    if (!o.scope.empty()) parse_opt.scope = link_scope_from_string(o.scope);
    if (o.ranks > 0) parse_opt.ranks = o.ranks;
    const NcclCalibration c = calibrate_nccl(o.files, parse_opt, o.base);
    const std::string& yaml = c.yaml;
    const std::vector<BusBwCurve>& curves = c.curves;
    for (const auto& w : c.warnings) fmt::print(stderr, "lostflops: warning: {}\n", terminal_text(w));
    if (o.output.empty()) {
        std::fwrite(yaml.data(), 1, yaml.size(), stdout);
        print_summary(stderr, curves);
        return 0;
    }
    write_profile(o.output, yaml);
    print_summary(stdout, curves);
    fmt::print("wrote {} ({} curve(s); use it with --calibration {})\n", terminal_text(o.output), c.profile_curves,
               terminal_text(o.output));
    return 0;
}

struct RunsOptions {
    std::string table;
    std::string output;
    std::string base;
    int folds = 5;
    bool folds_given = false;
};

std::string runs_report(const std::string& table, const std::string& base_name, const FitResult& fit,
                        const CrossValidation* cv, const LeaveOneSourceOut* loso,
                        const std::vector<MeasuredRun>& runs) {
    std::string out = fmt::format("{} runs of {} (base profile: {}); error of tokens/s per GPU\n\n", runs.size(),
                                  terminal_text(table), terminal_text(base_name));
    out += fmt::format("{:<40} {:>6} {:<14} {:>12} {:>8} {:>8}{}{}\n", "run", "GPUs", "gpu", "measured", "before",
                       "after", cv ? fmt::format(" {:>9}", "k-fold") : "", loso ? fmt::format(" {:>9}", "LOSO") : "");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const ValidationRow& b = fit.before.rows[i];
        const ValidationRow& a = fit.after.rows[i];
        out += fmt::format("{:<40} {:>6} {:<14} {:>12.2f} {:>7.1f}% {:>7.1f}%{}{}{}\n", terminal_text(a.name), a.num_gpus,
                           terminal_text(a.gpu),
                           a.published_tokens_per_s_per_gpu, b.error_pct, a.error_pct,
                           cv ? fmt::format(" {:>8.1f}%", cv->held_out_error_pct[i]) : "",
                           loso ? fmt::format(" {:>8.1f}%", loso->held_out_error_pct[i]) : "",
                           a.fits ? "" : "  (does not fit)");
    }
    auto worst = [](const ValidationResult& r) {
        std::size_t w = 0;
        for (std::size_t i = 0; i < r.rows.size(); ++i)
            if (std::fabs(r.rows[i].error_pct) > std::fabs(r.rows[w].error_pct)) w = i;
        return terminal_text(r.rows[w].name);
    };
    out += fmt::format("\nMAPE before {:.1f} % (worst {:.1f} %, {})\n", fit.before.mape_pct,
                       fit.before.max_abs_error_pct, worst(fit.before));
    out += fmt::format("MAPE after  {:.1f} % (worst {:.1f} %, {}); in-sample, {} evaluations\n",
                       fit.after.mape_pct, fit.after.max_abs_error_pct, worst(fit.after), fit.evaluations);
    if (cv) {
        out += fmt::format("{}-fold cross-validation (run i in fold i mod {}, each fold predicted by a fit on "
                           "the others): held-out MAPE {:.1f} % (worst {:.1f} %, {})\n",
                           cv->folds, cv->folds, cv->mape_pct, cv->max_abs_error_pct, runs[cv->worst_run].name);
        for (std::size_t f = 0; f < cv->per_fold.size(); ++f)
            out += fmt::format("  fold {}: {} runs, MAPE {:.1f} %, worst {:.1f} %\n", f,
                               cv->per_fold[f].held_out.size(), cv->per_fold[f].mape_pct,
                               cv->per_fold[f].max_abs_error_pct);
    } else {
        out += "cross-validation: needs at least 2 runs; skipped\n";
    }
    if (loso) {
        out += fmt::format("leave-one-source-out (each source family predicted by a fit without it): MAPE {:.1f} %, "
                           "mean signed {:+.1f} %, worst {:.1f} % ({})\n",
                           loso->mape_pct, loso->mean_signed_pct, loso->max_abs_error_pct,
                           runs[loso->worst_run].name);
        for (const auto& f : loso->families)
            out += fmt::format("  {:<22} {:>3} runs: MAPE {:.1f} %, mean signed {:+.1f} %, worst {:.1f} %\n", f.family,
                               f.runs, f.mape_pct, f.mean_signed_pct, f.max_abs_error_pct);
    } else {
        out += "leave-one-source-out: needs runs of at least 2 source families; skipped\n";
    }
    out += fmt::format("\n{:<20} {:>10} {:>10}  {:<16} {}\n", "factor", "base", "fitted", "range", "note");
    for (const auto& f : fit.factors) {
        std::string note;
        if (f.status != FactorStatus::fitted)
            note = fmt::format("left at base: {}", to_string(f.status));
        else if (f.at_bound)
            note = fmt::format("on the {} bound: the model may miss a mechanism",
                               std::fabs(f.value - f.lo) <= std::fabs(f.value - f.hi) ? "lower" : "upper");
        out += fmt::format("{:<20} {:>10.4g} {:>10.4g}  {:<16} {}\n", f.key, f.base, f.value,
                           fmt::format("[{:g}, {:g}]", f.lo, f.hi), note);
    }
    return out;
}

int run_runs(const RunsOptions& o) {
    check_output_not_input(o.output, "-o", {o.table, o.base});
    const RunsCalibration c = calibrate_runs(o.table, o.base, o.folds_given ? std::optional<int>(o.folds) : std::nullopt);
    const std::string& yaml = c.yaml;
    for (const auto& w : c.warnings) fmt::print(stderr, "lostflops: warning: {}\n", terminal_text(w));
    const std::string report = runs_report(o.table, c.base_name, c.fit, c.cv ? &*c.cv : nullptr,
                                           c.loso ? &*c.loso : nullptr, c.runs);
    if (o.output.empty()) {
        std::fwrite(yaml.data(), 1, yaml.size(), stdout);
        std::fwrite(report.data(), 1, report.size(), stderr);
        return 0;
    }
    write_profile(o.output, yaml);
    std::fwrite(report.data(), 1, report.size(), stdout);
    fmt::print("\nwrote {} (use it with --calibration {})\n", terminal_text(o.output), terminal_text(o.output));
    return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("calibrate", "turn benchmark outputs into a calibration profile");
    cmd->require_subcommand(1);
    auto opts = std::make_shared<NcclOptions>();
    auto* nccl = cmd->add_subcommand("nccl", "bus-bandwidth curves from nccl-tests outputs "
                                             "(all_reduce_perf, all_gather_perf, ...)");
    nccl->add_option("files", opts->files, "nccl-tests text outputs")->required();
    nccl->add_option("-o,--output", opts->output, "profile to write (default: stdout)")->check(file_name());
    nccl->add_option("--base", opts->base, "profile to start from (default: built-in defaults)");
    nccl->add_option("--scope", opts->scope, "links measured, if not from the hosts in the output")
        ->check(CLI::IsMember({"intra_node", "inter_node"}).description(""))
        ->type_name("{intra_node,inter_node}");
    nccl->add_option("--op", opts->op, "collective measured, if the output does not name it")
        ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}).description(""))
        ->type_name("{all_reduce,all_gather,reduce_scatter,all_to_all,send_recv}");
    nccl->add_option("--ranks", opts->ranks, "ranks of the test, for an excerpt without its '#  Rank N' lines")
        ->check(whole_number())->check(CLI::Range(2, 1 << 20));
    nccl->callback([opts, &exit_code] { exit_code = run_nccl(*opts); });

    auto ropts = std::make_shared<RunsOptions>();
    auto* runs = cmd->add_subcommand("runs", "fit the fitted factors of the profile to measured runs "
                                             "(CSV as for validate, job files in runs/ beside it)");
    runs->add_option("table", ropts->table, "CSV with columns name and tokens_per_s_per_gpu")->required();
    runs->add_option("-o,--output", ropts->output, "profile to write (default: stdout)")->check(file_name());
    runs->add_option("--base", ropts->base, "profile to start from (default: built-in defaults)");
    auto* folds = runs->add_option("--folds", ropts->folds,
                                   "cross-validation folds, 2 to the number of runs (default: 5, or the number of runs if fewer)");
    runs->callback([ropts, folds, &exit_code] {
        ropts->folds_given = folds->count() > 0;
        exit_code = run_runs(*ropts);
    });
    add_calibrate_components_command(cmd, exit_code);
    add_calibrate_residuals_command(cmd, exit_code);
}

}  // namespace lostflops::cli
