// The Megatron-LM / Megatron-Core flags the importer knows: how many values
// each takes (argparse's action / nargs) and whether lostflops reads it,
// knows it does not change the cost of a step (megatron_flags_nocost.cpp,
// the documented list), knows it changes the cost without modelling it, or
// needs the layer-stack model (per-kind layers: MLA, shared experts, hybrid
// patterns, windows, stage layouts) that is not in lostflops yet. Names and
// arities are those of megatron/training/arguments.py and the dataclasses it
// builds flags from (TransformerConfig, TrainingConfig, ...) at NVIDIA/
// Megatron-LM d98e8a64 (2026-08), plus the names of earlier releases the
// published runs use (--checkpoint-activations, --activations-checkpoint-*,
// --DDP-impl, --data-impl, --use-legacy-models).
#pragma once

#include <string>

namespace lostflops::interop {

// none: store_true / store_false; one: a value; many: nargs '+' or '*'.
enum class FlagArity { none, one, many };
enum class FlagRole { read, ignored, not_modelled, layer_stack };

struct MegatronFlag {
    const char* name;  // without the leading "--"
    FlagArity arity;
    FlagRole role;
    const char* why;   // ignored / not_modelled / layer_stack: what it does
};

// nullptr when the flag is not in the tables.
const MegatronFlag* find_megatron_flag(const std::string& name);
// The known flag nearest to `name` (edit distance), for "did you mean";
// empty when none is close.
std::string nearest_megatron_flag(const std::string& name);

// The two tables, for the lookup and the tests.
struct FlagTable {
    const MegatronFlag* begin;
    const MegatronFlag* end;
};
FlagTable megatron_cost_flags();    // read, not_modelled, layer_stack (megatron_flags.cpp)
FlagTable megatron_nocost_flags();  // ignored (megatron_flags_nocost.cpp)

}  // namespace lostflops::interop
