// A job's parallel plan as Megatron-LM flags (megatron_export_parallel.h).
// Flag names and their rules from megatron/training/arguments.py at
// NVIDIA/Megatron-LM d98e8a64 (2026-08), validate_args: --use-torch-fsdp2
// asserts pp 1, ep 1 and no gradient-accumulation fusion (on by default:
// --no-gradient-accumulation-fusion turns it off); --use-megatron-fsdp asserts
// --ckpt-format fsdp_dtensor (written with the checkpoints,
// megatron_export.cpp). Expert flags only for a model with experts: a dense
// model has no expert layers for them to shape.
#include "interop/megatron_export_parallel.h"

#include <fmt/format.h>

#include "interop/export_launch.h"
#include "interop/megatron_export_stages.h"
#include "job/recompute_modules.h"

namespace lostflops::interop {

namespace {

struct Lines {
    std::vector<ExportLine> out;
    void add(const std::string& flag, const std::string& value = "") { out.push_back({value.empty() ? flag : flag + " " + value}); }
    void add(const std::string& flag, int64_t value) { add(flag, std::to_string(value)); }
};

void expert_flags(const Job& job, Lines& l) {
    const ParallelPlan& p = job.plan;
    if (p.ep > 1) l.add("--expert-model-parallel-size", p.ep);
    if (p.etp > 0) l.add("--expert-tensor-parallel-size", p.etp);
    if (p.ep > 1 || p.etp > 0) {
        l.add("--moe-token-dispatcher-type", p.moe_dispatcher == MoeDispatcher::deepep ? "flex" : to_string(p.moe_dispatcher));
        if (p.moe_dispatcher == MoeDispatcher::deepep) l.add("--moe-enable-deepep");
    }
    if (p.moe_a2a_overlap) l.add("--overlap-moe-expert-parallel-comm");
    if (p.moe_capacity_factor > 0) l.add("--moe-expert-capacity-factor", fmt::format("{}", p.moe_capacity_factor));
    if (p.moe_pad_to_capacity) l.add("--moe-pad-expert-input-to-capacity");
}

void recompute_flags(const ParallelPlan& p, Lines& l) {
    if (p.recompute == Recompute::selective) {
        l.add("--recompute-granularity", "selective");
        if (p.recompute_modules != kDefaultRecomputeModules) {
            std::string list;
            for (const std::string& n : recompute_module_names(p.recompute_modules)) list += (list.empty() ? "" : " ") + n;
            l.add("--recompute-modules", list);
        }
    } else if (p.recompute == Recompute::full) {
        l.add("--recompute-granularity", "full");
        if (p.recompute_layers >= 0) {
            l.add("--recompute-method", "block");
            l.add("--recompute-num-layers", p.recompute_layers);
        } else {
            l.add("--recompute-method", "uniform");
            l.add("--recompute-num-layers", 1);
        }
    }
}

}  // namespace

bool megatron_fsdp(const ParallelPlan& p) { return p.zero == 2 || (p.zero == 3 && (p.pp > 1 || p.ep > 1)); }

std::vector<ExportLine> megatron_parallel_flags(const Job& job, std::vector<std::string>& model_flags,
                                                std::vector<ImportNote>& notes) {
    const ParallelPlan& p = job.plan;
    const Training& t = job.training;
    Lines l;
    l.add("--tensor-model-parallel-size", p.tp);
    l.add("--pipeline-model-parallel-size", p.pp);
    for (const std::string& f : megatron_stage_flags(job, model_flags)) l.add(f);
    if (p.cp > 1) {
        l.add("--context-parallel-size", p.cp);
        if (p.cp_comm_type != CpCommType::p2p) l.add("--cp-comm-type", to_string(p.cp_comm_type));  // p2p: Megatron's default
    }
    if (job.model.is_moe()) expert_flags(job, l);
    if (moe_fp8_dispatch_priced(job))
        notes.push_back({NoteKind::not_modelled, "parallel.moe_fp8_dispatch",
                         "true: not written; Megatron-Core's flex dispatcher hands DeepEP the 16-bit hidden states "
                         "(megatron/core/transformer/moe/fused_a2a.py FusedDispatch), so the launch dispatches twice the bytes "
                         "priced"});
    if (p.sequence_parallel) l.add("--sequence-parallel");
    recompute_flags(p, l);
    // ZeRO-2, and ZeRO-3 with pp or ep: Megatron-FSDP, sharding optim_grads /
    // optim_grads_params (its default).
    if (p.zero == 1) l.add("--use-distributed-optimizer");
    if (megatron_fsdp(p)) l.add("--use-megatron-fsdp");
    if (p.zero == 2) l.add("--data-parallel-sharding-strategy", "optim_grads");
    if (p.zero == 3 && !megatron_fsdp(p)) {
        l.add("--use-torch-fsdp2");
        l.add("--no-gradient-accumulation-fusion");
    }
    if (p.overlap_grad_reduce) l.add("--overlap-grad-reduce");
    if (p.tp_comm_overlap) l.add("--tp-comm-overlap");
    if (!p.grad_fp32) {
        if (t.precision == Precision::fp16 || t.precision == Precision::fp32)
            notes.push_back({NoteKind::not_modelled, "parallel.grad_fp32",
                             "Megatron reduces 16-bit gradients only with --bf16 (--grad-reduce-in-bf16)"});
        else
            l.add("--grad-reduce-in-bf16");
    }
    if (p.zero == 3 && (p.zero_bucket_params >= 0 || p.zero_prefetch >= 0 || p.zero_reduce_bucket_params >= 0 ||
                        p.zero_regather_recompute >= 0 || p.zero_max_live_params >= 0))
        notes.push_back({NoteKind::not_modelled, "parallel.zero_*", "FSDP engine settings have no Megatron flag"});
    if (p.offload_activations && p.recompute != Recompute::full)
        notes.push_back({NoteKind::not_modelled, "parallel.offload_activations",
                         "not written: Megatron-Core's --cpu-offloading offloads whole layers (weights too, "
                         "--cpu-offloading-num-layers), not what the plan was priced with (the saved activations in "
                         "host memory); run as written they stay on the GPU"});
    return l.out;
}

}  // namespace lostflops::interop
