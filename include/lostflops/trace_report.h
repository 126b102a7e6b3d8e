// Text and JSON renderings of trace results (the CLI prints them).
#pragma once

#include <string>
#include <vector>

#include "lostflops/trace.h"
#include "lostflops/trace_compare.h"

namespace lostflops::trace {

// JSON: {"convention", "ranks": [per-rank objects with at least rank,
// kernel_span_us, compute_us, non_compute_us, idle_us, comm_comp_overlap_pct],
// "stragglers", "job" (when cmp is given)}.
std::string report_json(const std::vector<RankReport>& ranks, const std::vector<Straggler>& stragglers,
                        const JobComparison* cmp);
// Plain-text tables.
std::string report_table(const std::vector<RankReport>& ranks, const std::vector<Straggler>& stragglers,
                         const JobComparison* cmp);

}  // namespace lostflops::trace
