// The table of `parallel:` keys (lostflops/plan_keys.h), in the order the job
// reader reads them: a rule or a default reads only the keys above it. Ranges
// as the reader has always taken them (job/hardware_bounds.h kMaxGpus for
// degrees); launch flags as the exporters write them (src/interop/
// megatron_export_parallel.cpp, megatron_export_stages.cpp,
// torchtitan_export.cpp, maxtext_export.cpp; empty where none writes one).
// The rules' sources are in the comments of ParallelPlan (lostflops/spec.h)
// and in docs/job-file.md.
#include "lostflops/plan_keys.h"

#include <algorithm>
#include <array>
#include <type_traits>

#include "lostflops/accelerator.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_schedules.h"
#include "job/hardware_bounds.h"

namespace lostflops {

namespace {

template <class T>
double to_value(T v) {
    if constexpr (std::is_enum_v<T>) return static_cast<double>(static_cast<int>(v));
    else return static_cast<double>(v);
}

template <class T>
T from_value(double v) {
    if constexpr (std::is_enum_v<T>) return static_cast<T>(static_cast<int>(v));
    else if constexpr (std::is_same_v<T, bool>) return v != 0;
    else return static_cast<T>(v);
}

// The access of a plain field of ParallelPlan.
template <auto M>
constexpr PlanKeyAccess field() {
    return {[](const ParallelPlan& p) { return to_value(p.*M); },
            [](ParallelPlan& p, double v) { p.*M = from_value<std::remove_cvref_t<decltype(p.*M)>>(v); }};
}

template <class E>
const char* enum_name(int i) { return to_string(static_cast<E>(i)); }

constexpr double kMaxDegree = static_cast<double>(bounds::kMaxGpus);
constexpr double kMaxLayers = bounds::kMaxLayers;
constexpr double kMaxElems = 1e13;  // 1e13 parameters

std::string needs_deepep(const ParallelPlan& p, const char* what) {
    if (p.moe_dispatcher == MoeDispatcher::deepep) return "";
    return std::string("applies to moe_dispatcher: deepep (") + what + "); the dispatcher is " + to_string(p.moe_dispatcher);
}

std::string needs_zero3(const ParallelPlan& p, const PlanKeyContext&) {
    if (p.zero >= 3) return "";
    return "applies to zero: 3 (ZeRO-3 / FSDP parameter gathers); zero is " + std::to_string(p.zero);
}

constexpr auto kAlways = PlanKeyEcho::always;
using T = PlanKeyType;

constexpr std::array kKeys{
    PlanKey{.name = "tp", .type = T::integer, .min = 1, .max = kMaxDegree, .field = field<&ParallelPlan::tp>(),
            .default_value = "1", .megatron = "--tensor-model-parallel-size", .torchtitan = "tensor_parallel_degree",
            .maxtext = "ici_tensor_parallelism, dcn_tensor_parallelism",
            .words = "tensor parallelism: each layer's GEMMs split over tp GPUs", .searched = true, .echo = kAlways},
    PlanKey{.name = "pp", .type = T::integer, .min = 1, .max = kMaxDegree, .field = field<&ParallelPlan::pp>(),
            .default_value = "1", .megatron = "--pipeline-model-parallel-size", .torchtitan = "pipeline_parallel_degree",
            .maxtext = "ici_pipeline_parallelism, dcn_pipeline_parallelism",
            .words = "pipeline parallelism: the layers split into pp stages", .searched = true, .echo = kAlways},
    PlanKey{.name = "cp", .type = T::integer, .min = 1, .max = kMaxDegree, .field = field<&ParallelPlan::cp>(),
            .default_value = "1", .megatron = "--context-parallel-size", .torchtitan = "context_parallel_degree",
            .maxtext = "ici_context_parallelism, dcn_context_parallelism",
            .words = "context parallelism: each sequence split over cp GPUs", .searched = true, .echo = kAlways},
    PlanKey{.name = "ep", .type = T::integer, .min = 1, .max = kMaxDegree, .field = field<&ParallelPlan::ep>(),
            .default_value = "1", .megatron = "--expert-model-parallel-size", .torchtitan = "expert_parallel_degree",
            .words = "expert parallelism: the experts split over ep GPUs", .searched = true, .echo = kAlways},
    PlanKey{.name = "vpp", .type = T::integer, .min = 1, .max = 1024, .field = field<&ParallelPlan::vpp>(),
            .default_value = "1", .megatron = "--num-virtual-stages-per-pipeline-rank",
            .words = "model chunks per pipeline rank; interleaved 1F1B when > 1", .searched = true, .echo = kAlways},
    PlanKey{.name = "pipeline_schedule", .type = T::choice, .choices = static_cast<int>(kSchedules.size()),
            .choice = [](int i) { return kSchedules[static_cast<size_t>(i)].name; },
            .field = {[](const ParallelPlan& p) { return to_value(p.schedule); },
                      [](ParallelPlan& p, double v) {
                          p.schedule = from_value<PipelineSchedule>(v);
                          p.schedule_given = true;
                      }},
            .default_value = "1f1b", .not_given = "Megatron's 1F1B, interleaved when vpp > 1",
            .frameworks = "those whose row of lostflops/pipeline_schedules.h runs it",
            .torchtitan = "pipeline_parallel_schedule", .words = "the pipeline schedule (lostflops/pipeline_schedules.h)",
            .echo = PlanKeyEcho::resolved},
    PlanKey{.name = "cp_comm_type", .type = T::choice, .choices = 3, .choice = enum_name<CpCommType>,
            .field = field<&ParallelPlan::cp_comm_type>(), .default_value = "the framework's",
            .not_given = "p2p (Megatron-Core), allgather (fsdp: torchtitan), a2a (deepspeed: Ulysses)",
            .frameworks = "torchtitan not a2a; deepspeed a2a only", .megatron = "--cp-comm-type",
            .torchtitan = "context_parallel_rotate_method", .words = "how context-parallel attention exchanges keys and values",
            .searched = true, .echo = PlanKeyEcho::context_parallel,
            // Megatron-Core's --cp-comm-type p2p (megatron/training/arguments.py);
            // torchtitan's parallelism.context_parallel_rotate_method "allgather"
            // (torchtitan/config/job_config.py); DeepSpeed's sequence
            // parallelism is Ulysses (deepspeed/sequence/layer.py).
            .when_not_given = [](ParallelPlan& p, const PlanKeyContext& c) {
                p.cp_comm_type = c.framework == Framework::fsdp        ? CpCommType::allgather
                                 : c.framework == Framework::deepspeed ? CpCommType::a2a
                                                                       : CpCommType::p2p;
            }},
    // Expert layers (docs/job-file-parallel.md "Expert parallelism"); checked against the plan in job/validate.cpp.
    PlanKey{.name = "etp", .type = T::integer, .min = 1, .max = kMaxDegree, .field = field<&ParallelPlan::etp>(),
            .default_value = "tp", .not_given = "as tp (Megatron-Core: --expert-tensor-parallel-size None)",
            .megatron = "--expert-tensor-parallel-size", .words = "expert tensor parallelism (MoE parallel folding)",
            .searched = true, .experts_only = true, .echo = PlanKeyEcho::resolved},
    PlanKey{.name = "moe_dispatcher", .type = T::choice, .choices = 3, .choice = enum_name<MoeDispatcher>,
            .field = field<&ParallelPlan::moe_dispatcher>(), .default_value = "alltoall",
            .frameworks = "torchtitan not allgather", .megatron = "--moe-token-dispatcher-type",
            .torchtitan = "expert_parallel_comm_backend", .words = "how tokens reach their experts",
            .searched = true, .experts_only = true, .echo = kAlways},
    PlanKey{.name = "moe_max_nodes", .type = T::integer, .min = 0, .max = kMaxDegree,
            .field = field<&ParallelPlan::moe_max_nodes>(), .default_value = "4", .not_given = "4; 0: not limited",
            .words = "DeepEP's node-limited routing: a token's experts on at most this many nodes",
            .experts_only = true, .echo = PlanKeyEcho::deepep,
            .refuse_given = [](const ParallelPlan& p, const PlanKeyContext&) { return needs_deepep(p, "node-limited routing"); }},
    PlanKey{.name = "moe_fp8_dispatch", .type = T::boolean, .field = field<&ParallelPlan::moe_fp8_dispatch>(),
            .default_value = "false", .words = "DeepEP dispatches FP8 copies (with precision fp8)",
            .experts_only = true, .echo = PlanKeyEcho::deepep,
            .refuse_given = [](const ParallelPlan& p, const PlanKeyContext&) { return needs_deepep(p, "FP8 dispatching"); }},
    PlanKey{.name = "moe_a2a_overlap", .type = T::boolean, .field = field<&ParallelPlan::moe_a2a_overlap>(),
            .default_value = "false", .frameworks = "megatron-core", .megatron = "--overlap-moe-expert-parallel-comm",
            .words = "dispatch and combine overlapped with another micro-batch's compute", .searched = true,
            .experts_only = true, .echo = kAlways},
    PlanKey{.name = "moe_imbalance", .type = T::number, .min = 1, .max = 1000,
            .field = field<&ParallelPlan::moe_imbalance>(), .default_value = "1 (balanced)",
            .words = "tokens of the busiest expert rank over the mean", .experts_only = true, .echo = kAlways},
    PlanKey{.name = "moe_capacity_factor", .type = T::number, .min = 0, .max = 1000,
            .field = field<&ParallelPlan::moe_capacity_factor>(), .default_value = "0 (dropless)",
            .megatron = "--moe-expert-capacity-factor", .words = "tokens an expert keeps over its balanced share",
            .experts_only = true, .echo = PlanKeyEcho::resolved},
    PlanKey{.name = "moe_pad_to_capacity", .type = T::boolean, .field = field<&ParallelPlan::moe_pad_to_capacity>(),
            .default_value = "false", .megatron = "--moe-pad-expert-input-to-capacity",
            .words = "every expert's input padded to its capacity", .experts_only = true, .echo = kAlways,
            .refuse_value = [](const ParallelPlan& p, const PlanKeyContext&) -> std::string {
                // Megatron-Core refuses padding without a capacity, and with
                // the flex dispatcher's DeepEP backend (transformer_config.py __post_init__).
                if (p.moe_pad_to_capacity && !(p.moe_capacity_factor > 0))
                    return "pads each expert to its capacity: give parallel.moe_capacity_factor too";
                if (p.moe_pad_to_capacity && p.moe_dispatcher == MoeDispatcher::deepep)
                    return "the deepep dispatcher does not pad to capacity (Megatron-Core refuses it); the dispatcher is deepep";
                return "";
            }},
    // Custom stage layouts (docs/job-file.md); checked against the model in job/validate.cpp.
    PlanKey{.name = "first_stage_layers", .type = T::integer, .min = 0, .max = kMaxLayers,
            .field = field<&ParallelPlan::first_stage_layers>(), .default_value = "-1",
            .not_given = "the default split (job/stage_layout.h)", .megatron = "--decoder-first-pipeline-num-layers",
            .torchtitan = "pipeline_parallel_first_stage_less_layers", .words = "layers of the first pipeline rank"},
    PlanKey{.name = "last_stage_layers", .type = T::integer, .min = 0, .max = kMaxLayers,
            .field = field<&ParallelPlan::last_stage_layers>(), .default_value = "-1",
            .not_given = "the default split (job/stage_layout.h)", .megatron = "--decoder-last-pipeline-num-layers",
            .torchtitan = "pipeline_parallel_last_stage_less_layers", .words = "layers of the last pipeline rank"},
    PlanKey{.name = "pipeline_layout", .type = T::special, .default_value = "none",
            .not_given = "the split of first_stage_layers / last_stage_layers", .megatron = "--pipeline-model-parallel-layout",
            .words = "every virtual stage's layers (Megatron-LM's layout syntax)"},
    PlanKey{.name = "zero", .type = T::integer, .min = 0, .max = 3, .field = field<&ParallelPlan::zero>(),
            .default_value = "0", .frameworks = "lostflops/framework_rules.h: the stages each stack runs",
            .megatron = "--use-distributed-optimizer (1), --use-megatron-fsdp, --use-torch-fsdp2 (3)",
            .torchtitan = "data_parallel_shard_degree", .maxtext = "ici_fsdp_parallelism, dcn_fsdp_parallelism",
            .words = "ZeRO stage; 3 = FSDP full shard", .searched = true, .echo = kAlways},
    PlanKey{.name = "sequence_parallel", .type = T::boolean, .field = field<&ParallelPlan::sequence_parallel>(),
            .default_value = "false", .megatron = "--sequence-parallel",
            .words = "the norms and dropouts sharded over the tp group", .searched = true, .fix_alias = "sp", .echo = kAlways},
    PlanKey{.name = "recompute", .type = T::choice, .choices = 3, .choice = enum_name<Recompute>,
            .field = field<&ParallelPlan::recompute>(), .default_value = "none", .megatron = "--recompute-granularity",
            .torchtitan = "mode", .maxtext = "remat_policy", .words = "activation recomputation",
            .searched = true, .echo = kAlways},
    PlanKey{.name = "recompute_layers", .type = T::integer, .min = 0, .max = kMaxLayers,
            .field = field<&ParallelPlan::recompute_layers>(), .default_value = "-1", .not_given = "every layer",
            .megatron = "--recompute-num-layers", .torchtitan = "selective_ac_option",
            .words = "with recompute: full, only this many layers of each virtual stage recomputed", .searched = true,
            .echo = PlanKeyEcho::resolved,
            .refuse_value = [](const ParallelPlan& p, const PlanKeyContext&) -> std::string {
                if (p.recompute == Recompute::full) return "";
                return std::string("applies to recompute: full (layers of each pipeline stage recomputed); recompute is ") +
                       to_string(p.recompute);
            }},
    PlanKey{.name = "recompute_modules", .type = T::special, .default_value = "[core_attn]",
            .frameworks = "megatron-lm, megatron-core", .megatron = "--recompute-modules",
            .words = "with recompute: selective, the modules recomputed", .echo = PlanKeyEcho::selective},
    // offload_activations and remat_policy act under one recompute mode
    // (recompute none / selective, and selective); under the others they are
    // warned and ignored (job/job_warnings.cpp): the search changes the mode.
    PlanKey{.name = "offload_activations", .type = T::boolean, .field = field<&ParallelPlan::offload_activations>(),
            .default_value = "false", .maxtext = "remat_policy (*_offloaded)",
            .words = "what a layer saves for backward lives in host memory"},
    PlanKey{.name = "remat_policy", .type = T::choice, .choices = static_cast<int>(RematPolicy::save_out_proj),
            .choice = [](int i) { return to_string(static_cast<RematPolicy>(i + 1)); },
            .field = {[](const ParallelPlan& p) { return to_value(p.remat_policy) - 1; },
                      [](ParallelPlan& p, double v) { p.remat_policy = from_value<RematPolicy>(v + 1); }},
            .default_value = "not set", .not_given = "recompute_modules decide what selective recompute keeps (the MaxText export writes minimal)", .frameworks = "TPU jobs (MaxText)",
            .maxtext = "remat_policy", .words = "with recompute: selective, MaxText's named policy",
            .refuse_value = [](const ParallelPlan&, const PlanKeyContext& c) -> std::string {
                if (xla_compiled(c.arch)) return "";
                return "MaxText's remat policy applies to a TPU job (XLA); on GPUs give recompute and recompute_modules";
            }},
    // The two overlaps' defaults: job/job_sections.cpp default_overlap_grad_reduce / default_tp_comm_overlap.
    PlanKey{.name = "overlap_grad_reduce", .type = T::boolean, .field = field<&ParallelPlan::overlap_grad_reduce>(),
            .default_value = "true", .not_given = "true, except under megatron-lm below zero 3",
            .megatron = "--overlap-grad-reduce", .words = "the data-parallel reduction overlapped with the backward",
            .searched = true, .echo = kAlways,
            .when_not_given = [](ParallelPlan& p, const PlanKeyContext& c) {
                p.overlap_grad_reduce = default_overlap_grad_reduce(p, c.framework);
            }},
    PlanKey{.name = "tp_comm_overlap", .type = T::boolean, .field = field<&ParallelPlan::tp_comm_overlap>(),
            .default_value = "false",
            .not_given = "on with sequence parallelism and tp > 1 under megatron-core on GPUs with TE's overlap",
            .megatron = "--tp-comm-overlap", .torchtitan = "enable_async_tensor_parallel",
            .words = "TP collectives overlapped with the GEMMs", .searched = true, .echo = kAlways,
            .when_not_given = [](ParallelPlan& p, const PlanKeyContext& c) {
                p.tp_comm_overlap = default_tp_comm_overlap(p, c.framework, c.arch);
            }},
    PlanKey{.name = "grad_fp32", .type = T::boolean, .field = field<&ParallelPlan::grad_fp32>(), .default_value = "true",
            .megatron = "--grad-reduce-in-bf16 (false)", .words = "fp32 main gradients", .echo = kAlways},
    // ZeRO-3 engine (docs/job-file-parallel.md "ZeRO-3 engine"); absent keys keep the framework's default.
    PlanKey{.name = "zero_bucket_params", .type = T::integer, .min = 0, .max = kMaxElems,
            .field = field<&ParallelPlan::zero_bucket_params>(), .default_value = "the framework's",
            .not_given = "training.framework's engine (estimate/zero3_time.cpp)",
            .words = "elements per parameter all-gather; 0 = one per layer", .echo = PlanKeyEcho::resolved, .refuse_given = needs_zero3},
    PlanKey{.name = "zero_reduce_bucket_params", .type = T::integer, .min = 0, .max = kMaxElems,
            .field = field<&ParallelPlan::zero_reduce_bucket_params>(), .default_value = "the framework's",
            .not_given = "training.framework's engine (estimate/zero3_time.cpp)",
            .words = "elements per gradient reduce-scatter; 0 = one per layer", .echo = PlanKeyEcho::resolved, .refuse_given = needs_zero3},
    PlanKey{.name = "zero_prefetch", .type = T::integer, .min = 0, .max = 64, .field = field<&ParallelPlan::zero_prefetch>(),
            .default_value = "the framework's",
            .not_given = "training.framework's engine (estimate/zero3_time.cpp)",
            .words = "parameter gathers issued ahead of use", .echo = PlanKeyEcho::resolved, .refuse_given = needs_zero3},
    PlanKey{.name = "zero_regather_recompute", .type = T::boolean, .field = field<&ParallelPlan::zero_regather_recompute>(),
            .default_value = "the framework's",
            .not_given = "training.framework's engine (estimate/zero3_time.cpp)",
            .words = "full recompute gathers a layer once more", .echo = PlanKeyEcho::resolved, .refuse_given = needs_zero3},
    PlanKey{.name = "zero_max_live_params", .type = T::integer, .min = 0, .max = kMaxElems,
            .field = field<&ParallelPlan::zero_max_live_params>(), .default_value = "the framework's",
            .not_given = "training.framework's engine (estimate/zero3_time.cpp)",
            .words = "cap on gathered elements alive; 0 = no cap", .echo = PlanKeyEcho::resolved, .refuse_given = needs_zero3},
    // Read last: derived from the degrees above.
    PlanKey{.name = "dp", .type = T::special, .min = 1, .max = kMaxDegree, .field = field<&ParallelPlan::dp>(),
            .default_value = "num_gpus / (tp x pp x cp)", .not_given = "derived; must agree when given",
            .torchtitan = "data_parallel_replicate_degree, data_parallel_shard_degree",
            .maxtext = "ici_data_parallelism, dcn_data_parallelism", .words = "data parallelism: model replicas",
            .searched = true, .echo = kAlways},
};

// Tripwire: ParallelPlan's fields, counted as the most initializers it takes
// (an aggregate), are the rows and schedule_given (set with pipeline_schedule).
struct AnyField {
    template <class F>
    operator F() const;  // NOLINT: declared only, for the count
};
template <class... A>
constexpr int aggregate_fields() {
    if constexpr (requires { ParallelPlan{A{}..., AnyField{}}; }) return aggregate_fields<A..., AnyField>();
    else return static_cast<int>(sizeof...(A));
}
static_assert(aggregate_fields() == static_cast<int>(kKeys.size()) + 1,
              "ParallelPlan has a field without a row in src/job/plan_keys.cpp (or a row too many)");

}  // namespace

std::span<const PlanKey> plan_keys() { return kKeys; }

const PlanKey* find_plan_key(std::string_view name) {
    for (const PlanKey& k : kKeys)
        if (name == k.name) return &k;
    return nullptr;
}

std::vector<std::string> plan_key_choices(const PlanKey& k) {
    std::vector<std::string> out;
    for (int i = 0; i < k.choices; ++i) out.emplace_back(k.choice(i));
    return out;
}

}  // namespace lostflops
