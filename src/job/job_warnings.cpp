// Warnings about a valid job (job.h, job_warnings): settings that are accepted
// but do nothing under this plan, or that cost much more than the user likely
// meant. Each names the key and says why with the job's own numbers. The
// rules follow the rank layout the cost model uses (Megatron-LM order: TP
// innermost, then CP, then DP; pipeline stages outermost; estimate/stage_time.cpp).
#include <algorithm>
#include <limits>
#include <cstdint>

#include <fmt/format.h>

#include "lostflops/accelerator.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/hf_attention.h"
#include "lostflops/job.h"
#include "lostflops/pipeline_schedules.h"
#include "job/layer_kinds.h"
#include "job/stage_layout.h"

namespace lostflops {

namespace {

std::string link_text(const Cluster& c) {
    return fmt::format("{:g} GB/s per GPU between nodes instead of {:g} GB/s within one", c.inter_node.bandwidth_GBps,
                       c.intra_node.bandwidth_GBps);
}

}  // namespace

std::vector<JobWarning> model_warnings(const Model& m) {
    std::vector<JobWarning> out;
    if (!m.not_modelled) return out;
    for (const auto& n : *m.not_modelled)
        out.push_back({"model." + n.key, n.kind == Model::NotModelled::Kind::not_modelled ? "not modelled: " + n.why : n.why});
    return out;
}

std::vector<JobWarning> job_warnings(const Job& job) {
    const Model& m = job.model;
    const Cluster& c = job.cluster;
    const Training& t = job.training;
    const ParallelPlan& p = job.plan;
    std::vector<JobWarning> out;
    const auto warn = [&out](const char* key, std::string message) { out.push_back({key, std::move(message)}); };
    // The scale-up domain: the node, an NVLink domain of several nodes or a TPU slice.
    const int gpn = c.scaleup_gpus();
    const bool nodes = c.num_gpus > gpn;  // more than one domain
    const std::string node = c.torus[0] > 0 ? "TPU slice" : c.nvlink_domain > 0 ? "NVLink domain" : "node";

    // ZeRO shards optimizer state (1), gradients (2) and parameters (3) over
    // the data-parallel ranks, dp x cp (Megatron-LM's distributed optimizer
    // and FSDP shard over the data-parallel group including context parallelism).
    // (Under framework hf zero is the precision recipe: autocast or FSDP2.)
    if (p.zero > 0 && static_cast<int64_t>(p.dp) * p.cp == 1 && job.training.framework != Framework::hf)
        warn("parallel.zero", fmt::format("zero: {} shards over the data-parallel ranks, and dp x cp = {} x {} = 1: "
                                          "nothing is sharded, so it does nothing here",
                                          p.zero, p.dp, p.cp));

    // The expert keys act on expert layers only: on a dense model each is
    // named, not dropped in silence (their defaults say nothing).
    if (!m.is_moe()) {
        const auto dense = [&](const char* key) {
            warn(key, "does nothing: the model has no mixture-of-experts layers");
        };
        if (p.moe_imbalance != 1.0) dense("parallel.moe_imbalance");
        if (p.moe_capacity_factor > 0) dense("parallel.moe_capacity_factor");
        if (p.moe_pad_to_capacity) dense("parallel.moe_pad_to_capacity");
        if (p.moe_a2a_overlap) dense("parallel.moe_a2a_overlap");
        if (p.moe_dispatcher != MoeDispatcher::alltoall) dense("parallel.moe_dispatcher");
    }
    // A capacity below 1 drops tokens at every expert however balanced the
    // routing: the run trains a model with fewer expert tokens than the
    // configured one (moe_kept_share; its FLOPs count the kept ones only).
    if (m.is_moe() && p.moe_capacity_factor > 0 && p.moe_capacity_factor < 1)
        warn("parallel.moe_capacity_factor",
             fmt::format("{:g} is below 1: each expert keeps at most {:.3g} % of its balanced share, so at least "
                         "{:.3g} % of the routed tokens skip their experts even when the routing is balanced; model "
                         "FLOPs and MFU count the kept tokens only",
                         p.moe_capacity_factor, 100 * p.moe_capacity_factor, 100 * (1 - p.moe_capacity_factor)));
    // transformers' experts under autocast run fp32 GEMMs on the CUDA cores
    // (workload/layer_work.h GemmShape::fp32_loop), priced from the
    // catalog's fp32 peak; without one they are priced as bf16.
    if (m.is_moe() && t.framework == Framework::hf && p.zero < 3 && t.precision != Precision::fp32 &&
        c.gpu.peak_fp32_tflops <= 0)
        warn("cluster.gpu", fmt::format("{} has no fp32 (CUDA-core) peak in its spec: transformers' experts, which run "
                                        "fp32 GEMMs under autocast, are priced as bf16 grouped GEMMs (too fast)",
                                        c.gpu.name));
    // Memory settings that act under one recompute mode only (the search
    // changes the mode and keeps them: a warning, not an error).
    if (p.remat_policy != RematPolicy::unset && p.recompute != Recompute::selective)
        warn("parallel.remat_policy", fmt::format("names what selective recompute saves; recompute is {}: ignored",
                                                  to_string(p.recompute)));
    if (p.offload_activations && p.recompute == Recompute::full)
        warn("parallel.offload_activations", "recompute full keeps only each layer's input already: ignored");
    // torch.compile fuses the eager chains of the PyTorch stacks
    // (workload/layer_work.cpp); Megatron runs its own fused kernels already.
    if (job.training.compile && (job.training.framework == Framework::megatron_lm ||
                                 job.training.framework == Framework::megatron_core))
        warn("training.compile", "changes only squared-ReLU MLPs on a Megatron stack: its norm, rotary and SwiGLU "
                                 "kernels are fused already");
    // transformers' KV cache under torch.compile (spec.h Training::use_cache):
    // the cache is inside the compiled graph, whose launch counts were read on
    // traces that had it (workload/host_ops_hf.cpp hf_compiled_host_ops).
    if (job.training.use_cache && job.training.compile)
        warn("training.use_cache", "not priced under torch.compile: the cache's copies are inside the compiled "
                                   "graph, whose kernels were counted on compiled traces that had one, and its fp32 "
                                   "keys and values, a graph output, are not in the memory");
    // Flash attention kernels take 16-bit inputs only (job/job.cpp, attention: auto).
    if (job.training.precision == Precision::fp32 && job.training.attention == AttentionKernel::flash &&
        (job.training.framework == Framework::megatron_core || job.training.framework == Framework::megatron_lm))
        warn("training.attention", "flash with precision fp32: flash and fused attention kernels take only "
                                   "bf16/fp16 inputs; Megatron runs fp32 attention unfused (attention: auto)");
    // FP8 copies exist only in fp8 training (ParallelPlan::moe_fp8_dispatch).
    if (p.moe_fp8_dispatch && job.training.precision != Precision::fp8)
        warn("parallel.moe_fp8_dispatch", "does nothing without precision fp8: the dispatch carries 16-bit tokens");
    // A recipe its stack does not run (lostflops/fp8_recipe.h te_runs,
    // torchao_runs) is priced as asked, and said so with the ones it runs.
    if (job.training.precision == Precision::fp8 && !job.training.fp8_recipe_auto) {
        const bool torchao = fp8_casts_by_torchao(job.training.framework);
        const Fp8RecipeRow& r = fp8_recipe_row(job.training.fp8_recipe);
        if (!(torchao ? r.torchao_runs : r.te_runs)) {
            std::string runs;
            for (const Fp8RecipeRow& row : kFp8Recipes)
                if (torchao ? row.torchao_runs : row.te_runs) runs += std::string(runs.empty() ? "" : ", ") + row.name;
            warn("training.fp8_recipe",
                 torchao ? fmt::format("{}: not a recipe of torchao's converters ({}; delayed scaling was removed in "
                                       "v0.10, pytorch/ao#1753); priced as asked behind a norm that writes 16-bit",
                                       r.name, runs)
                         : fmt::format("{}: Transformer Engine has no {} recipe (Megatron-Core --fp8-recipe: {}); "
                                       "priced as asked behind Transformer Engine's casts",
                                       r.name, r.name, runs));
        }
    }
    // A TPU job runs under MaxText (`export maxtext`), whose pipeline is its own
    // (AI-Hypercomputer/maxtext src/maxtext/layers/pipeline.py: circular
    // pipelining over num_pipeline_repeats, no named schedules): a schedule
    // beyond the 1F1B family is priced as named but has no MaxText launch.
    if (p.pp > 1 && p.schedule_given && !one_f_one_b_family(p.schedule) && xla_compiled(c.gpu.arch))
        warn("parallel.pipeline_schedule",
             fmt::format("{} on a TPU job: MaxText, which launches it, runs its own circular pipeline and takes no "
                         "schedule by name; the step is priced as {}",
                         schedule_info(p.schedule).name, schedule_info(p.schedule).words));
    // DualPipe(V) overlaps one micro-batch's forward with another's backward by
    // its schedule (DeepSeek-V3 report sec. 3.2.1): moe_a2a_overlap adds nothing.
    if (p.moe_a2a_overlap && !standard_mapping(p))
        warn("parallel.moe_a2a_overlap",
             "does nothing under a DualPipe schedule: its F&B passes already overlap the expert all-to-all");
    // The expert all-to-all leaves the node when etp x ep is more than a node
    // (MoE parallel folding: ep ranks etp apart, cost/expert_dispatch.h).
    if (p.ep > 1 && nodes && static_cast<int64_t>(p.expert_tp()) * p.ep > gpn)
        warn("parallel.ep",
             fmt::format("etp x ep = {} x {} is more than the {} GPUs of a {}: the expert all-to-all (four per MoE "
                         "layer and micro-batch) crosses {}s at {}",
                         p.expert_tp(), p.ep, gpn, node, node, link_text(c)));

    // TP groups are consecutive ranks; they stay inside a node only when tp
    // divides gpus_per_node.
    if (p.tp > 1 && nodes && p.tp > gpn)
        warn("parallel.tp",
             fmt::format("tp {} is more than the {} GPUs of a {}: every tensor-parallel group spans {} {}s, and "
                         "its collectives (several per layer, on the critical path) run at {}",
                         p.tp, gpn, node, (p.tp + gpn - 1) / gpn, node, link_text(c)));
    else if (p.tp > 1 && nodes && gpn % p.tp != 0)
        warn("parallel.tp",
             fmt::format("tp {} does not divide the {} GPUs of a {}: some tensor-parallel groups straddle two "
                         "{}s, and their collectives (several per layer) run at {}",
                         p.tp, gpn, node, node, link_text(c)));

    // Context-parallel groups: cp ranks tp apart, within tp x cp consecutive ranks.
    const int64_t tp_cp = static_cast<int64_t>(p.tp) * p.cp;
    if (p.cp > 1 && nodes && tp_cp > gpn)
        warn("parallel.cp",
             fmt::format("tp x cp = {} x {} = {} is more than the {} GPUs of a {}: the context-parallel ring "
                         "passes its key/value blocks every layer at {}",
                         p.tp, p.cp, tp_cp, gpn, node, link_text(c)));

    // Sequence parallelism splits norms and dropout over the TP group;
    // Megatron-LM turns it off when tp = 1 (arguments.py).
    if (p.sequence_parallel && p.tp == 1)
        warn("parallel.sequence_parallel",
             "sequence parallelism splits the activations of the tensor-parallel group; with tp = 1 it does nothing");
    if (p.tp_comm_overlap && p.tp == 1)
        warn("parallel.tp_comm_overlap",
             "overlaps tensor-parallel collectives with the GEMMs; with tp = 1 there are none, so it does nothing");

    // Context parallelism of state-space and linear-attention layers
    // (Megatron-Core splits their heads by an all-to-all) is not modelled.
    if (p.cp > 1)
        for (const LayerKind& k : m.kinds())
            if (!mixer_row(k.mixer).cp_modelled) {
                warn("parallel.cp", fmt::format("context parallelism of the {} layers is not modelled: they move no "
                                                "context-parallel traffic here",
                                                to_string(k.mixer)));
                break;
            }

    // Layers split over pp x vpp virtual stages (job/stage_layout.h, the
    // default split; a layout the job gives is its own choice). A rank runs
    // its chunks one after another, so the steady state runs at the pace of
    // the rank with the most layers and the others idle the difference; an
    // uneven split whose ranks hold equal totals (80 layers as 44 stages on
    // pp 4: 20 on each) idles none of them in the steady state.
    const int stages = p.pp * p.vpp;
    if (stages > 1 && m.layers % stages != 0 && default_split(p)) {
        const int lo = m.layers / stages;
        const int fuller = m.layers % stages;
        int64_t most = 0, fewest = std::numeric_limits<int64_t>::max();
        for (int r = 0; r < p.pp; ++r) {
            const int64_t n = default_rank_split(m.layers, p.pp, p.vpp, r).layers();
            most = std::max(most, n);
            fewest = std::min(fewest, n);
        }
        if (most > fewest)
            warn(p.vpp > 1 ? "parallel.vpp" : "parallel.pp",
                 fmt::format("num_hidden_layers {} does not split evenly over pp x vpp = {} x {} = {} stages: {} hold {} "
                             "layers and {} hold {}; the pipeline ranks hold {} to {} layers, so the emptiest idles "
                             "about {:.0f} % of the steady state",
                             m.layers, p.pp, p.vpp, stages, fuller, lo + 1, stages - fuller, lo, fewest, most,
                             100.0 * static_cast<double>(most - fewest) / static_cast<double>(most)));
    }

    // 1F1B pipeline bubble: (pp - 1) stage-times of fill and drain against
    // vpp * m of work (Narayanan et al. 2021, sec. 2.2).
    const int64_t mb = p.micro_batches(t);
    if (p.pp > 1 && mb < p.pp) {
        const double bubble = (p.pp - 1.0) / (static_cast<double>(p.vpp) * mb + p.pp - 1.0);
        warn("training.global_batch_size",
             fmt::format("micro-batches per step ({}) are fewer than the pp = {} pipeline stages: the pipeline is "
                         "idle about {:.0f} % of the step (fill and drain); more micro-batches (a larger "
                         "global_batch_size or a smaller micro_batch_size) or a smaller pp shrink it",
                         mb, p.pp, 100.0 * bubble));
    }

    if (p.recompute != Recompute::selective && p.recompute_modules != (1u << static_cast<int>(RecomputeModule::core_attn)))
        warn("parallel.recompute_modules",
             std::string("applies to recompute: selective (Megatron-Core reads --recompute-modules only with "
                         "--recompute-granularity selective); unused with recompute ") + to_string(p.recompute));

    if (p.recompute == Recompute::full && p.recompute_layers == 0)
        warn("parallel.recompute_layers",
             "0 layers of each stage are recomputed: recompute: full does nothing, the same as recompute: none");

    // DeepSpeed's pipeline engine refuses ZeRO stages 2 and 3
    // (deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible
    // with pipeline parallelism").
    if (t.framework == Framework::deepspeed && p.pp > 1 && p.zero >= 2)
        warn("parallel.zero", fmt::format("zero: {} with pp = {}: DeepSpeed's pipeline engine supports ZeRO stages 0 "
                                          "and 1 only; the real run would refuse this plan",
                                          p.zero, p.pp));

    // training.attention: flash said under framework hf is from_pretrained's
    // attn_implementation (hf_attention.h hf_attention_keeps_scores): said where it
    // replaces the model's own eager attention, or cannot (`unfused`, eager,
    // exists for every model and needs no word).
    if (t.framework == Framework::hf && !t.attention_auto && t.attention == AttentionKernel::flash &&
        m.hf_eager_scores && !t.xla) {
        if (hf_fused_attention_runs(m, t) && m.hf_fused == Model::HfFused::sink_kernels)
            warn("training.attention", "flash: priced as a fused kernel that takes the attention sinks "
                                       "(from_pretrained's attn_implementation flash_attention_*, which transformers "
                                       "corrects to kernels-community/vllm-flash-attn3, or flex_attention; it has no "
                                       "sdpa for this model) in place of the model's own eager attention, which keeps "
                                       "its scores in memory");
        else if (hf_fused_attention_runs(m, t))
            warn("training.attention", "flash: priced as a fused kernel (from_pretrained's attn_implementation sdpa "
                                       "or flash_attention_2) in place of the model's own eager attention, which "
                                       "keeps its scores in memory (its family's default or its config's "
                                       "attn_implementation)");
        else if (m.hf_fused == Model::HfFused::none)
            warn("training.attention", "flash: transformers has no fused attention for this model (it refuses sdpa "
                                       "and flash_attention_2); priced as its own eager attention, scores in memory");
        else if (m.hf_fused == Model::HfFused::sink_kernels)
            warn("training.attention", "flash with precision fp32: this model's attention sinks run fused only in "
                                       "a flash kernel (kernels-community/vllm-flash-attn3), which takes only "
                                       "bf16/fp16 inputs; priced as its own eager attention, scores in memory");
        else
            warn("training.attention", "flash with precision fp32: this model's one fused attention is "
                                       "flash_attention_2, which takes only bf16/fp16 inputs; priced as its own "
                                       "eager attention, scores in memory");
    }

    // The stack is the largest choice an estimate makes for a one-node job,
    // and `auto` could not read it off the job: a Hugging Face model is as
    // often trained in eager PyTorch (Trainer, accelerate, a plain loop) as
    // under Megatron; the stacks' kernels and host operators: docs/job-file.md
    // "Frameworks". Only where hf could price the job (job/validate.cpp
    // hf_rules: torch's AdamW, no fp8, softmax attention; data parallelism,
    // recompute none or full) and not on XLA.
    bool hf_could = t.optimizer == Optimizer::adam && t.precision != Precision::fp8 && !t.xla && p.tp == 1 &&
                    p.pp == 1 && p.cp == 1 && p.ep == 1 && p.recompute != Recompute::selective;
    for (const LayerKind& k : m.kinds()) hf_could = hf_could && mixer_row(k.mixer).not_in_eager_ledger == nullptr;
    if (t.framework_guessed_for_hf_model && !nodes && hf_could)
        warn("training.framework",
             fmt::format("not given: priced as {} ({}), the default when the job's source names no stack this "
                         "reader knows. A transformers model trained in eager PyTorch (Trainer, accelerate or a "
                         "plain loop) is framework hf: eager norms, rotary and casts through fp32 and more host "
                         "operators a layer, often much slower on one {} (--set training.framework=hf prices it so). "
                         "Say which stack runs it: training.framework hf, fsdp, deepspeed, megatron-core or "
                         "megatron-lm",
                         to_string(t.framework),
                         t.framework == Framework::megatron_lm ? "Megatron-LM's legacy stack: its unfused softmax "
                                                                 "attention, fused norms"
                                                               : "Megatron-Core's fused kernels",
                         node));

    return out;
}

}  // namespace lostflops
