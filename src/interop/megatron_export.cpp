// Job -> Megatron-LM / Megatron-Core launch flags (interop.h): the inverse of
// megatron_import.cpp, flag by flag, so that importing the output gives the
// job back (tests/interop). Flag names from megatron/training/arguments.py
// (Megatron-LM core_r0.8.0; --attention-backend and --grad-reduce-in-bf16 as
// at d98e8a64, 2026-08). The vocabulary is written as padded; when it is
// not a multiple of 128 x tp, --make-vocab-size-divisible-by is lowered so
// that Megatron's padding leaves it as it is.
#include <numeric>

#include "interop/megatron_export_model.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

namespace lostflops {

namespace {

struct Lines {
    std::vector<std::string> flags;
    void add(const std::string& flag, const std::string& value = "") {
        flags.push_back(value.empty() ? flag : flag + " " + value);
    }
    void add(const std::string& flag, int64_t value) { add(flag, std::to_string(value)); }
};

}  // namespace

ExportResult export_megatron(const Job& job) {
    ExportResult out;
    const Model& m = job.model;
    const Training& t = job.training;
    const ParallelPlan& p = job.plan;
    if (t.framework == Framework::fsdp || t.framework == Framework::deepspeed)
        throw InputError(job.source, "training.framework",
                         std::string(to_string(t.framework)) + " is not a Megatron stack (lostflops export torchtitan for FSDP)");
    if (p.zero == 2)
        throw InputError(job.source, "parallel.zero",
                         "Megatron has no ZeRO-2 (--use-distributed-optimizer is ZeRO-1, --use-torch-fsdp2 is ZeRO-3)");
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
    if (p.vpp > 1) {
        if (m.layers % (p.pp * p.vpp) == 0)
            l.add("--num-layers-per-virtual-pipeline-stage", m.layers / (p.pp * p.vpp));
        else {
            l.add("--virtual-pipeline-model-parallel-size", p.vpp);
            out.notes.push_back({NoteKind::not_modelled, "parallel.vpp",
                                 std::to_string(m.layers) + " layers do not split evenly over pp " + std::to_string(p.pp) +
                                     " x vpp " + std::to_string(p.vpp) +
                                     " stages; Megatron-LM wants equal stages (or --decoder-first/last-pipeline-num-layers)"});
        }
    }
    if (p.cp > 1) l.add("--context-parallel-size", p.cp);
    if (p.ep > 1) l.add("--expert-model-parallel-size", p.ep);
    if (p.sequence_parallel) l.add("--sequence-parallel");
    if (p.recompute == Recompute::selective) {
        l.add("--recompute-granularity", "selective");
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
    if (p.zero == 1) l.add("--use-distributed-optimizer");
    if (p.zero == 3) l.add("--use-torch-fsdp2");
    if (p.overlap_grad_reduce) l.add("--overlap-grad-reduce");
    if (p.tp_comm_overlap) l.add("--tp-comm-overlap");
    if (!p.grad_fp32) {
        if (t.precision == Precision::fp16)
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
    std::string text = "# " + job.name + ": " + std::to_string(job.cluster.num_gpus) + " x " + job.cluster.gpu.name +
                       " (lostflops export megatron)\n";
    text += "torchrun --nnodes " + std::to_string(nodes) + " --nproc-per-node " +
            std::to_string(std::min(per_node, job.cluster.num_gpus)) + " pretrain_gpt.py \\\n";
    for (size_t i = 0; i < l.flags.size(); ++i) text += "    " + l.flags[i] + (i + 1 < l.flags.size() ? " \\\n" : "\n");
    out.text = std::move(text);
    return out;
}

}  // namespace lostflops
