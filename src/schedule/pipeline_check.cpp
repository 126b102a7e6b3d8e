// Precondition checks for pipeline schedules. The interleaved schedule needs
// m % p == 0: Megatron-LM, megatron/core/pipeline_parallel/schedules.py
// (get_forward_backward_func asserts it for virtual pipeline parallelism).
#include "schedule/pipeline_detail.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "lostflops/pipeline_schedules.h"

namespace lostflops::schedule_detail {

void check_pipeline_shape(int stages, int chunks, int micro_batches) {
    if (stages < 1) throw std::invalid_argument("pipeline: stages must be >= 1");
    if (chunks < 1) throw std::invalid_argument("pipeline: chunks must be >= 1");
    if (micro_batches < 1) throw std::invalid_argument("pipeline: micro_batches must be >= 1");
    if (chunks > 1 && micro_batches % stages != 0) {
        throw std::invalid_argument("pipeline: interleaved schedule (chunks = " +
                                    std::to_string(chunks) + ") needs micro_batches (" +
                                    std::to_string(micro_batches) +
                                    ") divisible by stages (" + std::to_string(stages) + ")");
    }
    // Op indices (2*m*v per rank) are ints.
    if (2LL * chunks * micro_batches > 1'000'000'000LL) {
        throw std::invalid_argument("pipeline: micro_batches * chunks too large");
    }
}

void check_pipeline_sizes(const PipelineInput& in) {
    const ScheduleInfo& si = schedule_info(in.schedule);
    switch (si.order) {
        case ScheduleOrder::megatron_1f1b: check_pipeline_shape(in.stages, in.chunks, in.micro_batches); break;
        case ScheduleOrder::zero_bubble_h1:
            check_pipeline_shape(in.stages, 1, in.micro_batches);
            if (in.chunks != 1) throw std::invalid_argument("pipeline: zero-bubble runs one chunk per rank");
            break;
        case ScheduleOrder::zero_bubble_v:
            check_pipeline_shape(in.stages, 1, in.micro_batches);
            if (in.chunks != 2) throw std::invalid_argument("pipeline: zbv runs two chunks per rank");
            break;
        case ScheduleOrder::dual_pipe:
            check_pipeline_shape(in.stages, 1, in.micro_batches);
            if (in.chunks != 2) throw std::invalid_argument("pipeline: dualpipe / dualpipev run two chunks per rank");
            if (in.micro_batches < 2 * in.stages)
                throw std::invalid_argument("pipeline: dualpipe / dualpipev need micro_batches >= 2 * stages");
            if ((si.even_pp && in.stages % 2 != 0) || (si.even_microbatches && in.micro_batches % 2 != 0))
                throw std::invalid_argument("pipeline: dualpipe needs even stages and micro_batches");
            break;
    }
    const auto n = static_cast<std::size_t>(in.stages) * static_cast<std::size_t>(in.chunks);
    if (in.fwd_s.size() != n || in.bwd_s.size() != n) {
        throw std::invalid_argument("pipeline: fwd_s and bwd_s must have stages*chunks = " +
                                    std::to_string(n) + " entries");
    }
    for (const auto* v : {&in.wgrad_s, &in.fwd_comm_s, &in.bwd_comm_s})
        if (!v->empty() && v->size() != n)
            throw std::invalid_argument("pipeline: wgrad_s, fwd_comm_s and bwd_comm_s must be empty or have "
                                        "stages*chunks entries");
}

void check_pipeline_input(const PipelineInput& in) {
    check_pipeline_sizes(in);
    const auto n = in.fwd_s.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(in.fwd_s[i]) || in.fwd_s[i] < 0 || !std::isfinite(in.bwd_s[i]) ||
            in.bwd_s[i] < 0) {
            throw std::invalid_argument("pipeline: stage times must be finite and >= 0");
        }
    }
    for (std::size_t i = 0; i < in.wgrad_s.size(); ++i)
        if (!std::isfinite(in.wgrad_s[i]) || in.wgrad_s[i] < 0 || in.wgrad_s[i] > in.bwd_s[i])
            throw std::invalid_argument("pipeline: wgrad_s must be finite, >= 0 and <= bwd_s");
    for (const auto* v : {&in.fwd_comm_s, &in.bwd_comm_s})
        for (const double x : *v)
            if (!std::isfinite(x) || x < 0) throw std::invalid_argument("pipeline: comm times must be finite and >= 0");
    if (!std::isfinite(in.p2p_s) || in.p2p_s < 0) {
        throw std::invalid_argument("pipeline: p2p_s must be finite and >= 0");
    }
}

}  // namespace lostflops::schedule_detail
