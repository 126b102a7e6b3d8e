// Parsing one GPU description: an entry of data/catalog/gpus.yaml, or an inline
// spec under `cluster.gpu:` in a job file. Same schema for both (documented at
// the top of data/catalog/gpus.yaml).
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "lostflops/spec.h"

namespace lostflops {

// Strict: unknown keys, wrong types, negative or zero sizes and absurd values
// throw InputError naming `file` and the dotted key (`key` + ".hbm_GBps").
// `key` is the node's own dotted path ("cluster.gpu", or the catalog name).
// Gpu::name is the node's optional `name:`, else the last part of `key`.
Gpu parse_gpu_node(const YAML::Node& node, const std::string& file, const std::string& key);

}  // namespace lostflops
