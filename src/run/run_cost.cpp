// Closed form of the whole run (run_cost.h).
//
// Wall time: the run's work (steps x (step + data stall)) is cut into cycles
// of checkpoint_interval_s of work and a checkpoint of checkpoint_block_s;
// failures are a Poisson process of rate 1/M over wall time (M the job's
// MTBF); a failure loses the cycle's progress and costs a recovery R, and a
// failure during a recovery starts it again. The expected wall time of a
// cycle of length c is then M e^(R/M) (e^(c/M) - 1) (Daly 2006, "A higher
// order estimate of the optimum checkpoint interval for restart dumps", FGCS
// 22(3), 303-312: the expected time to complete a segment with exponential
// failures and restarts), exact for this model, summed over the
// whole cycles and the last partial one. An async checkpoint is durable only
// checkpoint_persist_s after its snapshot: a failure in that window rolls back
// one cycle more, on average persist_s more work lost per failure, which is
// folded into R. The wait for a spare node (node repairs) is outside this:
// while the job waits for nodes it runs none that could fail, so the failures
// fall in the rest of the time (daly / M of them) and each adds its expected
// wait: wall = daly x (1 + wait / M), failures = wall / (M + wait), which is
// wall / M without node repairs.
//
// The split: checkpoint overhead = checkpoints x block (failure-free);
// restart time = expected recovery episodes x their expected length
// M (e^(R/M) - 1), an episode started by a failure and including the
// failures during it (e^(R/M) failures per episode), plus failures x the
// spare wait; data stall = steps x
// stall; lost work = the rest of the wall time beyond the useful work.
//
// Effective compute utilisation (the decomposition operators of large
// clusters use: energy x single-GPU x parallel scaling x effective training
// time x resource utilisation), each factor from the model:
//   energy efficiency     1 / PUE
//   single-GPU efficiency model FLOPs per GPU per step / (dense peak x the
//                         step's single-GPU time: compute, memory-bound,
//                         recompute, kernel overhead, host-bound, optimizer)
//   parallel scaling      that single-GPU time / step time less the data
//                         loader's wait (the rest is communication and
//                         pipeline bubbles); the two multiply to the MFU
//                         (the loader's wait is data stall: goodput's)
//   effective training    goodput (useful time / wall time)
//   resource utilisation  GPUs running the job / GPUs held (with spares)
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/run_cost.h"

namespace lostflops {

namespace {

// Expected wall time of one cycle of `c` seconds under failures of mean gap
// mtbf_s and recovery recovery_s (Daly 2006).
double cycle_wall_s(double c, double mtbf_s, double recovery_s) {
    if (!std::isfinite(mtbf_s)) return c;
    return mtbf_s * std::exp(recovery_s / mtbf_s) * std::expm1(c / mtbf_s);
}

struct Cycles {
    double full = 0;  // whole cycles
    double rest = 0;  // work of the last, partial cycle (0: none)
};

Cycles cycles_of(const RunInputs& in, double interval_s) {
    const double work = static_cast<double>(in.steps) * (in.step_time_s + in.data_stall_s);
    Cycles c;
    c.full = std::floor(work / interval_s);
    c.rest = work - c.full * interval_s;
    if (c.rest < 1e-9 * interval_s) c.rest = 0;
    return c;
}

// A run whose expected wall time is this many times its work is refused:
// failures come faster than recoveries and checkpoints complete.
constexpr double kMaxWallOverWork = 1000;

double mtbf_of(const RunInputs& in) {
    return in.failures_per_s > 0 ? 1 / in.failures_per_s : std::numeric_limits<double>::infinity();
}

}  // namespace

void check_finishes(const RunInputs& in, double interval_s, const std::string& file) {
    const double work = static_cast<double>(in.steps) * (in.step_time_s + in.data_stall_s);
    const double wall = expected_wall_time_s(in, interval_s);
    if (std::isfinite(wall) && wall <= kMaxWallOverWork * std::max(work, 1.0)) return;
    throw InputError(file, "run.gpu_failure_rate",
                     fmt::format("the run would not finish: the job fails every {:.4g} s on average ({} GPUs), against "
                                 "a recovery of {:.4g} s and {:.4g} s of work between checkpoints; expected wall time "
                                 "over {:.0f} times the work",
                                 1 / in.failures_per_s, in.num_gpus, in.recovery_s, interval_s, kMaxWallOverWork));
}

double expected_wall_time_s(const RunInputs& in, double interval_s) {
    const double m = mtbf_of(in);
    const double r = in.restart_overhead_s + in.checkpoint_read_s + in.checkpoint_persist_s;
    const Cycles c = cycles_of(in, interval_s);
    double wall = c.full * cycle_wall_s(interval_s + in.checkpoint_block_s, m, r);
    if (c.rest > 0) wall += cycle_wall_s(c.rest + in.checkpoint_block_s, m, r);
    // Waiting for a spare node, the job holds no running nodes to fail: the
    // failures (daly / M of them) fall outside the waits, each adding one.
    if (std::isfinite(m)) wall *= 1 + in.spare_wait_s / m;
    return wall;
}

RunCost run_cost(const Job& job, const Estimate& e) {
    RunCost out;
    out.inputs = run_inputs(job, e);
    const RunInputs& in = out.inputs;
    const double steps = static_cast<double>(in.steps);
    out.mtbf_s = mtbf_of(in);
    out.useful_s = steps * in.step_time_s;
    out.data_stall_s = steps * in.data_stall_s;
    const Cycles c = cycles_of(in, in.checkpoint_interval_s);
    out.checkpoints = c.full + (c.rest > 0 ? 1 : 0);
    out.checkpoint_overhead_s = out.checkpoints * in.checkpoint_block_s;
    out.wall_time_s = expected_wall_time_s(in, in.checkpoint_interval_s);
    check_finishes(in, in.checkpoint_interval_s, job.source);
    // Failures over the wall time outside the waits for a spare node.
    out.expected_failures = std::isfinite(out.mtbf_s) ? out.wall_time_s / (out.mtbf_s + in.spare_wait_s) : 0;
    if (std::isfinite(out.mtbf_s)) {
        const double restart = in.restart_overhead_s + in.checkpoint_read_s;
        const double per_episode_failures = std::exp(restart / out.mtbf_s);
        const double episodes = out.expected_failures / per_episode_failures;
        out.restart_s = episodes * out.mtbf_s * std::expm1(restart / out.mtbf_s) +
                        out.expected_failures * in.spare_wait_s;
    }
    out.lost_work_s = out.wall_time_s - out.useful_s - out.data_stall_s - out.checkpoint_overhead_s - out.restart_s;
    out.goodput = out.useful_s / out.wall_time_s;
    out.gpu_hours = (in.num_gpus + in.spare_gpus) * out.wall_time_s / 3600;
    out.cost_given = job.run.price_per_gpu_hour > 0;
    out.cost = out.gpu_hours * job.run.price_per_gpu_hour;
    out.energy_kwh = job.run.gpu_power_w * in.num_gpus * out.wall_time_s * job.run.pue / 3.6e6;

    const Breakdown& b = e.breakdown;
    const double single_s = b.compute_s + b.memory_bound_s + b.recompute_s + b.overhead_s + b.host_s + b.optimizer_s;
    const double peak_flops = job.cluster.gpu.peak_tflops(job.training.precision) * 1e12;
    const double single = e.model_flops_per_step / in.num_gpus / (peak_flops * single_s);
    out.utilisation = {
        {"energy efficiency", "1 / PUE", 1 / job.run.pue},
        {"single-GPU efficiency",
         "model FLOPs per GPU per step / (dense peak x the step's compute, memory-bound, recompute, kernel "
         "overhead, host-bound and optimizer time)",
         single},
        {"parallel scaling efficiency",
         "that single-GPU time / step time (the rest: exposed communication and pipeline bubbles)",
         single_s / in.step_time_s},
        {"effective training time", "goodput: useful time / wall time", out.goodput},
        {"resource utilisation", "GPUs running the job / GPUs held (spares included)",
         static_cast<double>(in.num_gpus) / (in.num_gpus + in.spare_gpus)},
    };
    out.effective_utilisation = 1;
    for (const auto& f : out.utilisation) out.effective_utilisation *= f.value;
    return out;
}

}  // namespace lostflops
