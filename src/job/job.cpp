// Job loading: YAML/JSON text -> Job. Sections model (Hugging Face config.json
// keys; job_model.cpp), cluster, training, parallel (job_sections.cpp);
// `--set a.b=v` overrides (job_overrides.cpp) are applied to the document
// before it is read, and an error about a key an override set is reported as
// coming from that --set.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "lostflops/accelerator.h"
#include "lostflops/embedded.h"
#include "lostflops/error.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/job.h"
#include "job/job_overrides.h"
#include "job/job_sections.h"
#include "job/text_input.h"
#include "job/validate.h"
#include "job/yaml_document.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

// The job's name: its `name:` (or the file's stem), with the --set overrides
// that changed what it names (the model or the cluster) appended, so that
// "llama3-70b-1024xh100" is not printed over another model or cluster:
// "llama3-70b-1024xh100 (with --set model.preset, cluster.num_gpus)". An
// override of `name` itself is taken as it is.
std::string job_name(const std::string& named, const std::vector<AppliedOverride>& applied) {
    std::vector<std::string> changed;
    for (const auto& o : applied) {
        if (o.path == "name") return named;
        const bool what = o.path == "model" || o.path == "cluster" || o.path.rfind("model.", 0) == 0 ||
                          o.path.rfind("cluster.", 0) == 0;
        const auto dot = o.path.rfind('.');
        const std::string leaf = dot == std::string::npos ? o.path : o.path.substr(dot + 1);
        const bool label_only = dot != std::string::npos && (leaf == "name" || leaf == "source" || leaf == "description");
        if (what && !label_only && std::find(changed.begin(), changed.end(), o.path) == changed.end())
            changed.push_back(o.path);
    }
    if (changed.empty()) return named;
    std::string list;
    for (const auto& c : changed) list += (list.empty() ? "" : ", ") + c;
    return fmt::format("{} (with --set {})", named, list);
}

Job read_job(YAML::Node root, const std::string& source, const std::vector<AppliedOverride>& applied,
             JobChecks checks = JobChecks::all) {
    YamlSection top(root, source, "");
    top.check_keys({"name", "source", "description", "model", "cluster", "training", "parallel", "run"});
    Job job;
    job.source = source;
    job.name = job_name(top.str_opt("name").value_or(std::filesystem::path(source).stem().string()), applied);
    const std::string cited = top.str_opt("source").value_or("");
    top.str_opt("description");
    job.model = read_model(top.raw("model"), source);
    job.cluster = read_cluster(top.raw("cluster"), source);
    job.training = read_training(top.raw("training"), source);
    job.training.xla = xla_compiled(job.cluster.gpu.arch);
    // fp32 training: Transformer Engine's flash and fused attention take only
    // bf16/fp16 Q, K, V (dot_product_attention/utils.py get_attention_backend,
    // "Disabling FlashAttention due to unsupported QKV data type"), so
    // DotProductAttention runs its unfused softmax path. (PyTorch's SDPA, the
    // fsdp and deepspeed stacks', has a fused fp32 kernel: memory-efficient.)
    const bool sdpa = !job.training.framework_auto && (job.training.framework == Framework::fsdp ||
                                                       job.training.framework == Framework::deepspeed ||
                                                       job.training.framework == Framework::hf);
    // Under framework hf the model decides (hf_attention.h hf_attention_keeps_scores:
    // SDPA or its own eager attention), whatever the source's date.
    const bool hf = !job.training.framework_auto && job.training.framework == Framework::hf;
    if (job.training.attention_auto)
        job.training.attention = hf                                                    ? AttentionKernel::flash
                                 : job.training.precision == Precision::fp32 && !sdpa ? AttentionKernel::unfused
                                                                                      : default_attention(cited);
    if (job.training.framework_auto) {
        job.training.framework = default_framework(cited, job.training.attention);
        // A model read from a Hugging Face config: const lookups, which never insert.
        const YAML::Node model = top.raw("model");
        const bool hf_model =
            model.IsMap() && (model["hf_config"] || model["model_type"] || model["architectures"]);
        job.training.framework_guessed_for_hf_model = hf_model && !framework_in_source(cited);
    }
    // optimizer_kernel: auto, resolved with the framework: torch.optim's AdamW
    // runs foreach by default on CUDA tensors (torch/optim/optimizer.py
    // _default_to_fused_or_foreach; fused is opt-in), which a Hugging Face
    // training loop gets; torchtitan asks for fused (torchtitan
    // config/job_config.py Optimizer.implementation = "fused"), as Megatron's
    // and DeepSpeed's optimizers are (Apex / Transformer Engine FusedAdam,
    // DeepSpeed FusedAdam).
    {
        const YAML::Node training = top.raw("training");
        const YAML::Node kern = training["optimizer_kernel"];  // const: looks, never inserts
        if (!kern || !kern.IsScalar() || kern.Scalar() == "auto")
            job.training.optimizer_kernel =
                job.training.framework == Framework::hf ? OptimizerKernel::foreach : OptimizerKernel::fused;
    }
    // fp8_recipe: auto, resolved with the framework: torchtitan's float8
    // converter is torchao's Float8Linear, whose default recipe is tensorwise
    // dynamic scaling (torchao/float8/config.py Float8LinearRecipeName.TENSORWISE;
    // torchtitan's float8.recipe_name None), as is an eager hf job's (torchao,
    // fp8_casts_by_torchao); Transformer Engine's default is DelayedScaling
    // (Megatron-Core --fp8-recipe delayed, DeepSpeed's TE path).
    if (job.training.fp8_recipe_auto)
        job.training.fp8_recipe =
            fp8_casts_by_torchao(job.training.framework) ? Fp8Recipe::tensorwise : Fp8Recipe::delayed;
    // data_loader_workers: auto, resolved with the framework (lostflops/spec.h).
    if (job.training.data_loader_workers < 0)
        job.training.data_loader_workers = job.training.framework == Framework::megatron_lm ||
                                                   job.training.framework == Framework::megatron_core
                                               ? 2
                                               : 0;
    job.plan = read_parallel(top.raw("parallel"), source, job.cluster.num_gpus, job.cluster.gpu.arch,
                             job.training.framework);
    job.run = read_run(top.raw("run"), source, job.cluster, job.model);
    // CUDA graphs are modelled as torch.compile(mode="reduce-overhead")
    // captures them: a transformers model (framework hf), compiled, not
    // under FSDP2 (zero 3: its per-layer all-gathers and hooks inside graphs
    // were not measured). Megatron's and torchtitan's own graph options are
    // not modelled.
    if (job.training.cuda_graphs) {
        const Training& t = job.training;
        if (t.framework != Framework::hf)
            throw InputError(source, "training.cuda_graphs",
                             "modelled for framework hf (torch.compile(mode=\"reduce-overhead\") of a transformers "
                             "model) only; this job's framework is " +
                                 std::string(to_string(t.framework)));
        if (!t.compile)
            throw InputError(source, "training.cuda_graphs",
                             "needs training.compile: true (torch.compile(mode=\"reduce-overhead\") captures the "
                             "compiled graphs)");
        if (job.plan.zero >= 3)
            throw InputError(source, "training.cuda_graphs",
                             "not modelled with parallel.zero 3 (FSDP2's per-layer collectives inside graphs were not measured)");
    }
    // transformers builds a KV cache in training only in its own modules
    // (framework hf). Under gradient checkpointing the model still makes it
    // and its layers are handed none (modeling_layers.py
    // GradientCheckpointingLayer.__call__): only the skipped packed-sequence
    // check is priced (workload/host_ops_hf.cpp).
    if (job.training.use_cache && job.training.framework != Framework::hf)
        throw InputError(source, "training.use_cache",
                         "transformers' KV cache in the training forward is modelled for framework hf only; this "
                         "job's framework is " + std::string(to_string(job.training.framework)));
    // A transformers model returns its output object (logits, cache); the
    // other stacks' loops take a loss (head_work.cpp).
    if (job.training.holds_outputs && job.training.framework != Framework::hf)
        throw InputError(source, "training.holds_outputs",
                         "a loop holding a transformers model's output is modelled for framework hf only; this "
                         "job's framework is " + std::string(to_string(job.training.framework)));
    top.finish();
    validate_job(job, checks);
    return job;
}

// Rethrows `e` as the error of the --set it is about (job_overrides.h
// override_for), unless it matched only by a related key and the file alone
// (`file_root`, before the overrides) fails at the same key: then the file's.
[[noreturn]] void rethrow_attributed(const InputError& e, const std::string& source,
                                     const std::vector<AppliedOverride>& applied, const YAML::Node& file_root,
                                     JobChecks checks) {
    bool by_related = false;
    const AppliedOverride* o = override_for(e, source, applied, &by_related);
    if (o && by_related) {
        try {
            (void)read_job(file_root, source, {}, checks);
        } catch (const InputError& alone) {
            if (alone.key() == e.key()) throw e;
        }
    }
    if (o) throw InputError(o->source(), e.key(), e.message());
    throw e;
}

}  // namespace

AttentionKernel default_attention(const std::string& cited_source) {
    // A run described by a source dated before 2023 used Megatron-LM's fused
    // scale-mask-softmax path: FlashAttention (Dao et al., May 2022) reached
    // Megatron-LM and PyTorch (SDPA, 2.0) in 2023. Newer or undated: flash.
    for (size_t i = 0; i + 4 <= cited_source.size(); ++i) {
        const bool digits = std::isdigit(static_cast<unsigned char>(cited_source[i])) &&
                            std::isdigit(static_cast<unsigned char>(cited_source[i + 1])) &&
                            std::isdigit(static_cast<unsigned char>(cited_source[i + 2])) &&
                            std::isdigit(static_cast<unsigned char>(cited_source[i + 3]));
        const bool alone = (i == 0 || !std::isdigit(static_cast<unsigned char>(cited_source[i - 1]))) &&
                           (i + 4 == cited_source.size() ||
                            !std::isdigit(static_cast<unsigned char>(cited_source[i + 4])));
        if (!digits || !alone) continue;
        const int year = std::stoi(cited_source.substr(i, 4));
        if (year >= 2015 && year <= 2022) return AttentionKernel::unfused;
        if (year >= 2023 && year <= 2100) return AttentionKernel::flash;
    }
    return AttentionKernel::flash;
}

std::optional<Framework> framework_in_source(const std::string& cited_source) {
    std::string low;
    for (char ch : cited_source) low += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto has = [&low](const char* w) { return low.find(w) != std::string::npos; };
    if (has("torchtitan") || has("fsdp") || has("llm-foundry") || has("llm foundry")) return Framework::fsdp;
    if (has("megatron-deepspeed") || has("megatron deepspeed")) return Framework::megatron_lm;
    if (has("deepspeed")) return Framework::deepspeed;
    if (has("megatron-core") || has("mcore")) return Framework::megatron_core;
    return std::nullopt;
}

Framework default_framework(const std::string& cited_source, AttentionKernel attention) {
    if (const auto named = framework_in_source(cited_source)) return *named;
    if (attention == AttentionKernel::unfused) return Framework::megatron_lm;
    return Framework::megatron_core;
}

Job parse_job(const std::string& text, const std::string& source,
              const std::vector<std::string>& overrides) {
    check_text(text, source);
    YAML::Node root = load_yaml_document(text, source);
    if (!root.IsMap()) throw InputError(source, "", "expected a mapping with sections model, cluster, training, parallel");
    const YAML::Node file_root = overrides.empty() ? root : YAML::Clone(root);
    const std::vector<AppliedOverride> applied = apply_overrides(root, overrides);
    try {
        return read_job(root, source, applied);
    } catch (const InputError& e) {
        rethrow_attributed(e, source, applied, file_root, JobChecks::all);
    }
}

SearchJob parse_search_job(const std::string& text, const std::string& source,
                           const std::vector<std::string>& overrides, SearchJobPlan plan) {
    check_text(text, source);
    YAML::Node root = load_yaml_document(text, source);
    if (!root.IsMap()) throw InputError(source, "", "expected a mapping with sections model, cluster, training, parallel");
    if (plan == SearchJobPlan::ignore) root.remove("parallel");
    YAML::Node file_root = overrides.empty() ? root : YAML::Clone(root);
    if (!file_root["parallel"] || file_root["parallel"].IsNull()) file_root["parallel"] = YAML::Node(YAML::NodeType::Map);
    const std::vector<AppliedOverride> applied = apply_overrides(root, overrides);
    SearchJob out;
    if (!root["parallel"] || root["parallel"].IsNull()) root["parallel"] = YAML::Node(YAML::NodeType::Map);
    const YAML::Node parallel = root["parallel"];
    // A key set to null (`--set parallel.pp=null`) is not given: searched.
    if (parallel.IsMap())
        for (const auto& kv : parallel)
            if (kv.first.IsScalar() && !kv.second.IsNull()) out.fixed_keys.push_back(kv.first.Scalar());
    const YAML::Node training = root["training"];
    out.micro_batch_given = training && training.IsMap() && training["micro_batch_size"];
    try {
        out.job = read_job(root, source, applied, JobChecks::without_plan);
    } catch (const InputError& e) {
        rethrow_attributed(e, source, applied, file_root, JobChecks::without_plan);
    }
    return out;
}

SearchJob load_search_job(const std::string& path, const std::vector<std::string>& overrides, SearchJobPlan plan) {
    return parse_search_job(read_text_file(path, kMaxJobBytes, "job file"), input_name(path), overrides, plan);
}

SearchJob default_search_job(const std::vector<std::string>& overrides) {
    return parse_search_job(default_job_text(), "data/jobs/default.yaml (built in)", overrides,
                            SearchJobPlan::ignore);
}

Job load_job(const std::string& path, const std::vector<std::string>& overrides) {
    return parse_job(read_text_file(path, kMaxJobBytes, "job file"), input_name(path), overrides);
}

const std::string& default_job_text() {
    static const std::string text(*embedded_file("jobs/default.yaml"));
    return text;
}

Job default_job(const std::vector<std::string>& overrides) {
    return parse_job(default_job_text(), "data/jobs/default.yaml (built in)", overrides);
}

}  // namespace lostflops
