// The measured curves an estimate used (contract: lostflops/collective_curves.h):
// the job's groups placed by the estimate's own plan context, each collective
// matched by the cost model's own curve lookup, so that the report names
// exactly what priced the step.
#include "lostflops/collective_curves.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "estimate/stage_time.h"

namespace lostflops {

namespace {

std::string placement_text(const CurveKey& k) {
    if (k.nodes <= 1) return fmt::format("{} ranks on one node", k.ranks);
    return fmt::format("{} ranks, {} per node on {} nodes", k.ranks, k.ranks_per_node, k.nodes);
}

}  // namespace

std::vector<CollectiveCurveUse> collective_curves(const Job& job, const Calibration& cal) {
    std::vector<CollectiveCurveUse> out;
    if (cal.nccl.empty()) return out;
    const PlanContext ctx = make_plan_context(job, cal);
    const ParallelPlan& p = job.plan;
    auto add = [&](const char* group, const GroupPlacement& g, std::initializer_list<Collective> ops) {
        if (g.size <= 1) return;
        for (Collective op : ops) {
            CollectiveCurveUse u{group, op, curve_key(g), nullptr, ""};
            u.curve = find_curve(cal, op, u.placement);
            if (u.curve)
                if (auto why = curve_gpu_mismatch(*u.curve, job.cluster.gpu)) u.gpu_warning = *why;
            out.push_back(std::move(u));
        }
    };
    if (p.sequence_parallel)
        add("tp", ctx.tp_group, {Collective::all_gather, Collective::reduce_scatter});
    else
        add("tp", ctx.tp_group, {Collective::all_reduce});
    add("cp", ctx.cp_group, {Collective::all_gather});
    if (job.model.is_moe()) {
        if (p.moe_dispatcher == MoeDispatcher::allgather)
            add("ep", ctx.experts.fold, {Collective::all_gather, Collective::reduce_scatter});
        else
            add("ep", ctx.experts.ep, {Collective::all_to_all});
        add("etp", ctx.experts.etp, {Collective::all_gather, Collective::reduce_scatter});
    }
    if (p.zero >= 1) {
        add("dp", ctx.dp_group, {Collective::reduce_scatter, Collective::all_gather});
        if (job.model.is_moe()) add("edp", ctx.edp_group, {Collective::reduce_scatter, Collective::all_gather});
    } else {
        add("dp", ctx.dp_group, {Collective::all_reduce});
        if (job.model.is_moe()) add("edp", ctx.edp_group, {Collective::all_reduce});
    }
    // Pipeline sends are priced on the link (p2p_eff), not by a curve.
    if (p.pp > 1 && job.model.tied_embeddings) add("embedding", ctx.embedding_group, {Collective::all_reduce});
    return out;
}

std::string collective_curves_text(const std::vector<CollectiveCurveUse>& uses) {
    std::string out;
    for (const auto& u : uses) {
        out += fmt::format("{} {} ({}): ", u.group, to_string(u.op), placement_text(u.placement));
        if (!u.curve) {
            out += "no curve of this placement, alpha-beta formula\n";
            continue;
        }
        const CurveKey l = curve_layout(*u.curve);
        out += fmt::format("curve {} measured on {}{}\n", to_string(u.curve->op), placement_text(l),
                           u.curve->gpu.empty() ? "" : " (" + u.curve->gpu + ")");
    }
    return out;
}

std::vector<std::string> collective_curve_warnings(const std::vector<CollectiveCurveUse>& uses) {
    std::vector<std::string> out;
    std::set<const BusBwCurve*> seen;
    for (const auto& u : uses) {
        if (u.gpu_warning.empty() || !seen.insert(u.curve).second) continue;
        out.push_back(fmt::format("nccl curve {} on {} ranks prices the job's {} {}: {}", to_string(u.curve->op),
                                  u.curve->ranks, u.group, to_string(u.op), u.gpu_warning));
    }
    return out;
}

nlohmann::json collective_curves_json(const std::vector<CollectiveCurveUse>& uses) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& u : uses) {
        nlohmann::json j{{"group", u.group},
                         {"op", to_string(u.op)},
                         {"ranks", u.placement.ranks},
                         {"ranks_per_node", u.placement.ranks_per_node},
                         {"nodes", u.placement.nodes}};
        if (u.curve) {
            const CurveKey l = curve_layout(*u.curve);
            j["curve"] = {{"op", to_string(u.curve->op)},         {"ranks", l.ranks},
                          {"ranks_per_node", l.ranks_per_node},   {"nodes", l.nodes},
                          {"gpu", u.curve->gpu},                  {"sizes", u.curve->points.size()}};
        } else {
            j["curve"] = nullptr;
        }
        if (!u.gpu_warning.empty()) j["warning"] = u.gpu_warning;
        a.push_back(j);
    }
    return a;
}

}  // namespace lostflops
