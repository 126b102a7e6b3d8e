// Per-rank order of forward and backward passes, as Megatron-LM executes them.
//
// Non-interleaved 1F1B (PipeDream-Flush; Narayanan et al. 2021, "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
// sec. 2.2.1): rank r runs min(p - r - 1, m) warm-up forwards, then alternates one
// forward and one backward, then runs the remaining backwards.
//
// Interleaved 1F1B with v chunks per rank (sec. 2.2.2; Megatron-LM
// megatron/core/pipeline_parallel/schedules.py, get_pp_rank_microbatches and
// get_schedule_table with microbatch_group_size_per_vp_stage = p): there are m*v
// "virtual micro-steps"; rank r runs min((p - r - 1) * 2 + (v - 1) * p, m * v) of
// them as warm-up forwards, then steady state (forward step W + k, backward step k),
// then cool-down backwards. Virtual step k lies in group k / (p*v); within the
// group, chunk = (k mod p*v) / p and micro-batch = group * p + k mod p. Backward
// steps use the same table with the chunk order reversed (v - 1 - chunk).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "lostflops/pipeline.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {

int pipeline_warmup_ops(int stages, int chunks, int micro_batches, int rank) {
    schedule_detail::check_pipeline_shape(stages, chunks, micro_batches);
    if (rank < 0 || rank >= stages) throw std::invalid_argument("pipeline: rank out of range");
    if (chunks == 1) return std::min(stages - rank - 1, micro_batches);
    const long long warmup = 2LL * (stages - rank - 1) + 1LL * (chunks - 1) * stages;
    return static_cast<int>(std::min<long long>(warmup, 1LL * micro_batches * chunks));
}

PipelineOp pipeline_rank_op(int stages, int chunks, int micro_batches, int rank, int i) {
    const int warmup = pipeline_warmup_ops(stages, chunks, micro_batches, rank);
    const int total = micro_batches * chunks;  // virtual micro-steps per direction
    if (i < 0 || i >= 2 * total) throw std::invalid_argument("pipeline: op index out of range");
    return schedule_detail::rank_op_unchecked(stages, chunks, total, warmup, i);
}

std::vector<PipelineOp> pipeline_rank_order(int stages, int chunks, int micro_batches,
                                            int rank) {
    schedule_detail::check_pipeline_shape(stages, chunks, micro_batches);
    std::vector<PipelineOp> ops;
    const int n = 2 * micro_batches * chunks;
    ops.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        ops.push_back(pipeline_rank_op(stages, chunks, micro_batches, rank, i));
    }
    return ops;
}

}  // namespace lostflops
