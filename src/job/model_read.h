// From the keys of a `model:` section (presets and config.json already merged
// in, src/job/job_model.cpp) to a Model with its layer stack. Internal to src/job.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "lostflops/model.h"

namespace lostflops {

// Reads every key of model_keys.h that `node` has; `notes` receives the
// not-modelled keys (and is stored in the model). Keys in none of the table's
// rows are an error naming them (YamlSection::finish). Throws InputError
// naming `file` and the dotted key.
Model read_model_shape(const YAML::Node& node, const std::string& file, std::vector<Model::NotModelled> notes);

// `node` with `text_config` (Llama 4's text model keys) hoisted to the top
// and DBRX's `ffn_config` / `attn_config` flattened to dotted keys; keys the
// section already has win. A null value is the key absent and is left out,
// unless keep_nulls: a job's own keys over a preset or a config.json keep
// them, so that merging clears the key (attention_chunk_size: null over
// Llama 4 Scout: no chunks); the merged node is flattened again to drop them.
// A text_config key that the outer keys give otherwise is left out and, where
// `notes` is given, noted there (ignored); a key given both dotted and inside
// its section (attn_config) is an InputError.
YAML::Node flatten_model_node(const YAML::Node& node, const std::string& file, bool keep_nulls = false,
                              std::vector<Model::NotModelled>* notes = nullptr);

}  // namespace lostflops
