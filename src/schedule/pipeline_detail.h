// Internals shared by the pipeline order, closed form and simulation.
//
// Precondition violations are programming errors of the caller (the job's validation turns
// bad plans into InputError first), so they throw std::invalid_argument.
#pragma once

#include <vector>

#include "lostflops/pipeline.h"
#include "lostflops/pipeline_timeline.h"

namespace lostflops {

// The closed form needs of each rank only its per-micro-batch total over its
// chunks (T_r, summed chunk by chunk as fwd + bwd) and its chunk 0's fwd + bwd
// (u_r): estimate's pipeline phase passes these directly. Values are not
// checked (the caller checked them, or pipeline_closed_form did).
struct PipelineSums {
    int stages = 1, chunks = 1, micro_batches = 1;
    double p2p_s = 0;
    const double* rank_s = nullptr;    // [stages]
    const double* chunk0_s = nullptr;  // [stages]
    // Schedules beyond the 1F1B family (schedule_closed_form.cpp): the mean
    // over every (rank, chunk) of one pass's F and W, and for dualpipe(v) per
    // rank the time an F&B pair saves over F + B+W, mean of its two pairings.
    PipelineSchedule schedule{};  // {}: the table's first row, 1f1b
    double fwd_mean_s = 0, wgrad_mean_s = 0;
    const double* saved_s = nullptr;   // [stages]; null: nothing saved
};
PipelineResult pipeline_closed_form_sums(const PipelineSums& in);
// The same in two parts: the pass over the ranks, which does not depend on
// p2p_s, and the rest; the estimate times one pipeline with and without its
// transfers from one scan.
struct PipelineScan {
    double t_max = 0, t_sum = 0, u_sum = 0, pair_max = 0, g_max = 0;
    int k_max = 0;
};
PipelineScan pipeline_scan(const PipelineSums& in);
// A lower bound of the 1F1B family's makespan for any passes, O(p): rank k
// runs m * T_k; its first pass (micro-batch 0's chunk-0 forward) waits for that
// forward on every rank before it, and after its last (micro-batch m-1's
// chunk-0 backward, Megatron-LM's order) that backward still runs on every
// rank before it, each behind a transfer:
//   makespan >= max_k [ m * T_k + sum_{r<k} u_r + 2 * k * p2p ].
// The search's screen where the closed form is not exact (interleaving with
// uneven chunks, which it under- or overestimates by up to 24 % and 8 %);
// tests/schedule/pipeline_truth_test.cpp holds it below the simulation.
double pipeline_lower_bound_s(const PipelineSums& in);
PipelineResult pipeline_closed_form_scanned(const PipelineSums& in, const PipelineScan& scan);
// The schedules beyond the 1F1B family from the 1F1B family's result on the
// same sums (schedule_closed_form.cpp); the 1F1B family returns `family`.
PipelineResult schedule_closed_form(const PipelineSums& in, const PipelineScan& scan, const PipelineResult& family);

}  // namespace lostflops

namespace lostflops::schedule_detail {

// pipeline_simulate, appending each rank's passes in execution order to
// (*per_rank)[rank] when per_rank is not null (pipeline_timeline).
PipelineResult pipeline_simulate_recorded(const PipelineInput& in, std::vector<std::vector<TimelinePass>>* per_rank);

// Throws std::invalid_argument naming the broken precondition. O(p*v), no allocation
// unless it throws.
void check_pipeline_input(const PipelineInput& in);

// Checks p, v, m and the vector sizes, not the values. O(1).
void check_pipeline_sizes(const PipelineInput& in);

// ZB-V's passes of one rank (zbv_order.cpp); p >= 1, m >= 1, 0 <= r < p.
std::vector<PipelineOp> zbv_rank_order(int stages, int micro_batches, int rank);

// Checks p, v, m alone (used by the per-rank order functions).
void check_pipeline_shape(int stages, int chunks, int micro_batches);

// The i-th op of a rank whose warm-up has `warmup` forwards, with total = m * v
// virtual micro-steps per direction; see pipeline_order.cpp for the source.
// No checks: callers validated the shape.
inline PipelineOp rank_op_unchecked(int stages, int chunks, int total, int warmup, int i) {
    const int steady = total - warmup;
    PipelineOp op;
    int k = 0;  // virtual micro-step in its direction
    if (i < warmup) {
        k = i;
    } else if (i < warmup + 2 * steady) {
        const int d = i - warmup;
        op.forward = (d % 2 == 0);
        k = op.forward ? warmup + d / 2 : d / 2;
    } else {
        op.forward = false;
        k = steady + (i - warmup - 2 * steady);
    }
    const int group_size = stages * chunks;
    const int in_group = k % group_size;
    op.chunk = in_group / stages;
    op.micro_batch = (k / group_size) * stages + in_group % stages;
    if (!op.forward) op.chunk = chunks - 1 - op.chunk;
    return op;
}

}  // namespace lostflops::schedule_detail
