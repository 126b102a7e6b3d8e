// Pipeline schedules: closed form and discrete-event simulation.
//
// Both take the same input: p stages, v model chunks per stage (interleaved 1F1B
// when v > 1, Narayanan et al. 2021 sec. 2.2), m micro-batches, and for every
// (stage, chunk) the forward and backward time of one micro-batch, plus the
// point-to-point transfer time between consecutive chunks. They return the
// makespan of one step's pipeline phase (first forward start to last backward
// end), without the optimizer or gradient reduction.
//
// Closed form (1F1B, uniform stages): (m + (p-1)/v) * (t_f + t_b)
// (Narayanan et al. 2021, eq. for the bubble (p-1)/(v*m)); with uneven stages the
// closed form uses the slowest stage for the steady state and the mean stage for
// fill and drain. The simulation executes Megatron-LM's actual per-rank order of
// forward and backward passes, and is the reference the closed form is tested
// against.
#pragma once

#include <vector>

namespace lostflops {

struct PipelineInput {
    int stages = 1;          // p >= 1
    int chunks = 1;          // v >= 1
    int micro_batches = 1;   // m >= 1; interleaved schedules need m % p == 0
    // Indexed [stage * chunks + chunk]; size stages * chunks. Seconds.
    std::vector<double> fwd_s;
    std::vector<double> bwd_s;
    double p2p_s = 0;        // one activation (or gradient) transfer between stages
};

struct PipelineResult {
    double makespan_s = 0;
    double busy_max_s = 0;   // busiest stage's compute time (m * sum of its chunks)
    double bubble_s = 0;     // makespan - busy_max_s
};

// Both throw std::invalid_argument when the input breaks a precondition
// (p, v, m < 1; vector sizes != p*v; negative or non-finite times; v > 1 with
// m % p != 0, Megatron-LM's requirement for the interleaved schedule). The job's
// validation reports such plans to the user as InputError before calling these.
// pipeline_closed_form is O(p*v) and allocation-free (hot path of estimate).
// pipeline_simulate throws std::logic_error if the schedule deadlocks (a bug).
PipelineResult pipeline_closed_form(const PipelineInput& in);
PipelineResult pipeline_simulate(const PipelineInput& in);

// One forward or backward pass of one micro-batch through one model chunk.
struct PipelineOp {
    bool forward = true;
    int micro_batch = 0;  // 0 .. m-1
    int chunk = 0;        // 0 .. v-1; virtual stage = chunk * p + rank
};

// Number of warm-up forward passes rank `rank` runs before its first backward
// (Megatron-LM schedules.py): min(p - r - 1, m) for v == 1;
// min((p - r - 1) * 2 + (v - 1) * p, m * v) for v > 1.
int pipeline_warmup_ops(int stages, int chunks, int micro_batches, int rank);

// The i-th operation (0 <= i < 2*m*v) that rank `rank` executes.
PipelineOp pipeline_rank_op(int stages, int chunks, int micro_batches, int rank, int i);

// All 2*m*v operations of one rank in execution order (for tests and pictures).
std::vector<PipelineOp> pipeline_rank_order(int stages, int chunks, int micro_batches,
                                            int rank);

}  // namespace lostflops
