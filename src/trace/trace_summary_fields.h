// One rank object of a summary (a small nlohmann tree) to a RankReport:
// every key known, every number checked (format and bounds in
// include/lostflops/trace_summary.h). Internal to src/trace.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "lostflops/trace.h"

namespace lostflops::trace::detail {

// Throws InputError naming `source` and `where` ("ranks[3]") plus the key.
RankReport rank_from_json(const nlohmann::json& j, const std::string& source, const std::string& where);

}  // namespace lostflops::trace::detail
