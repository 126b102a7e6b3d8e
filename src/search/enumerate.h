// Enumeration of the parallel layouts of a job (the first stage of `lostflops
// search`, issue 8): every way to cut the job's GPUs and global batch into
// tp x cp x pp x dp groups, virtual stages, expert groups and micro-batches
// that the plan checks of spec/validate.cpp accept — no more, no fewer (tests
// hold the two against each other on hand-countable jobs).
//
// Preconditions: the job's model, cluster and training came from load_job
// (model-level checks such as hidden % heads passed); its `plan` is ignored.
// No allocation per layout; the order is fixed (tp, cp, pp, dp, micro-batch,
// vpp, ep ascending), so the same job gives the same sequence.
#pragma once

#include <cstdint>
#include <functional>

#include "lostflops/spec.h"

namespace lostflops::search {

// How the GPUs and the batch are cut. dp = num_gpus / (tp * cp * pp).
struct Layout {
    int tp = 1, cp = 1, pp = 1, dp = 1, vpp = 1, ep = 1;
    int64_t micro_batch = 1;  // sequences per micro-batch
};

struct LayoutCounts {
    int64_t valid = 0;  // layouts passed to visit
};

// Calls visit(layout) for every valid layout of `job`.
LayoutCounts enumerate_layouts(const Job& job, const std::function<void(const Layout&)>& visit);

// `job` with its plan cut as `layout` and the micro-batch size set; every
// other plan setting (zero, recompute, overlap, ...) kept.
Job with_layout(const Job& job, const Layout& layout);

}  // namespace lostflops::search
