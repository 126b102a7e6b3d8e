// Megatron-LM's pipeline layout string (--pipeline-model-parallel-layout) ->
// PipelineLayout (lostflops/spec.h). Internal to src/job.
#pragma once

#include <memory>
#include <string>

#include "lostflops/spec.h"

namespace lostflops {

// The syntax of megatron/core/transformer/pipeline_parallel_layer_layout.py
// (parse_str_to_list): stages separated by '|', each a sequence of E
// (embedding), t (decoder layer), m (multi-token prediction module), L (loss);
// "x*N" repeats a character, "(...)*N" a group (no nested groups); commas are
// cosmetic. The embedding must come first and the loss last, each once (its
// validate_layer_layout). At most 1,000,000 characters once expanded. Throws
// InputError(file, key, ...) naming what is wrong.
std::shared_ptr<const PipelineLayout> parse_pipeline_layout(const std::string& text, const std::string& file,
                                                            const std::string& key);

}  // namespace lostflops
