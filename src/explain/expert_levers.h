// Rendering of explain's expert walls (lostflops/explain.h ExpertWallsView)
// for explain_format.cpp: text, Markdown and JSON. Empty (or nothing added)
// for a dense job. Internal.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "lostflops/explain.h"

namespace lostflops {

std::string expert_walls_table(const ExpertWallsView& v, double step_time_s, double mfu);
std::string expert_walls_markdown(const ExpertWallsView& v, double step_time_s);
// Sets j["expert_walls"] for an MoE job; leaves `j` alone otherwise.
void add_expert_walls_json(const ExpertWallsView& v, nlohmann::json& j);

}  // namespace lostflops
