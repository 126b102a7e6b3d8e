// A step at the host speeds measured across runs of one machine (contract:
// lostflops/host_speed.h HostSpeedRange). The host's speed is not a
// property of the job: two traces of one recipe, model and shape on one
// H200 ran their Python thread's operators 0.79 and 1.67 times as long as
// the calibration trace's (docs/host-time.md, scripts/host_speed.py). The
// step is re-estimated with every per-operator host cost scaled by the
// fastest and slowest speeds seen:
//
//     step_lo = step(cal x 0.79),  step_hi = step(cal x 1.67)
//
// and the range is given when the slower moves the step by more than 1 %: a
// step the GPU sets at the calibrated host cost may become the host's on a
// slower host. The costs scaled are CPU time per operator, autograd node,
// parameter tensor, expert-loop group and compiled launch; the GPU's work,
// its idle after a synchronisation (hf_sync_us) and the autograd engine's
// start and finish (hf_backward_call_us, no faster or slower on the slower
// traces) are left as they are.
#include "lostflops/host_speed.h"

#include <algorithm>

namespace lostflops {

Calibration with_host_speed(const Calibration& cal, double factor) {
    Calibration c = cal;
    for (double Calibration::*f :
         {&Calibration::host_op_us, &Calibration::host_bwd_op_us, &Calibration::hf_host_op_us,
          &Calibration::hf_host_bwd_op_us, &Calibration::hf_optimizer_tensor_us, &Calibration::hf_zero_grad_tensor_us,
          &Calibration::hf_expert_loop_us, &Calibration::compiled_launch_us,
          &Calibration::cuda_graph_node_us})
        c.*f *= factor;
    return c;
}

Calibration with_host_speeds(const Calibration& cal, double python, double autograd) {
    Calibration c = cal;
    for (double Calibration::*f : {&Calibration::host_op_us, &Calibration::hf_host_op_us,
                                   &Calibration::hf_optimizer_tensor_us, &Calibration::hf_zero_grad_tensor_us})
        c.*f *= python;
    for (double Calibration::*f : {&Calibration::host_bwd_op_us, &Calibration::hf_host_bwd_op_us}) c.*f *= autograd;
    c.hf_expert_loop_us *= python == autograd ? python : (2 * python + 4 * autograd) / 6;
    for (double Calibration::*f : {&Calibration::compiled_launch_us, &Calibration::cuda_graph_node_us})
        c.*f *= (python + autograd) / 2;
    return c;
}

std::optional<HostSpeedRange> host_speed_range(const Job& job, const Estimate& e, const Calibration& cal,
                                               ScheduleModel schedule) {
    if (!(e.step_time_s > 0)) return std::nullopt;
    HostSpeedRange r;
    // The step is a sum of maxima of affine functions of the host's factor f
    // (the flow shop's stretches, the pipeline's max-plus recursion):
    // convex and non-decreasing in f. So what a faster host takes off,
    // (1 - 0.79), is at most 0.21 / 0.67 of what a slower one adds: when the
    // slower moves the step by no more than kHostSpeedShownShare, neither
    // does the faster, and it is not estimated.
    const Estimate slow = estimate(job, with_host_speed(cal, r.factor_hi), schedule);
    r.step_time_s_hi = std::max(slow.step_time_s, e.step_time_s);
    if (!(r.step_time_s_hi - e.step_time_s > kHostSpeedShownShare * e.step_time_s)) return std::nullopt;
    const Estimate fast = estimate(job, with_host_speed(cal, r.factor_lo), schedule);
    // A faster host never lengthens the step; the bounds hold the estimate.
    r.step_time_s_lo = std::min(fast.step_time_s, e.step_time_s);
    r.tokens_per_s_per_gpu_lo = std::min(slow.tokens_per_s_per_gpu, e.tokens_per_s_per_gpu);
    r.tokens_per_s_per_gpu_hi = std::max(fast.tokens_per_s_per_gpu, e.tokens_per_s_per_gpu);
    return r;
}

double host_scaled_s(const Job& job, const Calibration& cal) {
    // The slope of the step in the host's costs where the host sets all of
    // it: step(2K) - step(K) over K (0 for a job without host cost).
    constexpr double kLarge = 1e4;
    const double at_k = estimate(job, with_host_speed(cal, kLarge)).step_time_s;
    const double at_2k = estimate(job, with_host_speed(cal, 2 * kLarge)).step_time_s;
    return std::max(0.0, (at_2k - at_k) / kLarge);
}

std::optional<Estimate> estimate_as_profiled(const Job& job, const Calibration& cal, double profiler_host_s,
                                             double host_speed) {
    return estimate_as_profiled(job, cal, profiler_host_s, host_speed, host_speed);
}

std::optional<Estimate> estimate_as_profiled(const Job& job, const Calibration& cal, double profiler_host_s,
                                             double python_speed, double autograd_speed) {
    // Only where the host costs are the reference trace's own (framework hf).
    const bool measured = python_speed > 0 && autograd_speed > 0 && job.training.framework == Framework::hf;
    const double python = measured ? python_speed : 1.0, autograd = measured ? autograd_speed : 1.0;
    const double added_s = profiler_host_s > 0 ? profiler_host_s : 0.0;
    if ((added_s == 0 && python == 1.0 && autograd == 1.0) || job.plan.pp > 1) return std::nullopt;
    const double host_s = host_scaled_s(job, cal);
    // A host cost under a microsecond a step: none to slow down.
    if (!(host_s > 1e-6)) return std::nullopt;
    const double x = added_s / host_s;
    return estimate(job, with_host_speeds(cal, python + x, autograd + x));
}

}  // namespace lostflops
