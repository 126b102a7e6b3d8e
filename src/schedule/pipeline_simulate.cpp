// Discrete-event simulation of one step's pipeline phase.
//
// Every rank executes its operations strictly in Megatron-LM's order
// (pipeline_order.cpp; Narayanan et al. 2021 sec. 2.2), one at a time. With
// virtual stage s = chunk * p + rank and S = p * v virtual stages:
//   forward (j, s)  starts after forward (j, s-1) ended + p2p (s > 0);
//   backward (j, s) starts after backward (j, s+1) ended + p2p (s < S-1) and after
//                   forward (j, s) ended (the last stage's backward follows its own
//                   forward);
// and after the rank's previous operation ended. p2p is a pure latency: it occupies
// no compute (and is zero for p = 1, where all chunks share one rank). Each op's start is the max of these, so ops are resolved in
// dependency order with a work list of ranks that may be able to advance (a rank
// can only be unblocked by its neighbours r-1 and r+1, which own s-1 and s+1).
// If no rank can advance before all ops are done, the schedule is inconsistent and
// std::logic_error is thrown. Cost: O(p * v * m) time and memory, two allocations
// (plus the passes, when pipeline_timeline.cpp asks for them).
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "lostflops/pipeline.h"
#include "lostflops/pipeline_timeline.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {

namespace {

constexpr double kNotDone = -1.0;  // finish times are >= 0

struct RankState {
    int next_op = 0;
    int warmup = 0;
    double free_s = 0;   // when the rank finishes its last executed op
    double busy_s = 0;   // compute time of one micro-batch over all its chunks
    bool queued = false;
};

}  // namespace

PipelineResult pipeline_simulate(const PipelineInput& in) { return schedule_detail::pipeline_simulate_recorded(in, nullptr); }

PipelineResult schedule_detail::pipeline_simulate_recorded(const PipelineInput& in,
                                                           std::vector<std::vector<TimelinePass>>* per_rank) {
    schedule_detail::check_pipeline_input(in);
    // The simulation keeps two finish times per (micro-batch, virtual stage): cap the
    // memory at 2 * 5e7 doubles (800 MB); real plans are below 1e6 cells.
    if (1LL * in.stages * in.chunks * in.micro_batches > 50'000'000LL) {
        throw std::invalid_argument("pipeline_simulate: stages * chunks * micro_batches > 5e7");
    }
    const int p = in.stages;
    const int v = in.chunks;
    const int m = in.micro_batches;
    const int virtual_stages = p * v;
    const int total = m * v;          // virtual micro-steps per rank and direction
    const int ops_per_rank = 2 * total;
    // With p = 1 consecutive chunks live on the same rank: nothing is transferred.
    const double p2p_s = p > 1 ? in.p2p_s : 0.0;

    // finish[(dir * m + j) * S + s]: end time of forward (dir 0) / backward (dir 1).
    std::vector<double> finish(2 * static_cast<std::size_t>(m) * virtual_stages, kNotDone);
    auto end_at = [&](int dir, int j, int s) -> double& {
        return finish[(static_cast<std::size_t>(dir) * m + j) * virtual_stages + s];
    };

    std::vector<RankState> ranks(static_cast<std::size_t>(p));
    if (per_rank != nullptr) per_rank->assign(static_cast<std::size_t>(p), {});
    std::vector<int> work;  // stack of ranks to try; each rank at most once in it
    work.reserve(static_cast<std::size_t>(p));
    for (int r = p - 1; r >= 0; --r) {
        auto& st = ranks[r];
        st.warmup = pipeline_warmup_ops(p, v, m, r);
        for (int c = 0; c < v; ++c) st.busy_s += in.fwd_s[r * v + c] + in.bwd_s[r * v + c];
        st.queued = true;
        work.push_back(r);
    }

    long long remaining = 1LL * p * ops_per_rank;
    auto enqueue = [&](int r) {
        if (ranks[r].queued) return;
        ranks[r].queued = true;
        work.push_back(r);
    };

    while (!work.empty()) {
        const int r = work.back();
        work.pop_back();
        auto& st = ranks[r];
        st.queued = false;
        bool advanced = false;
        while (st.next_op < ops_per_rank) {
            const PipelineOp op =
                schedule_detail::rank_op_unchecked(p, v, total, st.warmup, st.next_op);
            const int j = op.micro_batch;
            const int s = op.chunk * p + r;
            double ready = 0;
            if (op.forward) {
                if (s > 0) {
                    const double dep = end_at(0, j, s - 1);
                    if (dep < 0) break;
                    ready = dep + p2p_s;
                }
            } else {
                const double own_fwd = end_at(0, j, s);
                if (own_fwd < 0) break;
                ready = own_fwd;
                if (s < virtual_stages - 1) {
                    const double dep = end_at(1, j, s + 1);
                    if (dep < 0) break;
                    ready = std::max(ready, dep + p2p_s);
                }
            }
            const double dur = op.forward ? in.fwd_s[r * v + op.chunk] : in.bwd_s[r * v + op.chunk];
            const double start = std::max(st.free_s, ready);
            st.free_s = start + dur;
            end_at(op.forward ? 0 : 1, j, s) = st.free_s;
            if (per_rank != nullptr) (*per_rank)[r].push_back(TimelinePass{r, op, start, st.free_s});
            ++st.next_op;
            --remaining;
            advanced = true;
        }
        if (advanced) {
            enqueue((r + 1) % p);
            enqueue((r + p - 1) % p);
        }
    }
    if (remaining != 0) {
        throw std::logic_error("pipeline_simulate: schedule deadlocked (bug in the op order)");
    }

    PipelineResult res;
    for (const auto& st : ranks) {
        res.makespan_s = std::max(res.makespan_s, st.free_s);
        res.busy_max_s = std::max(res.busy_max_s, m * st.busy_s);
    }
    res.bubble_s = res.makespan_s - res.busy_max_s;
    return res;
}

}  // namespace lostflops
