// The whole training run: from one step's Estimate and the job's `run:`
// section (spec.h RunSpec) to time to train, GPU-hours, cost and energy, with
// what failures, checkpoints, restarts and data loading take
// (docs/whole-run.md). Pure functions, no I/O; the Monte Carlo is seeded and gives the same
// numbers on every platform.
//
// Time model. The run is `steps` steps of step_time_s + data_stall_s. Every
// checkpoint_interval_s of that work a checkpoint blocks training for
// checkpoint_block_s (sync: the write to storage; async: only the snapshot to
// host memory, the write to storage following in the background for
// checkpoint_persist_s). Failures of the job arrive as a Poisson process of
// rate gpu_failure_rate x GPUs over wall time; a failure loses the work since
// the last durable checkpoint and costs recovery_s (restart overhead, the
// checkpoint read and, with node repairs, the wait for a spare node); a
// failure during the restart starts it again (none during a wait for a
// spare: the job runs no node then).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lostflops/estimate.h"
#include "lostflops/spec.h"

namespace lostflops {

// Everything the closed form and the simulation need, with every default of
// the job decided (run/run_inputs.cpp).
struct RunInputs {
    double step_time_s = 0;         // Estimate::step_time_s less the data loader's wait
    double data_stall_s = 0;        // per step: the data loader's wait and storage slower than the step (0 when both keep up)
    double loader_stall_s = 0;      // of data_stall_s, the data loader's (Breakdown::data_loader_s)
    double tokens_per_step = 0;
    int64_t steps = 0;              // ceil(train_tokens / tokens_per_step)
    int num_gpus = 0;               // GPUs running the job
    int spare_gpus = 0;             // spare_nodes x gpus_per_node (billed, idle)
    double failures_per_s = 0;      // the job's failure rate: rate per GPU-hour x num_gpus / 3600
    double checkpoint_bytes = 0;
    double checkpoint_block_s = 0;  // training stops this long per checkpoint
    double checkpoint_persist_s = 0;  // async: write to storage after the snapshot (0 when sync)
    double checkpoint_read_s = 0;   // reading the checkpoint back on restart
    double restart_overhead_s = 0;
    int spare_nodes = 0;
    double node_repair_s = 0;       // 0: a failed node is replaced at once
    double recovery_s = 0;          // restart_overhead_s + checkpoint_read_s + spare_wait_s
    double spare_wait_s = 0;        // expected wait for a spare node per failure (closed form)
    double checkpoint_interval_s = 0;  // work between checkpoints, a whole number of steps
    bool interval_auto = false;
    // Data loading: tokens per second the storage supplies (the loader's CPU
    // time is the step's: Breakdown::data_loader_s).
    double storage_tokens_per_s = 0;
};

// The resolved inputs of `job` for one step of `e`; checkpoint_bytes derived
// when the job leaves it 0: 14 bytes per parameter.
RunInputs run_inputs(const Job& job, const Estimate& e);
// The checkpoint size the run uses for `job` (RunSpec::checkpoint_bytes or derived).
double checkpoint_bytes(const Job& job);

// Young 1974 / Daly 2006 optimal compute time between checkpoints for a
// checkpoint cost `block_s` and a mean time between failures `mtbf_s`:
// sqrt(2 * block_s * mtbf_s) - block_s (Daly's first-order form), and mtbf_s
// when block_s >= mtbf_s / 2 (Daly 2006, FGCS 22(3); Young 1974, CACM 17(9)
// gives the first term). Infinite for mtbf_s = inf.
double young_daly_interval_s(double block_s, double mtbf_s);

// Expected wall time of a run under `in` with compute `interval_s` between
// checkpoints (closed form; run_cost.cpp states it).
double expected_wall_time_s(const RunInputs& in, double interval_s);

// Throws InputError (file, run.gpu_failure_rate) when the expected wall time
// is not finite or above 1,000 times the work: failures come faster than the
// run can recover and checkpoint. run_cost and simulate_run call it.
void check_finishes(const RunInputs& in, double interval_s, const std::string& file);

// One factor of the effective compute utilisation and how it is defined.
struct UtilisationFactor {
    const char* name;
    const char* definition;
    double value = 0;  // fraction
};

struct RunCost {
    RunInputs inputs;
    double useful_s = 0;                // steps x step_time_s: the training itself
    double data_stall_s = 0;            // steps x data stall per step
    double checkpoint_overhead_s = 0;   // checkpoints x checkpoint_block_s, without failures
    double restart_s = 0;               // time in recovery: restarts, checkpoint reads, spare waits
    double lost_work_s = 0;             // work redone after failures (the rest of the wall time)
    double wall_time_s = 0;             // the sum: the whole run, losses included
    double expected_failures = 0;       // failures_per_s x wall_time_s (outside waits for spares)
    double mtbf_s = 0;                  // 1 / failures_per_s (inf without failures)
    double checkpoints = 0;             // checkpoints written in a failure-free run
    double goodput = 0;                 // useful_s / wall_time_s
    double gpu_hours = 0;               // (num_gpus + spare_gpus) x wall time
    double cost = 0;                    // gpu_hours x price; 0 when no price was given
    bool cost_given = false;
    double energy_kwh = 0;              // gpu_power_w x num_gpus x wall time x PUE
    std::vector<UtilisationFactor> utilisation;  // product = effective_utilisation
    double effective_utilisation = 0;
};

// The closed form of the whole run. Precondition: job.training.train_tokens > 0.
RunCost run_cost(const Job& job, const Estimate& e);

// Seeded Monte Carlo of the run (run_simulate.cpp): failures drawn with
// exponential gaps through an inverse CDF of the raw 64-bit output of
// xoshiro256**, one stream per block of 4,096 samples (2^128 draws apart), so
// the figures are the same on every platform and for every thread count.
struct RunSimulation {
    int samples = 0;
    uint64_t seed = 0;
    double interval_s = 0;
    double mean_wall_time_s = 0, p10_wall_time_s = 0, p50_wall_time_s = 0, p90_wall_time_s = 0;
    double mean_goodput = 0, p10_goodput = 0, p50_goodput = 0, p90_goodput = 0;
    double mean_failures = 0;
};
// Precondition: check_finishes(in, interval_s) passes (it is checked again,
// with an empty file name, so that a sample always ends). threads: worker
// threads, 0 every core; the figures do not depend on it. The work is
// bounded: InputError("--simulate") when samples x (1 + the closed form's
// expected failures a run) is over 5 x 10^8.
RunSimulation simulate_run(const RunInputs& in, double interval_s, int samples, uint64_t seed, int threads = 0);

}  // namespace lostflops
