// Rendering an Explanation: a text table for the terminal, Markdown for a
// design document or a pull request, and the JSON contract of
// lostflops/explain.h (mfu, waterfall [{key, name, pp, s}], levers
// [{change, set, mfu_after, ...}]). Figures only; no computation.
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "explain/expert_levers.h"
#include "lostflops/explain.h"
#include "lostflops/report.h"
#include "lostflops/terminal_text.h"

namespace lostflops {

namespace {

std::string set_args(const Lever& l) {
    std::string out;
    for (const auto& s : l.set) {
        if (!out.empty()) out += ' ';
        out += fmt::format("--set '{}'", s);
    }
    return out;
}

// A user's text (the job's name) as literal Markdown on one line: control
// characters (a newline would end the heading) become spaces, HTML's & < >
// entities (CommonMark 0.30 section 6.6: raw HTML passes through otherwise),
// and the punctuation Markdown reads within a line (emphasis, code, links,
// GFM tables and strikethrough, a heading's closing #s) is backslash-escaped
// (section 2.4: any ASCII punctuation may be).
std::string md_text(const std::string& text) {
    std::string out;
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) out += ' ';
        else if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (std::string_view("\\`*_[]|#~").find(c) != std::string_view::npos) out += std::string("\\") + c;
        else out += c;
    }
    return out;
}

}  // namespace

std::string explain_table(const Explanation& x) {
    std::string out = fmt::format("{}: MFU {:.1f} %, step {:.3f} s (ideal at dense peak {:.3f} s, {:g} TFLOP/s per GPU)\n\n",
                                  terminal_text(x.job_name), 100 * x.mfu, x.step_time_s, x.ideal_s, x.peak_tflops);
    if (!x.fits)
        out += fmt::format("The plan does NOT fit: {:.1f} GiB per GPU of {:.1f} GiB usable (lostflops estimate says what "
                           "would); the figures are for the plan as given.\n\n",
                           x.peak_bytes / (1024.0 * 1024 * 1024), x.capacity_bytes / (1024.0 * 1024 * 1024));
    out += fmt::format("{:<66} {:>8} {:>10} {:>9}\n", "MFU waterfall", "points", "s/step", "left %");
    double left = 100;
    out += fmt::format("{:<66} {:>8} {:>10} {:>9.1f}\n", "dense peak", "", "", left);
    for (const auto& w : x.waterfall) {
        left -= w.pp;
        out += fmt::format("{:<66} {:>8.2f} {:>10.4f} {:>9.1f}\n", "- " + w.name, -w.pp, w.s, left);
    }
    out += fmt::format("{:<66} {:>8} {:>10} {:>9.1f}\n", "= predicted MFU", "", "", 100 * x.mfu);
    out += "\nLevers (single changes, each re-estimated; best MFU first):\n";
    if (x.levers.empty()) out += "  none of the candidate changes both fits and raises the MFU\n";
    for (const auto& l : x.levers)
        out += fmt::format("  {:<52} MFU {:5.1f} % ({:+.1f} points), step {:.3f} s   {}\n", l.change, 100 * l.mfu_after,
                           100 * (l.mfu_after - x.mfu), l.step_time_s, set_args(l));
    out += expert_walls_table(x.experts, x.step_time_s, x.mfu);
    return out;
}

std::string explain_markdown(const Explanation& x) {
    std::string out = fmt::format("### Where the FLOPs go: {}\n\nPredicted MFU **{:.1f} %** (step {:.3f} s; "
                                  "{:.3f} s at {:g} TFLOP/s dense peak per GPU).\n\n",
                                  md_text(x.job_name), 100 * x.mfu, x.step_time_s, x.ideal_s, x.peak_tflops);
    if (!x.fits)
        out += fmt::format("**The plan does not fit** ({:.1f} GiB per GPU of {:.1f} GiB usable).\n\n",
                           x.peak_bytes / (1024.0 * 1024 * 1024), x.capacity_bytes / (1024.0 * 1024 * 1024));
    out += "| step | points of peak | s per step | MFU left |\n|---|---:|---:|---:|\n| dense peak | | | 100.0 % |\n";
    double left = 100;
    for (const auto& w : x.waterfall) {
        left -= w.pp;
        out += fmt::format("| {} | −{:.2f} | {:.4f} | {:.1f} % |\n", w.name, w.pp, w.s, left);
    }
    out += fmt::format("| **predicted MFU** | | | **{:.1f} %** |\n\n", 100 * x.mfu);
    out += "| lever | MFU after | gain | step time | `--set` |\n|---|---:|---:|---:|---|\n";
    for (const auto& l : x.levers)
        out += fmt::format("| {} | {:.1f} % | {:+.1f} points | {:.3f} s | `{}` |\n", l.change, 100 * l.mfu_after,
                           100 * (l.mfu_after - x.mfu), l.step_time_s, set_args(l));
    if (x.levers.empty()) out += "| (no single change both fits and raises the MFU) | | | | |\n";
    out += expert_walls_markdown(x.experts, x.step_time_s);
    return out;
}

nlohmann::json explain_json(const Explanation& x) {
    nlohmann::json j;
    j["schema_version"] = kJsonSchemaVersion;
    j["job"] = x.job_name;
    j["mfu"] = x.mfu;
    j["step_time_s"] = x.step_time_s;
    j["ideal_s"] = x.ideal_s;
    j["peak_tflops"] = x.peak_tflops;
    j["fits"] = x.fits;
    j["waterfall"] = nlohmann::json::array();
    for (const auto& w : x.waterfall) j["waterfall"].push_back({{"key", w.key}, {"name", w.name}, {"pp", w.pp}, {"s", w.s}});
    j["levers"] = nlohmann::json::array();
    for (const auto& l : x.levers)
        j["levers"].push_back({{"change", l.change},
                               {"set", l.set},
                               {"mfu_after", l.mfu_after},
                               {"step_time_s", l.step_time_s},
                               {"tokens_per_s_per_gpu", l.tokens_per_s_per_gpu}});
    add_expert_walls_json(x.experts, j);
    j["warnings"] = nlohmann::json::array();
    for (const auto& w : x.warnings) j["warnings"].push_back({{"key", w.key}, {"message", w.message}});
    return j;
}

}  // namespace lostflops
