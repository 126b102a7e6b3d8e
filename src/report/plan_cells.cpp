// A searched plan's pipeline in the search's words (plan_cells.h): the vpp
// cell marks DualPipeV ("2V", a schedule the search tries beside the 1F1B
// family), the pp cell a stage layout ("4*": first / last rank layers the
// search tries beside the even split, SearchLayout::first_stage_layers), whose
// note gives the layers as Megatron-Core splits them (the given ranks take
// their counts, the others the rest evenly: job/stage_layout.cpp); and the
// --set arguments that give a job the plan (lostflops/search_report.h).
#include "report/plan_cells.h"

#include <algorithm>

#include <fmt/format.h>

#include "lostflops/pipeline_schedules.h"
#include "lostflops/search_report.h"

namespace lostflops {

std::string vpp_cell(const ParallelPlan& p) {
    return std::to_string(p.vpp) + schedule_info(effective_schedule(p)).vpp_suffix;  // lostflops/pipeline_schedules.h
}

bool stage_layout_given(const ParallelPlan& p) { return p.first_stage_layers >= 0 || p.last_stage_layers >= 0; }
std::string pp_cell(const ParallelPlan& p) { return stage_layout_given(p) ? fmt::format("{}*", p.pp) : std::to_string(p.pp); }

std::string stage_note(const Job& job, const std::string& ranks, const ParallelPlan& p) {
    const int given = (p.first_stage_layers >= 0 ? 1 : 0) + (p.last_stage_layers >= 0 ? 1 : 0);
    const int rest = job.model.layers - std::max(0, p.first_stage_layers) - std::max(0, p.last_stage_layers);
    const int middle = p.pp > given ? rest / (p.pp - given) : 0;
    const auto layers = [](int n) { return fmt::format("{} layer{}", n, n == 1 ? "" : "s"); };
    std::string out = fmt::format("  pp {}* ({}): ", p.pp, ranks);
    if (p.first_stage_layers >= 0) out += fmt::format("the first rank {}, ", layers(p.first_stage_layers));
    if (p.last_stage_layers >= 0) out += fmt::format("the last rank {}, ", layers(p.last_stage_layers));
    out += p.pp - given > 1 ? fmt::format("the others {} each", middle) : fmt::format("the other {}", layers(middle));
    return out + " (parallel.first_stage_layers / last_stage_layers)\n";
}

std::vector<std::string> plan_set_arguments(const Job& job, const PlanScore& s) {
    const ParallelPlan& p = s.plan;
    std::vector<std::string> out = {fmt::format("parallel.tp={}", p.tp), fmt::format("parallel.cp={}", p.cp),
                                    fmt::format("parallel.pp={}", p.pp), fmt::format("parallel.vpp={}", p.vpp)};
    // A schedule the search tried beside the 1F1B family (SearchLayout::schedule).
    if (!standard_mapping(p)) out.push_back(fmt::format("parallel.pipeline_schedule={}", schedule_info(p.schedule).name));
    // A stage layout the search tried beside the even split (SearchLayout::first_stage_layers).
    if (p.first_stage_layers >= 0) out.push_back(fmt::format("parallel.first_stage_layers={}", p.first_stage_layers));
    if (p.last_stage_layers >= 0) out.push_back(fmt::format("parallel.last_stage_layers={}", p.last_stage_layers));
    // The search picks the context-parallel variant (search/cp_comm_choice.h).
    if (p.cp > 1) out.push_back(fmt::format("parallel.cp_comm_type={}", to_string(p.cp_comm_type)));
    if (job.model.is_moe()) {
        out.push_back(fmt::format("parallel.ep={}", p.ep));
        out.push_back(fmt::format("parallel.etp={}", p.expert_tp()));
        out.push_back(fmt::format("parallel.moe_dispatcher={}", to_string(p.moe_dispatcher)));
        out.push_back(fmt::format("parallel.moe_a2a_overlap={}", p.moe_a2a_overlap));
    }
    out.push_back(fmt::format("parallel.zero={}", p.zero));
    out.push_back(fmt::format("parallel.recompute={}", to_string(p.recompute)));
    if (p.recompute == Recompute::full && p.recompute_layers >= 0)
        out.push_back(fmt::format("parallel.recompute_layers={}", p.recompute_layers));
    out.push_back(fmt::format("parallel.sequence_parallel={}", p.sequence_parallel));
    out.push_back(fmt::format("parallel.tp_comm_overlap={}", p.tp_comm_overlap));
    out.push_back(fmt::format("parallel.overlap_grad_reduce={}", p.overlap_grad_reduce));
    out.push_back(fmt::format("training.micro_batch_size={}", s.micro_batch));
    return out;
}

}  // namespace lostflops
