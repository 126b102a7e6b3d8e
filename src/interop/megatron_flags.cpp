// Megatron flags that change the cost of a step (megatron_flags.h): the ones
// megatron_import.cpp reads, the ones lostflops knows it does not model, and
// the ones that need the layer-stack model. Names and arities from
// megatron/training/arguments.py and the dataclass-built flags of
// NVIDIA/Megatron-LM d98e8a64 (2026-08); older names from Megatron-LM v2.x /
// v3.0 (2021-22) and core_r0.8-r0.12. The lookup over both tables and the
// "did you mean" distance are here too.
#include "interop/megatron_flags.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <vector>

namespace lostflops::interop {

namespace {

using A = FlagArity;
using R = FlagRole;

const MegatronFlag kFlags[] = {
    // Read: the model's shape.
    {"num-layers", A::one, R::read, ""},
    {"hidden-size", A::one, R::read, ""},
    {"ffn-hidden-size", A::one, R::read, ""},
    {"num-attention-heads", A::one, R::read, ""},
    {"group-query-attention", A::none, R::read, ""},
    {"num-query-groups", A::one, R::read, ""},
    {"kv-channels", A::one, R::read, ""},
    {"seq-length", A::one, R::read, ""},
    {"encoder-seq-length", A::one, R::read, ""},
    {"decoder-seq-length", A::one, R::read, ""},
    {"vocab-size", A::one, R::read, ""},
    {"padded-vocab-size", A::one, R::read, ""},
    {"make-vocab-size-divisible-by", A::one, R::read, ""},
    {"tokenizer-type", A::one, R::read, ""},
    {"tokenizer-model", A::one, R::read, ""},
    {"swiglu", A::none, R::read, ""},
    {"untie-embeddings-and-output-weights", A::none, R::read, ""},
    {"num-experts", A::one, R::read, ""},
    {"moe-router-topk", A::one, R::read, ""},
    {"moe-ffn-hidden-size", A::one, R::read, ""},
    // Dropout after each block: its masks and kernels (Model::block_dropout).
    {"hidden-dropout", A::one, R::read, ""},
    // Rotary's share of each head (Model::rotary_share).
    {"position-embedding-type", A::one, R::read, ""},
    {"use-rotary-position-embeddings", A::none, R::read, ""},
    {"rotary-percent", A::one, R::read, ""},
    // Read: training.
    {"micro-batch-size", A::one, R::read, ""},
    {"global-batch-size", A::one, R::read, ""},
    {"bf16", A::none, R::read, ""},
    {"fp16", A::none, R::read, ""},
    {"fp8-format", A::one, R::read, ""},
    {"train-samples", A::one, R::read, ""},
    {"train-iters", A::one, R::read, ""},
    {"use-flash-attn", A::none, R::read, ""},
    {"attention-backend", A::one, R::read, ""},
    {"use-mcore-models", A::none, R::read, ""},
    {"use-legacy-models", A::none, R::read, ""},
    {"transformer-impl", A::one, R::read, ""},
    {"grad-reduce-in-bf16", A::none, R::read, ""},
    {"accumulate-allreduce-grads-in-fp32", A::none, R::read, ""},
    {"optimizer", A::one, R::read, ""},
    {"num-workers", A::one, R::read, ""},
    // Read: the parallel plan.
    {"tensor-model-parallel-size", A::one, R::read, ""},
    {"pipeline-model-parallel-size", A::one, R::read, ""},
    {"num-layers-per-virtual-pipeline-stage", A::one, R::read, ""},
    {"virtual-pipeline-model-parallel-size", A::one, R::read, ""},
    {"num-virtual-stages-per-pipeline-rank", A::one, R::read, ""},
    {"context-parallel-size", A::one, R::read, ""},
    {"expert-model-parallel-size", A::one, R::read, ""},
    {"sequence-parallel", A::none, R::read, ""},
    {"recompute-granularity", A::one, R::read, ""},
    {"recompute-method", A::one, R::read, ""},
    {"recompute-num-layers", A::one, R::read, ""},
    {"recompute-activations", A::none, R::read, ""},
    {"checkpoint-activations", A::none, R::read, ""},
    {"activations-checkpoint-method", A::one, R::read, ""},
    {"activations-checkpoint-num-layers", A::one, R::read, ""},
    {"checkpoint-num-layers", A::one, R::read, ""},
    {"use-distributed-optimizer", A::none, R::read, ""},
    {"use-torch-fsdp2", A::none, R::read, ""},
    {"use-megatron-fsdp", A::none, R::read, ""},
    {"data-parallel-sharding-strategy", A::one, R::read, ""},
    {"overlap-grad-reduce", A::none, R::read, ""},
    {"tp-comm-overlap", A::none, R::read, ""},
    {"DDP-impl", A::one, R::read, ""},

    // Read: layers of several kinds (megatron_layers.cpp).
    {"multi-latent-attention", A::none, R::read, ""},
    {"q-lora-rank", A::one, R::read, ""},
    {"kv-lora-rank", A::one, R::read, ""},
    {"qk-head-dim", A::one, R::read, ""},
    {"qk-pos-emb-head-dim", A::one, R::read, ""},
    {"v-head-dim", A::one, R::read, ""},
    {"moe-shared-expert-intermediate-size", A::one, R::read, ""},
    {"moe-router-enable-expert-bias", A::none, R::read, ""},
    {"moe-layer-freq", A::one, R::read, ""},
    {"quick-geglu", A::none, R::read, ""},
    {"squared-relu", A::none, R::read, ""},
    {"softmax-type", A::one, R::read, ""},
    {"window-size", A::one, R::read, ""},
    {"window-attn-skip-freq", A::one, R::read, ""},
    {"hybrid-override-pattern", A::one, R::read, ""},
    {"hybrid-layer-pattern", A::one, R::read, ""},
    {"mamba-head-dim", A::one, R::read, ""},
    {"mamba-num-groups", A::one, R::read, ""},
    {"mamba-num-heads", A::one, R::read, ""},
    {"mamba-state-dim", A::one, R::read, ""},
    {"experimental-attention-variant", A::one, R::read, ""},
    {"linear-attention-freq", A::one, R::read, ""},
    {"linear-conv-kernel-dim", A::one, R::read, ""},
    {"linear-key-head-dim", A::one, R::read, ""},
    {"linear-num-key-heads", A::one, R::read, ""},
    {"linear-num-value-heads", A::one, R::read, ""},
    {"linear-value-head-dim", A::one, R::read, ""},
    {"mtp-num-layers", A::one, R::read, ""},
    {"pipeline-model-parallel-layout", A::one, R::read, ""},
    {"decoder-first-pipeline-num-layers", A::one, R::read, ""},
    {"decoder-last-pipeline-num-layers", A::one, R::read, ""},

    // Need per-stage layer counts or kinds lostflops' model does not have yet.
    {"moe-shared-expert-gate", A::none, R::layer_stack, "a gate on the shared experts"},
    {"attention-output-gate", A::none, R::layer_stack, "a gate on the attention output"},
    {"dsa-indexer-head-dim", A::one, R::layer_stack, "DeepSeek sparse attention"},
    {"dsa-indexer-n-heads", A::one, R::layer_stack, "DeepSeek sparse attention"},
    {"dsa-indexer-topk", A::one, R::layer_stack, "DeepSeek sparse attention"},
    {"mtp-use-repeated-layer", A::none, R::layer_stack, "one multi-token-prediction layer repeated"},
    {"moe-latent-size", A::one, R::not_modelled, "experts on a latent projection of the hidden state"},

    // Change the cost, not modelled.
    {"overlap-param-gather", A::none, R::not_modelled, "overlaps the distributed optimizer's parameter all-gather with the next forward; costed as overlapped like the gradient reduction"},
    {"align-param-gather", A::none, R::not_modelled, "launches the parameter all-gathers of all pipeline chunks together"},
    {"overlap-param-gather-with-optimizer-step", A::none, R::not_modelled, "overlaps the parameter all-gather with the optimizer step"},
    {"fp8-param-gather", A::none, R::not_modelled, "fp8 parameter copies gathered by the distributed optimizer (half the bytes of bf16); costed as bf16"},
    {"fp8-recipe", A::one, R::read, ""},
    {"first-last-layers-bf16", A::none, R::not_modelled, "first and last layers in bf16 under fp8"},
    {"num-layers-at-start-in-bf16", A::one, R::not_modelled, "first layers in bf16 under fp8"},
    {"num-layers-at-end-in-bf16", A::one, R::not_modelled, "last layers in bf16 under fp8"},
    {"reuse-grad-buf-for-mxfp8-param-ag", A::none, R::not_modelled, "the gradient buffer reused for MXFP8 parameter gathers (memory)"},
    {"disable-bf16-reduced-precision-matmul", A::none, R::not_modelled, "bf16 GEMMs without reduced-precision reductions"},
    {"deterministic-mode", A::none, R::not_modelled, "deterministic kernels (slower attention backward, NCCL algorithm fixed)"},
    {"no-gradient-accumulation-fusion", A::none, R::not_modelled, "separate weight-gradient accumulation kernels"},
    {"no-masked-softmax-fusion", A::none, R::not_modelled, "unfused softmax kernels"},
    {"no-bias-gelu-fusion", A::none, R::not_modelled, "unfused bias + GELU kernels"},
    {"no-bias-dropout-fusion", A::none, R::not_modelled, "unfused bias + dropout kernels"},
    {"no-bias-swiglu-fusion", A::none, R::not_modelled, "unfused bias + SwiGLU kernels"},
    {"no-rope-fusion", A::none, R::not_modelled, "unfused rotary embedding kernels"},
    {"no-persist-layer-norm", A::none, R::not_modelled, "the non-persistent LayerNorm kernel"},
    {"disable-bias-linear", A::none, R::not_modelled, "linear layers without biases (a few element-wise bytes less)"},
    {"add-qkv-bias", A::none, R::not_modelled, "biases on the QKV projection"},
    {"qk-layernorm", A::none, R::read, ""},
    {"use-fused-weighted-squared-relu", A::none, R::not_modelled, "fused squared-ReLU kernels"},
    {"use-transformer-engine-op-fuser", A::none, R::not_modelled, "Transformer Engine's operation fuser"},
    {"cross-entropy-loss-fusion", A::none, R::not_modelled, "fused cross-entropy kernel"},
    {"cross-entropy-fusion-impl", A::one, R::not_modelled, "fused cross-entropy kernel"},
    {"moe-grouped-gemm", A::none, R::not_modelled, "one grouped GEMM for the local experts"},
    {"moe-token-dispatcher-type", A::one, R::read, ""},
    {"moe-enable-deepep", A::none, R::ignored, "the flex dispatcher's DeepEP backend: --moe-token-dispatcher-type flex sets parallel.moe_dispatcher deepep"},
    {"moe-expert-capacity-factor", A::one, R::read, ""},
    {"moe-pad-expert-input-to-capacity", A::none, R::read, ""},
    {"moe-flex-dispatcher-backend", A::one, R::not_modelled, "the flex dispatcher's communication library (DeepEP, HybridEP)"},
    {"moe-flex-dispatcher-num-sms", A::one, R::not_modelled, "SMs given to the dispatcher"},
    {"moe-hybridep-num-sms", A::one, R::not_modelled, "SMs given to HybridEP"},
    {"moe-router-load-balancing-type", A::many, R::not_modelled, "router balancing; the model assumes balanced experts"},
    {"moe-router-num-groups", A::one, R::not_modelled, "group-limited routing (fewer nodes per token)"},
    {"moe-router-group-topk", A::one, R::not_modelled, "group-limited routing (fewer nodes per token)"},
    {"moe-permute-fusion", A::none, R::not_modelled, "fused token permutation kernels"},
    {"moe-router-fusion", A::none, R::not_modelled, "fused router kernels"},
    {"moe-shared-expert-overlap", A::none, R::not_modelled, "shared experts overlapped with the dispatch"},
    {"overlap-moe-expert-parallel-comm", A::none, R::read, ""},
    {"moe-layer-recompute", A::none, R::not_modelled, "the MoE layer recomputed"},
    {"moe-router-padding-for-quantization", A::none, R::not_modelled, "routing map padded for fp8"},
    {"expert-tensor-parallel-size", A::one, R::read, ""},
    {"account-for-embedding-in-pipeline-split", A::none, R::not_modelled, "the embedding counted as a layer in the pipeline split"},
    {"account-for-loss-in-pipeline-split", A::none, R::not_modelled, "the loss counted as a layer in the pipeline split"},
    {"microbatch-group-size-per-virtual-pipeline-stage", A::one, R::not_modelled, "the interleaved schedule's micro-batch groups"},
    {"overlap-p2p-communication-warmup-flush", A::none, R::not_modelled, "pipeline sends overlapped in warm-up and flush"},
    {"defer-embedding-wgrad-compute", A::none, R::not_modelled, "the output layer's weight gradient deferred into the pipeline bubble"},
    {"delay-wgrad-compute", A::none, R::not_modelled, "weight gradients delayed to overlap communication"},
    {"wgrad-deferral-limit", A::one, R::not_modelled, "weight gradients deferred into the pipeline bubble"},
    {"tp-comm-overlap-cfg", A::one, R::not_modelled, "Transformer Engine userbuffers settings"},
    {"use-nccl-ub", A::none, R::not_modelled, "NCCL user buffers (zero-copy collectives)"},
    {"high-priority-stream-groups", A::many, R::not_modelled, "collectives on high-priority streams"},
    {"cp-comm-type", A::many, R::read, ""},
    {"hierarchical-context-parallel-sizes", A::many, R::not_modelled, "hierarchical context parallelism"},
    {"use-tp-pp-dp-mapping", A::none, R::not_modelled, "ranks ordered tp-pp-dp (not tp-cp-ep-dp-pp): other groups cross nodes"},
    {"num-distributed-optimizer-instances", A::one, R::not_modelled, "the optimizer sharded over part of the data-parallel group"},
    {"outer-dp-sharding-strategy", A::one, R::not_modelled, "hybrid sharded data parallelism (HSDP)"},
    {"ddp-num-buckets", A::one, R::not_modelled, "gradient bucket count"},
    {"ddp-bucket-size", A::one, R::not_modelled, "gradient bucket size"},
    {"ddp-pad-buckets-for-high-nccl-busbw", A::none, R::not_modelled, "gradient buckets padded for NCCL bandwidth"},
    {"use-precision-aware-optimizer", A::none, R::not_modelled, "optimizer state in lower precision"},
    {"exp-avg-dtype", A::one, R::not_modelled, "Adam's first moment precision"},
    {"exp-avg-sq-dtype", A::one, R::not_modelled, "Adam's second moment precision"},
    {"main-grads-dtype", A::one, R::not_modelled, "main gradient precision"},
    {"main-params-dtype", A::one, R::not_modelled, "main parameter precision"},
    {"optimizer-cpu-offload", A::none, R::not_modelled, "optimizer state and step on the host"},
    {"megatron-fsdp-grad-comm-dtype", A::one, R::not_modelled, "Megatron-FSDP's gradient communication precision"},
    {"megatron-fsdp-main-grads-dtype", A::one, R::not_modelled, "Megatron-FSDP's main gradient precision"},
    {"megatron-fsdp-main-params-dtype", A::one, R::not_modelled, "Megatron-FSDP's main parameter precision"},
    {"megatron-fsdp-max-pool-double-buffer", A::none, R::not_modelled, "Megatron-FSDP's double-buffered gathers"},
    {"fsdp-double-buffer", A::none, R::not_modelled, "Megatron-FSDP's double-buffered gathers"},
    {"fsdp-manual-registration", A::none, R::not_modelled, "FSDP buffers registered with NCCL"},
    {"fsdp-db-use-persist-buf-on-alloc-fail", A::none, R::not_modelled, "FSDP double buffers kept when allocation fails"},
    {"cpu-offloading", A::none, R::not_modelled, "activations offloaded to host memory"},
    {"fine-grained-activation-offloading", A::none, R::not_modelled, "activations offloaded to host memory"},
    {"offload-modules", A::many, R::not_modelled, "activations of these modules offloaded to host memory"},
    {"recompute-modules", A::many, R::read, ""},
    {"empty-unused-memory-level", A::one, R::not_modelled, "torch.cuda.empty_cache calls each step"},
    {"manual-gc", A::none, R::not_modelled, "Python garbage collection at chosen steps (host time)"},
    {"cuda-graph-impl", A::one, R::not_modelled, "CUDA graphs (no kernel launch overhead)"},
    {"cuda-graph-modules", A::many, R::not_modelled, "CUDA graphs (no kernel launch overhead)"},
    {"cuda-graph-scope", A::many, R::not_modelled, "CUDA graphs (no kernel launch overhead)"},
    {"enable-cuda-graph", A::none, R::not_modelled, "CUDA graphs (no kernel launch overhead)"},
    {"external-cuda-graph", A::none, R::not_modelled, "CUDA graphs (no kernel launch overhead)"},
    {"step-batch-size-schedule", A::one, R::not_modelled, "a batch size that grows during the run; the step is costed at --global-batch-size"},
    {"rampup-batch-size", A::many, R::not_modelled, "a batch size that grows during the run; the step is costed at --global-batch-size"},
    {"spec", A::many, R::not_modelled, "another layer implementation module"},
    {"fp8", A::one, R::not_modelled, "older name of --fp8-format; give --fp8-format"},
    {"perform-rl-step", A::none, R::not_modelled, "reinforcement-learning steps (generation and training)"},
    {"encoder-num-layers", A::one, R::not_modelled, "an encoder stack (encoder-decoder models)"},
    {"decoder-num-layers", A::one, R::not_modelled, "a decoder stack of another depth (encoder-decoder models)"},
};

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

const std::unordered_map<std::string, const MegatronFlag*>& index() {
    static const auto* map = [] {
        auto* m = new std::unordered_map<std::string, const MegatronFlag*>();
        for (const FlagTable t : {megatron_cost_flags(), megatron_nocost_flags()})
            for (const MegatronFlag* f = t.begin; f != t.end; ++f) m->emplace(f->name, f);
        return m;
    }();
    return *map;
}

}  // namespace

FlagTable megatron_cost_flags() { return {std::begin(kFlags), std::end(kFlags)}; }

const MegatronFlag* find_megatron_flag(const std::string& name) {
    const auto& m = index();
    const auto it = m.find(name);
    return it == m.end() ? nullptr : it->second;
}

std::string nearest_megatron_flag(const std::string& name) {
    std::string best;
    size_t best_d = std::max<size_t>(2, name.size() / 5) + 1;
    for (const auto& [k, f] : index()) {
        const size_t d = edit_distance(name, k);
        if (d < best_d || (d == best_d && !best.empty() && k < best)) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

}  // namespace lostflops::interop
