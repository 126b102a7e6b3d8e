// Megatron-Core's selective-recompute module list (parallel.recompute_modules,
// --recompute-modules): names <-> the bit set of ParallelPlan::recompute_modules.
// The names and their meaning: megatron/core/transformer/transformer_config.py
// (recompute_modules; default ["core_attn"]).
#pragma once

#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

class YamlSection;

// The bit set of `names`. An unknown name throws InputError(file, key) with
// "did you mean"; Megatron's modules this tool does not model (gdn_norm_out,
// gdp_in_proj, gdp_qkv, mhc) are named as such. An empty list is no module.
unsigned recompute_modules_of(const std::vector<std::string>& names, const std::string& file, const std::string& key);

// parallel.recompute_modules: a list of names (or one name); used only with
// recompute: selective (otherwise a warning, job/job_warnings.cpp).
unsigned read_recompute_modules(YamlSection& s, Recompute recompute);

// The names of the set bits, in RecomputeModule order.
std::vector<std::string> recompute_module_names(unsigned modules);

// The default set, ["core_attn"].
inline constexpr unsigned kDefaultRecomputeModules = 1u << static_cast<int>(RecomputeModule::core_attn);

}  // namespace lostflops
