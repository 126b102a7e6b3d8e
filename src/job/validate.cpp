// Plan consistency checks. The rules follow Megatron-LM's argument checks
// (megatron/training/arguments.py): heads and query groups divisible by TP,
// GPUs by TP*PP*CP, global batch by DP*micro-batch, layers by PP*VPP, and the
// interleaved schedule's micro-batch count divisible by PP.
#include "job/validate.h"

#include <vector>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_schedules.h"
#include "job/layer_kinds.h"
#include "job/stage_layout.h"

namespace lostflops {

namespace {

// `related`: the other keys the rule reads (PlanError::related).
[[noreturn]] void fail(const Job& job, const std::string& key, const std::string& msg,
                       std::vector<std::string> related = {}) {
    throw PlanError(job.source, key, msg, std::move(related));
}

// A Hugging Face model in eager PyTorch (framework hf): its ledger
// (workload/eager_ledger.cpp) is written for softmax-attention layers,
// torch's AdamW and bf16/fp16 autocast or FSDP2's bf16; anything else is
// refused by name rather than priced as something it is not.
void hf_rules(const Job& job) {
    const Training& t = job.training;
    if (t.framework != Framework::hf) return;
    if (t.optimizer != Optimizer::adam)
        fail(job, "training.optimizer",
             fmt::format("{}: a Hugging Face model trains with torch's AdamW, fp32 moments beside fp32 weights (use "
                         "adam)", to_string(t.optimizer)),
             {"training.framework"});
    if (t.precision == Precision::fp8)
        fail(job, "training.precision",
             "fp8: framework hf's recipes are bf16 autocast over fp32 weights or FSDP2's bf16 compute; fp8 training "
             "is torchtitan's (framework fsdp, torchao Float8Linear) or Transformer Engine's (megatron-core)",
             {"training.framework"});
    for (const LayerKind& k : job.model.kinds())
        if (const char* lacks = mixer_row(k.mixer).not_in_eager_ledger)
            fail(job, "training.framework",
                 fmt::format("hf: the eager ledger covers softmax attention; the model has {} layers (use fsdp or "
                             "megatron-core)", lacks),
                 {"model"});
}

// Megatron-Core's checks of recompute_modules (transformer_config.py
// __post_init__): mla_up_proj needs multi-latent attention; torchtitan's
// per-op policy (framework fsdp) has no module list.
void recompute_modules_rules(const Job& job) {
    const ParallelPlan& p = job.plan;
    if (p.recompute != Recompute::selective) return;
    if (job.training.framework == Framework::fsdp)
        fail(job, "parallel.recompute_modules",
             "Megatron-Core's module list; framework fsdp's selective recompute is torchtitan's per-op policy",
             {"training.framework"});
    if (!p.recomputes(RecomputeModule::mla_up_proj)) return;
    for (const LayerKind& k : job.model.kinds())
        if (mixer_row(k.mixer).up_proj_module) return;
    fail(job, "parallel.recompute_modules",
         "mla_up_proj needs multi-latent attention (Megatron-Core: \"only supported with multi_latent_attention\"); "
         "the model has none",
         {"model"});
}

std::optional<PlanIssue> divides(int64_t n, int64_t tp, const char* what) {
    if (n % tp == 0) return std::nullopt;
    return PlanIssue{"parallel.tp", fmt::format("{} {} is not divisible by tp {}", what, n, tp)};
}

}  // namespace

// The custom stage layouts against the model (Megatron-Core's checks in
// transformer_block.get_num_layers_to_build and pipeline_parallel_layer_layout.py).
std::optional<PlanIssue> stage_layout_issue(const Job& job) {
    const Model& m = job.model;
    const ParallelPlan& p = job.plan;
    const int stages = p.pp * p.vpp;
    if (p.layout) {
        const PipelineLayout& l = *p.layout;
        const char* key = "parallel.pipeline_layout";
        if (static_cast<int>(l.stages.size()) != stages)
            return PlanIssue{key, fmt::format("{} stages; pp x vpp = {} x {} = {} expected", l.stages.size(), p.pp,
                                              p.vpp, stages)};
        int layers = 0, mtp = 0;
        for (const auto& st : l.stages) layers += st.layers, mtp += st.mtp;
        if (layers != m.layers)
            return PlanIssue{key, fmt::format("{} decoder layers (t); the model has num_hidden_layers {}", layers, m.layers)};
        if (mtp != 0 && mtp != m.mtp_layers)
            return PlanIssue{key, fmt::format("{} multi-token prediction modules (m); the model has {}", mtp, m.mtp_layers)};
        return std::nullopt;
    }
    if (p.first_stage_layers < 0 && p.last_stage_layers < 0) {
        if (m.layers < stages)
            return PlanIssue{"parallel.pp", fmt::format("num_hidden_layers {} is fewer than pp*vpp = {}*{} virtual stages",
                                                        m.layers, p.pp, p.vpp)};
        return std::nullopt;
    }
    const char* key = p.first_stage_layers >= 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
    if (p.pp < 2) return PlanIssue{key, "needs pp > 1"};
    int rest = m.layers, ranks = p.pp;
    for (const int n : {p.first_stage_layers, p.last_stage_layers}) {
        if (n < 0) continue;
        if (n % p.vpp != 0) return PlanIssue{key, fmt::format("{} layers do not split over vpp {} chunks", n, p.vpp)};
        rest -= n, --ranks;
    }
    if (rest < 0) return PlanIssue{key, fmt::format("more layers than the model's {}", m.layers)};
    if (ranks == 0 ? rest != 0 : rest % (ranks * p.vpp) != 0)
        return PlanIssue{key, fmt::format("the other {} layers do not split evenly over the other {} ranks x vpp {}", rest,
                                          ranks, p.vpp)};
    return std::nullopt;
}

std::optional<PlanIssue> tp_issue(const Model& m, int64_t tp) {
    for (const LayerKind& k : m.kinds()) {
        std::optional<PlanIssue> issue;
        if (std::string why = mixer_fns(k.mixer).tp_problem(k, tp); !why.empty()) return PlanIssue{"parallel.tp", why};
        if (k.mlp.kind != MlpKind::none && (issue = divides(k.mlp.ffn, tp, "intermediate_size"))) return issue;
        if (k.is_moe()) {
            if ((issue = divides(k.moe.expert.ffn, tp, "moe_intermediate_size"))) return issue;
            if ((issue = divides(k.moe.shared_ffn, tp, "the shared experts' width"))) return issue;
        }
    }
    if (m.vocab < tp) return PlanIssue{"parallel.tp", "tp is larger than the vocabulary"};
    return std::nullopt;
}

// The schedule's requirements (lostflops/pipeline_schedules.h): its vpp, an
// even pp, enough and even micro-batches.
std::optional<PlanIssue> schedule_issue(const ParallelPlan& p, int64_t micro_batches) {
    const ScheduleInfo& si = schedule_info(effective_schedule(p));
    const std::string key = "parallel.pipeline_schedule";
    // The 1F1B family: the named one against vpp, then its twin's rules are its own.
    const ScheduleInfo& named = schedule_info(p.schedule);
    if (p.schedule_given && one_f_one_b_family(p.schedule) && !named.interleaves && p.vpp > 1)
        return PlanIssue{key, fmt::format("{} runs one chunk per rank, vpp is {}: use {}, or vpp 1", named.name, p.vpp,
                                          schedule_info(named.vpp_twin).name)};
    if (p.schedule_given && one_f_one_b_family(p.schedule) && named.interleaves && p.vpp == 1)
        return PlanIssue{key, fmt::format("{} needs vpp > 1 (parallel.vpp)", named.name)};
    if (one_f_one_b_family(si.id)) return std::nullopt;
    if (p.pp == 1) return PlanIssue{key, fmt::format("{} needs pp > 1", si.name)};
    if (si.vpp != 0 && p.vpp != si.vpp)
        return PlanIssue{key, fmt::format("{} runs vpp {} (parallel.vpp is {})", si.name, si.vpp, p.vpp)};
    if (si.even_pp && p.pp % 2 != 0) return PlanIssue{key, fmt::format("{} needs an even pp, pp is {}", si.name, p.pp)};
    if (si.even_microbatches && micro_batches % 2 != 0)
        return PlanIssue{key, fmt::format("{} needs an even number of micro-batches per step, there are {}", si.name,
                                          micro_batches)};
    if (micro_batches < static_cast<int64_t>(si.min_microbatch_per_p) * p.pp)
        return PlanIssue{key, fmt::format("{} needs at least {} x pp = {} micro-batches per step, there are {} ({})",
                                          si.name, si.min_microbatch_per_p, si.min_microbatch_per_p * p.pp,
                                          micro_batches, si.source)};
    return std::nullopt;
}

// FSDP2's fp32 shards are themselves the master weights: no 16-bit copy to
// rebuild them from (lostflops/spec.h Optimizer).
std::optional<PlanIssue> optimizer_issue(const Training& t, int zero) {
    if (t.optimizer == Optimizer::adam || t.framework != Framework::fsdp || zero < 3) return std::nullopt;
    return PlanIssue{"training.optimizer",
                     fmt::format("{}: FSDP2 (framework fsdp, zero 3) keeps fp32 shards as the master weights and "
                                 "torch's AdamW its fp32 moments (use adam)",
                                 to_string(t.optimizer))};
}

void validate_job(const Job& job, JobChecks checks) {
    const Model& m = job.model;
    const Cluster& c = job.cluster;
    const Training& t = job.training;
    const ParallelPlan& p = job.plan;

    for (const LayerKind& k : m.kinds())
        if (const KindProblem pr = kind_problem(k, m.hidden); !pr.key.empty()) fail(job, pr.key, pr.message, {"model"});
    if (c.num_gpus % c.gpus_per_node != 0 && c.num_gpus > c.gpus_per_node)
        fail(job, "cluster.num_gpus",
             fmt::format("{} GPUs do not fill whole nodes of {}", c.num_gpus, c.gpus_per_node), {"cluster.gpus_per_node"});
    // A headroom of the whole memory or more leaves no plan room: refused, not
    // cut down to the usable memory (which printed a shortfall of the job's
    // own peak, and a headroom the user did not give).
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    if (c.gpu.memory_bytes > 0 && c.memory_headroom_bytes >= static_cast<double>(c.gpu.memory_bytes))
        fail(job, "cluster.memory_headroom",
             fmt::format("{:g} GiB is at least the whole memory of a {} ({:.1f} GiB): no plan can keep that much "
                         "free; give less, or a share (\"10 %\")",
                         c.memory_headroom_bytes / kGiB, c.gpu.name, static_cast<double>(c.gpu.memory_bytes) / kGiB),
             {"cluster.gpu"});
    if (t.precision == Precision::fp8 && c.gpu.peak_tflops(Precision::bf16) <= 0)
        fail(job, "cluster.gpu.peak_tflops.bf16", "fp8 training runs attention in bf16: a bf16 peak is needed", {"training.precision"});
    if (t.precision == Precision::fp32 && !p.grad_fp32)
        fail(job, "parallel.grad_fp32",
             "false reduces 16-bit gradients (--grad-reduce-in-bf16), which needs bf16 training; fp32 training's "
             "gradients are fp32",
             {"training.precision"});
    if (t.precision == Precision::fp32 && c.gpu.peak_tflops(Precision::fp32) <= 0)
        fail(job, "training.precision",
             fmt::format("fp32 training runs its GEMMs as TF32 and {} has no TF32 dense peak "
                         "(cluster.gpu.peak_tflops.tf32); give one in an inline GPU spec",
                         c.gpu.name),
             {"cluster.gpu"});
    if (c.gpu.peak_tflops(t.precision) <= 0)
        fail(job, "training.precision",
             fmt::format("{} has no {} tensor cores", c.gpu.name, to_string(t.precision)), {"cluster.gpu"});
    if (checks == JobChecks::without_plan) return;
    if (const auto issue = tp_issue(m, p.tp)) fail(job, issue->key, issue->message, {"model", "parallel.tp"});
    const int64_t model_par = static_cast<int64_t>(p.tp) * p.pp * p.cp;
    if (c.num_gpus % model_par != 0)
        fail(job, "cluster.num_gpus",
             fmt::format("{} GPUs are not divisible by tp*pp*cp = {}", c.num_gpus, model_par), {"parallel.tp", "parallel.pp", "parallel.cp"});
    if (static_cast<int64_t>(p.dp) * model_par != c.num_gpus)
        fail(job, "parallel.dp",
             fmt::format("dp {} disagrees with num_gpus/(tp*pp*cp) = {}", p.dp, c.num_gpus / model_par), {"cluster.num_gpus", "parallel.tp", "parallel.pp", "parallel.cp"});
    if (t.global_batch % (static_cast<int64_t>(p.dp) * t.micro_batch) != 0)
        fail(job, "training.global_batch_size",
             fmt::format("{} is not divisible by dp*micro_batch_size = {}*{}", t.global_batch, p.dp,
                         t.micro_batch), {"training.micro_batch_size", "parallel.dp", "cluster.num_gpus", "parallel.tp", "parallel.pp", "parallel.cp"});
    if (const auto issue = stage_layout_issue(job))
        fail(job, issue->key, issue->message,
             {"parallel.pp", "parallel.vpp", "parallel.pipeline_layout", "parallel.first_stage_layers",
              "parallel.last_stage_layers", "model"});
    const int per_stage_max = max_stage_layers(job);
    if (p.recompute_layers > per_stage_max)
        fail(job, "parallel.recompute_layers",
             fmt::format("{} is more than the {} layers of a virtual pipeline stage ({} layers over pp*vpp = {}*{}); "
                         "leave it out to recompute every layer",
                         p.recompute_layers, per_stage_max, m.layers, p.pp, p.vpp),
             {"parallel.pp", "parallel.vpp", "parallel.pipeline_layout", "parallel.first_stage_layers",
              "parallel.last_stage_layers", "model.num_hidden_layers"});
    if (p.recompute_modules != (1u << static_cast<int>(RecomputeModule::core_attn)))
        recompute_modules_rules(job);
    if (const auto issue = schedule_issue(p, p.micro_batches(t))) fail(job, issue->key, issue->message);
    if (p.vpp > 1 && p.pp == 1) fail(job, "parallel.vpp", "vpp > 1 needs pp > 1", {"parallel.pp"});
    if (const auto issue = optimizer_issue(t, p.zero))
        fail(job, issue->key, issue->message, {"training.framework", "parallel.zero"});
    hf_rules(job);
    if (schedule_info(effective_schedule(p)).interleaves && p.micro_batches(t) % p.pp != 0)
        fail(job, "parallel.vpp",
             fmt::format("the interleaved schedule needs micro-batches per step ({}) divisible by pp {}",
                         p.micro_batches(t), p.pp), {"parallel.pp", "training.global_batch_size", "training.micro_batch_size", "parallel.dp", "cluster.num_gpus"});
    if (p.cp > 1 && t.seq_length % (2 * p.cp) != 0)
        fail(job, "parallel.cp",
             fmt::format("seq_length {} is not divisible by 2*cp = {}", t.seq_length, 2 * p.cp), {"training.seq_length"});
    if (p.ep > 1 && !m.is_moe()) fail(job, "parallel.ep", "ep > 1 needs a mixture-of-experts model", {"model"});
    if (m.is_moe()) {
        for (const LayerKind& k : m.kinds())
            if (k.is_moe() && k.moe.experts % p.ep != 0)
                fail(job, "parallel.ep",
                     fmt::format("num_local_experts {} is not divisible by ep {}", k.moe.experts, p.ep), {"model"});
        // MoE parallel folding (Megatron-Core parallel_state.py): the expert
        // layers lay the tp*cp*dp ranks of a stage out again as etp x ep x edp,
        // so world_size must divide by etp*ep*pp.
        const int etp = p.expert_tp();
        const int64_t dense = static_cast<int64_t>(p.tp) * p.cp * p.dp;
        const int64_t folded = static_cast<int64_t>(etp) * p.ep;
        if (dense % folded != 0)
            fail(job, p.etp > 0 ? "parallel.etp" : "parallel.ep",
                 fmt::format("etp x ep = {} x {} = {} must divide tp x cp x dp = {} x {} x {} = {} (the expert layers "
                             "lay the same GPUs out as etp x ep x expert-dp){}",
                             etp, p.ep, folded, p.tp, p.cp, p.dp, dense,
                             p.etp > 0 ? "" : "; etp is tp when not given, parallel.etp: 1 folds experts over tp too"));
        // Padded to capacity, an expert takes c x its share of a rank's routed
        // tokens, but never more than all of them (Megatron-Core's
        // apply_router_token_dropping keeps every token once the capacity
        // passes the rank's tokens): c above experts / top_k is refused, not
        // priced as more padding than Megatron runs.
        for (const LayerKind& k : m.kinds())
            if (k.is_moe() && p.moe_pad_to_capacity && k.moe.top_k > 0 &&
                p.moe_capacity_factor > static_cast<double>(k.moe.experts) / k.moe.top_k)
                fail(job, "parallel.moe_capacity_factor",
                     fmt::format("{:g} pads each expert to more than all of a rank's tokens (experts / top_k = {} / {}); "
                                 "give at most {:g}",
                                 p.moe_capacity_factor, k.moe.experts, k.moe.top_k,
                                 static_cast<double>(k.moe.experts) / k.moe.top_k), {"parallel.moe_pad_to_capacity"});
        for (const LayerKind& k : m.kinds())
            if (k.is_moe() && k.moe.expert.ffn % etp != 0)
                fail(job, p.etp > 0 ? "parallel.etp" : "parallel.tp",
                     fmt::format("the experts' width {} is not divisible by etp {}", k.moe.expert.ffn, etp));
    } else if (p.etp > 1) {
        fail(job, "parallel.etp", "etp > 1 needs a mixture-of-experts model");
    }
    if (p.sequence_parallel && p.tp > 1 && (t.seq_length / p.cp) % p.tp != 0)
        fail(job, "parallel.sequence_parallel",
             fmt::format("seq_length/cp = {} is not divisible by tp {}", t.seq_length / p.cp, p.tp), {"training.seq_length", "parallel.cp", "parallel.tp"});
    // The pipeline schedules (closed form and simulation) handle up to 5e7
    // (micro-batch, virtual stage) cells; real steps have thousands.
    if (static_cast<double>(p.micro_batches(t)) * p.pp * p.vpp > 5e7)
        fail(job, "training.global_batch_size",
             fmt::format("{} micro-batches per step on {} virtual stages is beyond what can be scheduled "
                         "(at most 5e7 micro-batch passes per step)", p.micro_batches(t), p.pp * p.vpp), {"training.micro_batch_size", "parallel.pp", "parallel.vpp", "parallel.dp"});
}

}  // namespace lostflops
