// `lostflops calibrate nccl FILE... [-o OUT] [--base PROFILE] [--scope S] [--op OP]`:
// nccl-tests outputs -> bus-bandwidth curves -> a calibration profile (the
// base profile or the built-in defaults, with the curves added or replaced),
// written as YAML to OUT or stdout, plus a short summary of each curve. The
// profile is what `--calibration FILE` reads (see lostflops/calibration.h).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "lostflops/nccl_tests.h"

namespace lostflops::cli {

namespace {

struct NcclOptions {
    std::vector<std::string> files;
    std::string output;
    std::string base;
    std::string scope;
    std::string op;
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

int run_nccl(const NcclOptions& o) {
    NcclTestsOptions parse_opt;
    if (!o.op.empty()) parse_opt.op = collective_from_string(o.op);
    if (!o.scope.empty()) parse_opt.scope = link_scope_from_string(o.scope);
    std::vector<NcclTestsRun> runs;
    std::vector<std::string> warnings;
    for (const auto& f : o.files) {
        NcclTestsResult r = read_nccl_tests(f, parse_opt);
        warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
        for (auto& run : r.runs) runs.push_back(std::move(run));
    }
    const std::vector<BusBwCurve> curves = curves_from_runs(runs, warnings);
    Calibration cal = o.base.empty() ? default_calibration() : load_calibration(o.base);
    merge_curves(cal, curves);
    std::string sources;
    for (const auto& f : o.files) sources += (sources.empty() ? "" : ", ") + f;
    cal.source = (o.base.empty() ? std::string("defaults") : o.base) + " + nccl-tests " + sources;
    const std::string yaml = calibration_to_yaml(cal);

    for (const auto& w : warnings) fmt::print(stderr, "lostflops: warning: {}\n", w);
    if (o.output.empty()) {
        std::fwrite(yaml.data(), 1, yaml.size(), stdout);
        print_summary(stderr, curves);
        return 0;
    }
    std::ofstream out(o.output, std::ios::binary);
    out << yaml;
    out.close();
    if (!out) throw InputError(o.output, "", "cannot write the calibration profile");
    print_summary(stdout, curves);
    fmt::print("wrote {} ({} curve(s); use it with --calibration {})\n", o.output, cal.nccl.size(), o.output);
    return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("calibrate", "Turn benchmark outputs into a calibration profile");
    cmd->require_subcommand(1);
    auto opts = std::make_shared<NcclOptions>();
    auto* nccl = cmd->add_subcommand("nccl", "Bus-bandwidth curves from nccl-tests outputs "
                                             "(all_reduce_perf, all_gather_perf, ...)");
    nccl->add_option("files", opts->files, "nccl-tests text outputs")->required();
    nccl->add_option("-o,--output", opts->output, "Profile to write (default: stdout)");
    nccl->add_option("--base", opts->base, "Profile to start from (default: built-in defaults)");
    nccl->add_option("--scope", opts->scope, "Links measured, if not from the hosts in the output")
        ->check(CLI::IsMember({"intra_node", "inter_node"}));
    nccl->add_option("--op", opts->op, "Collective measured, if the output does not name it")
        ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}));
    nccl->callback([opts, &exit_code] { exit_code = run_nccl(*opts); });
}

}  // namespace lostflops::cli
