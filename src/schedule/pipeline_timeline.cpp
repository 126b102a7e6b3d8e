// Timeline of one step's pipeline phase: the discrete-event simulation of
// pipeline_simulate.cpp (Megatron-LM's per-rank order of passes, Narayanan et
// al. 2021 sec. 2.2), recording each pass's start and end. Ranks are advanced
// in rounds until none can; each rank runs its ops strictly in order, an op
// starting at max(rank free, dependencies ready). O(p * v * m).
#include "lostflops/pipeline_timeline.h"

#include <algorithm>
#include <stdexcept>

#include "schedule/pipeline_detail.h"

namespace lostflops {

PipelineTimeline pipeline_timeline(const PipelineInput& in) {
    schedule_detail::check_pipeline_input(in);
    if (1LL * in.stages * in.chunks * in.micro_batches > 1'000'000LL)
        throw std::invalid_argument("pipeline_timeline: stages * chunks * micro_batches > 1e6");
    const int p = in.stages, v = in.chunks, m = in.micro_batches;
    const int virtual_stages = p * v;
    const int total = m * v;
    const int ops_per_rank = 2 * total;
    const double p2p_s = p > 1 ? in.p2p_s : 0.0;
    std::vector<double> finish(2 * static_cast<size_t>(m) * virtual_stages, -1.0);
    const auto end_at = [&](int dir, int j, int s) -> double& {
        return finish[(static_cast<size_t>(dir) * m + j) * virtual_stages + s];
    };
    std::vector<int> next(static_cast<size_t>(p), 0), warmup(static_cast<size_t>(p), 0);
    std::vector<double> free_s(static_cast<size_t>(p), 0.0);
    std::vector<std::vector<TimelinePass>> per_rank(static_cast<size_t>(p));
    for (int r = 0; r < p; ++r) warmup[r] = pipeline_warmup_ops(p, v, m, r);
    long long remaining = 1LL * p * ops_per_rank;
    bool progress = true;
    while (remaining > 0 && progress) {
        progress = false;
        for (int r = 0; r < p; ++r) {
            while (next[r] < ops_per_rank) {
                const PipelineOp op = schedule_detail::rank_op_unchecked(p, v, total, warmup[r], next[r]);
                const int j = op.micro_batch, s = op.chunk * p + r;
                double ready = 0;
                if (op.forward) {
                    if (s > 0) {
                        const double dep = end_at(0, j, s - 1);
                        if (dep < 0) break;
                        ready = dep + p2p_s;
                    }
                } else {
                    ready = end_at(0, j, s);
                    if (ready < 0) break;
                    if (s < virtual_stages - 1) {
                        const double dep = end_at(1, j, s + 1);
                        if (dep < 0) break;
                        ready = std::max(ready, dep + p2p_s);
                    }
                }
                const double dur = op.forward ? in.fwd_s[r * v + op.chunk] : in.bwd_s[r * v + op.chunk];
                const double start = std::max(free_s[r], ready);
                free_s[r] = start + dur;
                end_at(op.forward ? 0 : 1, j, s) = free_s[r];
                per_rank[r].push_back(TimelinePass{r, op, start, free_s[r]});
                ++next[r];
                --remaining;
                progress = true;
            }
        }
    }
    if (remaining != 0) throw std::logic_error("pipeline_timeline: schedule deadlocked (bug in the op order)");
    PipelineTimeline t;
    for (int r = 0; r < p; ++r) {
        double busy = 0;
        for (int c = 0; c < v; ++c) busy += in.fwd_s[r * v + c] + in.bwd_s[r * v + c];
        t.result.makespan_s = std::max(t.result.makespan_s, free_s[r]);
        t.result.busy_max_s = std::max(t.result.busy_max_s, m * busy);
        t.passes.insert(t.passes.end(), per_rank[r].begin(), per_rank[r].end());
    }
    t.result.bubble_s = t.result.makespan_s - t.result.busy_max_s;
    return t;
}

}  // namespace lostflops
