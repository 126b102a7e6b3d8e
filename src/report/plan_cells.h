// How a searched plan's pipeline is shown (plan_cells.cpp): the table's pp
// and vpp cells, the note under the table for a stage layout. Internal to
// src/report; plan_set_arguments (lostflops/search_report.h) lives beside them.
#pragma once

#include <string>

#include "lostflops/spec.h"

namespace lostflops {

// "2V" for DualPipeV's V of two chunks; else the vpp.
std::string vpp_cell(const ParallelPlan& p);
// Whether the plan gives its first / last pipeline rank's layers.
bool stage_layout_given(const ParallelPlan& p);
// "4*" for a plan with first / last rank layers (the note says them); else the pp.
std::string pp_cell(const ParallelPlan& p);
// "  pp 4* (#1, #3): the first rank 19 layers, the last rank 19 layers, the others 21 each (...)\n"
// for the listed plans `ranks` of this stage layout.
std::string stage_note(const Job& job, const std::string& ranks, const ParallelPlan& p);

}  // namespace lostflops
