// `lostflops list KIND`: what the built-in catalogs hold, one kind per row of
// the table kListKinds (a new kind is a new row: its name, help and the
// function that renders it), as a table or as JSON; for the command line and
// the Python module alike. `gpus`: every accelerator of
// data/catalog/gpus.yaml with its architecture row (lostflops/accelerator.h)
// and the public source of its figures. `models`: every preset of
// data/catalog/models.yaml read as a job reads it (`model: {preset: NAME}`),
// its layers, parameters (workload/flops.h count_params) and source.
// `clusters`: every preset of data/catalog/clusters.yaml as a job resolves
// it. `frameworks`: the values of training.framework and the launch rules of
// each (lostflops/framework_rules.h kFrameworkRules).
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/command_reports.h"
#include "lostflops/error.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "cost/roofline.h"
#include "workload/flops.h"

namespace lostflops {

namespace {

using ListFn = std::string (*)(bool json);

std::string list_gpus(bool json) {
    std::vector<Gpu> gpus;
    for (const auto& name : gpu_names())
        if (auto g = find_gpu(name)) gpus.push_back(*g);
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const Gpu& g : gpus) {
            const AcceleratorTraits* t = find_accelerator(g.arch);
            arr.push_back({{"name", g.name},
                           {"vendor", t ? to_string(t->vendor) : ""},
                           {"arch", g.arch},
                           {"compute_model", t ? to_string(t->compute) : ""},
                           {"peak_tflops", {{"fp16", g.peak_fp16_tflops}, {"bf16", g.peak_bf16_tflops}, {"fp8", g.peak_fp8_tflops},
                                             {"tf32", g.peak_tf32_tflops}, {"fp32", g.peak_fp32_tflops}}},
                           {"memory_bytes", g.memory_bytes},
                           {"hbm_GBps", g.hbm_GBps},
                           {"nvlink_GBps", g.nvlink_GBps},
                           {"sm_count", g.sm_count},
                           {"tdp_w", g.tdp_w},
                           {"ridge_bf16_flop_per_byte", ridge_flop_per_byte(g, Precision::bf16)},
                           {"source", g.source}});
        }
        return json_text(nlohmann::json{{"gpus", arr}});
    }
    std::string out = fmt::format("{:<16} {:<7} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>6} {:>6} {:>7}\n", "name",
                                  "vendor", "arch", "bf16", "fp8", "memory", "HBM", "scale-up", "units", "TDP", "ridge");
    out += fmt::format("{:<16} {:<7} {:<10} {:>8} {:>8} {:>8} {:>8} {:>9} {:>6} {:>6} {:>7}\n", "", "", "", "TFLOP/s",
                       "TFLOP/s", "GiB", "GB/s", "GB/s", "", "W", "FLOP/B");
    for (const Gpu& g : gpus) {
        const AcceleratorTraits* t = find_accelerator(g.arch);
        // A GPU without bf16 (V100) shows "-", and its ridge is fp16's.
        const bool bf16 = g.peak_bf16_tflops > 0;
        out += fmt::format("{:<16} {:<7} {:<10} {:>8} {:>8} {:>8.0f} {:>8.0f} {:>9.1f} {:>6} {:>6.0f} {:>7.0f}\n",
                           g.name, t ? to_string(t->vendor) : "", g.arch,
                           bf16 ? fmt::format("{:.1f}", g.peak_bf16_tflops) : "-",
                           g.peak_fp8_tflops > 0 ? fmt::format("{:.1f}", g.peak_fp8_tflops) : "-",
                           static_cast<double>(g.memory_bytes) / (1024.0 * 1024.0 * 1024.0), g.hbm_GBps,
                           g.nvlink_GBps, g.sm_count, g.tdp_w, ridge_flop_per_byte(g, bf16 ? Precision::bf16 : Precision::fp16));
    }
    out += "\nbf16/fp8: dense peaks; scale-up: NVLink / Infinity Fabric / ICI per GPU per direction; units: SMs, CUs "
           "or TPU MXUs; -: not supported;\nridge: bf16 peak (fp16 without bf16) over HBM bandwidth, the arithmetic intensity above which work is "
           "compute-bound.\nsources:\n";
    for (const Gpu& g : gpus) out += fmt::format("  {}: {}\n", g.name, g.source);
    return out;
}

// A preset read as a job reads it: the built-in job's training with the
// preset's model (or cluster) in place of its own.
Job job_with(const std::string& section_yaml) { return default_search_job({section_yaml}).job; }

// GPUs a cluster preset is loaded with: a whole number of nodes of 4 and 8
// and of an NVL72 domain, so every preset of the catalog accepts it.
constexpr int kListClusterGpus = 144;

std::string list_models(bool json) {
    nlohmann::json arr = nlohmann::json::array();
    std::string out = fmt::format("{:<22} {:>6} {:>7} {:>7} {:>9} {:>9} {:>9}  {}\n", "name", "layers", "hidden",
                                  "vocab", "params", "active", "experts", "layer kinds");
    std::string sources = "sources:\n";
    for (const auto& name : model_names()) {
        const Job job = job_with(fmt::format("model={{preset: {}}}", name));
        const Model& m = job.model;
        const ParamCount pc = count_params(m);
        int experts = 0, top_k = 0;
        for (const LayerKind& k : m.kinds())
            if (k.is_moe()) experts = k.moe.experts, top_k = k.moe.top_k;
        nlohmann::json kinds = nlohmann::json::array();
        std::string kind_text;
        for (size_t k = 0; k < m.kinds().size(); ++k) {
            const int layers = m.kind_count(static_cast<int>(k));
            kinds.push_back({{"layers", layers}, {"description", describe(m.kinds()[k])}});
            kind_text += fmt::format("{}{} x {}", k ? "; " : "", layers, describe(m.kinds()[k]));
        }
        const std::string source = model_preset_source(name).value_or("");
        arr.push_back({{"name", name},
                       {"num_hidden_layers", m.layers},
                       {"hidden_size", m.hidden},
                       {"vocab_size", m.vocab},
                       {"params_total", pc.total},
                       {"params_active", pc.active},
                       {"num_local_experts", experts},
                       {"num_experts_per_tok", top_k},
                       {"layer_kinds", kinds},
                       {"source", source}});
        out += fmt::format("{:<22} {:>6} {:>7} {:>7} {:>8.2f}B {:>8.2f}B {:>9}  {}\n", name, m.layers, m.hidden,
                           m.vocab, pc.total / 1e9, pc.active / 1e9,
                           experts > 0 ? fmt::format("{}/{}", top_k, experts) : "-", kind_text);
        sources += fmt::format("  {}: {}\n", name, source);
    }
    if (json) {
        return json_text(nlohmann::json{{"models", arr}});
    }
    out += "\nparams: every weight with the embeddings (once when tied), without multi-token prediction modules;\n"
           "active: those one token uses; experts: routed experts per token / routed experts.\n"
           "Use one with `model: {preset: NAME}` in a job, or --set model.preset=NAME.\n";
    return out + sources;
}

std::string list_clusters(bool json) {
    nlohmann::json arr = nlohmann::json::array();
    std::string out = fmt::format("{:<14} {:<14} {:>9} {:>9} {:>10} {:>10}\n", "name", "gpu", "per node",
                                  "scale-up", "intra GB/s", "inter GB/s");
    std::string sources = "sources:\n";
    for (const auto& name : cluster_names()) {
        const Cluster c = job_with(fmt::format("cluster={{preset: {}, num_gpus: {}}}", name, kListClusterGpus)).cluster;
        const std::string source = cluster_preset_source(name).value_or("");
        arr.push_back({{"name", name},
                       {"gpu", c.gpu.name},
                       {"gpus_per_node", c.gpus_per_node},
                       {"scaleup_gpus", c.scaleup_gpus()},
                       {"intra_node", {{"bandwidth_GBps", c.intra_node.bandwidth_GBps},
                                       {"latency_us", c.intra_node.latency_us}}},
                       {"inter_node", {{"bandwidth_GBps", c.inter_node.bandwidth_GBps},
                                       {"latency_us", c.inter_node.latency_us}}},
                       {"source", source}});
        out += fmt::format("{:<14} {:<14} {:>9} {:>9} {:>10.1f} {:>10.1f}\n", name, c.gpu.name, c.gpus_per_node,
                           c.scaleup_gpus(), c.intra_node.bandwidth_GBps, c.inter_node.bandwidth_GBps);
        sources += fmt::format("  {}: {}\n", name, source);
    }
    if (json) {
        return json_text(nlohmann::json{{"clusters", arr}});
    }
    out += "\nscale-up: GPUs of one NVLink / Infinity Fabric domain; intra: per GPU per direction inside it, inter:\n"
           "between domains (the NICs). Use one with `cluster: {preset: NAME, num_gpus: N}`; `lostflops list gpus`\n"
           "gives the GPUs' own figures.\n";
    return out + sources;
}

std::string list_frameworks(bool json) {
    const Framework all[] = {Framework::megatron_core, Framework::megatron_lm, Framework::fsdp, Framework::deepspeed,
                             Framework::hf};
    nlohmann::json arr = nlohmann::json::array();
    std::string out;
    for (const Framework f : all) {
        const LaunchStack stack = launch_stack(f);
        nlohmann::json rules = nlohmann::json::array();
        out += fmt::format("{}training.framework: {} (launches as {})\n", out.empty() ? "" : "\n", to_string(f),
                           to_string(stack));
        for (const FrameworkRule& r : kFrameworkRules) {
            if (r.stack != stack) continue;
            rules.push_back({{"key", r.key}, {"rule", r.rule}, {"source", r.source}});
            out += fmt::format("  {:<28} {}\n  {:<28} ({})\n", r.key, r.rule, "", r.source);
        }
        arr.push_back({{"framework", to_string(f)}, {"launch_stack", to_string(stack)}, {"rules", rules}});
    }
    if (json) {
        return json_text(nlohmann::json{{"frameworks", arr}});
    }
    out += "\nThe rules a plan must meet to launch in each stack, beyond the checks every plan passes; `estimate` warns\n"
           "about a plan that breaks one (an error with --strict), `search` ranks only plans the stack launches.\n"
           "training.framework: auto (the default) picks one from the job's source: (docs/job-file.md).\n";
    return out;
}

struct ListKind {
    CatalogKind kind;
    ListFn run;
};
const ListKind kListKinds[] = {
    {{"gpus", "GPUs and accelerators of the built-in catalog, with the sources of their figures"}, list_gpus},
    {{"models", "model presets (model: {preset: NAME}): layers, parameters and sources"}, list_models},
    {{"clusters", "cluster presets (cluster: {preset: NAME}): GPU, node, links and sources"}, list_clusters},
    {{"frameworks", "values of training.framework and the launch rules of each, with their sources"}, list_frameworks},
};

}  // namespace

const std::vector<CatalogKind>& catalog_kinds() {
    static const std::vector<CatalogKind> kinds = [] {
        std::vector<CatalogKind> out;
        for (const ListKind& k : kListKinds) out.push_back(k.kind);
        return out;
    }();
    return kinds;
}

std::string catalog_list(const std::string& kind, bool json) {
    std::string names;
    for (const ListKind& k : kListKinds) {
        if (kind == k.kind.name) return k.run(json);
        names += names.empty() ? k.kind.name : std::string(", ") + k.kind.name;
    }
    throw InputError("list", "", "'" + kind + "': expected one of " + names);
}

}  // namespace lostflops
