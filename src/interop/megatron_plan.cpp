// Framework and parallel plan of a Megatron command line (megatron_plan.h).
//
// Framework: Megatron-Core models are the default since core_r0.8
// (NVIDIA/Megatron-LM 9ad1a56f, 2024-05-24, "Change default to use mcore
// models, not legacy"); the legacy models needed --use-legacy-models until
// they were removed (39ec5ebe, 2026-05-06). --checkpoint-activations (until
// 2021), --activations-checkpoint-method / -num-layers (2021-22), --DDP-impl
// and --data-impl were removed before that default changed, so a script that
// gives them ran legacy Megatron-LM.
//
// Recompute, by era: --checkpoint-activations = full recompute in uniform
// chunks of --checkpoint-num-layers (default 1); from c1e0689d (2021-08-10,
// "Checkpoint a set number of individual Transformer layers") that flag
// became --activations-checkpoint-method uniform, and the method alone
// turns full recompute on (megatron/model/transformer.py checkpoints when the
// method is set); since cfd2e216 (2022-04) --recompute-granularity full needs
// --recompute-method, and --recompute-activations sets the granularity to
// selective over whatever --recompute-granularity said (arguments.py
// validate_args at d98e8a64).
//
// ZeRO: --use-distributed-optimizer shards the optimizer state (ZeRO-1);
// --use-torch-fsdp2 is ZeRO-3; --use-megatron-fsdp shards by
// --data-parallel-sharding-strategy (default optim_grads_params: ZeRO-3;
// (--DDP-impl local, Megatron-LM's own DDP until 2023, all-reduces after
// the backward, which is what overlap_grad_reduce false costs);
// optim_grads: 2; optim: 1; no_shard: 0). vpp from
// --num-layers-per-virtual-pipeline-stage (layers / (pp x N)),
// --num-virtual-stages-per-pipeline-rank or
// --virtual-pipeline-model-parallel-size. --grad-reduce-in-bf16 keeps bf16
// gradients (accumulate_allreduce_grads_in_fp32 False).
//
// Stage layouts (arguments.py validate_args at d98e8a64):
// --pipeline-model-parallel-layout lists every virtual stage's layers, and
// vpp = its stages / pp, which pp must divide; it excludes
// --num-layers-per-virtual-pipeline-stage and
// --num-virtual-stages-per-pipeline-rank. A --hybrid-layer-pattern with '|'
// is the same: each segment a virtual stage. --decoder-first- /
// --decoder-last-pipeline-num-layers give the first / last rank's layers
// (with vpp only through --num-virtual-stages-per-pipeline-rank).
#include "interop/megatron_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "interop/megatron_model.h"
#include "lostflops/error.h"
#include "job/pipeline_layout.h"
#include "job/recompute_modules.h"

namespace lostflops::interop {

Framework megatron_framework(const MegatronArgs& f, std::vector<ImportNote>& notes, std::string& why) {
    if (f.has("use-legacy-models") && f.has("use-mcore-models"))
        throw InputError(f.source(), "--use-legacy-models", "conflicts with --use-mcore-models: pick one model implementation");
    for (const char* legacy : {"use-legacy-models", "checkpoint-activations", "activations-checkpoint-method",
                               "activations-checkpoint-num-layers", "checkpoint-num-layers", "DDP-impl", "data-impl"}) {
        if (!f.given(legacy)) continue;
        why = std::string("--") + legacy + ": legacy Megatron-LM";
        if (f.has("use-mcore-models"))
            notes.push_back({NoteKind::assumed, "--use-mcore-models",
                             "with --" + std::string(legacy) + ", which only legacy Megatron-LM had: legacy assumed"});
        return Framework::megatron_lm;
    }
    why = f.has("use-mcore-models") ? "--use-mcore-models" : "Megatron-Core, the default since core_r0.8";
    return Framework::megatron_core;
}

namespace {

void recompute(const MegatronArgs& f, int layers, JobDraft& d, std::vector<ImportNote>& notes) {
    const std::string& src = f.source();
    std::string granularity = "none", method;
    const char* method_flag = nullptr;
    if (f.has("recompute-granularity")) granularity = f.choice("recompute-granularity", {"full", "selective"});
    if (f.has("checkpoint-activations")) {
        if (granularity == "selective")
            throw InputError(src, "--checkpoint-activations", "full recompute, against --recompute-granularity selective");
        granularity = "full";
        method = "uniform";
    }
    if (f.has("activations-checkpoint-method")) {
        if (f.has("recompute-method"))
            throw InputError(src, "--recompute-method", "the same setting as --activations-checkpoint-method; give one");
        method = f.choice("activations-checkpoint-method", {"uniform", "block"});
        method_flag = "--activations-checkpoint-method";
        granularity = "full";
    }
    if (f.has("recompute-method")) {
        method = f.choice("recompute-method", {"uniform", "block"});
        method_flag = "--recompute-method";
    }
    if (f.has("recompute-activations")) {
        if (granularity == "full" && f.has("recompute-granularity"))
            notes.push_back({NoteKind::assumed, "--recompute-activations",
                             "sets the granularity to selective over --recompute-granularity full, as Megatron does"});
        if (f.has("checkpoint-activations") || f.has("activations-checkpoint-method"))
            throw InputError(src, "--recompute-activations", "selective recompute, against the full recompute of the older flags");
        granularity = "selective";
    }
    if (granularity == "selective" && method_flag)
        throw InputError(src, method_flag, "only with full recompute (Megatron asserts it for selective)");
    if (granularity == "full" && method.empty())
        throw InputError(src, "--recompute-granularity",
                         "full needs --recompute-method uniform or block (Megatron-Core refuses it without)");
    const char* layers_flag = f.has("recompute-num-layers")                ? "recompute-num-layers"
                              : f.has("activations-checkpoint-num-layers") ? "activations-checkpoint-num-layers"
                                                                           : "checkpoint-num-layers";
    add(d.parallel, "recompute", granularity,
        granularity == "none"        ? "no recompute flag"
        : method_flag                 ? std::string(method_flag) + " " + method
        : granularity == "selective" ? "selective: core attention"
                                      : "--checkpoint-activations");
    if (f.has("recompute-modules")) {
        // Megatron-Core reads the list only with selective granularity (transformer_config.py).
        const std::vector<std::string> names = f.strs("recompute-modules");
        recompute_modules_of(names, src, "--recompute-modules");  // unknown names: did you mean
        if (granularity != "selective") {
            notes.push_back({NoteKind::ignored, "--recompute-modules", "only with --recompute-granularity selective"});
        } else {
            std::string list;
            for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
            add(d.parallel, "recompute_modules", "[" + list + "]", "--recompute-modules");
        }
    }
    if (granularity != "full") {
        if (f.has(layers_flag))
            notes.push_back({NoteKind::ignored, std::string("--") + layers_flag, "only with full recompute"});
        return;
    }
    const int n = f.num(layers_flag).value_or(1);
    if (method == "block") {
        add(d.parallel, "recompute_layers", std::to_string(n), "block: the first " + std::to_string(n) + " layers of each stage");
    } else if (n > 1 && n < layers) {
        notes.push_back({NoteKind::not_modelled, std::string("--") + layers_flag,
                         "uniform recompute in chunks of " + std::to_string(n) +
                             " layers keeps fewer checkpoints; costed as every layer checkpointed"});
    }
}

int zero_stage(const MegatronArgs& f, std::string& why) {
    if (f.has("use-torch-fsdp2") && f.has("use-distributed-optimizer"))
        throw InputError(f.source(), "--use-torch-fsdp2", "conflicts with --use-distributed-optimizer: FSDP2 shards the optimizer itself");
    if (f.has("use-megatron-fsdp")) {
        const std::string s = f.has("data-parallel-sharding-strategy")
                                  ? f.choice("data-parallel-sharding-strategy", {"no_shard", "optim", "optim_grads", "optim_grads_params"})
                                  : "optim_grads_params";
        why = "--use-megatron-fsdp, sharding " + s + (f.has("data-parallel-sharding-strategy") ? "" : " (its default)");
        return s == "optim_grads_params" ? 3 : s == "optim_grads" ? 2 : s == "optim" ? 1 : 0;
    }
    if (f.has("data-parallel-sharding-strategy"))
        throw InputError(f.source(), "--data-parallel-sharding-strategy", "only with --use-megatron-fsdp");
    if (f.has("use-torch-fsdp2")) {
        why = "--use-torch-fsdp2";
        return 3;
    }
    if (f.has("use-distributed-optimizer")) {
        why = "--use-distributed-optimizer";
        return 1;
    }
    why = "no --use-distributed-optimizer";
    return 0;
}

int virtual_stages(const MegatronArgs& f, int layers, int pp) {
    int vpp = 1;
    const char* from = nullptr;
    if (const auto per_stage = f.num("num-layers-per-virtual-pipeline-stage")) {
        if (layers % (pp * *per_stage) != 0)
            throw InputError(f.source(), "--num-layers-per-virtual-pipeline-stage",
                             std::to_string(*per_stage) + " x pp " + std::to_string(pp) + " does not divide --num-layers " +
                                 std::to_string(layers));
        vpp = layers / (pp * *per_stage);
        from = "--num-layers-per-virtual-pipeline-stage";
    }
    for (const char* flag : {"num-virtual-stages-per-pipeline-rank", "virtual-pipeline-model-parallel-size"}) {
        const auto v = f.num(flag);
        if (!v) continue;
        if (from && *v != vpp)
            throw InputError(f.source(), std::string("--") + flag,
                             "conflicts with " + std::string(from) + ", which gives " + std::to_string(vpp));
        vpp = *v;
        from = flag;
    }
    // Megatron's interleaved schedule asserts a pipeline (arguments.py:
    // "pipeline-model-parallel size should be greater than 1 with
    // interleaved schedule"); the job would be refused later, at its vpp.
    if (vpp > 1 && pp == 1)
        throw InputError(f.source(), from[0] == '-' ? std::string(from) : std::string("--") + from,
                         std::to_string(vpp) + " virtual stages a rank need --pipeline-model-parallel-size > 1 (it is 1)");
    return vpp;
}

// The layout of a hybrid pattern's '|' segments in Megatron's layout syntax:
// the embedding on the first, the loss on the last. Empty without '|'.
std::string hybrid_layout(const MegatronArgs& f) {
    const auto pattern = hybrid_pattern(f);
    if (!pattern) return "";
    const std::string main = pattern->substr(0, pattern->find('/'));
    if (main.find('|') == std::string::npos) return "";
    std::string layout = "E";
    for (char c : main) layout += c == '|' ? '|' : 't';
    return layout + "L";
}

// parallel.pipeline_layout / first_stage_layers / last_stage_layers from the
// flags; returns vpp (that of the flags when no layout says otherwise).
int stage_layout(const MegatronArgs& f, int pp, int vpp, JobDraft& d) {
    const std::string& src = f.source();
    const auto first = f.num("decoder-first-pipeline-num-layers");
    const auto last = f.num("decoder-last-pipeline-num-layers");
    std::string layout = f.str("pipeline-model-parallel-layout").value_or("");
    std::string why = "--pipeline-model-parallel-layout";
    if (const std::string hybrid = hybrid_layout(f); !hybrid.empty()) {
        if (!layout.empty())
            throw InputError(src, "--pipeline-model-parallel-layout", "not with --hybrid-layer-pattern: its '|' set the stages");
        layout = hybrid;
        why = "--hybrid-layer-pattern's '|' segments";
    }
    if (layout.empty()) {
        if ((first || last) && f.has("num-layers-per-virtual-pipeline-stage"))
            throw InputError(src, "--num-layers-per-virtual-pipeline-stage",
                             "not with uneven first/last stages: give --num-virtual-stages-per-pipeline-rank");
        if (first) add(d.parallel, "first_stage_layers", std::to_string(*first), "--decoder-first-pipeline-num-layers");
        if (last) add(d.parallel, "last_stage_layers", std::to_string(*last), "--decoder-last-pipeline-num-layers");
        return vpp;
    }
    for (const char* flag : {"num-layers-per-virtual-pipeline-stage", "num-virtual-stages-per-pipeline-rank",
                             "decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers"})
        if (f.has(flag)) throw InputError(src, std::string("--") + flag, "not with " + why + ", which sets every stage");
    const auto parsed = parse_pipeline_layout(layout, src, "--pipeline-model-parallel-layout");
    const int stages = static_cast<int>(parsed->stages.size());
    if (stages % pp != 0)
        throw InputError(src, "--pipeline-model-parallel-layout",
                         std::to_string(stages) + " stages do not split over --pipeline-model-parallel-size " + std::to_string(pp));
    if (stages > 1 && pp == 1)
        throw InputError(src, why == "--pipeline-model-parallel-layout" ? why : "--hybrid-layer-pattern",
                         std::to_string(stages) + " stages on one rank need --pipeline-model-parallel-size > 1 (it is 1)");
    if (f.has("virtual-pipeline-model-parallel-size") && vpp != stages / pp)
        throw InputError(src, "--virtual-pipeline-model-parallel-size",
                         std::to_string(vpp) + ", but " + why + " gives " + std::to_string(stages) + " stages over pp " +
                             std::to_string(pp));
    add(d.parallel, "pipeline_layout", quoted(layout), why);
    return stages / pp;
}

// --cp-comm-type (arguments.py: nargs '+', one value or one per layer;
// choices p2p, a2a, allgather, a2a+p2p; default p2p) as parallel.cp_comm_type.
void cp_comm_type(const MegatronArgs& f, JobDraft& d, std::vector<ImportNote>& notes) {
    const std::vector<std::string> types = f.strs("cp-comm-type");
    if (types.empty()) return;
    for (const std::string& t : types)
        if (t != "p2p" && t != "a2a" && t != "allgather" && t != "a2a+p2p")
            throw InputError(f.source(), "--cp-comm-type", "expected one of p2p, a2a, allgather, a2a+p2p, got '" + t + "'");
    std::string t = types.front();
    if (std::any_of(types.begin(), types.end(), [&](const std::string& x) { return x != t; }))
        notes.push_back({NoteKind::not_modelled, "--cp-comm-type",
                         "a variant per layer: every layer taken as the first's, " + t});
    if (t == "a2a+p2p") {
        notes.push_back({NoteKind::not_modelled, "--cp-comm-type",
                         "a2a+p2p (hierarchical: all-to-all inside --hierarchical-context-parallel-sizes groups, "
                         "the ring across them) is costed as the p2p ring"});
        t = "p2p";
    }
    add(d.parallel, "cp_comm_type", t, "--cp-comm-type");
}

}  // namespace

void megatron_parallel(const MegatronArgs& f, int layers, bool bf16, JobDraft& d, std::vector<ImportNote>& notes) {
    const int tp = f.num("tensor-model-parallel-size").value_or(1);
    const int pp = f.num("pipeline-model-parallel-size").value_or(1);
    add(d.parallel, "tp", std::to_string(tp));
    add(d.parallel, "pp", std::to_string(pp));
    add(d.parallel, "vpp", std::to_string(stage_layout(f, pp, virtual_stages(f, layers, pp), d)));
    add(d.parallel, "cp", std::to_string(f.num("context-parallel-size").value_or(1)));
    cp_comm_type(f, d, notes);
    add(d.parallel, "ep", std::to_string(f.num("expert-model-parallel-size").value_or(1)));
    // Megatron-Core: --expert-tensor-parallel-size absent = tp (the job's default too).
    if (const auto etp = f.num("expert-tensor-parallel-size")) add(d.parallel, "etp", std::to_string(*etp));
    if (f.has("moe-token-dispatcher-type")) {
        // "flex" runs DeepEP (or HybridEP) kernels; "alltoall_seq" is the older all-to-all.
        const std::string t = f.choice("moe-token-dispatcher-type", {"allgather", "alltoall", "alltoall_seq", "flex"});
        add(d.parallel, "moe_dispatcher", t == "flex" ? "deepep" : t == "allgather" ? "allgather" : "alltoall",
            "--moe-token-dispatcher-type " + t);
    }
    if (f.has("overlap-moe-expert-parallel-comm")) add(d.parallel, "moe_a2a_overlap", "true");
    // Checked here and written as a number: the value is the script's text.
    if (const auto cf = f.str("moe-expert-capacity-factor"))
        add(d.parallel, "moe_capacity_factor",
            fmt::format("{}", number_in(*cf, f.source(), "--moe-expert-capacity-factor", 0, 1000)));  // plan_keys.cpp range
    if (f.has("moe-pad-expert-input-to-capacity")) add(d.parallel, "moe_pad_to_capacity", "true");
    std::string zero_why;
    const int zero = zero_stage(f, zero_why);
    add(d.parallel, "zero", std::to_string(zero), zero_why);
    add(d.parallel, "sequence_parallel", f.has("sequence-parallel") ? "true" : "false");
    recompute(f, layers, d, notes);
    add(d.parallel, "overlap_grad_reduce", f.has("overlap-grad-reduce") ? "true" : "false");
    if (f.has("DDP-impl") && f.choice("DDP-impl", {"local", "torch"}) == "torch" && !f.has("overlap-grad-reduce"))
        notes.push_back({NoteKind::not_modelled, "--DDP-impl torch",
                         "torch DDP overlaps the gradient all-reduce with the backward; costed as Megatron-LM's local "
                         "DDP, which all-reduces after it"});
    add(d.parallel, "tp_comm_overlap", f.has("tp-comm-overlap") ? "true" : "false");
    if (f.has("grad-reduce-in-bf16")) {
        if (!bf16)
            throw InputError(f.source(), "--grad-reduce-in-bf16", "only with --bf16");
        if (f.has("accumulate-allreduce-grads-in-fp32"))
            throw InputError(f.source(), "--grad-reduce-in-bf16", "conflicts with --accumulate-allreduce-grads-in-fp32");
        add(d.parallel, "grad_fp32", "false", "--grad-reduce-in-bf16: bf16 gradient buffers and reductions");
    }
}

}  // namespace lostflops::interop
