// Text and JSON renderings of trace results (the CLI prints them; the Python
// module returns the JSON).
//
// JSON (`trace --format json`, `trace merge --format json`):
//  {"convention": "native" | "hta-compatible" | "mixed",
//   "ranks": per rank; from `trace` the rank in full (the summary's rank
//            object, trace_summary.h) plus its cross-rank figures; from
//            `trace merge` its row (trace_cluster.h RankRow): either way at
//            least rank, source, kernel_span_us, compute_us, non_compute_us,
//            idle_us, comm_comp_overlap_pct, busy_us, late_us, held_back_us;
//            from `trace`, "memory" (trace_memory.h) when the trace has
//            [memory] events of a CUDA device,
//   "cluster": the cross-rank answers and the sums over ranks (ClusterReport
//              without its rows),
//   "collective_skew": the all-ranks skew per step (StepSkew),
//   "triage": [{key, what, cost_pct, evidence, to_try}],
//   "job": measured vs predicted (walls, memory rows) with its warnings,
//          when --job is given}.
#pragma once

#include <string>
#include <vector>

#include "lostflops/trace.h"
#include "lostflops/trace_cluster.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_triage.h"

namespace lostflops::trace {

struct TraceReport {
    const std::vector<RankReport>* ranks = nullptr;  // `trace`: every rank in full; null for `trace merge`
    const ClusterReport* cluster = nullptr;          // required
    const std::vector<TriageItem>* triage = nullptr; // may be null
    const JobComparison* cmp = nullptr;              // with --job
};

std::string report_json(const TraceReport& t);
std::string report_table(const TraceReport& t);
// The same of `ranks` alone: their cluster report and triage, no job.
std::string report_json(const std::vector<RankReport>& ranks);
std::string report_table(const std::vector<RankReport>& ranks);

// Above this many ranks the text lists no table of every rank: the spread of
// each column and the outliers instead (JSON lists every rank).
inline constexpr std::size_t kMaxListedRanks = 16;
// Ranks whose categories, top kernels, idle by stream, launches, collectives
// and iterations the text shows one by one (else summed over ranks).
inline constexpr std::size_t kMaxDetailedRanks = 4;

}  // namespace lostflops::trace
