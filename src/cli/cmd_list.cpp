// `lostflops list KIND`: what the built-in catalogs hold, one subcommand per
// kind from the table kListKinds (a new kind is a new row: its name, help and
// the function that prints it). `list gpus`: every accelerator of
// data/catalog/gpus.yaml with its architecture row (lostflops/accelerator.h)
// and the public source of its figures.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "cost/roofline.h"

namespace lostflops::cli {

namespace {

using ListFn = void (*)(Format);

void list_gpus(Format format) {
    std::vector<Gpu> gpus;
    for (const auto& name : gpu_names())
        if (auto g = find_gpu(name)) gpus.push_back(*g);
    if (format == Format::json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const Gpu& g : gpus) {
            const AcceleratorTraits* t = find_accelerator(g.arch);
            arr.push_back({{"name", g.name},
                           {"vendor", t ? to_string(t->vendor) : ""},
                           {"arch", g.arch},
                           {"compute_model", t ? to_string(t->compute) : ""},
                           {"peak_tflops", {{"fp16", g.peak_fp16_tflops}, {"bf16", g.peak_bf16_tflops}, {"fp8", g.peak_fp8_tflops}}},
                           {"memory_bytes", g.memory_bytes},
                           {"hbm_GBps", g.hbm_GBps},
                           {"nvlink_GBps", g.nvlink_GBps},
                           {"sm_count", g.sm_count},
                           {"tdp_w", g.tdp_w},
                           {"ridge_bf16_flop_per_byte", ridge_flop_per_byte(g, Precision::bf16)},
                           {"source", g.source}});
        }
        std::puts(nlohmann::json{{"gpus", arr}}.dump(2).c_str());
        return;
    }
    std::string out = fmt::format("{:<16} {:<7} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>6} {:>6} {:>7}\n", "name",
                                  "vendor", "arch", "bf16", "fp8", "memory", "HBM", "scale-up", "units", "TDP", "ridge");
    out += fmt::format("{:<16} {:<7} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>6} {:>6} {:>7}\n", "", "", "", "TFLOP/s",
                       "TFLOP/s", "GiB", "GB/s", "GB/s", "", "W", "FLOP/B");
    for (const Gpu& g : gpus) {
        const AcceleratorTraits* t = find_accelerator(g.arch);
        out += fmt::format("{:<16} {:<7} {:<10} {:>8.1f} {:>8} {:>8.0f} {:>8.0f} {:>9.1f} {:>6} {:>6.0f} {:>7.0f}\n",
                           g.name, t ? to_string(t->vendor) : "", g.arch, g.peak_bf16_tflops,
                           g.peak_fp8_tflops > 0 ? fmt::format("{:.1f}", g.peak_fp8_tflops) : "-",
                           static_cast<double>(g.memory_bytes) / (1024.0 * 1024.0 * 1024.0), g.hbm_GBps,
                           g.nvlink_GBps, g.sm_count, g.tdp_w, ridge_flop_per_byte(g, Precision::bf16));
    }
    out += "\nbf16/fp8: dense peaks; scale-up: NVLink / Infinity Fabric / ICI per GPU per direction; units: SMs, CUs "
           "or TPU MXUs;\nridge: bf16 peak over HBM bandwidth, the arithmetic intensity above which work is "
           "compute-bound.\nsources:\n";
    for (const Gpu& g : gpus) out += fmt::format("  {}: {}\n", g.name, g.source);
    std::fputs(out.c_str(), stdout);
}

struct ListKind {
    const char* name;
    const char* help;
    ListFn run;
};
const ListKind kListKinds[] = {
    {"gpus", "GPUs and accelerators of the built-in catalog, with the sources of their figures", list_gpus},
};

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
    (void)exit_code;
    auto* cmd = app.add_subcommand("list", "what the built-in catalogs hold");
    cmd->require_subcommand(1);
    for (const ListKind& k : kListKinds) {
        auto format = std::make_shared<Format>(Format::table);
        auto* sub = cmd->add_subcommand(k.name, k.help);
        add_format_option(sub, *format);
        sub->callback([format, run = k.run] { run(*format); });
    }
}

}  // namespace lostflops::cli
