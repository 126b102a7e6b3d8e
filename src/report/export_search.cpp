// The plan `export KIND` searches for (lostflops/export_search.h), in four
// steps, each a re-read of the job with one more --set argument and a note:
//   1. training.framework = export_framework(KIND, the job's): torchtitan
//      runs FSDP2, megatron a Megatron stack;
//   2. torchtitan only: a model torchtitan trains but for a flavour's
//      difference is read as the flavour (interop/torchtitan_flavors.h);
//   3. torchtitan only: torch's AdamW with fp32 state, what the export writes;
//   4. the search's best plan the target launches (best_launchable_plan),
//      without the job's settings that target cannot run.
// Moved out of the command line so that Python's export_* answers as it does.
#include "lostflops/export_search.h"

#include "interop/torchtitan_flavors.h"
#include "lostflops/framework_rules.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/report.h"

namespace lostflops {

ExportSearch export_search(const std::string& kind, const SearchJobLoader& load, std::vector<std::string> overrides,
                           const Calibration& cal, const std::string& source) {
    ExportSearch out;
    SearchJob sj = load(overrides);
    if (const auto fw = export_framework(kind, sj.job.training.framework)) {
        out.notes.push_back({"training.framework", "export " + kind +
                                                       " --best: plans searched and priced under training.framework " +
                                                       to_string(*fw) + " (the job says " +
                                                       to_string(sj.job.training.framework) + ")"});
        overrides.push_back(std::string("training.framework=") + to_string(*fw));
        sj = load(overrides);
    }
    const bool torchtitan = kind == "torchtitan";
    if (torchtitan)
        if (const auto sets = interop::flavor_near_miss_sets(sj.job.model); !sets.empty()) {
            out.notes.push_back({"model", source + ": export torchtitan --best: " +
                                              *interop::flavor_near_miss(sj.job.model) +
                                              "; searched and priced so (--set " + sets.front() + ")"});
            for (const std::string& set : sets) overrides.push_back(set);
            if (sj.job.plan.layout) overrides.push_back("parallel.pipeline_layout=null");
            sj = load(overrides);
        }
    if (torchtitan && sj.job.training.optimizer != Optimizer::adam) {
        out.notes.push_back({"training.optimizer", source + ": export torchtitan --best: training.optimizer " +
                                                       to_string(sj.job.training.optimizer) +
                                                       " is torch's AdamW (fp32 state) in torchtitan; searched and "
                                                       "priced so (--set training.optimizer=adam)"});
        overrides.push_back("training.optimizer=adam");
        sj = load(overrides);
    }
    std::vector<UnlaunchableFix> dropped;
    std::string taken;
    out.job = best_launchable_plan(sj, cal, torchtitan ? std::optional(LaunchStack::torchtitan) : std::nullopt,
                                   source, &dropped, kind == "maxtext" ? maxtext_plan_taker() : PlanTaker{}, &taken);
    for (const UnlaunchableFix& u : dropped) out.notes.push_back({u.key, dropped_setting_note(source, u)});
    if (!taken.empty()) out.notes.push_back({"parallel", source + ": " + taken});
    return out;
}

PlanNote no_parallel_section_note(const std::string& kind, const std::string& source, const ExportWords& words) {
    return {"parallel", source + ": the job has no parallel section: export " + kind +
                            " exports the best plan of the search among those " + kind + " can launch, as " +
                            words.best + " does"};
}

std::optional<PlanNote> own_plan_fit_warning(const Job& job, const Calibration& cal, const ExportWords& words) {
    const Estimate e = estimate(job, cal);
    if (e.memory.fits) return std::nullopt;
    return PlanNote{"memory", "the plan exported " + memory_verdict(job, e.memory) + " (" + words.estimate +
                                  " gives the changes that would make it fit; " + words.best +
                                  " exports the best plan that fits)"};
}

}  // namespace lostflops
