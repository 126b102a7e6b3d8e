// Renderings of a trace diff (include/lostflops/trace_diff.h): JSON with
// nlohmann, text tables with fmt.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/trace_diff.h"
#include "lostflops/terminal_text.h"
#include "trace/trace_text.h"

namespace lostflops::trace {
namespace {

using nlohmann::json;

json row_json(const KernelDiff& k) {
    return {{"name", k.name},           {"category", k.category},       {"change", to_string(k.change)},
            {"count_a", k.count_a},     {"count_b", k.count_b},         {"time_a_us", k.time_a_us},
            {"time_b_us", k.time_b_us}, {"mean_a_us", k.mean_a_us},     {"mean_b_us", k.mean_b_us},
            {"delta_us", k.delta_us},   {"mean_change_pct", k.mean_change_pct},
            {"step_share_pct", k.step_share_pct}};
}

void rows_table(std::string& out, const std::vector<KernelDiff>& rows, std::size_t max_rows, bool changed_only,
                int name_width) {
    out += fmt::format("  {:<11} {:>11} {:>11} {:>10} {:>9} {:>8}  {}\n", "change", "a_ms/step", "b_ms/step",
                       "delta_ms", "mean", "of_step", "name");
    std::size_t shown = 0, left = 0;
    for (const auto& k : rows) {
        if (changed_only && k.change == Change::same) continue;
        if (shown == max_rows) { ++left; continue; }
        ++shown;
        const std::string mean = k.change == Change::added || k.change == Change::vanished
                                     ? "-" : fmt::format("{:+.1f}%", k.mean_change_pct);
        std::string name = k.name;
        if (name_width > 0 && name.size() > static_cast<std::size_t>(name_width)) {
            name = name.substr(0, static_cast<std::size_t>(name_width) - 3) + "...";
        }
        name = terminal_text(name);
        out += fmt::format("  {:<11} {:>11.3f} {:>11.3f} {:>+10.3f} {:>9} {:>+7.2f}%  {}\n", to_string(k.change),
                           k.time_a_us / 1e3, k.time_b_us / 1e3, k.delta_us / 1e3, mean, k.step_share_pct, name);
    }
    if (shown == 0) out += "  (none)\n";
    if (left > 0) out += fmt::format("  ... and {} more (--format json lists all)\n", left);
}

}  // namespace

std::string diff_json(const TraceDiff& d) {
    json j;
    j["a"] = d.source_a;
    j["b"] = d.source_b;
    j["steps_a"] = d.steps_a;
    j["steps_b"] = d.steps_b;
    j["step_a_us"] = d.step_a_us;
    j["step_b_us"] = d.step_b_us;
    j["threshold_pct"] = d.threshold_pct;
    json ks = json::array(), cs = json::array();
    for (const auto& k : d.kernels) ks.push_back(row_json(k));
    for (const auto& c : d.categories) cs.push_back(row_json(c));
    j["categories"] = cs;
    j["kernels"] = ks;
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string diff_table(const TraceDiff& d, std::size_t max_rows) {
    std::string out = fmt::format("Trace diff: A = {} ({:g} steps, step {:.3f} ms), B = {} ({:g} steps, "
                                  "step {:.3f} ms)\n(times per step; changed = mean duration per call "
                                  "moved by more than {:g} %; of_step = delta / A's step)\n",
                                  terminal_text(d.source_a), d.steps_a, d.step_a_us / 1e3, terminal_text(d.source_b), d.steps_b,
                                  d.step_b_us / 1e3, d.threshold_pct);
    out += "\nBy category\n";
    rows_table(out, d.categories, d.categories.size(), false, 0);
    out += "\nKernels that changed\n";
    rows_table(out, d.kernels, max_rows, true, 90);
    return out;
}

}  // namespace lostflops::trace
