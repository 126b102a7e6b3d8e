// Discrete-event simulation of one step's pipeline phase.
//
// Every rank executes its operations strictly in its schedule's order, one at
// a time: Megatron-LM's for the 1F1B family (pipeline_order.cpp; Narayanan et
// al. 2021 sec. 2.2), schedule_order.cpp's for zero-bubble and DualPipe(V),
// whose passes also include B and W apart (W after its own B, on its rank)
// and F&B pairs (ready when both the forward's and the backward's inputs are;
// both results at its end). DualPipe's two directions are two streams of m/2
// micro-batches; DualPipeV's V runs stages 0..2p-1 over ranks 0..p-1..0, and
// a transfer between two stages of one rank costs nothing. With
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
#include "lostflops/pipeline_schedules.h"
#include "lostflops/pipeline_timeline.h"
#include "schedule/pipeline_detail.h"

namespace lostflops {

namespace {

constexpr double kNotDone = -1.0;  // finish times are >= 0

struct RankState {
    int next_op = 0;
    int warmup = 0;
    double free_s = 0;   // when the rank finishes its last executed op
    double busy_s = 0;   // time of the passes it ran
    int ops = 0;         // passes it runs
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
    const ScheduleInfo& si = schedule_info(in.schedule);
    const bool family = si.order == ScheduleOrder::megatron_1f1b;
    // Streams of micro-batches, stages per stream, micro-batches per stream.
    const int streams = si.two_directions ? 2 : 1;
    const int virtual_stages = family ? p * v : si.stage_mapping == StageMapping::v_shape ? 2 * p : p;
    const int total = m * v;          // virtual micro-steps per rank and direction (1F1B family)
    const int ops_per_rank = 2 * total;
    // With p = 1 consecutive chunks live on the same rank: nothing is transferred.
    const double p2p_s = p > 1 ? in.p2p_s : 0.0;
    // (stream, stage) of chunk c of rank r, and the rank of a stream's stage.
    const auto stage_of = [&](int r, int c) -> int {
        switch (si.stage_mapping) {
            case StageMapping::mirrored: return c == 0 ? r : p + (p - 1 - r);  // stream 1 at offset p
            case StageMapping::v_shape: return c == 0 ? r : 2 * p - 1 - r;
            case StageMapping::standard: break;
        }
        return c * p + r;
    };
    const int stream_stages = streams == 2 ? p : virtual_stages;  // stages of one stream
    const int cells = streams * stream_stages;

    // finish[(dir * m + j) * cells + g]: end of forward (dir 0) / input gradient (dir 1).
    std::vector<double> finish(2 * static_cast<std::size_t>(m) * cells, kNotDone);
    auto end_at = [&](int dir, int j, int g) -> double& {
        return finish[(static_cast<std::size_t>(dir) * m + j) * cells + g];
    };
    const auto wgrad = [&](std::size_t i) { return in.wgrad_s.empty() ? 0.0 : in.wgrad_s[i]; };
    const auto fcomm = [&](std::size_t i) { return in.fwd_comm_s.empty() ? 0.0 : in.fwd_comm_s[i]; };
    const auto bcomm = [&](std::size_t i) { return in.bwd_comm_s.empty() ? 0.0 : in.bwd_comm_s[i]; };
    // Ready time of a forward / backward of micro-batch j at global stage g,
    // or kNotDone when a dependency has not run.
    // Consecutive stages of a stream sit on neighbouring ranks, but for the
    // V's turn (stages p-1 and p of dualpipev, both on rank p-1): no transfer.
    const int turn = si.stage_mapping == StageMapping::v_shape ? p - 1 : -1;
    const auto first_of_stream = [&](int g) { return g == 0 || (streams == 2 && g == p); };
    const auto last_of_stream = [&](int g) { return g == cells - 1 || (streams == 2 && g == p - 1); };
    const auto fwd_ready = [&](int j, int g) -> double {
        if (first_of_stream(g)) return 0.0;
        const double dep = end_at(0, j, g - 1);
        if (dep < 0) return kNotDone;
        return dep + (g - 1 == turn ? 0.0 : p2p_s);
    };
    const auto bwd_ready = [&](int j, int g) -> double {
        const double own_fwd = end_at(0, j, g);
        if (own_fwd < 0) return kNotDone;
        if (last_of_stream(g)) return own_fwd;
        const double dep = end_at(1, j, g + 1);
        if (dep < 0) return kNotDone;
        return std::max(own_fwd, dep + (g == turn ? 0.0 : p2p_s));
    };

    std::vector<std::vector<PipelineOp>> orders;
    if (!family) {
        orders.reserve(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r) orders.push_back(schedule_rank_order(in.schedule, p, v, m, r));
    }
    std::vector<RankState> ranks(static_cast<std::size_t>(p));
    if (per_rank != nullptr) per_rank->assign(static_cast<std::size_t>(p), {});
    std::vector<int> work;  // stack of ranks to try; each rank at most once in it
    work.reserve(static_cast<std::size_t>(p));
    long long remaining = 0;
    for (int r = p - 1; r >= 0; --r) {
        auto& st = ranks[r];
        st.warmup = family ? pipeline_warmup_ops(p, v, m, r) : 0;
        if (family)  // m times one micro-batch's passes, as the closed form counts them
            for (int c = 0; c < v; ++c) st.busy_s += in.fwd_s[r * v + c] + in.bwd_s[r * v + c];
        st.ops = family ? ops_per_rank : static_cast<int>(orders[static_cast<std::size_t>(r)].size());
        remaining += st.ops;
        st.queued = true;
        work.push_back(r);
    }
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
        while (st.next_op < st.ops) {
            PipelineOp op = family ? schedule_detail::rank_op_unchecked(p, v, total, st.warmup, st.next_op)
                                   : orders[static_cast<std::size_t>(r)][static_cast<std::size_t>(st.next_op)];
            if (family) op.kind = op.forward ? PassKind::forward : PassKind::backward;
            const int j = op.micro_batch;
            const int g = family ? op.chunk * p + r : stage_of(r, op.chunk);
            const std::size_t at = static_cast<std::size_t>(r) * v + op.chunk;
            double ready = 0, dur = 0;
            switch (op.kind) {
                case PassKind::forward:
                    ready = fwd_ready(j, g);
                    dur = in.fwd_s[at];
                    break;
                case PassKind::backward:
                    ready = bwd_ready(j, g);
                    dur = in.bwd_s[at];
                    break;
                case PassKind::input_grad:
                    ready = bwd_ready(j, g);
                    dur = in.bwd_s[at] - wgrad(at);
                    break;
                case PassKind::weight_grad:
                    ready = end_at(1, j, g);  // its own B ran before it on this rank
                    dur = wgrad(at);
                    break;
                case PassKind::fwd_bwd: {
                    const int gb = stage_of(r, op.bwd_chunk);
                    const std::size_t bt = static_cast<std::size_t>(r) * v + op.bwd_chunk;
                    const double rf = fwd_ready(j, g), rb = bwd_ready(op.bwd_micro_batch, gb);
                    ready = rf < 0 || rb < 0 ? kNotDone : std::max(rf, rb);
                    const double f = in.fwd_s[at], b = in.bwd_s[bt];
                    const double fc = std::min(fcomm(at), f), bc = std::min(bcomm(bt), b);
                    dur = f + b - std::min(fc, b - bc) - std::min(bc, f - fc);
                    break;
                }
            }
            if (ready < 0) break;
            const double start = std::max(st.free_s, ready);
            st.free_s = start + dur;
            if (!family) st.busy_s += dur;
            if (op.kind == PassKind::forward || op.kind == PassKind::fwd_bwd) end_at(0, j, g) = st.free_s;
            if (op.kind == PassKind::backward || op.kind == PassKind::input_grad)
                end_at(1, j, g) = st.free_s;
            if (op.kind == PassKind::fwd_bwd) end_at(1, op.bwd_micro_batch, stage_of(r, op.bwd_chunk)) = st.free_s;
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
        res.busy_max_s = std::max(res.busy_max_s, family ? m * st.busy_s : st.busy_s);
    }
    res.bubble_s = res.makespan_s - res.busy_max_s;
    return res;
}

}  // namespace lostflops
