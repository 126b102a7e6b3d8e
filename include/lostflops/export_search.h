// The plan `lostflops export KIND` exports when it searches (--best; a job
// without a parallel section), the same on the command line
// (src/cli/cmd_export.cpp) and in the Python module (python/module.cpp
// export_*). The library prints nothing: what changed the job comes back as
// notes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lostflops/search_listing.h"

namespace lostflops {

// Reads the job (search form) with `overrides` as its --set arguments.
using SearchJobLoader = std::function<SearchJob(const std::vector<std::string>& overrides)>;

struct ExportSearch {
    Job job;                      // the job with the plan the search chose
    std::vector<PlanNote> notes;  // in the order the changes were made
};

// The job is read with `overrides`, then again with what makes it a job KIND
// runs, each said in a note: training.framework export_framework's (the
// stack that will run the plan prices it); for torchtitan, the flavour a
// near miss stands for (torchtitan_flavors.h: DeepSeek-V3's MTP module;
// a pipeline_layout goes with it) and torch's AdamW (training.optimizer=adam).
// Then the search's best plan among those the target launches
// (best_launchable_plan: torchtitan's launch rules; megatron and maxtext the
// job's own stack; maxtext the first plan of the ranking export maxtext can
// write, with a note when it is not the first), with a note for each setting
// the search went without. `source` names the job in the notes and errors.
// Throws what `load` and best_launchable_plan throw (InputError, NoPlanFits).
ExportSearch export_search(const std::string& kind, const SearchJobLoader& load, std::vector<std::string> overrides,
                           const Calibration& cal, const std::string& source);

// How a caller names the search and the estimate in what it says: the
// command line "--best" and "lostflops estimate", Python "best=True" and
// "estimate".
struct ExportWords {
    const char* best;
    const char* estimate;
};
inline constexpr ExportWords kExportWordsCli{"--best", "lostflops estimate"};
inline constexpr ExportWords kExportWordsPython{"best=True", "estimate"};

// The note when the job has no parallel section: export KIND searches, as
// under `words.best` (setting "parallel").
PlanNote no_parallel_section_note(const std::string& kind, const std::string& source, const ExportWords& words);

// The job's own plan is exported as it is: when it does not fit (estimate's
// verdict under `cal` and the job's headroom), the warning (setting
// "memory"; text without a "warning: memory: " prefix); else nullopt.
std::optional<PlanNote> own_plan_fit_warning(const Job& job, const Calibration& cal, const ExportWords& words);

}  // namespace lostflops
