// Pieces of the text rendering of trace results shared by
// trace_report.cpp (per rank) and trace_report_cluster.cpp (across ranks,
// triage, measured vs predicted). Internal to src/trace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lostflops/trace_cluster.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_triage.h"

namespace lostflops::trace::detail {

inline double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }
// terminal_text(name), cut to `width` bytes with "..." (lostflops/terminal_text.h).
std::string cut_name(std::string_view name, std::size_t width);
// "native", "hta-compatible" or "mixed" of the ranks' conventions.
std::string convention_of(const ClusterReport& c);
// Idle time by cause and launches summed over ranks (many ranks).
void summed_idle_and_launches(std::string& out, const ClusterReport& c);
// Ranks and nodes that hold the others back, skew per process group and per
// step, step times.
void cluster_tables(std::string& out, const ClusterReport& c);
void triage_table(std::string& out, const std::vector<TriageItem>& items);
void job_table(std::string& out, const JobComparison& cmp);

}  // namespace lostflops::trace::detail
