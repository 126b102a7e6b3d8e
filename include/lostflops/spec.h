// The validated description of one training job: model, cluster, training
// settings and parallel plan. Plain value types; a Job that came out of
// load_job() (job.h) has passed every check in job/validate.cpp, so the rest of
// the library may assume the preconditions stated here.
//
// Units are in the names: *_bytes, *_s, *_us, *_GBps (1e9 bytes per second,
// per GPU per direction), *_tflops (1e12 FLOP/s).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lostflops/model.h"

namespace lostflops {

// fp32: no mixed precision (Megatron-LM without --bf16 / --fp16): 4-byte
// weights, gradients and activations, Adam's fp32 moments and no master
// copy; its GEMMs run at the TF32 tensor-core peak (Gpu::peak_tf32_tflops,
// the reason in src/job/gpu_parse.cpp).
enum class Precision { fp16, bf16, fp8, fp32 };
// GEMM operand formats a device profile prices separately
// (data/calibration/gemm.csv): bf16 (and fp16), fp8 with one scale per tensor
// (Transformer Engine delayed / current scaling, torchao tensorwise), per row
// and column (torchao rowwise), per 128x128 weight block and 1x128 activation
// tile (DeepSeek-V3, DeepGEMM), and OCP MXFP8 (32-element blocks, Blackwell).
enum class GemmDtype { bf16, fp8_tensor, fp8_row, fp8_block, mxfp8 };
inline constexpr int kGemmDtypeCount = 5;

// How fp8 training scales its GEMM operands (training.fp8_recipe; Megatron-Core
// --fp8-recipe, torchtitan float8.recipe_name): the GEMM format it runs
// (cost/device_time.cpp) and the casts before each GEMM
// (workload/layer_gemms.cpp add_fp8_casts).
//   delayed     one scale per tensor from the amax history (Transformer
//               Engine's DelayedScaling, Megatron-Core's default): one cast
//               pass; a norm writes its fp8 output itself
//   tensorwise  one scale per tensor from this tensor's amax (TE
//               Float8CurrentScaling, torchao's tensorwise dynamic scaling):
//               an amax pass before each cast; the norm writes 16-bit
//   rowwise     one scale per row (torchao rowwise): as tensorwise, per row
//   blockwise   1x128 activation tiles and 128x128 weight blocks (TE
//               Float8BlockScaling, DeepSeek-V3): one pass; the norm writes 16-bit
//   mxfp8       OCP MXFP8, 32-element blocks (Blackwell): one pass; the norm writes 16-bit
enum class Fp8Recipe { delayed, tensorwise, rowwise, blockwise, mxfp8 };
// Bytes of one element of the tensors a job keeps in its training precision:
// weights, activations, pipeline and tensor-parallel traffic (fp8 training
// keeps these 16-bit: only GEMM operands are fp8).
constexpr double tensor_bytes(Precision p) { return p == Precision::fp32 ? 4.0 : 2.0; }
enum class Recompute { none, selective, full };
// Megatron-Core's selective-recompute modules (--recompute-modules;
// megatron/core/transformer/transformer_config.py recompute_modules), one
// bit each in ParallelPlan::recompute_modules. Order = the bit.
enum class RecomputeModule { core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts };
inline constexpr int kRecomputeModules = 7;
enum class AttentionKernel { flash, unfused };  // unfused = Megatron 2021 softmax path
// The training stack: selects kernel fusion, host (Python) work per layer and
// the ZeRO-3 / FSDP engine's collective pattern (docs/job-file.md "Frameworks").
//   megatron_lm        Megatron-LM before Megatron-Core (apex/jit fused kernels), also Megatron-DeepSpeed
//   megatron_core      Megatron-Core + Transformer Engine (2023 on)
//   fsdp               PyTorch FSDP / FSDP2 eager (torchtitan, llm-foundry)
//   deepspeed          DeepSpeed ZeRO on an eager PyTorch model
//   hf                 a Hugging Face transformers model in eager PyTorch, one
//                      process per GPU: fp32 weights under bf16 autocast
//                      (zero 0; DDP across GPUs), or FSDP2 fully_shard with
//                      bf16 compute (zero 3); no tensor, pipeline, context or
//                      expert parallelism (the H200 recipes,
//                      shared/reference/h200/README.md)
enum class Framework { megatron_lm, megatron_core, fsdp, deepspeed, hf };
inline constexpr int kFrameworkCount = 5;
// How the optimizer's step runs over the parameters (training.optimizer_kernel;
// estimate/memory.cpp): fused (one kernel over chunks of every tensor: Apex /
// Transformer Engine FusedAdam, torch.optim.AdamW(fused=True)) or foreach
// (torch.optim.AdamW's default on CUDA, torch/optim/adam.py
// _multi_tensor_adam: torch._foreach_sqrt(exp_avg_sqs) makes a temporary the
// size of the optimizer's fp32 parameters before the update).
enum class OptimizerKernel { fused, foreach };
// Adam's state per parameter beside the 16-bit weights (training.optimizer;
// estimate/memory.cpp). NeMo 1.x uses Apex DistributedFusedAdam and picks
// the state from the optimizer dtype (megatron_base_model.py
// setup_optimization, NeMo git 9c5c5e9709: an fp32 optimizer over a bf16
// model stores remainders, a bf16 one stores no master weights):
//   adam                   fp32 master weights, m and v: 12 bytes (Megatron-LM's
//                          distributed optimizer, DeepSpeed ZeRO, NeMo 2.x; FSDP2's
//                          fp32 shards are the master weights)
//   adam_param_remainders  fp32 m and v and the low 16 bits of each fp32 master
//                          weight, rebuilt with the bf16 weight: 10 bytes (Apex
//                          store_param_remainders)
//   adam_bf16              m and v in bf16, the bf16 weights updated in place, no
//                          master copy: 4 bytes (Apex with dtype bf16)
//   adam_bf16_moments      fp32 master weights, m and v in bf16: 8 bytes
//                          (Megatron-Core --use-precision-aware-optimizer
//                          --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16;
//                          DeepSeek-V3 technical report sec. 3.3.3,
//                          "Low-Precision Optimizer States")
enum class Optimizer { adam, adam_param_remainders, adam_bf16, adam_bf16_moments };
// How tokens reach their experts (Megatron-Core --moe-token-dispatcher-type;
// docs/job-file-parallel.md "Expert parallelism"):
//   alltoall   each token copy sent to its expert's rank (MoEAlltoAllTokenDispatcher)
//   allgather  every rank gathers the tokens of the expert group and keeps its
//              experts' (MoEAllGatherTokenDispatcher)
//   deepep     DeepEP's kernels (Megatron's "flex" dispatcher): one copy per
//              destination node over the network, forwarded over NVLink inside
//              it, tokens limited to moe_max_nodes nodes (DeepSeek-V3 sec. 3.2.2)
enum class MoeDispatcher { alltoall, allgather, deepep };
// How context-parallel attention exchanges keys and values
// (parallel.cp_comm_type; Megatron-Core --cp-comm-type, Transformer Engine
// cp_comm_type; estimate/cp_attention.h costs each):
//   p2p        the ring: K/V blocks passed to the next rank while the
//              current block is computed (TE AttnFuncWithCPAndKVP2P)
//   allgather  K/V all-gathered before attention, dK/dV reduce-scattered
//              after (TE AttnFuncWithCPAndKVAllGather; PyTorch's
//              context_parallel rotate method "allgather", torchtitan's default)
//   a2a        Ulysses: all-to-all of Q, K, V from sequence to head split
//              and of the output back (TE AttnFuncWithCPAndQKVOA2A,
//              DeepSpeed-Ulysses DistributedAttention)
enum class CpCommType { p2p, allgather, a2a };

struct Gpu {
    std::string name;
    std::string arch;             // a row of lostflops/accelerator.h: "ampere", "hopper", "cdna3", "tpu_v5e"...
    double peak_fp16_tflops = 0;  // dense tensor-core peak
    double peak_bf16_tflops = 0;
    double peak_fp8_tflops = 0;   // 0 when the GPU has no fp8 tensor cores
    double peak_tf32_tflops = 0;  // 0 when no TF32 figure is known: fp32 jobs are refused
    // CUDA-core (non-tensor) fp32 peak: PyTorch's fp32 matmuls when TF32 is
    // off, its default (transformers' experts under autocast); 0: not known.
    double peak_fp32_tflops = 0;
    int64_t memory_bytes = 0;
    // What the driver reports as the device's memory (torch.cuda.mem_get_info
    // total, "total capacity" in PyTorch's out-of-memory message), when the
    // catalog cites a measurement; 0: estimate/memory.cpp derives it.
    int64_t memory_total_bytes = 0;
    double hbm_GBps = 0;          // memory bandwidth
    double nvlink_GBps = 0;       // scale-up link, per GPU per direction
    int sm_count = 0;             // streaming multiprocessors (CUs on AMD)
    double tdp_w = 0;
    std::string source;           // the public documents of the figures (catalog entries)

    double peak_tflops(Precision p) const;
};

struct Link {
    double bandwidth_GBps = 0;  // per GPU per direction
    double latency_us = 0;
};

struct Cluster {
    std::string name;
    Gpu gpu;
    int num_gpus = 0;
    int gpus_per_node = 0;
    // GPUs per scale-up (NVLink) domain when it spans several nodes, a
    // multiple of gpus_per_node (GB200 NVL72: trays of 4 in a domain of 72);
    // 0: the node is the domain. Ranks fill domains in order, the last one
    // may be partial (256 GPUs: 72 + 72 + 72 + 40).
    int nvlink_domain = 0;
    // A TPU slice: chips per axis of its ICI torus (2D or 3D; an axis of 1 is
    // absent), each chip linked to its neighbours on every axis, wrap-around
    // included; slices joined by the data-centre network (inter_node). All 0:
    // not a torus. intra_node is then one ICI link, per direction.
    std::array<int, 3> torus{};
    Link intra_node;  // inside a scale-up domain
    Link inter_node;  // between domains (scale-out)
    // Memory a plan must leave free on every GPU above its predicted peak
    // reserved (cluster.memory_headroom, `--headroom`): bytes, plus a share of
    // what the allocator can take; both 0 (the default): none kept.
    double memory_headroom_bytes = 0;
    double memory_headroom_fraction = 0;

    int scaleup_gpus() const {
        if (torus[0] > 0) return torus[0] * torus[1] * torus[2];
        return nvlink_domain > 0 ? nvlink_domain : gpus_per_node;
    }
};

// The most data loader workers a job may give (training.data_loader_workers;
// also what import megatron accepts of --num-workers): a bound on input, not a
// machine's.
inline constexpr int kMaxDataLoaderWorkers = 4096;

struct Training {
    int64_t seq_length = 0;
    int64_t global_batch = 0;  // sequences per optimizer step
    int64_t micro_batch = 0;   // sequences per micro-batch per DP rank
    Precision precision = Precision::bf16;
    // Read with precision fp8 alone. `auto` (default): the stack's own,
    // resolved with the framework (job/job.cpp): torchao's tensorwise dynamic
    // scaling under fsdp (torchtitan), Transformer Engine's delayed scaling
    // (Megatron-Core's --fp8-recipe default) elsewhere.
    Fp8Recipe fp8_recipe = Fp8Recipe::delayed;
    bool fp8_recipe_auto = true;
    double train_tokens = 0;   // 0 = not given
    AttentionKernel attention = AttentionKernel::flash;
    bool attention_auto = false;  // `attention: auto` (default): chosen from the job's source date
    bool causal_flops = false;  // count attention FLOPs halved (causal convention)
    Framework framework = Framework::megatron_core;
    bool framework_auto = false;  // `framework: auto` (default): chosen from the job's source
    // framework auto, the job's source naming no stack, on a model read from
    // a Hugging Face config (model.hf_config, or a config's model_type or
    // architectures inline): the Megatron default was taken for a model that
    // is as often trained in eager PyTorch (job_warnings says so).
    bool framework_guessed_for_hf_model = false;
    Optimizer optimizer = Optimizer::adam;
    bool optimizer_auto = false;  // `optimizer: auto` (default): adam for every framework
    // `optimizer_kernel: auto` (default): foreach on the PyTorch stacks (fsdp,
    // hf: torch.optim's default), fused on Megatron and DeepSpeed.
    OptimizerKernel optimizer_kernel = OptimizerKernel::fused;
    // torch.compile over each transformer block (torchtitan --training.compile):
    // Inductor fuses the eager stack's elementwise chains (RMSNorm, rotary,
    // SwiGLU, squared ReLU) into one kernel each (workload/layer_work.cpp).
    bool compile = false;
    // CUDA graphs: torch.compile(mode="reduce-overhead") of a transformers
    // model (framework hf, compile, zero below 3): one graph launch where each
    // kernel was launched (docs/host-time.md "CUDA graphs").
    bool cuda_graphs = false;
    // transformers' KV cache in the training forward (framework hf; the
    // config's use_cache when the loop does not pass use_cache=False):
    // docs/host-time.md "A KV cache in the training forward".
    bool use_cache = false;
    // The training loop holds the model's output, its logits among it,
    // through the backward (`out = model(...)`, `out.loss.backward()`;
    // framework hf): docs/memory.md "The output a loop holds".
    bool holds_outputs = false;
    // The data loader (docs/data-loader.md; estimate/data_loader.h): CPU
    // seconds one loader process takes to produce one sequence (read,
    // tokenize, pack, collate); 0 (default) = not priced. Workers: the
    // DataLoader's num_workers per training process; -1 until the job is
    // read (training.data_loader_workers: auto), then the stack's default:
    // 2 under Megatron (megatron/training/arguments.py --num-workers,
    // default 2), 0 elsewhere (torch.utils.data.DataLoader num_workers=0,
    // the default of a Hugging Face Trainer, torchtitan and DeepSpeed loop).
    double data_loader_s_per_sequence = 0;
    int data_loader_workers = -1;  // at most kMaxDataLoaderWorkers
    bool data_loader_workers_auto = true;  // not given (or `auto`)
    // Derived, not a key: the cluster's accelerator runs XLA-compiled programs
    // (a TPU, lostflops/accelerator.h xla_compiled), which fuse elementwise
    // work into the matmuls (workload/layer_work.cpp; docs/tpu.md).
    bool xla = false;
};

// An explicit placement of layers on the virtual pipeline stages (Megatron-LM
// --pipeline-model-parallel-layout, megatron/core/transformer/
// pipeline_parallel_layer_layout.py): stages in model order (virtual stage
// v = chunk * pp + rank), each with its decoder layers, and which holds the
// embedding, the loss (output layer) and multi-token prediction modules.
struct PipelineLayout {
    struct Stage {
        int first = 0;  // index of its first decoder layer
        int layers = 0;
        bool embedding = false;
        bool loss = false;
        int mtp = 0;
    };
    std::vector<Stage> stages;
    bool mtp_given = false;  // some stage holds an m (else MTP modules sit with the loss)
    std::string text;  // as given
};

// MaxText's remat policy (parallel.remat_policy, a TPU job's): which named
// matmul outputs each layer saves besides its input (maxtext
// layers/decoders.py get_remat_policy: jax.checkpoint_policies
// save_only_these_names / checkpoint_dots_with_no_batch_dims); unset: the
// recompute mode's rule (workload/layer_work.cpp).
enum class RematPolicy : uint8_t {
    unset,
    minimal,                           // every projection: q, k, v, out, mlpwi_0, mlpwi_1, mlpwo
    save_dot_with_context_except_mlp,  // q, k, v, context, out
    save_dot_except_mlpwi,             // q, k, v, out, mlpwo
    save_dot_except_mlp,               // q, k, v, out
    save_qkv_proj,                     // q, k, v
    save_out_proj,                     // out
};

// The pipeline schedule (parallel.pipeline_schedule; the table of schedules,
// their passes, memory and bubble: lostflops/pipeline_schedules.h).
enum class PipelineSchedule { one_f_one_b, interleaved, zero_bubble, dualpipe, dualpipev, zbv };

struct ParallelPlan {
    int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
    int vpp = 1;      // model chunks per pipeline rank; interleaved 1F1B when > 1
    // one_f_one_b stands for Megatron-LM's 1F1B family: 1F1B, or interleaved
    // 1F1B when vpp > 1 (the default); schedule_given: the job named it.
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    bool schedule_given = false;
    // Expert layers (MoE parallel folding, Liu et al. 2025; Megatron-Core
    // parallel_state.py): the same tp*cp*dp ranks of a pipeline stage laid out
    // a second time as etp x ep x edp, expert tensor parallelism fastest.
    // 0: not given, as tp (Megatron-Core: --expert-tensor-parallel-size None
    // -> tensor_model_parallel_size). ep*etp divides tp*cp*dp.
    int etp = 0;
    // Context-parallel attention variant; not given: the framework's default
    // (job/job_sections.cpp: Megatron-Core p2p, torchtitan allgather,
    // DeepSpeed a2a).
    CpCommType cp_comm_type = CpCommType::p2p;
    MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
    // DeepEP's node-limited routing: a token's experts sit on at most this
    // many nodes (DeepSeek-V3 sec. 3.2.2: M = 4). 0: not limited.
    int moe_max_nodes = 4;
    // DeepEP dispatches FP8 copies (1 byte per element plus scales; DeepEP
    // README: "FP8 dispatching and BF16 combining", as DeepSeek-V3 trains,
    // sec. 3.3.2) only when the framework quantizes before the dispatch.
    // Megatron-Core does not: its flex dispatcher hands DeepEP the BF16 hidden
    // states (megatron/core/transformer/moe/fused_a2a.py FusedDispatch). Off by
    // default; applies to moe_dispatcher: deepep with precision fp8.
    bool moe_fp8_dispatch = false;
    // Dispatch/combine overlapped with another micro-batch's compute
    // (Megatron-Core --overlap-moe-expert-parallel-comm; DualPipe does it by
    // schedule). Off by default, as in plain 1F1B.
    bool moe_a2a_overlap = false;
    // Tokens of the busiest expert rank over the mean (>= 1). 1: balanced, as
    // the published Megatron-Core benchmarks force it
    // (--moe-router-force-load-balancing; docs/job-file-parallel.md "Expert parallelism").
    double moe_imbalance = 1.0;
    // Expert capacity (tokens per expert over the balanced share), past which
    // tokens are dropped (--moe-expert-capacity-factor). 0: dropless.
    double moe_capacity_factor = 0;
    // Every expert's input padded to its capacity
    // (--moe-pad-expert-input-to-capacity; needs a capacity factor).
    bool moe_pad_to_capacity = false;
    // Layers of the first and of the last pipeline rank (Megatron-LM
    // --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers);
    // the other ranks share the rest evenly, each rank's layers split evenly
    // over its vpp chunks. -1: not given (the default split, job/stage_layout.h).
    int first_stage_layers = -1, last_stage_layers = -1;
    // Every virtual stage's layers, given; null: the split above. Shared and
    // immutable (the search copies plans).
    std::shared_ptr<const PipelineLayout> layout;
    int zero = 0;     // 0..3; 3 = FSDP full shard
    bool sequence_parallel = false;
    Recompute recompute = Recompute::none;
    // Full recompute of only this many layers of each virtual pipeline stage
    // (Megatron-LM --recompute-method block --recompute-num-layers N); the
    // others keep all their activations. -1: every layer.
    int recompute_layers = -1;
    // Selective recompute's modules, a bit per RecomputeModule; Megatron-Core's
    // default ["core_attn"] (transformer_config.py __post_init__).
    unsigned recompute_modules = 1u << static_cast<int>(RecomputeModule::core_attn);
    bool recomputes(RecomputeModule m) const {
        return recompute == Recompute::selective && ((recompute_modules >> static_cast<int>(m)) & 1u) != 0;
    }
    // The activations a layer saves live in host memory between its forward
    // and its backward (MaxText remat_policy minimal_offloaded and the other
    // *_offloaded policies; Megatron-Core --cpu-offloading): the device keeps
    // each layer's input and the layers whose transfer is in flight
    // (estimate/memory.cpp). The time of the transfers is not priced.
    bool offload_activations = false;
    RematPolicy remat_policy = RematPolicy::unset;
    bool overlap_grad_reduce = true;  // DP reduction overlapped with backward
    bool tp_comm_overlap = false;     // TP collectives overlapped with GEMMs
    bool grad_fp32 = true;            // Megatron keeps fp32 main grads
    // ZeRO-3 / FSDP engine behaviour (docs/job-file-parallel.md "ZeRO-3 engine"). Negative = not
    // given: the default of training.framework (estimate/zero3_time.cpp).
    int64_t zero_bucket_params = -1;         // elements per parameter all-gather; 0 = one per layer
    int64_t zero_reduce_bucket_params = -1;  // elements per gradient reduce-scatter; 0 = one per layer
    int zero_prefetch = -1;                  // gathers issued ahead of use (0 = none)
    int zero_regather_recompute = -1;        // 1: full recompute gathers a layer once more
    int64_t zero_max_live_params = -1;       // cap on gathered elements alive; 0 = no cap

    int expert_tp() const { return etp > 0 ? etp : tp; }
    // Expert data parallel: the replicas of each expert, tp*cp*dp / (etp*ep).
    int expert_dp() const {
        const int64_t folded = static_cast<int64_t>(expert_tp()) * ep;
        return static_cast<int>(std::max<int64_t>(1, static_cast<int64_t>(tp) * cp * dp / folded));
    }

    int64_t micro_batches(const Training& t) const {
        return t.global_batch / (static_cast<int64_t>(dp) * t.micro_batch);
    }
};

// Tokens the busiest expert rank processes over the balanced share, which
// scales the grouped expert GEMMs and the all-to-all (Megatron-Core's router,
// megatron/core/transformer/moe/moe_utils.py get_capacity / apply token drop:
// each expert keeps at most capacity = factor x its balanced share of a
// rank's routed tokens, and with padding receives exactly that many):
//   dropless                        moe_imbalance
//   capacity c, dropping            min(moe_imbalance, c)
//   capacity c, padded to capacity  c (every expert, whatever the routing)
inline double moe_load_factor(const ParallelPlan& p) {
    if (!(p.moe_capacity_factor > 0)) return p.moe_imbalance;
    if (p.moe_pad_to_capacity) return p.moe_capacity_factor;
    return p.moe_imbalance < p.moe_capacity_factor ? p.moe_imbalance : p.moe_capacity_factor;
}

// Share of the routed tokens the experts compute (model and hardware FLOPs,
// workload/flops.h): a capacity c below 1 keeps at most c x each expert's
// balanced share, padded or not, so at most c of the routed tokens (the rest
// pass the layer on the residual alone); 1 otherwise (at c >= 1 only an
// overloaded expert drops, by an amount moe_imbalance does not give).
inline double moe_kept_share(const ParallelPlan& p) {
    return p.moe_capacity_factor > 0 && p.moe_capacity_factor < 1 ? p.moe_capacity_factor : 1.0;
}

// The `run:` section: what turns a step time into a whole training run
// (failures, checkpoints, restarts, spares, data loading, money, energy).
// Every key is optional; job/job_run.cpp resolves each default (with its
// source) when the job is read, except checkpoint_bytes, which depends on the
// model's parameter count and is derived by run/run_inputs.cpp when 0.
enum class CheckpointMode { sync, async };  // async: only the snapshot to host memory blocks
struct RunSpec {
    double gpu_failure_rate_per_gpu_h = 0;   // interruptions per GPU per hour of wall time
    double checkpoint_bytes = 0;             // whole checkpoint; 0 = derived from the model
    double checkpoint_write_GBps = 0;        // storage, aggregate over the job
    double checkpoint_read_GBps = 0;         // storage, aggregate over the job
    double checkpoint_interval_s = 0;        // compute time between checkpoints; 0 = auto (Young/Daly)
    CheckpointMode checkpoint_mode = CheckpointMode::async;
    double snapshot_GBps = 0;                // device to host copy per GPU (async snapshot)
    double restart_overhead_s = 0;           // detect, reschedule, re-initialise, warm up
    int spare_nodes = 0;                     // idle nodes held for the job (billed)
    double node_repair_s = 0;                // a failed node out of service; 0 = replaced at once
    double price_per_gpu_hour = 0;           // money per GPU-hour; 0 = not given
    double gpu_power_w = 0;                  // average power per GPU
    double pue = 0;                          // power usage effectiveness of the data centre
    double bytes_per_token = 0;              // training data read from storage per token
    double storage_read_GBps = 0;            // aggregate read bandwidth for training data
};

struct Job {
    std::string source;  // file the job came from ("<builtin>" for the default)
    std::string name;
    Model model;
    Cluster cluster;
    Training training;
    ParallelPlan plan;
    RunSpec run;  // `run:` section, defaults resolved
};

const char* to_string(Precision p);
const char* to_string(Fp8Recipe r);
const char* to_string(Recompute r);
const char* to_string(RematPolicy r);
const char* to_string(RecomputeModule m);
const char* to_string(AttentionKernel k);
const char* to_string(Framework f);
const char* to_string(Optimizer o);
const char* to_string(OptimizerKernel k);
const char* to_string(MoeDispatcher d);
const char* to_string(CpCommType t);

}  // namespace lostflops
