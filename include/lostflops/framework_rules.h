// The table of framework rules: what a parallel plan must meet to launch in
// each training stack, beyond the checks every plan passes
// (job/validate.cpp, after Megatron-LM's argument checks). One row per rule
// with the stack, the setting it is about, what must hold and where the
// framework's code says so. `estimate` warns about a plan that breaks one
// ("lostflops: warning: cannot launch in STACK: RULE (SOURCE)"; an error
// under --strict), `search` enumerates only plans the stack can launch
// (search/knobs.cpp, search/enumerate.cpp), and `export --best` searches
// within the rules of the framework it writes for.
//
// Sources were read at Megatron-LM d98e8a64 (2026-08-22; the legacy model at
// 532ad926, the last commit before its removal in 8de82388), torchtitan
// b5bcd76c (2026-08-21) and DeepSpeed master (2026).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

// The stacks the rules are written for. training.framework fsdp is
// torchtitan's (FSDP2 with TP, PP, CP and EP as torchtitan composes them; a
// plain-FSDP trainer is torchtitan's rules with every degree 1).
enum class LaunchStack { megatron_core, megatron_lm, torchtitan, deepspeed, hf };
const char* to_string(LaunchStack s);
LaunchStack launch_stack(Framework f);

// What a rule checks (job/framework_rules.cpp computes each).
enum class RuleCheck {
    schedule_runs,            // the framework runs parallel.pipeline_schedule (its row's stacks, lostflops/pipeline_schedules.h)
    kv_heads_over_tp,         // tp divides every attention kind's KV heads
    even_stages,              // pp x vpp divides the layers, no custom stage layout
    no_cp,                    // cp is 1
    titan_stages,             // a multi-stage schedule's stages come out as pp x vpp
    titan_zero,               // zero 0 (replicate) or 3 (shard)
    titan_expert_tp,          // etp 1 (experts not tensor-parallel)
    titan_ep_region,          // ep divides dp_shard x cp x tp
    pp_zero_below_2,          // pp > 1 needs zero 0 or 1
    heads_over_cp,            // cp (Ulysses) divides every attention kind's heads and KV heads
    legacy_zero,              // zero 0, 1, or 3 with pp 1 and ep 1
    titan_recompute,          // no full recompute of only some layers (recompute_layers)
    a2a_local_heads,          // cp_comm_type a2a: cp divides each attention kind's heads / tp and KV heads / tp
    cp_not_a2a,               // cp_comm_type is p2p or allgather
    cp_only_a2a,              // cp_comm_type is a2a
    data_parallel_only,       // tp, pp, cp and ep are 1
    hf_recompute,             // recompute none, or full on every layer
    a2a_overlap_mcore_only,   // no moe_a2a_overlap (a Megatron-Core flag)
    a2a_overlap_setup,        // moe_a2a_overlap: ep > 1, alltoall or deepep, vpp > 1 with pp > 1
    a2a_overlap_recompute,    // moe_a2a_overlap: no full recompute
    titan_dispatcher,         // ep > 1: the dispatcher is alltoall or deepep
};

struct FrameworkRule {
    LaunchStack stack;
    RuleCheck check;
    const char* key;     // the job key the rule is about
    const char* rule;    // what must hold, in words
    const char* source;  // file and function in the framework's code
    bool knob;           // depends on parallel.zero or the recompute depth (the search's knobs)
};

inline constexpr std::array<FrameworkRule, 30> kFrameworkRules{{
    // Megatron-Core: uneven stages launch through --pipeline-model-parallel-layout
    // (lostflops export writes one), ZeRO 0-3 (--use-distributed-optimizer; Megatron-FSDP
    // --data-parallel-sharding-strategy optim_grads / optim_grads_params). Its
    // attention divides the query groups among the tensor-parallel ranks, so
    // KV heads fewer than tp do not launch (issue 36).
    {LaunchStack::megatron_core, RuleCheck::kv_heads_over_tp, "parallel.tp",
     "tp divides the KV heads (num_query_groups)",
     "Megatron-LM megatron/core/transformer/attention.py Attention.__init__ "
     "(num_query_groups_per_partition = divide(num_query_groups, world_size))", false},
    {LaunchStack::megatron_core, RuleCheck::schedule_runs, "parallel.pipeline_schedule",
     "pipeline schedules are 1f1b and interleaved 1F1B (no zero-bubble or DualPipe schedule)",
     "Megatron-LM megatron/core/pipeline_parallel/schedules.py get_forward_backward_func", false},
    // The expert all-to-all overlap (--overlap-moe-expert-parallel-comm): its
    // combined 1F1B schedule pairs one micro-batch's forward with another's
    // backward layer by layer, which needs interleaving under a pipeline.
    {LaunchStack::megatron_core, RuleCheck::a2a_overlap_setup, "parallel.moe_a2a_overlap",
     "moe_a2a_overlap needs ep > 1, the alltoall or deepep (flex) dispatcher and, with pp > 1, interleaving (vpp > 1)",
     "Megatron-LM megatron/core/transformer/transformer_config.py TransformerConfig.__post_init__ "
     "(overlap_moe_expert_parallel_comm asserts)", false},
    {LaunchStack::megatron_core, RuleCheck::a2a_overlap_recompute, "parallel.moe_a2a_overlap",
     "moe_a2a_overlap runs without full recompute (of every layer or some)",
     "Megatron-LM megatron/core/transformer/transformer_config.py TransformerConfig.__post_init__ "
     "(\"disable full recomputation when enabling overlap_moe_expert_parallel_comm\")", true},
    {LaunchStack::megatron_core, RuleCheck::a2a_local_heads, "parallel.cp_comm_type",
     "cp_comm_type a2a (Ulysses) scatters the heads: cp divides the attention heads / tp and the KV heads / tp",
     "TransformerEngine transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py "
     "AttnFuncWithCPAndQKVOA2A.forward (asserts on the local heads)", false},
    // Megatron-LM's legacy model (--use-legacy-models).
    {LaunchStack::megatron_lm, RuleCheck::schedule_runs, "parallel.pipeline_schedule",
     "pipeline schedules are 1f1b and interleaved 1F1B",
     "Megatron-LM megatron/core/pipeline_parallel/schedules.py get_forward_backward_func", false},
    {LaunchStack::megatron_lm, RuleCheck::kv_heads_over_tp, "parallel.tp",
     "tp divides the KV heads (num_query_groups)",
     "Megatron-LM 532ad926 megatron/legacy/model/transformer.py ParallelAttention.__init__ "
     "(core.utils.divide(num_query_groups, world_size))", false},
    {LaunchStack::megatron_lm, RuleCheck::even_stages, "parallel.pp",
     "pp x vpp divides the layers (no --pipeline-model-parallel-layout or first/last stage layers: "
     "Megatron-Core flags)",
     "Megatron-LM 532ad926 megatron/legacy/model/transformer.py _get_num_layers and "
     "ParallelTransformer.__init__", false},
    {LaunchStack::megatron_lm, RuleCheck::no_cp, "parallel.cp",
     "no context parallelism (the legacy attention runs the whole sequence; CP is Megatron-Core's)",
     "Megatron-LM 532ad926 megatron/legacy/model/transformer.py ParallelAttention", false},
    {LaunchStack::megatron_lm, RuleCheck::legacy_zero, "parallel.zero",
     "ZeRO is --use-distributed-optimizer (1) or --use-torch-fsdp2 (3, which needs pp 1 and ep 1); "
     "Megatron-FSDP's sharding strategies (2) are written for Megatron-Core only",
     "Megatron-LM megatron/training/arguments.py validate_args (--use-torch-fsdp2 asserts)", true},
    {LaunchStack::megatron_lm, RuleCheck::a2a_overlap_mcore_only, "parallel.moe_a2a_overlap",
     "no overlap of the expert all-to-all with another micro-batch (moe_a2a_overlap is Megatron-Core's "
     "--overlap-moe-expert-parallel-comm)",
     "Megatron-LM megatron/core/pipeline_parallel/combined_1f1b.py (Megatron-Core models only)", false},
    // torchtitan.
    {LaunchStack::torchtitan, RuleCheck::schedule_runs, "parallel.pipeline_schedule",
     "pipeline schedules are 1F1B, Interleaved1F1B, DualPipeV and ZBVZeroBubble (torch.distributed.pipelining "
     "has no single-stage zero-bubble schedule and no two-chunk DualPipe)",
     "torchtitan torchtitan/distributed/pipeline_parallel.py _build_pipeline_schedule, "
     "_get_pp_rank_to_stage_indices_mapping", false},
    {LaunchStack::torchtitan, RuleCheck::kv_heads_over_tp, "parallel.tp", "tp divides n_heads and n_kv_heads",
     "torchtitan torchtitan/models/common/decoder.py Decoder.Config.update_from_config", false},
    {LaunchStack::torchtitan, RuleCheck::titan_stages, "parallel.vpp",
     "a multi-stage schedule's stages, ceil(layers / pipeline_parallel_layers_per_stage), are pp x vpp",
     "torchtitan torchtitan/distributed/pipeline_parallel.py _get_pipeline_metadata", false},
    {LaunchStack::torchtitan, RuleCheck::titan_expert_tp, "parallel.etp",
     "the experts are not tensor-parallel (etp 1): the sparse mesh is pp x dp_replicate x efsdp x ep",
     "torchtitan torchtitan/distributed/parallel_dims.py ParallelDims (sparse mesh)", false},
    {LaunchStack::torchtitan, RuleCheck::titan_zero, "parallel.zero",
     "data parallelism is DDP replicas (zero 0) or FSDP2 full shard (zero 3); with cp > 1 FSDP2 shards "
     "over dp_shard x cp, so zero 3",
     "torchtitan torchtitan/distributed/parallel_dims.py ParallelDims (dp_replicate x dp_shard; "
     "fsdp_enabled: dp_shard > 1 or cp > 1)", true},
    {LaunchStack::torchtitan, RuleCheck::titan_recompute, "parallel.recompute_layers",
     "activation checkpointing is none, op-level selective or full on every block (FullAC, SelectiveAC): "
     "no full recompute of only some layers",
     "torchtitan torchtitan/distributed/activation_checkpoint.py ActivationCheckpointing.apply", true},
    {LaunchStack::torchtitan, RuleCheck::titan_dispatcher, "parallel.moe_dispatcher",
     "tokens go to the experts by all-to-all (expert_parallel_comm_backend standard) or DeepEP (deepep): "
     "no all-gather dispatcher",
     "torchtitan torchtitan/models/common/config_utils.py make_token_dispatcher_config", false},
    {LaunchStack::torchtitan, RuleCheck::titan_ep_region, "parallel.ep",
     "ep divides dp_shard x cp x tp (dp_shard is dp under zero 3, else 1)",
     "torchtitan torchtitan/distributed/parallel_dims.py ParallelDims._validate", true},
    {LaunchStack::torchtitan, RuleCheck::cp_not_a2a, "parallel.cp_comm_type",
     "context parallelism is PyTorch's ring attention (context_parallel_rotate_method allgather or alltoall): "
     "cp_comm_type allgather or p2p, no Ulysses all-to-all",
     "torchtitan torchtitan/distributed/utils.py create_context_parallel_ctx; PyTorch "
     "torch/distributed/tensor/experimental/_attention.py _RotateMethod", false},
    {LaunchStack::torchtitan, RuleCheck::a2a_overlap_mcore_only, "parallel.moe_a2a_overlap",
     "no overlap of the expert all-to-all with another micro-batch (moe_a2a_overlap is Megatron-Core's "
     "--overlap-moe-expert-parallel-comm)",
     "torchtitan torchtitan/models/common/token_dispatcher.py AllToAllTokenDispatcher (dispatch and combine within the layer; the EP overlap is experiments/graph_trainer only)", false},
    // DeepSpeed (ZeRO on an eager model, its PipelineModule, Ulysses sequence parallelism).
    {LaunchStack::deepspeed, RuleCheck::schedule_runs, "parallel.pipeline_schedule",
     "the pipeline runs one stage per rank with 1F1B (vpp 1, no interleaving)",
     "DeepSpeed deepspeed/runtime/pipe/schedule.py TrainSchedule", false},
    {LaunchStack::deepspeed, RuleCheck::pp_zero_below_2, "parallel.zero",
     "pipeline parallelism needs ZeRO 0 or 1 (\"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\")",
     "DeepSpeed deepspeed/runtime/pipe/engine.py PipelineEngine.__init__", true},
    {LaunchStack::deepspeed, RuleCheck::heads_over_cp, "parallel.cp",
     "context parallelism is Ulysses: cp divides the attention heads and the KV heads (the all-to-all "
     "scatters the head dimension)",
     "DeepSpeed deepspeed/sequence/layer.py DistributedAttention, single_all_to_all", false},
    {LaunchStack::deepspeed, RuleCheck::cp_only_a2a, "parallel.cp_comm_type",
     "sequence parallelism is Ulysses' all-to-all (cp_comm_type a2a)",
     "DeepSpeed deepspeed/sequence/layer.py DistributedAttention", false},
    {LaunchStack::deepspeed, RuleCheck::a2a_overlap_mcore_only, "parallel.moe_a2a_overlap",
     "no overlap of the expert all-to-all with another micro-batch (moe_a2a_overlap is Megatron-Core's "
     "--overlap-moe-expert-parallel-comm)",
     "DeepSpeed deepspeed/moe/sharded_moe.py MOELayer (dispatch and combine in the layer)", false},
    // A Hugging Face model in eager PyTorch (transformers' Trainer / accelerate, or a loop of a few lines).
    {LaunchStack::hf, RuleCheck::data_parallel_only, "parallel.tp",
     "data parallelism only: tp, pp, cp and ep are 1 (the model's own modules; torchtitan or Megatron "
     "compose the others)",
     "PyTorch torch/nn/parallel/distributed.py DistributedDataParallel; "
     "torch/distributed/fsdp/_fully_shard/_fully_shard.py fully_shard", false},
    {LaunchStack::hf, RuleCheck::titan_zero, "parallel.zero",
     "DDP replicas (zero 0) or FSDP2 fully_shard (zero 3)",
     "PyTorch torch/distributed/fsdp/_fully_shard/_fully_shard.py fully_shard", true},
    {LaunchStack::hf, RuleCheck::hf_recompute, "parallel.recompute",
     "gradient checkpointing wraps every decoder layer: recompute none or full (no selective, no "
     "recompute_layers)",
     "transformers src/transformers/modeling_utils.py PreTrainedModel.gradient_checkpointing_enable", true},
    {LaunchStack::hf, RuleCheck::a2a_overlap_mcore_only, "parallel.moe_a2a_overlap",
     "no overlap of the expert all-to-all with another micro-batch (moe_a2a_overlap is Megatron-Core's "
     "--overlap-moe-expert-parallel-comm)",
     "PyTorch torch/nn/parallel/distributed.py DistributedDataParallel (no expert parallelism)", false},
}};

// A rule the plan breaks, with the plan's own numbers.
struct RuleBreak {
    const FrameworkRule* rule = nullptr;
    std::string detail;  // "tp 16, 8 KV heads"
};

// The settings the rules read.
struct LaunchPlan {
    int tp = 1, cp = 1, pp = 1, dp = 1, vpp = 1, ep = 1, etp = 1, zero = 0;
    int recompute_layers = -1;  // full recompute of this many layers per stage; -1: none or every layer
    PipelineSchedule schedule{};  // effective (pipeline_schedules.h); {}: the table's first row
    bool custom_stages = false;  // an explicit layout or first/last stage layer counts
    CpCommType cp_comm_type = CpCommType::p2p;
    Recompute recompute = Recompute::none;
    bool moe_a2a_overlap = false;
    MoeDispatcher dispatcher = MoeDispatcher::alltoall;
};
LaunchPlan launch_plan(const ParallelPlan& p);

// Every rule of `stack` that the plan breaks, in table order; with
// knob_rules false, only those that do not depend on parallel.zero.
std::vector<RuleBreak> rule_breaks(const Model& m, const LaunchPlan& p, LaunchStack stack, bool knob_rules = true);
// The first one, or none (the search's test: no allocation when none breaks).
std::optional<RuleBreak> first_rule_break(const Model& m, const LaunchPlan& p, LaunchStack stack,
                                          bool knob_rules = true);
// Whether a rule of `stack` about job key `key` ("parallel.moe_dispatcher")
// breaks; no allocation (the search asks it per layout).
bool breaks_rule_on(const Model& m, const LaunchPlan& p, LaunchStack stack, const char* key, bool knob_rules = true);
// The job's plan under its own framework.
std::vector<RuleBreak> rule_breaks(const Job& job);
// Whether `candidate` (a change of `base`'s plan, same model and framework)
// breaks a rule of the framework that `base` does not: advice proposes no
// plan the framework cannot launch, beyond what the job already asks.
bool breaks_beyond(const Job& candidate, const Job& base);
// "cannot launch in megatron-lm: tp divides the KV heads (...): tp 16, 8 KV heads (SOURCE)"
std::string rule_break_text(const RuleBreak& b);

}  // namespace lostflops
