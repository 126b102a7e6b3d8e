// The training stack a PyTorch profiler trace shows, and the job settings
// that would price the run it recorded (`trace --job`'s "as profiled"
// column). A job file may say one stack and the trace another (the H200
// job files of ../shared/reference/h200/runs say framework fsdp for a
// Hugging Face model under autocast or FSDP2 on one rank: `validate` applies
// their table's recipe column, `trace --job` had no such column).
//
// Markers: host events the stack's own code records, counted while the trace
// is read (TraceData::stack_markers, RankReport::stack_markers), one row each
// in kStackMarkers (src/trace/trace_stack.cpp) with the code that records it.
// Settings, each only where the job says otherwise (traced_settings):
//  - training.compile=true: at least kMinInductorShare of the kernels are
//    Inductor's Triton kernels (triton_poi_, triton_red_, triton_per_,
//    triton_tem_, triton_spl_, triton_unk_, and PyTorch 2.0's triton__:
//    torch/_inductor/codegen/triton.py kernel names); not under Megatron, whose
//    jit_fuser is torch.compile;
//  - training.framework=hf: not compiled, torch.optim's Adam or AdamW stepped
//    (Optimizer.step#AdamW.step; not FusedAdam: Apex, TE, DeepSpeed), and the
//    model's norms ran as eager autograd chains (RsqrtBackward0: transformers'
//    LlamaRMSNorm and its kin, `hidden * torch.rsqrt(variance + eps)`) with no
//    F.rms_norm among them (aten::rms_norm: torch.nn.RMSNorm, torchtitan's),
//    the eager module stack framework hf prices (docs/eager-gpu.md);
//  - parallel.zero=3: FSDP2's fully_shard hooks ran (FSDP::pre_forward,
//    torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py) and the job
//    shards neither gradients nor parameters (zero 0 or 1); parallel.zero=0
//    for a one-GPU framework hf job (as loaded, or re-read after the above)
//    with zero above 0 and no FSDP hook: the one-process autocast recipe;
//  - training.use_cache=true: an eager framework hf job (not under full
//    recompute) whose trace shows two aten::lift_fresh per decoder layer and
//    step on some rank (transformers' DynamicCache making its empty keys and
//    values); false when the job says true and no rank shows them;
//  - training.optimizer_kernel=fused or foreach: torch.optim's fused AdamW
//    (aten::_fused_adamw_ / _fused_adam_) or its foreach kernels
//    (aten::_foreach_lerp_, _foreach_addcdiv_ of _multi_tensor_adam) ran.
// Notes (traced_notes), what the trace shows that no setting prices: a
// torch.compile'd optimizer step (Inductor's triton_for_ kernels) and
// torch.optim's single-tensor Adam (its step with neither fused nor foreach
// kernels).
// Summaries carry no markers: a report read from one shows no stack.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lostflops/spec.h"
#include "lostflops/trace.h"

namespace lostflops::trace {

// The share of a trace's kernels that must be Inductor's to read it as compiled.
inline constexpr double kMinInductorShare = 0.1;

struct StackSetting {
    std::string key;    // "training.framework"
    std::string value;  // "hf"
    std::string job;    // what the job says, "fsdp"
    std::string why;    // the evidence: "FSDP::pre_forward x64: FSDP2's fully_shard hooks"
};

// The markers summed over `ranks`; `job` as loaded. Settings in the order of
// the list above; empty when the trace agrees with the job or shows nothing.
std::vector<StackSetting> traced_settings(const Job& job, const std::vector<RankReport>& ranks);

// Warnings ("stack: ...") for what the markers show and the job cannot say;
// empty when nothing.
std::vector<std::string> traced_notes(const Job& job, const std::vector<RankReport>& ranks);

// "training.framework=hf", for load_job's overrides.
std::string to_override(const StackSetting& s);

// The stack the traces ran, found to a fixed point: traced_settings on the
// job, then again on the job re-read with those found (a setting's default
// may follow another: optimizer_kernel auto follows the framework, use_cache
// needs framework hf), at most kStackRounds rounds, each key once and none
// that `fixed` (the command line's overrides, "key=value") sets. `reread`
// loads the job with its overrides plus the ones given and throws
// InputError when the job cannot take them; empty when the job cannot be
// read again (standard input): the first round's settings only.
inline constexpr int kStackRounds = 3;
struct TracedStack {
    std::vector<StackSetting> found;  // in the order found
    std::string refused;              // the re-read's error, when the job could not take them
    Job job;                          // the job re-read with every setting found; the given one when none was, or refused
    std::vector<std::string> overrides() const;  // found, as load_job's overrides
};
TracedStack traced_stack(const Job& job, const std::vector<RankReport>& ranks, const std::vector<std::string>& fixed,
                         const std::function<Job(const std::vector<std::string>&)>& reread);

}  // namespace lostflops::trace
