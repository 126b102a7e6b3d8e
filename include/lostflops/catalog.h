// Built-in catalogs: GPUs, models and cluster presets (data/catalog/*.yaml,
// embedded in the binary at build time). Every figure carries its public
// source in the data file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

std::optional<Gpu> find_gpu(const std::string& name);
std::vector<std::string> gpu_names();
std::vector<std::string> model_names();
std::vector<std::string> cluster_names();

// The YAML text of a catalog entry's section, for the job loader to merge
// under the user's keys. Empty optional when the name is unknown.
std::optional<std::string> model_preset_yaml(const std::string& name);
std::optional<std::string> cluster_preset_yaml(const std::string& name);

// The `source:` of a catalog entry (where its figures come from), for
// `lostflops list`. Empty string when the entry gives none; empty optional
// when the name is unknown.
std::optional<std::string> model_preset_source(const std::string& name);
std::optional<std::string> cluster_preset_source(const std::string& name);

}  // namespace lostflops
