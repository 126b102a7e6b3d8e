// The `model:` section of the Megatron import (megatron_import.cpp), in the
// keys of the job file's model (src/job/model_keys.h): the uniform shape
// and vocabulary (megatron_model.cpp), and the layers of other kinds
// (megatron_layers.cpp): multi-latent attention, sliding windows and their
// pattern, hybrid Mamba-2 / attention / MLP / MoE stacks, Gated DeltaNet,
// the pattern of MoE layers, shared experts, multi-token prediction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interop/job_draft.h"
#include "interop/megatron_args.h"
#include "lostflops/interop.h"

namespace lostflops::interop {

// Writes d.model; returns the number of decoder layers (--num-layers, or
// the characters of a hybrid layer pattern).
int megatron_model(const MegatronArgs& f, JobDraft& d, std::vector<ImportNote>& notes, int tp, bool bert);

// The keys of layers that are not all of one kind; `layers` from the flags.
void megatron_layer_keys(const MegatronArgs& f, int layers, JobDraft& d, std::vector<ImportNote>& notes);

// The layers of a hybrid pattern (--hybrid-layer-pattern, --hybrid-override-pattern)
// without the '|' pipeline separators and the '/' multi-token-prediction
// part; 0 when none is given.
int hybrid_layers(const MegatronArgs& f);

// The hybrid pattern as given (either name); none when neither is given.
std::optional<std::string> hybrid_pattern(const MegatronArgs& f);

// Megatron's per-layer patterns (arguments.py moe_freq_type, la_freq_type):
// an integer N, or a Python list expression of 0/1 lists, `+`, `*` and
// parentheses ("[0]*3+[1]*58", "([1]*3+[0]*1)*3"). Returns one 0/1 per layer
// for a list; for N, `every` = N and an empty list. Throws InputError(source,
// flag, ...) for anything else or a list not `layers` long.
std::vector<int> megatron_pattern(const std::string& text, int layers, const std::string& source, const std::string& flag,
                                  int& every);

}  // namespace lostflops::interop
