// The cluster, training and parallel sections of a job (job_sections.h), and
// the preset merge shared with the model section. Physical quantities must lie
// in their plausible ranges (job/hardware_bounds.h); the parallel keys, their
// ranges and the rules between them are the table of lostflops/plan_keys.h;
// the plan's cross-field rules against the model and cluster are in validate.cpp.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/plan_keys.h"
#include "job/gpu_parse.h"
#include "job/hardware_bounds.h"
#include "job/job_sections.h"
#include "job/recompute_modules.h"
#include "job/pipeline_layout.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

constexpr int64_t kMaxGpus = bounds::kMaxGpus;
constexpr int64_t kMaxSeq = 100'000'000;

Link read_link(YamlSection& parent, const std::string& key, const std::optional<Link>& fallback) {
    YAML::Node n = parent.raw(key);
    if (!n) {
        if (fallback) return *fallback;
        throw parent.missing(key, "expected {bandwidth_GBps, latency_us}");
    }
    YamlSection s(n, parent.file(), parent.key_path(key));
    Link l;
    l.bandwidth_GBps = s.num_req("bandwidth_GBps", bounds::kMinLinkGBps, bounds::kMaxLinkGBps);
    l.latency_us = s.num_or("latency_us", fallback ? fallback->latency_us : 5.0, bounds::kMinLatencyUs,
                            bounds::kMaxLatencyUs);
    s.finish({"source"});
    return l;
}

// cluster.memory_headroom: GiB as a number or "6 GiB", or a share of the
// usable memory as "10 %" (docs/job-file.md).
void read_headroom(YamlSection& s, Cluster& c) {
    const YAML::Node n = s.raw("memory_headroom");
    if (!n || n.IsNull()) return;
    const std::string key = s.key_path("memory_headroom");
    const std::string expected = "expected GiB (6, \"6 GiB\") or a share of the usable memory (\"10 %\")";
    if (!n.IsScalar()) throw InputError(s.file(), key, expected);
    std::string text = n.Scalar();
    std::erase(text, ' ');
    const auto ends = [&](std::string_view suffix) {
        if (!text.ends_with(suffix)) return false;
        text.resize(text.size() - suffix.size());
        return true;
    };
    const bool percent = ends("%");
    if (!percent) ends("GiB");
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v))
        throw InputError(s.file(), key, expected + ", not '" + n.Scalar() + "'");
    const double most = percent ? 90.0 : bounds::kMaxMemoryGiB;
    if (v < 0 || v > most)
        throw InputError(s.file(), key,
                         fmt::format("{} {}: expected 0 to {}", n.Scalar(), percent ? "of the memory" : "GiB", most));
    if (percent) c.memory_headroom_fraction = v / 100.0;
    else c.memory_headroom_bytes = v * 1024.0 * 1024.0 * 1024.0;
}

}  // namespace

Cluster read_cluster(YAML::Node node, const std::string& file) {
    if (!node || node.IsNull()) throw InputError(file, "cluster", "missing section");
    if (!node.IsMap()) throw InputError(file, "cluster", "expected a mapping");
    std::string preset;
    // A null preset is not given, as in the model section (`--set
    // cluster.preset=null` and your own cluster keys); it said "unknown cluster ''".
    if (node["preset"] && node["preset"].IsNull()) {
        node = YAML::Clone(node);
        node.remove("preset");
    }
    if (node["preset"]) {
        preset = preset_name(node["preset"], file, "cluster");
        auto yaml = cluster_preset_yaml(preset);
        if (!yaml) {
            std::string all;
            for (const auto& n : cluster_names()) all += (all.empty() ? "" : ", ") + n;
            throw InputError(file, "cluster.preset",
                             "unknown cluster '" + preset + "'; known: " + all + did_you_mean(preset, cluster_names()));
        }
        const YAML::Node base = YAML::Load(*yaml);
        node = merged(base, node, "preset", file, "cluster");
        // A link given in part over the preset's (inter_node: {latency_us: 10},
        // --set cluster.inter_node.latency_us=10) keeps the preset's other figures.
        for (const std::string link : {"intra_node", "inter_node"})
            if (base[link] && base[link].IsMap() && node[link] && node[link].IsMap())
                node[link] = merged(base[link], node[link], "", file, "cluster." + link);
    }
    YamlSection s(node, file, "cluster");
    Cluster c;
    c.name = s.str_opt("name").value_or(preset);
    YAML::Node g = s.raw("gpu");
    if (!g) throw s.missing("gpu", "expected a catalog name or a spec");
    if (g.IsScalar()) {
        auto gpu = find_gpu(g.Scalar());
        if (!gpu) {
            std::string all;
            for (const auto& n : gpu_names()) all += (all.empty() ? "" : ", ") + n;
            throw InputError(file, "cluster.gpu", "unknown GPU '" + g.Scalar() + "'; known: " + all + did_you_mean(g.Scalar(), gpu_names()));
        }
        c.gpu = *gpu;
    } else {
        c.gpu = parse_gpu_node(g, file, "cluster.gpu");
    }
    c.num_gpus = static_cast<int>(s.int_req("num_gpus", 1, kMaxGpus));
    c.gpus_per_node = static_cast<int>(s.int_or("gpus_per_node", std::min(c.num_gpus, 8), 1, 1024));
    if (const auto d = s.int_opt("nvlink_domain", 1, kMaxGpus)) {
        if (*d < c.gpus_per_node || *d % c.gpus_per_node != 0)
            throw InputError(file, s.key_path("nvlink_domain"),
                             fmt::format("{} GPUs per NVLink domain; expected a multiple of gpus_per_node ({}): "
                                         "a domain joins whole nodes",
                                         *d, c.gpus_per_node));
        c.nvlink_domain = static_cast<int>(*d);
    }
    if (const YAML::Node t = s.raw("torus")) {
        const std::string key = s.key_path("torus");
        if (!t.IsSequence() || t.size() < 2 || t.size() > 3)
            throw InputError(file, key, "expected the chips per axis of a 2D or 3D torus: [16, 16] or [4, 4, 8]");
        if (c.nvlink_domain > 0)
            throw InputError(file, key, "a torus and an nvlink_domain: give one scale-up topology");
        int64_t chips = 1;
        for (size_t i = 0; i < t.size(); ++i) {
            c.torus[i] = static_cast<int>(scalar_integer(t[i], file, fmt::format("{}[{}]", key, i), 1, 1024));
            chips *= c.torus[i];
        }
        for (size_t i = t.size(); i < c.torus.size(); ++i) c.torus[i] = 1;
        if (chips < 2 || c.num_gpus % chips != 0 || chips % c.gpus_per_node != 0)
            throw InputError(file, key,
                             fmt::format("a slice of {} chips; expected at least 2, a multiple of gpus_per_node ({}) "
                                         "and dividing num_gpus ({}): the job is whole slices",
                                         chips, c.gpus_per_node, c.num_gpus));
    }
    // Without an intra_node section the scale-up link is the GPU's own NVLink
    // (on a torus: give intra_node, one ICI link per direction).
    c.intra_node = read_link(s, "intra_node", Link{c.gpu.nvlink_GBps, 2.0});
    std::optional<Link> single_node;
    if (c.num_gpus <= c.scaleup_gpus()) single_node = c.intra_node;
    c.inter_node = read_link(s, "inter_node", single_node);
    read_headroom(s, c);
    s.finish({"source"});
    return c;
}

Training read_training(YAML::Node node, const std::string& file) {
    if (!node || node.IsNull()) throw InputError(file, "training", "missing section");
    YamlSection s(node, file, "training");
    Training t;
    t.seq_length = s.int_req("seq_length", 1, kMaxSeq);
    t.global_batch = s.int_req("global_batch_size", 1, 1'000'000'000);
    t.micro_batch = s.int_or("micro_batch_size", 1, 1, 1'000'000);
    const auto prec = s.choice_opt("precision", {"fp16", "bf16", "fp8", "fp32"}).value_or("bf16");
    t.precision = prec == "fp16"   ? Precision::fp16
                  : prec == "fp8"  ? Precision::fp8
                  : prec == "fp32" ? Precision::fp32
                                   : Precision::bf16;
    // The fp8 recipe (lostflops/fp8_recipe.h); auto: resolved with the
    // framework (job/job.cpp).
    std::vector<std::string> recipes = {"auto"};
    for (const Fp8RecipeRow& row : kFp8Recipes) recipes.emplace_back(row.name);
    if (const auto recipe = s.choice_opt("fp8_recipe", recipes); recipe && *recipe != "auto") {
        if (t.precision != Precision::fp8)
            throw InputError(file, "training.fp8_recipe",
                             *recipe + ": read with precision fp8 alone; this job's precision is " + prec +
                                 " (to run it in " + prec + ", set training.fp8_recipe: auto as well)");
        for (const Fp8RecipeRow& row : kFp8Recipes)
            if (*recipe == row.name) t.fp8_recipe = row.recipe;
        t.fp8_recipe_auto = false;
    }
    // 0 said "missing" in goodput though given: a run has at least a token
    // (null, or no key, is none).
    t.train_tokens = s.num_opt("train_tokens", 1, 1e18).value_or(0);
    const auto attn = s.choice_opt("attention", {"auto", "flash", "unfused"}).value_or("auto");
    t.attention = attn == "unfused" ? AttentionKernel::unfused : AttentionKernel::flash;
    t.attention_auto = attn == "auto";
    t.causal_flops = s.bool_or("causal_flops", false);
    const auto fw = s.choice_opt("framework", {"auto", "megatron-lm", "megatron-core", "fsdp", "deepspeed", "hf"})
                        .value_or("auto");
    t.framework_auto = fw == "auto";
    t.framework = fw == "megatron-lm"  ? Framework::megatron_lm
                  : fw == "fsdp"       ? Framework::fsdp
                  : fw == "deepspeed"  ? Framework::deepspeed
                  : fw == "hf"         ? Framework::hf
                                       : Framework::megatron_core;
    // Every stack's own default keeps fp32 master weights; NeMo 1.x's Apex
    // optimizer may not (lostflops/spec.h Optimizer).
    const auto opt = s.choice_opt("optimizer", {"auto", "adam", "adam-param-remainders", "adam-bf16", "adam-bf16-moments"})
                         .value_or("auto");
    t.optimizer_auto = opt == "auto";
    t.optimizer = opt == "adam-param-remainders" ? Optimizer::adam_param_remainders
                  : opt == "adam-bf16"           ? Optimizer::adam_bf16
                  : opt == "adam-bf16-moments"   ? Optimizer::adam_bf16_moments
                                                 : Optimizer::adam;
    // auto: resolved once the framework is (job/job.cpp, after framework: auto).
    const auto kern = s.choice_opt("optimizer_kernel", {"auto", "fused", "foreach"}).value_or("auto");
    t.optimizer_kernel = kern == "foreach" ? OptimizerKernel::foreach : OptimizerKernel::fused;
    t.compile = s.bool_or("compile", false);
    t.cuda_graphs = s.bool_or("cuda_graphs", false);
    t.use_cache = s.bool_or("use_cache", false);
    t.holds_outputs = s.bool_or("holds_outputs", false);
    t.data_loader_s_per_sequence = s.num_or("data_loader_s_per_sequence", 0, 0, 3600);
    // `auto` (default; null too): the framework's default, resolved with it
    // (job/job.cpp); else worker processes per training process.
    const YAML::Node workers = s.raw("data_loader_workers");
    if (workers && !workers.IsNull() && !(workers.IsScalar() && workers.Scalar() == "auto")) {
        t.data_loader_workers = static_cast<int>(s.int_req("data_loader_workers", 0, kMaxDataLoaderWorkers));
        t.data_loader_workers_auto = false;
    }
    if (t.optimizer != Optimizer::adam && t.precision == Precision::fp16)
        throw InputError(file, "training.optimizer",
                         opt + " works on bf16 weights; fp16 training keeps fp32 master weights (use adam)");
    if (t.optimizer != Optimizer::adam && t.precision == Precision::fp32)
        throw InputError(file, "training.optimizer",
                         opt + " works on bf16 weights; fp32 training has fp32 weights and moments (use adam)");
    s.finish();
    return t;
}

// The two overlap knobs' defaults (their rows in src/job/plan_keys.cpp).
// overlap_grad_reduce: overlapped, as PyTorch DDP/FSDP, DeepSpeed and
// Megatron-Core (--overlap-grad-reduce) do; legacy Megatron-LM's local DDP
// all-reduced the gradients after the backward (megatron/model/distributed.py,
// allreduce_gradients() called from train_step; overlap arrived with
// Megatron-Core's distributed data parallel in 2023). ZeRO-3 under any stack
// is an FSDP-style engine, which overlaps.
bool default_overlap_grad_reduce(const ParallelPlan& p, Framework fw) {
    return fw != Framework::megatron_lm || p.zero >= 3;
}

// tp_comm_overlap: on with sequence parallelism on Hopper and newer under
// Megatron-Core, where Transformer Engine overlaps the SP all-gathers/
// reduce-scatters with the GEMMs (userbuffers, --tp-comm-overlap; it needs
// sequence parallelism and Transformer Engine).
bool default_tp_comm_overlap(const ParallelPlan& p, Framework fw, const std::string& arch) {
    const AcceleratorTraits* traits = find_accelerator(arch);
    return fw == Framework::megatron_core && p.sequence_parallel && p.tp > 1 && traits && traits->te_tp_overlap;
}

std::vector<std::string> overlap_pins(const Job& job) {
    const ParallelPlan& p = job.plan;
    std::vector<std::string> out;
    if (p.tp_comm_overlap != default_tp_comm_overlap(p, job.training.framework, job.cluster.gpu.arch))
        out.push_back(fmt::format("parallel.tp_comm_overlap={}", p.tp_comm_overlap));
    if (p.overlap_grad_reduce != default_overlap_grad_reduce(p, job.training.framework))
        out.push_back(fmt::format("parallel.overlap_grad_reduce={}", p.overlap_grad_reduce));
    return out;
}

namespace {

// A plain key's value as the table reads it (lostflops/plan_keys.h PlanKeyAccess).
double read_plan_value(YamlSection& s, const PlanKey& k) {
    switch (k.type) {
        case PlanKeyType::integer:
            return static_cast<double>(*s.int_opt(k.name, static_cast<int64_t>(k.min), static_cast<int64_t>(k.max)));
        case PlanKeyType::boolean: return s.bool_or(k.name, false) ? 1 : 0;
        case PlanKeyType::number: return *s.num_opt(k.name, k.min, k.max);
        case PlanKeyType::choice: {
            const std::vector<std::string> names = plan_key_choices(k);
            const std::string v = *s.choice_opt(k.name, names);
            return static_cast<double>(std::find(names.begin(), names.end(), v) - names.begin());
        }
        case PlanKeyType::special: break;
    }
    return 0;
}

}  // namespace

// The keys of the table (lostflops/plan_keys.h) in its order: the plain ones
// read by their type and range, each rule and framework-dependent default
// written once in its row; the three special keys here.
ParallelPlan read_parallel(YAML::Node node, const std::string& file, int num_gpus, const std::string& arch,
                           Framework fw) {
    if (!node || node.IsNull()) throw InputError(file, "parallel",
                                                 "missing section: `lostflops search` finds the best plan of a job "
                                                 "without one (or give tp, pp, ... under parallel:)");
    YamlSection s(node, file, "parallel");
    const PlanKeyContext context{fw, arch};
    ParallelPlan p;
    for (const PlanKey& k : plan_keys()) {
        const std::string name = k.name;
        if (k.type == PlanKeyType::special) {
            if (name == "pipeline_layout") {
                if (const auto text = s.str_opt(name)) {
                    if (p.first_stage_layers >= 0 || p.last_stage_layers >= 0)
                        throw InputError(file, s.key_path(name),
                                         "given together with first_stage_layers / last_stage_layers; give one of them");
                    p.layout = parse_pipeline_layout(*text, file, s.key_path(name));
                }
            } else if (name == "recompute_modules") {
                if (s.has(name)) p.recompute_modules = read_recompute_modules(s, p.recompute);
            } else if (name == "dp") {
                const int64_t model_par = static_cast<int64_t>(p.tp) * p.pp * p.cp;
                if (model_par > num_gpus)
                    throw InputError(file, "parallel", fmt::format("tp*pp*cp = {} is more than num_gpus {}",
                                                                   model_par, num_gpus));
                p.dp = static_cast<int>(s.int_or(name, num_gpus / model_par, static_cast<int64_t>(k.min),
                                                 static_cast<int64_t>(k.max)));
            }
            continue;
        }
        if (!s.has(name)) {
            if (k.when_not_given) k.when_not_given(p, context);
            continue;
        }
        if (k.refuse_given)
            if (const std::string why = k.refuse_given(p, context); !why.empty()) throw InputError(file, s.key_path(name), why);
        k.field.set(p, read_plan_value(s, k));
        if (k.refuse_value)
            if (const std::string why = k.refuse_value(p, context); !why.empty()) throw InputError(file, s.key_path(name), why);
    }
    s.finish();
    return p;
}

std::string preset_name(const YAML::Node& preset, const std::string& file, const std::string& section) {
    if (!preset.IsScalar())
        throw InputError(file, section + ".preset",
                         fmt::format("expected a {0}'s name (lostflops list {0}s), got a {1}", section,
                                     preset.IsMap() ? "mapping" : "list"));
    return preset.Scalar();
}

YAML::Node merged(const YAML::Node& base, const YAML::Node& section, const std::string& drop,
                  const std::string& file, const std::string& key) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& kv : base) out[kv.first.Scalar()] = kv.second;
    for (const auto& kv : section) {
        if (!kv.first.IsScalar()) throw InputError(file, key, "keys must be plain strings");
        if (kv.first.Scalar() != drop) out[kv.first.Scalar()] = kv.second;
    }
    return out;
}

}  // namespace lostflops
