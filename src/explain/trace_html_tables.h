// The tables of the traces' HTML page (trace_html.cpp draws the charts):
// each the text output's table of the same name (trace/trace_report*.cpp).
// Internal to src/explain.
#pragma once

#include <string>
#include <vector>

#include "lostflops/explain.h"

namespace lostflops::trace_html {

// Text from the traces, for the page: control characters escaped, then XML.
std::string esc(const std::string& s);

std::string triage(const std::vector<trace::TriageItem>& items);
// The rows drawn (all ranks, or the most held back of `all`).
std::string rank_rows(const std::vector<trace::RankRow>& rows, std::size_t all);
// Ranks and nodes that hold the others back, skew per group and per step, step times.
std::string cross_rank(const trace::ClusterReport& c);
// Categories with their costliest kernels, idle by stream, launches, collectives, iterations.
std::string per_rank(const trace::RankReport& r);
// The same summed over ranks.
std::string summed(const trace::ClusterReport& c);
std::string job(const trace::JobComparison& c);

}  // namespace lostflops::trace_html
