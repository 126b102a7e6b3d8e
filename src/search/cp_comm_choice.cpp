// Fastest context-parallel variant of a layout: for each variant the stack
// launches (framework_rules.h rows on parallel.cp_comm_type), the layer time
// of estimate/stage_time.cpp (layer_time: the CP attention kernels, exposed
// exchange, extra kernels and corrections of cost/cp_attention.cpp) summed
// forward and backward over the model's layer kinds, each times its count;
// the first of the fastest in the order p2p, allgather, a2a wins a tie.
#include "search/cp_comm_choice.h"

#include <cstring>

#include "estimate/stage_time.h"
#include "lostflops/framework_rules.h"
#include "search/enumerate.h"
#include "workload/host_ops.h"
#include "workload/layer_work.h"

namespace lostflops::search {

bool cp_comm_launches(const Job& job, const SearchLayout& l, CpCommType type, const PlanFix& fix) {
    ParallelPlan p = job.plan;
    apply_layout(p, l);
    p.cp_comm_type = type;
    if (!fix.launch) return true;
    for (const RuleBreak& b : rule_breaks(job.model, launch_plan(p), *fix.launch, false))
        if (std::strcmp(b.rule->key, "parallel.cp_comm_type") == 0) return false;
    return true;
}

CpCommType CpCommChooser::operator()(const SearchLayout& l) {
    if (l.cp <= 1) return job_.plan.cp_comm_type;
    if (fix_.cp_comm_type) return *fix_.cp_comm_type;
    if (!fix_.launch) return job_.plan.cp_comm_type;
    const auto key = std::make_tuple(l.tp, l.cp, l.micro_batch);
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    Job j = with_layout(job_, l);
    CpCommType best = j.plan.cp_comm_type;
    double best_s = -1;
    for (CpCommType t : {CpCommType::p2p, CpCommType::allgather, CpCommType::a2a}) {
        if (!cp_comm_launches(job_, l, t, fix_)) continue;
        j.plan.cp_comm_type = t;
        const PlanContext ctx = make_plan_context(j, cal_);
        double s = 0;
        for (size_t k = 0; k < j.model.kinds().size(); ++k) {
            const LayerKind& kind = j.model.kinds()[k];
            const LayerTime lt = layer_time(ctx, layer_work(j.model, kind, j.training, j.plan),
                                            host_ops(j.model, kind, j.training, j.plan), j.plan);
            s += (lt.fwd.gpu_s() + lt.bwd.gpu_s()) * j.model.kind_count(static_cast<int>(k));
        }
        if (best_s < 0 || s < best_s) {
            best = t;
            best_s = s;
        }
    }
    memo_.emplace(key, best);
    return best;
}

}  // namespace lostflops::search
