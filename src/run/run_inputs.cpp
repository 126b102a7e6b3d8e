// The resolved inputs of the whole-run model (run_cost.h RunInputs) from a job
// and one step's Estimate:
//  - checkpoint size, when the job does not give it: 14 bytes per parameter,
//    the bf16 weights (2) and the fp32 master weights, Adam momentum and
//    variance (4 + 4 + 4) of mixed-precision Adam (Rajbhandari et al. 2020,
//    "ZeRO", section 3.1: 2 + 2 + 12 bytes per parameter, of which the 2 of
//    the gradients are not saved);
//  - time a checkpoint blocks: sync, the whole checkpoint through the
//    aggregate storage write bandwidth; async, each GPU's own share of it
//    (its weights and optimizer state, Estimate::memory) copied to host memory
//    over PCIe, the storage write following in the background;
//  - data stall per step: the step needs tokens_per_step tokens; storage
//    supplies storage_read_GBps / bytes_per_token tokens/s; the loader
//    prefetches during the step, so only the excess over the step stalls
//    it; the data loader's own wait (Breakdown::data_loader_s,
//    estimate/data_loader.cpp) is data stall too, taken out of the step;
//  - the expected wait for a spare node per failure (node_repair_s > 0): the
//    nodes in repair when a failure arrives are Poisson with mean
//    rate x repair time (Poisson arrivals, fixed repair: M/D/infinity), their
//    remaining repair times uniform on [0, repair]; with K in repair and S
//    spares the job waits for the (K + 1 - S)-th return, (K + 1 - S) / (K + 1)
//    of a repair time on average.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lostflops/run_cost.h"
#include "workload/flops.h"

namespace lostflops {

namespace {

constexpr double kCheckpointBytesPerParam = 14;

double spare_wait_s(double failures_per_s, double repair_s, int spares) {
    if (repair_s <= 0) return 0;
    const double a = failures_per_s * repair_s;
    if (!(a > 0)) return 0;
    // Sum over K = k of P(K = k) (k + 1 - S) / (k + 1), for k >= S (fewer in
    // repair: no wait), over the window where the Poisson mass lies:
    // mean +- 20 standard deviations (+ 60 for small means). Each term in
    // log space (log P = -a + k log a - lgamma(k + 1)) and then by the
    // recurrence P(k) = P(k - 1) a / k: exp(-a) alone is 0 beyond a = 745,
    // which left every term 0 (issue 20 item 5).
    const double half = 20 * std::sqrt(a) + 60;
    const double lo = std::max(static_cast<double>(spares), std::floor(a - half));
    const double hi = std::ceil(a + half);
    if (lo > hi) return 0;
    double p = std::exp(-a + lo * std::log(a) - std::lgamma(lo + 1));
    double wait = 0;
    for (double k = lo; k <= hi; ++k) {
        if (k > lo) p *= a / k;
        wait += p * (k + 1 - spares) / (k + 1);
    }
    return wait * repair_s;
}

}  // namespace

double checkpoint_bytes(const Job& job) {
    if (job.run.checkpoint_bytes > 0) return job.run.checkpoint_bytes;
    return kCheckpointBytesPerParam * count_params(job.model).total;
}

double young_daly_interval_s(double block_s, double mtbf_s) {
    if (!std::isfinite(mtbf_s)) return std::numeric_limits<double>::infinity();
    if (block_s >= mtbf_s / 2) return mtbf_s;
    return std::sqrt(2 * block_s * mtbf_s) - block_s;
}

RunInputs run_inputs(const Job& job, const Estimate& e) {
    const RunSpec& r = job.run;
    RunInputs in;
    // The step without its data wait: the loader's (Breakdown::data_loader_s)
    // is data stall, below, not useful time.
    in.loader_stall_s = e.breakdown.data_loader_s;
    in.step_time_s = e.step_time_s - in.loader_stall_s;
    in.tokens_per_step = e.tokens_per_step;
    in.steps = static_cast<int64_t>(std::ceil(job.training.train_tokens / e.tokens_per_step));
    in.num_gpus = job.cluster.num_gpus;
    in.spare_nodes = r.spare_nodes;
    in.spare_gpus = r.spare_nodes * job.cluster.gpus_per_node;
    in.failures_per_s = r.gpu_failure_rate_per_gpu_h * in.num_gpus / 3600.0;
    in.checkpoint_bytes = checkpoint_bytes(job);
    const double write_s = in.checkpoint_bytes / (r.checkpoint_write_GBps * 1e9);
    if (r.checkpoint_mode == CheckpointMode::async) {
        const double per_gpu_bytes = e.memory.weights_bytes + e.memory.optimizer_bytes;
        in.checkpoint_block_s = per_gpu_bytes / (r.snapshot_GBps * 1e9);
        in.checkpoint_persist_s = write_s;
    } else {
        in.checkpoint_block_s = write_s;
    }
    in.checkpoint_read_s = in.checkpoint_bytes / (r.checkpoint_read_GBps * 1e9);
    in.restart_overhead_s = r.restart_overhead_s;
    in.node_repair_s = r.node_repair_s;
    in.spare_wait_s = spare_wait_s(in.failures_per_s, r.node_repair_s, r.spare_nodes);
    in.recovery_s = in.restart_overhead_s + in.checkpoint_read_s + in.spare_wait_s;

    in.storage_tokens_per_s = r.storage_read_GBps * 1e9 / r.bytes_per_token;
    // Storage is read ahead as the loader is: it stalls only what its supply
    // takes beyond the step with the loader's wait.
    in.data_stall_s = in.loader_stall_s + std::max(0.0, in.tokens_per_step / in.storage_tokens_per_s - e.step_time_s);

    // Checkpoints fall on step boundaries: the interval is a whole number of
    // steps, at least one, and (async) no shorter than the background write.
    const double step_s = in.step_time_s + in.data_stall_s;
    const double mtbf_s = in.failures_per_s > 0 ? 1 / in.failures_per_s : std::numeric_limits<double>::infinity();
    in.interval_auto = r.checkpoint_interval_s <= 0;
    double want = in.interval_auto ? young_daly_interval_s(in.checkpoint_block_s, mtbf_s) : r.checkpoint_interval_s;
    want = std::max(want, in.checkpoint_persist_s);
    double k = std::isfinite(want) ? std::max(1.0, std::round(want / step_s)) : static_cast<double>(in.steps);
    k = std::max(k, std::ceil(in.checkpoint_persist_s / step_s));
    k = std::min(k, static_cast<double>(std::max<int64_t>(in.steps, 1)));
    in.checkpoint_interval_s = k * step_s;
    return in;
}

}  // namespace lostflops
