// Job -> Megatron-LM / Megatron-Core launch flags (interop.h): the inverse of
// megatron_import.cpp, flag by flag, so that importing the output gives the
// job back (tests/interop). Flag names from megatron/training/arguments.py
// (Megatron-LM core_r0.8.0; --attention-backend and --grad-reduce-in-bf16 as
// at d98e8a64, 2026-08). The vocabulary is written as padded; when it is
// not a multiple of 128 x tp, --make-vocab-size-divisible-by is lowered so
// that Megatron's padding leaves it as it is.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "interop/job_draft.h"
#include "interop/launch_rules.h"
#include "interop/megatron_export_model.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "job/recompute_modules.h"
#include "job/stage_layout.h"

namespace lostflops {

namespace {

struct Lines {
    std::vector<std::string> flags;
    void add(const std::string& flag, const std::string& value = "") {
        flags.push_back(value.empty() ? flag : flag + " " + value);
    }
    void add(const std::string& flag, int64_t value) { add(flag, std::to_string(value)); }
};

// Every virtual stage's layers in Megatron's layout syntax
// (pipeline_parallel_layer_layout.py): "Et*3|t*4|...|t*3L".
std::string layout_text(const Job& job) {
    const ParallelPlan& p = job.plan;
    std::string text;
    for (int v = 0; v < p.pp * p.vpp; ++v) {
        const VirtualStage st = virtual_stage(job, v % p.pp, v / p.pp);
        if (v > 0) text += '|';
        if (st.embedding) text += 'E';
        if (st.layers > 0) text += "t*" + std::to_string(st.layers);
        if (st.loss) text += 'L';
    }
    return text;
}

// Megatron refuses a layout beside --hybrid-layer-pattern: there the stages
// are '|' between the pattern's layers (arguments.py at d98e8a64). Moves a
// --pipeline-model-parallel-layout into the pattern.
void stages_into_hybrid_pattern(const Job& job, std::vector<std::string>& flags) {
    const std::string hybrid = "--hybrid-layer-pattern '", layout = "--pipeline-model-parallel-layout ";
    const auto find = [&](const std::string& prefix) {
        return std::find_if(flags.begin(), flags.end(), [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
    };
    const auto h = find(hybrid), l = find(layout);
    if (h == flags.end() || l == flags.end()) return;
    const std::string layers = h->substr(hybrid.size(), h->size() - hybrid.size() - 1);
    std::string pattern;
    const ParallelPlan& p = job.plan;
    for (int v = 0; v < p.pp * p.vpp; ++v) {
        const VirtualStage st = virtual_stage(job, v % p.pp, v / p.pp);
        if (v > 0) pattern += '|';
        pattern += layers.substr(st.first, st.layers);
    }
    *h = hybrid + pattern + "'";
    flags.erase(l);
}

}  // namespace

ExportResult export_megatron(const Job& job) {
    ExportResult out;
    const Model& m = job.model;
    const Training& t = job.training;
    const ParallelPlan& p = job.plan;
    if (t.framework == Framework::fsdp || t.framework == Framework::deepspeed || t.framework == Framework::hf)
        throw InputError(job.source, "training.framework",
                         std::string(to_string(t.framework)) + " is not a Megatron stack (lostflops export torchtitan for FSDP)");
    interop::check_launch_rules(job, launch_stack(t.framework));
    Lines l;
    interop::megatron_model_flags(m, l.flags, out.notes);
    l.add("--seq-length", t.seq_length);
    l.add("--max-position-embeddings", t.seq_length);
    l.add("--vocab-size", m.vocab);
    // Megatron pads to a multiple of divisible_by x tp: keep 128 when the
    // vocabulary already is one, else the largest divisor that leaves it.
    if (m.vocab % (128 * static_cast<int64_t>(p.tp)) != 0) {
        if (m.vocab % p.tp != 0) {
            out.notes.push_back({NoteKind::not_modelled, "model.vocab_size",
                                 "not a multiple of tp " + std::to_string(p.tp) + ": Megatron will pad it"});
        } else {
            l.add("--make-vocab-size-divisible-by", std::gcd(m.vocab / p.tp, int64_t{128}));
        }
    }
    l.add("--micro-batch-size", t.micro_batch);
    l.add("--global-batch-size", t.global_batch);
    if (t.train_tokens > 0) {
        const double samples = t.train_tokens / static_cast<double>(t.seq_length);
        if (samples == static_cast<double>(static_cast<int64_t>(samples)))
            l.add("--train-samples", static_cast<int64_t>(samples));
        else
            out.notes.push_back({NoteKind::not_modelled, "training.train_tokens", "not a whole number of sequences"});
    }
    if (t.precision == Precision::fp16) {
        l.add("--fp16");
    } else if (t.precision == Precision::fp32) {
        // No flag: Megatron trains in fp32 without --bf16 / --fp16.
    } else {
        l.add("--bf16");
        if (t.precision == Precision::fp8) l.add("--fp8-format", "hybrid");
    }
    if (t.framework == Framework::megatron_core) {
        l.add("--use-mcore-models");
        l.add("--transformer-impl", "transformer_engine");
        if (t.attention == AttentionKernel::unfused) l.add("--attention-backend", "unfused");
    } else {
        l.add("--use-legacy-models");
        l.add("--transformer-impl", "local");
        if (t.attention == AttentionKernel::flash) l.add("--use-flash-attn");
    }
    l.add("--tensor-model-parallel-size", p.tp);
    l.add("--pipeline-model-parallel-size", p.pp);
    if (p.layout) {
        l.add("--pipeline-model-parallel-layout", "'" + p.layout->text + "'");  // sets vpp too
    } else if (p.first_stage_layers >= 0 || p.last_stage_layers >= 0) {
        if (p.first_stage_layers >= 0) l.add("--decoder-first-pipeline-num-layers", p.first_stage_layers);
        if (p.last_stage_layers >= 0) l.add("--decoder-last-pipeline-num-layers", p.last_stage_layers);
        if (p.vpp > 1) l.add("--num-virtual-stages-per-pipeline-rank", p.vpp);
    } else if (m.layers % (p.pp * p.vpp) != 0) {
        // The default split's uneven stages, spelled out as Megatron takes them.
        l.add("--pipeline-model-parallel-layout", fmt::format("'{}'", layout_text(job)));
    } else if (p.vpp > 1) {
        l.add("--num-layers-per-virtual-pipeline-stage", m.layers / (p.pp * p.vpp));
    }
    stages_into_hybrid_pattern(job, l.flags);
    if (p.cp > 1) {
        l.add("--context-parallel-size", p.cp);
        if (p.cp_comm_type != CpCommType::p2p) l.add("--cp-comm-type", to_string(p.cp_comm_type));  // p2p: Megatron's default
    }
    if (p.ep > 1) l.add("--expert-model-parallel-size", p.ep);
    if (p.etp > 0) l.add("--expert-tensor-parallel-size", p.etp);
    if (p.ep > 1 || p.etp > 0) {
        l.add("--moe-token-dispatcher-type", p.moe_dispatcher == MoeDispatcher::deepep ? "flex" : to_string(p.moe_dispatcher));
        if (p.moe_dispatcher == MoeDispatcher::deepep) l.add("--moe-enable-deepep");
    }
    if (p.sequence_parallel) l.add("--sequence-parallel");
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
    // ZeRO-2, and ZeRO-3 with pp or ep (--use-torch-fsdp2 asserts pp 1 and ep 1,
    // arguments.py validate_args): Megatron-FSDP, sharding optim_grads /
    // optim_grads_params (its default).
    const bool megatron_fsdp = p.zero == 2 || (p.zero == 3 && (p.pp > 1 || p.ep > 1));
    if (p.zero == 1) l.add("--use-distributed-optimizer");
    if (megatron_fsdp) l.add("--use-megatron-fsdp");
    if (p.zero == 2) l.add("--data-parallel-sharding-strategy", "optim_grads");
    if (p.zero == 3 && !megatron_fsdp) l.add("--use-torch-fsdp2");
    if (p.overlap_grad_reduce) l.add("--overlap-grad-reduce");
    if (p.tp_comm_overlap) l.add("--tp-comm-overlap");
    if (!p.grad_fp32) {
        if (t.precision == Precision::fp16 || t.precision == Precision::fp32)
            out.notes.push_back({NoteKind::not_modelled, "parallel.grad_fp32",
                                 "Megatron reduces 16-bit gradients only with --bf16 (--grad-reduce-in-bf16)"});
        else
            l.add("--grad-reduce-in-bf16");
    }
    if (p.zero == 3 && (p.zero_bucket_params >= 0 || p.zero_prefetch >= 0 || p.zero_reduce_bucket_params >= 0 ||
                        p.zero_regather_recompute >= 0 || p.zero_max_live_params >= 0))
        out.notes.push_back({NoteKind::not_modelled, "parallel.zero_*", "FSDP engine settings have no Megatron flag"});

    const int per_node = job.cluster.gpus_per_node;
    const int nodes = (job.cluster.num_gpus + per_node - 1) / per_node;
    // Names are user text: escaped so that a newline in one cannot end the comment.
    std::string text = "# " + interop::comment_text(job.name) + ": " + std::to_string(job.cluster.num_gpus) + " x " +
                       interop::comment_text(job.cluster.gpu.name) + " (lostflops export megatron)\n";
    text += "torchrun --nnodes " + std::to_string(nodes) + " --nproc-per-node " +
            std::to_string(std::min(per_node, job.cluster.num_gpus)) + " pretrain_gpt.py \\\n";
    for (size_t i = 0; i < l.flags.size(); ++i) text += "    " + l.flags[i] + (i + 1 < l.flags.size() ? " \\\n" : "\n");
    out.text = std::move(text);
    return out;
}

}  // namespace lostflops
