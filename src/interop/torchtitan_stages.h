// A plan's first / last stage layers in torchtitan's words and back
// (torchtitan_stages.cpp): [parallelism] pipeline_parallel_first_stage_less_layers
// and pipeline_parallel_last_stage_less_layers, for export and import.
#pragma once

#include <vector>

#include "interop/job_draft.h"
#include "lostflops/interop.h"
#include "lostflops/spec.h"

namespace lostflops::interop {

// How many layers fewer the first and the last stage hold than the others.
struct StageLess {
    int first = 0, last = 0;
};

// The less-layers that make torchtitan cut the job's stages as its plan's
// first_stage_layers / last_stage_layers say: both 0 for the default split.
// Throws InputError (naming the key) where torchtitan cannot say them: more
// than one stage a rank (its less-layers shorten one virtual stage each), an
// explicit pipeline_layout, or an end rank longer than the middle ones.
StageLess torchtitan_stage_less(const Job& job);

// The first / last rank layers torchtitan cuts for one stage a rank with
// these less-layers, in the job's terms (-1: as the middle ranks; for pp 2
// the shorter end is given, the other takes the rest); `ok` false when the
// middle ranks are not all equal (then no first/last pair says the split).
struct FirstLast {
    int first = -1, last = -1;
    bool ok = true;
};
FirstLast torchtitan_first_last(int64_t layers, int64_t pp, int64_t first_less, int64_t last_less);

// The import's keys of that (one stage a rank): parallel.first_stage_layers /
// last_stage_layers where they say the split, else an `assumed` note
// (lostflops' default split is priced).
void torchtitan_stage_keys(int64_t layers, int64_t pp, int64_t first_less, int64_t last_less,
                           std::vector<DraftEntry>& parallel, std::vector<ImportNote>& notes);

}  // namespace lostflops::interop
