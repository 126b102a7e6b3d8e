// MaxText's tables (maxtext_keys.h). Model presets copied field by field from
// AI-Hypercomputer/maxtext src/maxtext/configs/models/*.yml @e591f30 (2026);
// the mesh axes from base.yml's ici_*/dcn_*_parallelism keys; slice types and
// topologies from the Google Cloud TPU pages: "TPU v4" and "TPU v5p" (the
// number in the type counts TensorCores, two per chip: v4-128 and v5p-128
// are 64 chips; default topologies 2x2x1 ... 4x4x4 (64 chips), 4x4x8, 4x8x8,
// 8x8x8, ...), "TPU v5e" and "TPU v6e" (the number counts chips, one
// TensorCore each; topologies 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16).
#include "interop/maxtext_keys.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace lostflops::interop {

const std::vector<MaxTextModel>& maxtext_models() {
    static const std::vector<MaxTextModel> table = {
        {"llama2-7b", {{"base_emb_dim", "4096"}, {"base_num_query_heads", "32"}, {"base_num_kv_heads", "32"},
                       {"base_mlp_dim", "11008"}, {"base_num_decoder_layers", "32"}, {"head_dim", "128"},
                       {"vocab_size", "32000"}, {"logits_via_embedding", "false"}}},
        {"llama2-13b", {{"base_emb_dim", "5120"}, {"base_num_query_heads", "40"}, {"base_num_kv_heads", "40"},
                        {"base_mlp_dim", "13824"}, {"base_num_decoder_layers", "40"}, {"head_dim", "128"},
                        {"vocab_size", "32000"}, {"logits_via_embedding", "false"}}},
        {"llama2-70b", {{"base_emb_dim", "8192"}, {"base_num_query_heads", "64"}, {"base_num_kv_heads", "8"},
                        {"base_mlp_dim", "28672"}, {"base_num_decoder_layers", "80"}, {"head_dim", "128"},
                        {"vocab_size", "32000"}, {"logits_via_embedding", "false"}}},
        {"llama3-8b", {{"base_emb_dim", "4096"}, {"base_num_query_heads", "32"}, {"base_num_kv_heads", "8"},
                       {"base_mlp_dim", "14336"}, {"base_num_decoder_layers", "32"}, {"head_dim", "128"},
                       {"vocab_size", "128256"}, {"logits_via_embedding", "false"}}},
        {"llama3-70b", {{"base_emb_dim", "8192"}, {"base_num_query_heads", "64"}, {"base_num_kv_heads", "8"},
                        {"base_mlp_dim", "28672"}, {"base_num_decoder_layers", "80"}, {"head_dim", "128"},
                        {"vocab_size", "128256"}, {"logits_via_embedding", "false"}}},
        {"llama3.1-405b", {{"base_emb_dim", "16384"}, {"base_num_query_heads", "128"}, {"base_num_kv_heads", "8"},
                           {"base_mlp_dim", "53248"}, {"base_num_decoder_layers", "126"}, {"head_dim", "128"},
                           {"vocab_size", "128256"}, {"logits_via_embedding", "false"}}},
        {"mistral-7b", {{"base_emb_dim", "4096"}, {"base_num_query_heads", "32"}, {"base_num_kv_heads", "8"},
                        {"base_mlp_dim", "14336"}, {"base_num_decoder_layers", "32"}, {"head_dim", "128"},
                        {"vocab_size", "32000"}, {"logits_via_embedding", "false"}}},
        {"mixtral-8x7b", {{"base_emb_dim", "4096"}, {"base_num_query_heads", "32"}, {"base_num_kv_heads", "8"},
                          {"base_mlp_dim", "14336"}, {"base_num_decoder_layers", "32"}, {"head_dim", "128"},
                          {"vocab_size", "32000"}, {"logits_via_embedding", "false"}, {"num_experts", "8"},
                          {"num_experts_per_tok", "2"}}},
        {"mixtral-8x22b", {{"base_emb_dim", "6144"}, {"base_num_query_heads", "48"}, {"base_num_kv_heads", "8"},
                           {"base_mlp_dim", "16384"}, {"base_num_decoder_layers", "56"}, {"head_dim", "128"},
                           {"vocab_size", "32768"}, {"logits_via_embedding", "false"}, {"num_experts", "8"},
                           {"num_experts_per_tok", "2"}}},
    };
    return table;
}

const MaxTextModel* find_maxtext_model(std::string_view name) {
    for (const auto& m : maxtext_models())
        if (name == m.name) return &m;
    return nullptr;
}

std::vector<std::string> maxtext_model_names() {
    std::vector<std::string> out;
    for (const auto& m : maxtext_models()) out.emplace_back(m.name);
    return out;
}

const std::vector<MeshAxis>& maxtext_mesh_axes() {
    // base.yml: data, fsdp, fsdp_transpose, sequence, context,
    // context_autoregressive, tensor, tensor_transpose, tensor_sequence,
    // autoregressive, expert, pipeline. Sequence and context both split the
    // sequence (context parallelism, ring or all-gather attention).
    static const std::vector<MeshAxis> table = {
        {"data", "dp"},          {"fsdp", "fsdp"},         {"fsdp_transpose", ""}, {"sequence", "cp"},
        {"context", "cp"},       {"context_autoregressive", ""}, {"tensor", "tp"}, {"tensor_transpose", ""},
        {"tensor_sequence", ""}, {"autoregressive", ""},   {"expert", "ep"},      {"pipeline", "pp"},
    };
    return table;
}

namespace {

struct NoCost {
    const char* key;
    bool prefix;
    const char* why;
};

constexpr NoCost kNoCost[] = {
    {"run_name", false, "a name"},
    {"base_output_directory", false, "a path"},
    {"model_name", false, "read: the model preset"},
    {"steps", false, "the number of steps, not a step's cost"},
    {"log_period", false, "logging"},
    {"enable_checkpointing", false, "checkpoints are costed by `goodput`, not by a step"},
    {"async_checkpointing", false, "checkpoints are costed by `goodput`"},
    {"checkpoint_", true, "checkpoints are costed by `goodput`"},
    {"load_", true, "what to restore from"},
    {"save_", true, "what to save"},
    {"dataset_", true, "the data set (synthetic or real data cost the same step)"},
    {"eval_", true, "evaluation, not a training step"},
    {"tokenizer_", true, "the tokenizer"},
    {"hf_", true, "Hugging Face data or checkpoint settings"},
    {"data_shuffle_seed", false, "a seed"},
    {"init_weights_seed", false, "a seed"},
    {"reuse_example_batch", false, "the input pipeline (one batch reused)"},
    {"enable_profiler", false, "profiling"},
    {"profiler", false, "profiling"},
    {"profiler_", true, "profiling"},
    {"skip_first_n_steps_for_profiler", false, "profiling"},
    {"gcs_metrics", false, "metrics upload"},
    {"metrics_", true, "metrics"},
    {"enable_tensorboard", false, "metrics"},
    {"learning_rate", false, "an optimizer hyper-parameter"},
    {"learning_rate_", true, "an optimizer hyper-parameter"},
    {"warmup_steps_fraction", false, "the learning-rate schedule"},
    {"cosine_learning_rate_final_fraction", false, "the learning-rate schedule"},
    {"adam_", true, "an optimizer hyper-parameter (Adam's state is 2 fp32 moments whatever its betas)"},
    {"gradient_clipping_threshold", false, "an optimizer hyper-parameter"},
    {"normalization_layer_epsilon", false, "a constant of the norm"},
    {"rope_max_timescale", false, "a constant of the rotary embedding"},
    {"rope_min_timescale", false, "a constant of the rotary embedding"},
    {"enable_dropout", false, "dropout's mask is elementwise work XLA fuses"},
    {"dropout_rate", false, "dropout's mask is elementwise work XLA fuses"},
    {"logical_axis_rules", false, "how MaxText names the mesh axes; the *_parallelism keys say the mesh"},
    {"use_iota_embed", false, "how the embedding lookup is written"},
    {"fused_qkv", false, "one matmul instead of three, the same FLOPs; no launches on a TPU"},
    {"fused_mlp", false, "one matmul instead of two, the same FLOPs; no launches on a TPU"},
    {"scan_layers", false, "jax.lax.scan over layers: compile time, not a step's cost"},
    {"decoder_block", false, "read: a llama-style block is priced (llama2, mistral, mixtral)"},
    {"max_prefill_predict_length", false, "decoding"},
    {"prompt", false, "decoding"},
    {"autoregressive_decode_assert", false, "decoding"},
    {"inference_", true, "decoding"},
    {"decode_", true, "decoding"},
    {"jax_cache_dir", false, "a path"},
    {"compile_topology", false, "ahead-of-time compilation target"},
    {"compile_topology_num_slices", false, "ahead-of-time compilation target"},
    {"opt_type", false, "read"},
};

}  // namespace

const char* maxtext_nocost_reason(std::string_view key) {
    for (const NoCost& n : kNoCost)
        if (n.prefix ? key.substr(0, std::string_view(n.key).size()) == n.key : key == n.key) return n.why;
    return nullptr;
}

namespace {

// Chips per axis of a slice of `chips` (a power of two): the default
// topologies of the pages above, growing the smallest axis first.
std::vector<int> torus_of(int chips, int axes) {
    std::vector<int> t(axes, 1);
    while (true) {
        int product = 1;
        for (int a : t) product *= a;
        if (product >= chips) break;
        // 3D: 2x2x1 first (the pages' v4-8 / v5p-8), then double the smallest
        // axis, the earliest of equals; 2D the same.
        auto it = std::min_element(t.begin(), t.end());
        *it *= 2;
    }
    std::sort(t.begin(), t.end());
    return t;
}

}  // namespace

std::optional<TpuSlice> parse_tpu_slice(const std::string& type, std::string& why) {
    struct Kind {
        const char* prefix;
        const char* gpu;
        int cores_per_chip;
        int axes;
    };
    constexpr Kind kKinds[] = {{"v4-", "tpu-v4", 2, 3},         {"v5p-", "tpu-v5p", 2, 3},
                               {"v5e-", "tpu-v5e", 1, 2},       {"v5litepod-", "tpu-v5e", 1, 2},
                               {"v6e-", "tpu-v6e", 1, 2},
                               // Ironwood: accelerator type tpu7x-N (pytorch/xla PR #9586's
                               // pattern), N TensorCores as on v5p ("Each TPU7x chip contains two
                               // TensorCores", Google Cloud "TPU7x (Ironwood)" page; ASSUMPTION
                               // that the type counts them), 3D torus.
                               {"tpu7x-", "tpu7x", 2, 3}};
    for (const Kind& k : kKinds) {
        const std::string_view p = k.prefix;
        if (type.compare(0, p.size(), p) != 0) continue;
        int64_t n = 0;
        const char* b = type.data() + p.size();
        const char* e = type.data() + type.size();
        const auto r = std::from_chars(b, e, n);
        // At most 2^20: a hundred times the largest pod (a TPU v5p pod has
        // 8,960 chips, Google Cloud "TPU v5p" page); the job's GPU bound
        // (1,000,000) applies to chips x slices after.
        constexpr int64_t kMaxCount = int64_t{1} << 20;
        if (r.ec == std::errc::result_out_of_range || (r.ec == std::errc{} && r.ptr == e && n > kMaxCount)) {
            why = "'" + std::string(b, e) + "' after '" + std::string(p) + "': at most " + std::to_string(kMaxCount) +
                  " (2^20)";
            return std::nullopt;
        }
        if (r.ec != std::errc{} || r.ptr != e || n < 1 || (n & (n - 1)) != 0) {
            why = "expected a power of two after '" + std::string(p) + "', got '" + std::string(b, e) + "'";
            return std::nullopt;
        }
        if (n % k.cores_per_chip != 0) {
            why = "a " + std::string(p.substr(0, p.size() - 1)) + " slice counts TensorCores, two per chip: expected an even number";
            return std::nullopt;
        }
        TpuSlice s;
        s.gpu = k.gpu;
        s.chips = static_cast<int>(n / k.cores_per_chip);
        if (s.chips >= 2) s.torus = torus_of(s.chips, s.chips >= 8 || k.axes == 2 ? k.axes : 2);
        return s;
    }
    why = "expected v4-N, v5p-N, tpu7x-N (TensorCores), v5e-N, v5litepod-N or v6e-N (chips)";
    return std::nullopt;
}

}  // namespace lostflops::interop
