// Zero-bubble V (ZB-V): Qi et al., "Zero Bubble Pipeline Parallelism", ICLR
// 2024, sec. 6; the order torchtitan runs as ZBVZeroBubble (PyTorch
// torch/distributed/pipelining/schedules.py ScheduleZBVZeroBubble). Each of
// the p ranks holds two chunks in a V (chunk 0 = virtual stage r, chunk 1 =
// virtual stage 2p-1-r), and splits each backward into B (input gradient) and
// W (weight gradient). With n = max(2p - 1, m) (the order is laid out for at
// least 2p - 1 micro-batches; passes of micro-batches >= m are left out),
// rank r runs:
//   warm-up   2(p - r) - 1 F0; r x (F1, F0); p - r x (F1, B1, W1)
//   steady    while chunk 1 lags chunk 0 or chunk 0 has micro-batches left:
//             F0 (while any are left), B0, W0, F1, B1, W1
//   cool-down r x (B0, B1) with their W's held back; p - r x (B0, W0);
//             then the held W1's, then the held W0's, oldest first.
// A rank's peak of alive passes (forward run, W not yet): min(2p - 1 - r, m)
// of chunk 0 and min(r + 1, m) of chunk 1, 2p chunk passes (p micro-batches
// of the rank's layers, 1F1B's rank 0) once m >= 2p - 1 (zbv_alive; the
// tests hold it against this order).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "lostflops/pipeline.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {

std::vector<PipelineOp> schedule_detail::zbv_rank_order(int p, int m, int r) {
    const int n = std::max(2 * p - 1, m);
    std::vector<PipelineOp> ops;
    ops.reserve(6 * static_cast<size_t>(m));
    int fwd[2] = {0, 0}, bwd[2] = {0, 0}, wgt[2] = {0, 0};
    const auto push = [&](PassKind k, int chunk, int j) {
        if (j >= m) return;  // a padding micro-batch
        PipelineOp op;
        op.kind = k;
        op.forward = k == PassKind::forward;
        op.chunk = chunk;
        op.micro_batch = j;
        ops.push_back(op);
    };
    const auto F = [&](int c) { push(PassKind::forward, c, fwd[c]++); };
    const auto B = [&](int c) { push(PassKind::input_grad, c, bwd[c]++); };
    const auto W = [&](int c) { push(PassKind::weight_grad, c, wgt[c]++); };
    for (int i = 0; i < 2 * (p - r) - 1; ++i) F(0);
    for (int i = 0; i < r; ++i) F(1), F(0);
    for (int i = 0; i < p - r; ++i) F(1), B(1), W(1);
    while (fwd[1] < fwd[0] || fwd[0] < n) {
        if (fwd[0] < n) F(0);
        B(0), W(0), F(1), B(1), W(1);
    }
    for (int i = 0; i < r; ++i) B(0), B(1);
    for (int i = 0; i < p - r; ++i) B(0), W(0);
    while (wgt[1] < bwd[1]) W(1);
    while (wgt[0] < bwd[0]) W(0);
    if (fwd[0] != n || fwd[1] != n || bwd[0] != n || bwd[1] != n)
        throw std::logic_error("zbv order: passes left over (bug)");
    return ops;
}

DualAlive zbv_alive(int stages, int micro_batches, int rank) {
    DualAlive a;
    a.chunk0 = std::min(2 * stages - 1 - rank, micro_batches);
    a.chunk1 = std::min(rank + 1, micro_batches);
    return a;
}

}  // namespace lostflops
