// Per-rank order of passes of every pipeline schedule (lostflops/pipeline_schedules.h).
//
// 1F1B and interleaved 1F1B: pipeline_order.cpp (Megatron-LM); ZB-V: zbv_order.cpp.
//
// Zero bubble ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
// sec. 2.1, fig. 3): rank r runs 1F1B's min(p - r - 1, m) warm-up forwards,
// then for each micro-batch i a forward and the input gradient B of i, and the
// weight gradient W of micro-batch i - r once i >= r: W is delayed by r so
// that every rank holds min(p, m) micro-batches, 1F1B's peak; the cool-down
// runs B then one W, and the r delayed W's fill the tail.
//
// DualPipe and DualPipeV (deepseek-ai/DualPipe, dualpipe.py and dualpipev.py,
// DualPipe.step): with n ranks on each side (dualpipe: n = p/2 and half rank
// h = min(r, p-1-r), M = m/2 micro-batches per direction; dualpipev: n = p,
// h = r, M = m), phase 0 being the chunk in which the rank's stage is in the
// first half and phase 1 the other, each rank runs eight steps:
//   1  2(n-h-1) F0                      5  n-h-1 x (B1, F1&B0)
//   2  h+1 x (F0, F1)                   6  h+1 x (B1, B0); the second half of
//   3  n-h-1 x (B1 with W deferred, W, F1)     them defer W (zero bubble)
//   4  M-2n+h+1 x (F0&B1, F1&B0); on   7  n-h-1 x (W, B0 with W deferred)
//      the middle rank (dualpipe) or   8  h+1 x W
//      last rank (dualpipev) the first F0&B1 runs as F0 then B1.
// Deferred W's run first in, first out. dualpipe: phase 0 is chunk 0 (stage r,
// micro-batches from rank 0) on ranks r < n and chunk 1 (stage p-1-r, from
// rank p-1) on the others; dualpipev: phase c is chunk c.
#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "lostflops/pipeline.h"
#include "lostflops/pipeline_schedules.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {

namespace {

std::vector<PipelineOp> zero_bubble_order(int p, int m, int r) {
    std::vector<PipelineOp> ops;
    ops.reserve(3 * static_cast<size_t>(m));
    const auto add = [&](PassKind k, int j) {
        PipelineOp op;
        op.kind = k;
        op.forward = k == PassKind::forward;
        op.micro_batch = j;
        ops.push_back(op);
    };
    const int warmup = std::min(p - r - 1, m);
    int w = 0;  // next weight gradient
    for (int i = 0; i < warmup; ++i) add(PassKind::forward, i);
    for (int i = 0; i < m - warmup; ++i) {
        add(PassKind::forward, warmup + i);
        add(PassKind::input_grad, i);
        if (i >= r) add(PassKind::weight_grad, w++);
    }
    for (int i = m - warmup; i < m; ++i) {
        add(PassKind::input_grad, i);
        add(PassKind::weight_grad, w++);
    }
    while (w < m) add(PassKind::weight_grad, w++);
    return ops;
}

struct DualShape {
    int n = 0, h = 0, M = 0;
    bool special = false;     // the F0&B1 of step 4's first round runs apart
    int phase_chunk[2] = {0, 1};
};

DualShape dual_shape(PipelineSchedule s, int p, int m, int r) {
    DualShape d;
    if (schedule_info(s).two_directions) {
        d.n = p / 2;
        d.h = std::min(r, p - 1 - r);
        d.M = m / 2;
        d.special = r == d.n - 1 || r == d.n;
        if (r >= d.n) d.phase_chunk[0] = 1, d.phase_chunk[1] = 0;
    } else {
        d.n = p;
        d.h = r;
        d.M = m;
        d.special = r == p - 1;
    }
    return d;
}

std::vector<PipelineOp> dual_order(PipelineSchedule s, int p, int m, int r) {
    const DualShape d = dual_shape(s, p, m, r);
    const int n = d.n, h = d.h, M = d.M;
    std::vector<PipelineOp> ops;
    int fwd[2] = {0, 0}, bwd[2] = {0, 0};
    std::deque<PipelineOp> deferred;
    const auto F = [&](int ph) {
        PipelineOp op;
        op.chunk = d.phase_chunk[ph];
        op.micro_batch = fwd[ph]++;
        ops.push_back(op);
    };
    const auto B = [&](int ph, bool defer_w) {
        PipelineOp op;
        op.forward = false;
        op.chunk = d.phase_chunk[ph];
        op.micro_batch = bwd[ph]++;
        op.kind = defer_w ? PassKind::input_grad : PassKind::backward;
        ops.push_back(op);
        if (defer_w) {
            op.kind = PassKind::weight_grad;
            deferred.push_back(op);
        }
    };
    const auto W = [&]() {
        ops.push_back(deferred.front());
        deferred.pop_front();
    };
    const auto FB = [&](int pf, int pb) {
        PipelineOp op;
        op.forward = false;
        op.kind = PassKind::fwd_bwd;
        op.chunk = d.phase_chunk[pf];
        op.micro_batch = fwd[pf]++;
        op.bwd_chunk = d.phase_chunk[pb];
        op.bwd_micro_batch = bwd[pb]++;
        ops.push_back(op);
    };
    for (int i = 0; i < 2 * (n - h - 1); ++i) F(0);
    for (int i = 0; i < h + 1; ++i) F(0), F(1);
    for (int i = 0; i < n - h - 1; ++i) B(1, true), W(), F(1);
    for (int i = 0; i < M - 2 * n + h + 1; ++i) {
        if (i == 0 && d.special) {
            F(0);
            B(1, false);
        } else {
            FB(0, 1);
        }
        FB(1, 0);
    }
    for (int i = 0; i < n - h - 1; ++i) B(1, false), FB(1, 0);
    bool defer = false;
    for (int i = 0; i < h + 1; ++i) {
        if (i == (h + 1) / 2 && h % 2 == 1) defer = true;
        B(1, defer);
        if (i == (h + 1) / 2 && h % 2 == 0) defer = true;
        B(0, defer);
    }
    for (int i = 0; i < n - h - 1; ++i) W(), B(0, true);
    for (int i = 0; i < h + 1; ++i) W();
    if (!deferred.empty() || fwd[0] != M || fwd[1] != M || bwd[0] != M || bwd[1] != M)
        throw std::logic_error("dual pipe order: passes left over (bug)");
    return ops;
}

void check_dual(PipelineSchedule s, int p, int m) {
    const ScheduleInfo& si = schedule_info(s);
    if (si.even_pp && p % 2 != 0) throw std::invalid_argument("pipeline: dualpipe needs an even number of stages");
    if (si.even_microbatches && m % 2 != 0)
        throw std::invalid_argument("pipeline: dualpipe needs an even number of micro-batches");
    if (m < 2 * p)
        throw std::invalid_argument("pipeline: dualpipe / dualpipev need micro_batches >= 2 * stages (" +
                                    std::to_string(m) + " < " + std::to_string(2 * p) + ")");
}

}  // namespace

std::vector<PipelineOp> schedule_rank_order(PipelineSchedule schedule, int stages, int chunks, int micro_batches,
                                            int rank) {
    switch (schedule) {
        case PipelineSchedule::one_f_one_b:
        case PipelineSchedule::interleaved: {
            std::vector<PipelineOp> ops = pipeline_rank_order(stages, chunks, micro_batches, rank);
            for (PipelineOp& op : ops) op.kind = op.forward ? PassKind::forward : PassKind::backward;
            return ops;
        }
        case PipelineSchedule::zero_bubble:
            schedule_detail::check_pipeline_shape(stages, 1, micro_batches);
            if (chunks != 1) throw std::invalid_argument("pipeline: zero-bubble runs one chunk per rank");
            if (rank < 0 || rank >= stages) throw std::invalid_argument("pipeline: rank out of range");
            return zero_bubble_order(stages, micro_batches, rank);
        case PipelineSchedule::dualpipe:
        case PipelineSchedule::dualpipev:
            if (chunks != 2) throw std::invalid_argument("pipeline: dualpipe / dualpipev run two chunks per rank");
            if (stages < 1 || rank < 0 || rank >= stages) throw std::invalid_argument("pipeline: rank out of range");
            check_dual(schedule, stages, micro_batches);
            return dual_order(schedule, stages, micro_batches, rank);
        case PipelineSchedule::zbv:
            schedule_detail::check_pipeline_shape(stages, 1, micro_batches);
            if (chunks != 2) throw std::invalid_argument("pipeline: zbv runs two chunks per rank");
            if (rank < 0 || rank >= stages) throw std::invalid_argument("pipeline: rank out of range");
            return schedule_detail::zbv_rank_order(stages, micro_batches, rank);
    }
    throw std::invalid_argument("pipeline: unknown schedule");
}

// Peak of the passes alive (step 3 ends it: phase 0 has run all its
// warm-up forwards, 2n-1-h, or n+1 on the middle rank whose step 4 begins
// with a lone F0; phase 1 h+1), checked against the order by the tests.
DualAlive dual_alive(PipelineSchedule schedule, int stages, int rank) {
    const DualShape d = dual_shape(schedule, stages, 2 * stages, rank);
    const int phase0 = d.h < d.n - 1 ? 2 * d.n - 1 - d.h : d.n + 1;
    const int phase1 = d.h + 1;
    DualAlive a;
    (d.phase_chunk[0] == 0 ? a.chunk0 : a.chunk1) = phase0;
    (d.phase_chunk[1] == 0 ? a.chunk0 : a.chunk1) = phase1;
    return a;
}

int dual_overlapped_pairs(PipelineSchedule schedule, int stages, int micro_batches, int rank) {
    const DualShape d = dual_shape(schedule, stages, micro_batches, rank);
    return 2 * (d.M - 2 * d.n + d.h + 1) - (d.special ? 1 : 0) + (d.n - d.h - 1);
}

}  // namespace lostflops
