// Rendering an Estimate for people (text table) and programs (JSON). Returns
// strings; the CLI prints them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lostflops/estimate.h"

namespace lostflops {

std::string estimate_table(const Job& job, const Estimate& e);

// The JSON contract: step_time_s, tokens_per_s_per_gpu, mfu, hfu (fractions),
// model_tflops_per_gpu, hardware_tflops_per_gpu, memory {peak_bytes,
// capacity_bytes, fits, parts...}, breakdown {cause: seconds} summing to
// step_time_s.
nlohmann::json estimate_json(const Job& job, const Estimate& e);

// Why a plan does not fit: the largest parts and what would shrink them.
// Empty when it fits.
std::string memory_verdict(const Job& job, const Memory& m);

// The assumption the verdict rests on (activations in flight, ZeRO-3 live
// parameters) when the plan does not fit or is within 10 % of capacity;
// empty otherwise.
std::string memory_assumption(const Job& job, const Memory& m);

}  // namespace lostflops
