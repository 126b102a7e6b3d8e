// Job loading: YAML/JSON text -> Job. Sections model (Hugging Face config.json
// keys), cluster, training, parallel; `preset:` entries from the catalogs and
// `hf_config:` files are merged under the user's own keys; `--set a.b=v`
// overrides are applied to the document before it is read.
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "lostflops/catalog.h"
#include "lostflops/embedded.h"
#include "lostflops/error.h"
#include "lostflops/job.h"
#include "spec/gpu_parse.h"
#include "spec/text_input.h"
#include "spec/validate.h"
#include "spec/yaml_reader.h"

namespace lostflops {

namespace {

constexpr int64_t kMaxGpus = 1'000'000;
constexpr int64_t kMaxSeq = 100'000'000;

// Hugging Face config.json keys that do not change the cost model; accepted in
// `model:` so a pasted config.json works.
const std::set<std::string> kTolerantModelKeys = {
    "architectures", "model_type", "torch_dtype", "transformers_version", "rope_theta",
    "rope_scaling", "max_position_embeddings", "rms_norm_eps", "layer_norm_eps",
    "layer_norm_epsilon", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
    "use_cache", "attention_dropout", "attention_bias", "mlp_bias", "hidden_dropout",
    "pretraining_tp", "sliding_window", "use_sliding_window", "max_window_layers",
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "head_dim",
    "source", "name", "n_positions", "n_ctx", "activation_function", "resid_pdrop", "embd_pdrop",
    "attn_pdrop", "summary_type", "summary_use_proj", "vocab_file", "description"};

YAML::Node load_yaml(const std::string& text, const std::string& source) {
    try {
        return YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(source, fmt::format("line {}", e.mark.line + 1),
                         "not valid YAML or JSON: " + e.msg);
    }
}

// `section.key[.sub]=value`: value parsed as YAML so numbers and booleans keep
// their types.
void apply_override(YAML::Node& root, const std::string& expr) {
    const auto eq = expr.find('=');
    if (eq == std::string::npos || eq == 0)
        throw InputError("--set", expr, "expected section.key=value");
    const std::string path = expr.substr(0, eq);
    const std::string value = expr.substr(eq + 1);
    std::vector<std::string> parts;
    std::stringstream ss(path);
    for (std::string p; std::getline(ss, p, '.');) {
        if (p.empty()) throw InputError("--set", path, "empty key component");
        parts.push_back(p);
    }
    if (parts.empty()) throw InputError("--set", path, "expected section.key=value");
    YAML::Node parsed = load_yaml(value, "--set " + path);
    std::vector<YAML::Node> chain{root};
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
        YAML::Node next = chain.back()[parts[i]];
        if (!next || next.IsNull()) {
            chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next = chain.back()[parts[i]];
        }
        if (!next.IsMap()) throw InputError("--set", path, parts[i] + " is not a section");
        chain.push_back(next);
    }
    chain.back()[parts.back()] = parsed;
}

// Returns `section` with the keys of `base` it does not set itself.
YAML::Node merged(const YAML::Node& base, const YAML::Node& section, const std::string& drop) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& kv : base) out[kv.first.Scalar()] = kv.second;
    for (const auto& kv : section)
        if (kv.first.Scalar() != drop) out[kv.first.Scalar()] = kv.second;
    return out;
}

YAML::Node resolve_model_node(YAML::Node node, const std::string& file) {
    if (!node || node.IsNull()) throw InputError(file, "model", "missing section");
    if (!node.IsMap()) throw InputError(file, "model", "expected a mapping");
    if (node["preset"]) {
        const std::string name = node["preset"].IsScalar() ? node["preset"].Scalar() : "";
        auto yaml = model_preset_yaml(name);
        if (!yaml) {
            std::string all;
            for (const auto& n : model_names()) all += (all.empty() ? "" : ", ") + n;
            throw InputError(file, "model.preset", "unknown model '" + name + "'; known: " + all);
        }
        node = merged(YAML::Load(*yaml), node, "preset");
        if (!node["name"]) node["name"] = name;
    }
    if (node["hf_config"]) {
        if (!node["hf_config"].IsScalar()) throw InputError(file, "model.hf_config", "expected a path");
        std::filesystem::path p = node["hf_config"].Scalar();
        if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
        const std::string text = read_text_file(p.string());
        YAML::Node hf = load_yaml(text, p.string());
        if (!hf.IsMap()) throw InputError(p.string(), "", "expected a JSON object (config.json)");
        // Keep only the keys the cost model reads; a config.json has many more.
        YAML::Node keep(YAML::NodeType::Map);
        for (const char* k : {"num_hidden_layers", "hidden_size", "intermediate_size",
                              "num_attention_heads", "num_key_value_heads", "vocab_size",
                              "hidden_act", "tie_word_embeddings", "num_local_experts", "num_experts",
                              "num_experts_per_tok", "moe_intermediate_size"})
            if (hf[k]) keep[k] = hf[k];
        node = merged(keep, node, "hf_config");
        if (!node["name"]) node["name"] = p.parent_path().filename().string();
    }
    return node;
}

Model read_model(YAML::Node node, const std::string& file) {
    YamlSection s(resolve_model_node(node, file), file, "model");
    Model m;
    m.name = s.str_opt("name").value_or("model");
    m.layers = static_cast<int>(s.int_req("num_hidden_layers", 1, 100'000));
    m.hidden = s.int_req("hidden_size", 1, 1'000'000);
    m.heads = static_cast<int>(s.int_req("num_attention_heads", 1, 100'000));
    m.kv_heads = static_cast<int>(s.int_or("num_key_value_heads", m.heads, 1, 100'000));
    m.ffn = s.int_or("intermediate_size", 4 * m.hidden, 1, 10'000'000);
    m.vocab = s.int_req("vocab_size", 1, 100'000'000);
    const auto act = s.choice_opt("hidden_act", {"silu", "swiglu", "gelu", "gelu_new", "gelu_fast",
                                                 "gelu_pytorch_tanh", "relu", "geglu"});
    m.mlp = (act && (*act == "silu" || *act == "swiglu" || *act == "geglu")) ? MlpKind::gated
                                                                              : MlpKind::gelu;
    // Hugging Face PretrainedConfig defaults tie_word_embeddings to true.
    m.tied_embeddings = s.bool_or("tie_word_embeddings", true);
    auto experts = s.int_opt("num_local_experts", 1, 100'000);
    if (!experts) experts = s.int_opt("num_experts", 1, 100'000);
    if (experts && *experts > 1) {
        m.experts = static_cast<int>(*experts);
        m.experts_per_token = static_cast<int>(s.int_req("num_experts_per_tok", 1, 100'000));
        m.moe_ffn = s.int_or("moe_intermediate_size", m.ffn, 1, 10'000'000);
    } else {
        s.int_opt("num_experts_per_tok", 1, 100'000);
        s.int_opt("moe_intermediate_size", 1, 10'000'000);
    }
    s.finish(kTolerantModelKeys);
    return m;
}

Link read_link(YamlSection& parent, const std::string& key, const std::optional<Link>& fallback) {
    YAML::Node n = parent.raw(key);
    if (!n) {
        if (fallback) return *fallback;
        throw InputError(parent.file(), parent.key_path(key),
                         "missing; expected {bandwidth_GBps, latency_us}");
    }
    YamlSection s(n, parent.file(), parent.key_path(key));
    Link l;
    l.bandwidth_GBps = s.num_req("bandwidth_GBps", 1e-3, 1e6);
    l.latency_us = s.num_or("latency_us", fallback ? fallback->latency_us : 5.0, 0, 1e6);
    s.finish({"source"});
    return l;
}

Cluster read_cluster(YAML::Node node, const std::string& file) {
    if (!node || node.IsNull()) throw InputError(file, "cluster", "missing section");
    if (!node.IsMap()) throw InputError(file, "cluster", "expected a mapping");
    std::string preset_name;
    if (node["preset"]) {
        preset_name = node["preset"].IsScalar() ? node["preset"].Scalar() : "";
        auto yaml = cluster_preset_yaml(preset_name);
        if (!yaml) {
            std::string all;
            for (const auto& n : cluster_names()) all += (all.empty() ? "" : ", ") + n;
            throw InputError(file, "cluster.preset",
                             "unknown cluster '" + preset_name + "'; known: " + all);
        }
        node = merged(YAML::Load(*yaml), node, "preset");
    }
    YamlSection s(node, file, "cluster");
    Cluster c;
    c.name = s.str_opt("name").value_or(preset_name);
    YAML::Node g = s.raw("gpu");
    if (!g) throw InputError(file, "cluster.gpu", "missing; expected a catalog name or a spec");
    if (g.IsScalar()) {
        auto gpu = find_gpu(g.Scalar());
        if (!gpu) {
            std::string all;
            for (const auto& n : gpu_names()) all += (all.empty() ? "" : ", ") + n;
            throw InputError(file, "cluster.gpu", "unknown GPU '" + g.Scalar() + "'; known: " + all);
        }
        c.gpu = *gpu;
    } else {
        c.gpu = parse_gpu_node(g, file, "cluster.gpu");
    }
    c.num_gpus = static_cast<int>(s.int_req("num_gpus", 1, kMaxGpus));
    c.gpus_per_node = static_cast<int>(s.int_or("gpus_per_node", std::min(c.num_gpus, 8), 1, 1024));
    // Without an intra_node section the scale-up link is the GPU's own NVLink.
    c.intra_node = read_link(s, "intra_node", Link{c.gpu.nvlink_GBps, 2.0});
    std::optional<Link> single_node;
    if (c.num_gpus <= c.gpus_per_node) single_node = c.intra_node;
    c.inter_node = read_link(s, "inter_node", single_node);
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
    const auto prec = s.choice_opt("precision", {"fp16", "bf16", "fp8"}).value_or("bf16");
    t.precision = prec == "fp16" ? Precision::fp16 : prec == "fp8" ? Precision::fp8 : Precision::bf16;
    t.train_tokens = s.num_or("train_tokens", 0, 0, 1e18);
    const auto attn = s.choice_opt("attention", {"auto", "flash", "unfused"}).value_or("auto");
    t.attention = attn == "unfused" ? AttentionKernel::unfused : AttentionKernel::flash;
    t.attention_auto = attn == "auto";
    t.causal_flops = s.bool_or("causal_flops", false);
    const auto fw = s.choice_opt("framework", {"auto", "megatron-lm", "megatron-core", "fsdp", "deepspeed"})
                        .value_or("auto");
    t.framework_auto = fw == "auto";
    t.framework = fw == "megatron-lm"  ? Framework::megatron_lm
                  : fw == "fsdp"       ? Framework::fsdp
                  : fw == "deepspeed"  ? Framework::deepspeed
                                       : Framework::megatron_core;
    s.finish();
    return t;
}

ParallelPlan read_parallel(YAML::Node node, const std::string& file, int num_gpus, const std::string& arch,
                           Framework fw) {
    if (!node || node.IsNull()) throw InputError(file, "parallel", "missing section");
    YamlSection s(node, file, "parallel");
    ParallelPlan p;
    p.tp = static_cast<int>(s.int_or("tp", 1, 1, kMaxGpus));
    p.pp = static_cast<int>(s.int_or("pp", 1, 1, kMaxGpus));
    p.cp = static_cast<int>(s.int_or("cp", 1, 1, kMaxGpus));
    p.ep = static_cast<int>(s.int_or("ep", 1, 1, kMaxGpus));
    p.vpp = static_cast<int>(s.int_or("vpp", 1, 1, 1024));
    p.zero = static_cast<int>(s.int_or("zero", 0, 0, 3));
    p.sequence_parallel = s.bool_or("sequence_parallel", false);
    const auto rc = s.choice_opt("recompute", {"none", "selective", "full"}).value_or("none");
    p.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective
                                                                       : Recompute::none;
    if (auto rl = s.int_opt("recompute_layers", 0, 100'000)) {
        if (p.recompute != Recompute::full)
            throw InputError(file, "parallel.recompute_layers",
                             "applies to recompute: full (layers of each pipeline stage recomputed); "
                             "recompute is " + std::string(to_string(p.recompute)));
        p.recompute_layers = static_cast<int>(*rl);
    }
    // Default: overlapped, as PyTorch DDP/FSDP, DeepSpeed and Megatron-Core
    // (--overlap-grad-reduce) do; legacy Megatron-LM's local DDP all-reduced
    // the gradients after the backward (megatron/model/distributed.py,
    // allreduce_gradients() called from train_step; overlap arrived with
    // Megatron-Core's distributed data parallel in 2023).
    // (ZeRO-3 under any stack is an FSDP-style engine, which overlaps.)
    p.overlap_grad_reduce = s.bool_or("overlap_grad_reduce", fw != Framework::megatron_lm || p.zero >= 3);
    // Default: on with sequence parallelism on Hopper and newer under
    // Megatron-Core, where Transformer Engine overlaps the SP all-gathers/
    // reduce-scatters with the GEMMs (userbuffers, --tp-comm-overlap; it
    // needs sequence parallelism and Transformer Engine).
    const bool tp_overlap_default = fw == Framework::megatron_core && p.sequence_parallel && p.tp > 1 &&
                                    (arch == "hopper" || arch == "blackwell");
    p.tp_comm_overlap = s.bool_or("tp_comm_overlap", tp_overlap_default);
    p.grad_fp32 = s.bool_or("grad_fp32", true);
    // ZeRO-3 engine (README "ZeRO-3 engine"); absent keys keep the framework's default.
    const auto zero3_key = [&](const char* key) {
        if (s.has(key) && p.zero < 3)
            throw InputError(file, s.key_path(key),
                             fmt::format("applies to zero: 3 (ZeRO-3 / FSDP parameter gathers); zero is {}", p.zero));
        return s.has(key);
    };
    constexpr int64_t kMaxElems = 10'000'000'000'000;  // 1e13 parameters
    if (zero3_key("zero_bucket_params")) p.zero_bucket_params = s.int_req("zero_bucket_params", 0, kMaxElems);
    if (zero3_key("zero_reduce_bucket_params"))
        p.zero_reduce_bucket_params = s.int_req("zero_reduce_bucket_params", 0, kMaxElems);
    if (zero3_key("zero_prefetch")) p.zero_prefetch = static_cast<int>(s.int_req("zero_prefetch", 0, 64));
    if (zero3_key("zero_regather_recompute")) p.zero_regather_recompute = s.bool_or("zero_regather_recompute", false);
    if (zero3_key("zero_max_live_params")) p.zero_max_live_params = s.int_req("zero_max_live_params", 0, kMaxElems);
    const int64_t model_par = static_cast<int64_t>(p.tp) * p.pp * p.cp;
    if (model_par > num_gpus)
        throw InputError(file, "parallel", fmt::format("tp*pp*cp = {} is more than num_gpus {}",
                                                       model_par, num_gpus));
    const int64_t derived = num_gpus / model_par;
    p.dp = static_cast<int>(s.int_or("dp", derived, 1, kMaxGpus));
    s.finish();
    return p;
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

Framework default_framework(const std::string& cited_source, AttentionKernel attention) {
    std::string low;
    for (char ch : cited_source) low += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto has = [&low](const char* w) { return low.find(w) != std::string::npos; };
    if (has("torchtitan") || has("fsdp") || has("llm-foundry") || has("llm foundry")) return Framework::fsdp;
    if (has("megatron-deepspeed") || has("megatron deepspeed")) return Framework::megatron_lm;
    if (has("deepspeed")) return Framework::deepspeed;
    if (has("megatron-core") || has("mcore")) return Framework::megatron_core;
    if (attention == AttentionKernel::unfused) return Framework::megatron_lm;
    return Framework::megatron_core;
}

Job parse_job(const std::string& text, const std::string& source,
              const std::vector<std::string>& overrides) {
    check_text(text, source);
    YAML::Node root = load_yaml(text, source);
    if (!root.IsMap()) throw InputError(source, "", "expected a mapping with sections model, cluster, training, parallel");
    for (const auto& o : overrides) apply_override(root, o);
    YamlSection top(root, source, "");
    Job job;
    job.source = source;
    job.name = top.str_opt("name").value_or(std::filesystem::path(source).stem().string());
    const std::string cited = top.str_opt("source").value_or("");
    top.str_opt("description");
    job.model = read_model(top.raw("model"), source);
    job.cluster = read_cluster(top.raw("cluster"), source);
    job.training = read_training(top.raw("training"), source);
    if (job.training.attention_auto) job.training.attention = default_attention(cited);
    if (job.training.framework_auto) job.training.framework = default_framework(cited, job.training.attention);
    job.plan = read_parallel(top.raw("parallel"), source, job.cluster.num_gpus, job.cluster.gpu.arch,
                             job.training.framework);
    top.finish();
    validate_job(job);
    return job;
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
