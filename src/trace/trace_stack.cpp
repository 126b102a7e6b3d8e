// The stack a trace shows (contract: lostflops/trace_stack.h). Each marker
// is a host event name (or a kernel name prefix) that one stack's code
// records; the reader counts them as events stream by (keep_stack_marker:
// one comparison of the first byte for most events), and traced_settings
// sets each job setting the markers contradict. Names as PyTorch 2.11 and
// transformers 5 record them (../shared/traces/h200, torch 2.11).
#include "lostflops/trace_stack.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "trace/trace_internal.h"

namespace lostflops::trace {

namespace {

struct MarkerName {
    StackMarker marker;
    std::string_view name;
    bool prefix;  // the name starts with it
};
// One row per name: the stack's code that records it.
constexpr std::array<MarkerName, 18> kStackMarkerNames{{
    // torch/optim/adamw.py, adam.py _fused_adam: torch._fused_adamw_ / _fused_adam_.
    {kMarkFusedAdam, "aten::_fused_adamw_", false},
    {kMarkFusedAdam, "aten::_fused_adam_", false},
    // torch/optim/adam.py _multi_tensor_adam (foreach=True, CUDA's default):
    // torch._foreach_lerp_ of the first moment, _foreach_addcdiv_ of the update.
    {kMarkForeachAdam, "aten::_foreach_lerp_", false},
    {kMarkForeachAdam, "aten::_foreach_addcdiv_", false},
    // torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py
    // FSDPParamGroup.pre_forward: record_function("FSDP::pre_forward (module)").
    // FSDP1 (FullyShardedDataParallel._pre_forward) and DeepSpeed record others.
    {kMarkFsdp2, "FSDP::pre_forward", true},
    // transformers' RMSNorm (LlamaRMSNorm.forward: hidden_states *
    // torch.rsqrt(variance + eps)) and LayerNorms written out, under autograd.
    {kMarkEagerNorm, "RsqrtBackward0", false},
    // torch.nn.RMSNorm and F.rms_norm (torchtitan's norms): the operator
    // aten::rms_norm, whose autograd chain on a PyTorch without a fused
    // kernel also records RsqrtBackward0.
    {kMarkRmsNormOp, "aten::rms_norm", false},
    // torch/optim/optimizer.py profile_hook_step: "Optimizer.step#{class}.step"
    // for every Optimizer subclass; torch.optim's own Adam classes only (Apex's,
    // TE's and DeepSpeed's FusedAdam record Optimizer.step#FusedAdam.step).
    {kMarkTorchOptim, "Optimizer.step#AdamW.step", false},
    {kMarkTorchOptim, "Optimizer.step#Adam.step", false},
    // torch/_inductor/codegen/triton.py and select_algorithm.py kernel names
    // (get_kernel_category_by_source_code): pointwise, reduction, persistent
    // reduction, template, split scan, unknown (PyTorch 2.1 on; 2.0 named them
    // triton__ and the signature, e.g. triton__0d1d2d). Not plain triton_
    // (unique_kernel_names off).
    {kMarkInductor, "triton_poi_", true},
    {kMarkInductor, "triton_red_", true},
    {kMarkInductor, "triton_per_", true},
    {kMarkInductor, "triton_tem_", true},
    {kMarkInductor, "triton_spl_", true},
    {kMarkInductor, "triton_unk_", true},
    {kMarkInductor, "triton__", true},
    // Inductor's foreach kernels (torch/_inductor/codegen/triton_combo_kernel.py
    // and the foreach scheduler node: "triton_for_fused_..."), which a
    // torch.compile'd optimizer step runs: the step's, not the model's.
    {kMarkCompiledStep, "triton_for_", true},
    // torch.tensor(python data) records aten::lift_fresh; transformers'
    // DynamicLayer.lazy_initialization (cache_utils.py) makes the empty keys
    // and values of a KV cache so, two per decoder layer, whenever the forward
    // runs with use_cache (the config's default; not under gradient
    // checkpointing), then DynamicLayer.update torch.cat's each.
    {kMarkLiftFresh, "aten::lift_fresh", false},
}};

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

uint64_t total(const std::vector<RankReport>& ranks, StackMarker m) {
    uint64_t n = 0;
    for (const auto& r : ranks) n += r.stack_markers[static_cast<std::size_t>(m)];
    return n;
}

}  // namespace

namespace detail {

void keep_stack_marker(const EventFields& f, TraceData& out) {
    if (f.name.size() < 8) return;
    const char c = f.name[0];
    // Most host events are aten:: operators: only aten::_f... (fused,
    // foreach), aten::rm... (rms_norm), aten::lif... (lift_fresh) and the
    // other first letters go on to the table.
    if (c == 'a') {
        const char d = f.name[6], e = f.name[7];
        const bool lift = d == 'l' && e == 'i' && f.name.size() > 8 && f.name[8] == 'f';
        if (!(d == '_' && e == 'f') && !(d == 'r' && e == 'm') && !lift) return;
    } else if (c != 'F' && c != 'R' && c != 'O' && c != 't') {
        return;
    }
    if (f.ph != "X") return;
    for (const auto& m : kStackMarkerNames) {
        if (m.name[0] != c) continue;
        if (m.prefix ? starts(f.name, m.name) : f.name == m.name) {
            ++out.stack_markers[static_cast<std::size_t>(m.marker)];
            return;
        }
    }
}

}  // namespace detail

std::vector<StackSetting> traced_settings(const Job& job, const std::vector<RankReport>& ranks) {
    std::vector<StackSetting> out;
    const uint64_t inductor = total(ranks, kMarkInductor), norm = total(ranks, kMarkEagerNorm),
                   optim = total(ranks, kMarkTorchOptim), fsdp = total(ranks, kMarkFsdp2),
                   fused = total(ranks, kMarkFusedAdam), foreach = total(ranks, kMarkForeachAdam),
                   rms_norm_op = total(ranks, kMarkRmsNormOp);
    // A model compiled, not one fused region: at least kMinInductorShare of
    // the kernels Inductor's; Megatron's own torch.compile'd jit_fuser
    // (megatron/core/jit.py) is not the model's compile.
    uint64_t kernels = 0;
    for (const auto& r : ranks) kernels += static_cast<uint64_t>(std::max<int64_t>(r.kernels, 0));
    const bool megatron = job.training.framework == Framework::megatron_core ||
                          job.training.framework == Framework::megatron_lm;
    const bool compiled = inductor > 0 && static_cast<double>(inductor) >= kMinInductorShare * static_cast<double>(kernels);
    if (compiled && !megatron && !job.training.compile)
        out.push_back({"training.compile", "true", "false",
                       fmt::format("{} of {} kernels Inductor's Triton kernels (triton_*): torch.compile ran", inductor,
                                   kernels)});
    // The chains must be the model's own: F.rms_norm's (torch.nn.RMSNorm, as
    // torchtitan builds its norms) may record the same backward nodes.
    if (!compiled && norm > 0 && optim > 0 && rms_norm_op == 0 && job.training.framework != Framework::hf)
        out.push_back({"training.framework", "hf", to_string(job.training.framework),
                       fmt::format("{} RsqrtBackward0 and {} Optimizer.step#Adam(W).step events: eager modules "
                                   "whose norms run as autograd chains (transformers' RMSNorm), stepped by torch.optim",
                                   norm, optim)});
    const int zero = job.plan.zero;
    if (fsdp > 0 && zero < 2)
        out.push_back({"parallel.zero", "3", std::to_string(zero),
                       fmt::format("{} FSDP::pre_forward events: FSDP2's fully_shard shards parameters", fsdp)});
    else if (fsdp == 0 && zero > 0 && job.training.framework == Framework::hf && job.cluster.num_gpus == 1 &&
             optim > 0)  // one GPU under hf: FSDP2 or the autocast recipe, and no FSDP2 hook ran
        out.push_back({"parallel.zero", "0", std::to_string(zero),
                       "no FSDP::pre_forward event on one GPU: one process holds the whole model"});
    // A KV cache built in the training forward (spec.h Training::use_cache):
    // two tensors from Python data an attention layer (of a pipeline stage)
    // and step, on some rank; an eager transformers job whose layers take
    // the cache (not under gradient checkpointing), a trace not compiled
    // (the cache is then inside the graph).
    if (job.training.framework == Framework::hf && !job.training.compile && !compiled &&
        job.plan.recompute != Recompute::full) {
        int attention_layers = 0;
        for (std::size_t i = 0; i < job.model.kinds().size(); ++i)
            if (job.model.kinds()[i].has_attention()) attention_layers += job.model.kind_count(static_cast<int>(i));
        const int layers = attention_layers / std::max(1, job.plan.pp);
        const RankReport* cached = nullptr;
        bool stepped = false;
        for (const auto& r : ranks) {
            if (layers <= 0 || r.steps_total <= 0) continue;
            stepped = true;
            const uint64_t per_step = 2 * static_cast<uint64_t>(layers) * static_cast<uint64_t>(r.steps_total);
            if (r.stack_markers[kMarkLiftFresh] >= per_step) cached = &r;
        }
        if (cached && !job.training.use_cache)
            out.push_back({"training.use_cache", "true", "false",
                           fmt::format("{} aten::lift_fresh events in {} steps of {} attention layers, two per layer a "
                                       "step: transformers built a KV cache in the training forward (the config's "
                                       "use_cache; use_cache=False in the forward removes it)",
                                       cached->stack_markers[kMarkLiftFresh], cached->steps_total, layers)});
        else if (!cached && stepped && job.training.use_cache)
            out.push_back({"training.use_cache", "false", "true",
                           "fewer than two aten::lift_fresh events a layer and step: no KV cache in the forward"});
    }
    const OptimizerKernel k = job.training.optimizer_kernel;
    if (fused > 0 && k != OptimizerKernel::fused)
        out.push_back({"training.optimizer_kernel", "fused", "foreach",
                       fmt::format("{} aten::_fused_adamw_ / _fused_adam_ events: torch.optim's fused Adam", fused)});
    else if (fused == 0 && foreach > 0 && k != OptimizerKernel::foreach)
        out.push_back({"training.optimizer_kernel", "foreach", "fused",
                       fmt::format("{} aten::_foreach_lerp_ / _foreach_addcdiv_ events: torch.optim's foreach Adam",
                                   foreach)});
    return out;
}

std::vector<std::string> traced_notes(const Job& job, const std::vector<RankReport>& ranks) {
    std::vector<std::string> out;
    const uint64_t optim = total(ranks, kMarkTorchOptim), fused = total(ranks, kMarkFusedAdam),
                   foreach = total(ranks, kMarkForeachAdam), compiled_step = total(ranks, kMarkCompiledStep);
    const char* priced = to_string(job.training.optimizer_kernel);
    if (compiled_step > 0)
        out.push_back(fmt::format("stack: {} Inductor foreach kernels (triton_for_): a torch.compile'd optimizer step, "
                                  "which lostflops does not model; the step is priced as torch.optim's {} one",
                                  compiled_step, priced));
    else if (optim > 0 && fused == 0 && foreach == 0)
        out.push_back(fmt::format("stack: {} Optimizer.step#Adam(W).step events without a fused or foreach kernel: "
                                  "torch.optim's single-tensor Adam (foreach=False), a loop of kernels per parameter "
                                  "tensor that lostflops does not model; the step is priced as the {} one (faster)",
                                  optim, priced));
    return out;
}

std::string to_override(const StackSetting& s) { return s.key + "=" + s.value; }

std::vector<std::string> TracedStack::overrides() const {
    std::vector<std::string> out;
    for (const auto& s : found) out.push_back(to_override(s));
    return out;
}

TracedStack traced_stack(const Job& job, const std::vector<RankReport>& ranks, const std::vector<std::string>& fixed,
                         const std::function<Job(const std::vector<std::string>&)>& reread) {
    TracedStack out{{}, {}, job};
    const auto taken = [&](const std::string& key) {
        return std::any_of(fixed.begin(), fixed.end(), [&](const std::string& x) { return x.rfind(key + "=", 0) == 0; }) ||
               std::any_of(out.found.begin(), out.found.end(), [&](const StackSetting& f) { return f.key == key; });
    };
    for (int round = 0; round < kStackRounds; ++round) {
        bool added = false;
        for (auto& s : traced_settings(out.job, ranks)) {
            if (taken(s.key)) continue;
            out.found.push_back(std::move(s));
            added = true;
        }
        if (!added || !reread) break;
        try {
            out.job = reread(out.overrides());
        } catch (const InputError& e) {
            out.refused = e.what();
            out.job = job;
            break;
        }
    }
    return out;
}

}  // namespace lostflops::trace
