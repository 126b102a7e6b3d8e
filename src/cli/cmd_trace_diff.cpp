// `lostflops trace diff A B`: two traces (two runs, or two ranks) compared
// kernel by kernel and by category (include/lostflops/trace_diff.h).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "lostflops/trace.h"
#include "lostflops/trace_diff.h"
#include "lostflops/terminal_text.h"
#include "trace/trace_text.h"

namespace lostflops::cli {
namespace {

struct DiffArgs {
    std::string a, b;
    Format format = Format::table;
    bool hta = false;
    double threshold_pct = 5.0;
    std::size_t top = 40;
};

int run_diff(const DiffArgs& o, Format parent_format, bool own_format) {
    // Standard input is read once: as B it read empty ("empty file").
    if (o.a == "-" && o.b == "-")
        throw InputError("-", "", "standard input given as A and as B: it is read once; give a file for one");
    const auto a = trace::read_trace(o.a);
    const auto b = trace::read_trace(o.b);
    for (const auto* d : {&a, &b}) {
        for (const auto& w : d->warnings)
            std::fprintf(stderr, "warning: %s: %s\n", terminal_text(d->source).c_str(), terminal_text(w).c_str());
    }
    const auto diff = trace::diff_traces(a, b, trace::DiffOptions{o.hta, o.threshold_pct});
    for (const auto& w : diff.warnings) std::fprintf(stderr, "warning: %s\n", terminal_text(w).c_str());
    const Format f = own_format ? o.format : parent_format;
    std::fputs((f == Format::json ? trace::diff_json(diff) : trace::diff_table(diff, o.top)).c_str(), stdout);
    return 0;
}

}  // namespace

void add_trace_diff_command(CLI::App* trace_cmd, Format& parent_format, int& exit_code) {
    auto o = std::make_shared<DiffArgs>();
    auto* cmd = trace_cmd->add_subcommand(
        "diff", "Compare two traces (two runs, or two ranks): kernels and categories that got slower or "
                "faster, by how much of the step, new or vanished");
    cmd->add_option("a", o->a, "first trace (.json or .json.gz; the reference)")->required();
    cmd->add_option("b", o->b, "second trace (.json or .json.gz)")->required();
    add_format_option(cmd, o->format);
    cmd->add_flag("--hta-compatible", o->hta, "use Holistic Trace Analysis' conventions for both traces");
    cmd->add_option("--threshold", o->threshold_pct,
                    "percent change of a kernel's mean duration below which it counts as the same (default 5)")
        ->check(finite_range(0, 1e6));
    cmd->add_option("--top", o->top, "changed kernels listed in the table (default 40; JSON lists all)")
        ->check(whole_number())->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
    cmd->callback([o, cmd, &parent_format, &exit_code] {
        exit_code = run_diff(*o, parent_format, cmd->get_option("--format")->count() > 0);
    });
}

}  // namespace lostflops::cli
