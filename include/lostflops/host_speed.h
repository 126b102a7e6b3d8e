// How a step depends on its host's speed, which no job file states: the
// spread of one machine's runs (HostSpeedRange), and the step as a PyTorch
// profiler records it, whose every host event costs the host more
// (estimate_as_profiled). Implementation: src/validate/host_speed_range.cpp.
#pragma once

#include <optional>

#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/spec.h"

namespace lostflops {

// The host's own speed (docs/host-time.md "The host's own speed varies from
// run to run"; scripts/host_speed.py): over nine profiled steps of the five
// traces of ../shared/traces/h200/ beside the calibration's, all of one H200
// machine, the median CPU time of operators that launch and allocate
// nothing (as_strided, view, t, transpose, reshape, detach) ran 0.79 to
// 1.67 times the calibration trace's (the Qwen2.5-0.5B trace's step 2,
// where hf_host_op_us and its kin come from), thread by thread (the Python
// thread and the autograd engine's); two traces of one recipe, model and
// shape ran 0.79 and 1.67 on the Python thread.
inline constexpr double kHostSpeedFastest = 0.79;
inline constexpr double kHostSpeedSlowest = 1.67;
// A range that moves the step by less than this share either way is not
// given: the host is hidden behind the GPU at every speed seen.
inline constexpr double kHostSpeedShownShare = 0.01;

// The step at the host speeds above: every per-operator host cost of the
// calibration (host_op_us, host_bwd_op_us, hf_host_op_us,
// hf_host_bwd_op_us, hf_optimizer_tensor_us, hf_zero_grad_tensor_us,
// hf_expert_loop_us, compiled_launch_us) times factor_lo and factor_hi, the
// step re-estimated. What the GPU does, the GPU's idle after a
// synchronisation (hf_sync_us) and the autograd engine's start and finish
// (hf_backward_call_us: 1,147-1,298 us on traces whose operators ran 1.0-1.5
// times as long, docs/host-time.md) are unchanged. A sensitivity, not an
// interval: the spread is one machine's, of eager Hugging Face steps.
struct HostSpeedRange {
    double factor_lo = kHostSpeedFastest, factor_hi = kHostSpeedSlowest;
    double step_time_s_lo = 0, step_time_s_hi = 0;  // at factor_lo, factor_hi
    double tokens_per_s_per_gpu_lo = 0, tokens_per_s_per_gpu_hi = 0;  // at factor_hi, factor_lo
};
// The calibration with every host cost above times `factor` (> 0).
Calibration with_host_speed(const Calibration& cal, double factor);
// The same with each thread's costs times its own factor (> 0): the Python
// thread's (host_op_us, hf_host_op_us, hf_optimizer_tensor_us,
// hf_zero_grad_tensor_us) times `python`, the autograd engine's
// (host_bwd_op_us, hf_host_bwd_op_us) times `autograd`; the expert loop,
// called twice forward and four times backward (workload/host_ops_hf.cpp),
// times (2 python + 4 autograd) / 6; compiled and graph launches, both
// passes', times the mean of the two.
Calibration with_host_speeds(const Calibration& cal, double python, double autograd);
// The range of a job whose step (`e`, its estimate under `cal` and
// `schedule`, the pipeline timing the steps at both speeds take too) moves by
// more than kHostSpeedShownShare at the slower speed (the faster moves it
// less: the step is convex in the host's costs); nullopt when it moves less.
std::optional<HostSpeedRange> host_speed_range(const Job& job, const Estimate& e, const Calibration& cal,
                                               ScheduleModel schedule = ScheduleModel::closed_form);

// The host's time per step that with_host_speed scales, seconds: the slope
// of the step in those costs where the host sets all of it (the costs 10^4
// and 2 x 10^4 times as large); 0 for a job without host cost. With a
// pipeline it is the critical path's host time (fill and drain included),
// not one rank's.
double host_scaled_s(const Job& job, const Calibration& cal);

// The step as a profiler records it: `profiler_host_s` more host time per
// step (the profiler's cost per recorded host event times the events, and
// its own stalls: trace --job reads both off the trace), spread over the
// host's operators, on a host `host_speed` times as slow as the
// calibration's (trace --job measures it on the trace's operators that
// launch nothing: RankReport::host_speed; <= 0: 1; framework hf only, whose
// per-operator host costs come from the reference trace: other stacks'
// costs are fitted on other hosts and software, 1), as
// with_host_speed(host_speed + profiler_host_s / host_scaled_s). nullopt
// when there is neither profiler time nor another speed, the job has under a
// microsecond of host cost a step, or a pipeline (pp > 1: one rank's
// profiler time against the critical path's host time would be
// under-applied by m / (m + pp - 1)).
std::optional<Estimate> estimate_as_profiled(const Job& job, const Calibration& cal, double profiler_host_s,
                                             double host_speed = 0);
// The same on a host whose Python thread ran `python_speed` and whose
// autograd engine ran `autograd_speed` times as slow as the calibration's
// (one profiled step's: RankReport::step_host_speeds), as
// with_host_speeds(python_speed + x, autograd_speed + x), x =
// profiler_host_s / host_scaled_s; either <= 0: both the calibration's.
std::optional<Estimate> estimate_as_profiled(const Job& job, const Calibration& cal, double profiler_host_s,
                                             double python_speed, double autograd_speed);

}  // namespace lostflops
