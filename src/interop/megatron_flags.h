// The Megatron-LM / Megatron-Core flags the importer knows: whether each takes
// a value, and whether lostflops reads it, ignores it (no effect on cost) or
// knows it changes the cost without modelling it. Names and arities are those
// of megatron/training/arguments.py (Megatron-LM core_r0.8.0, and the 2021-22
// names --checkpoint-activations, --activations-checkpoint-*).
#pragma once

#include <string>

namespace lostflops::interop {

enum class FlagArity { none, one };
enum class FlagRole { read, ignored, not_modelled };

struct MegatronFlag {
    const char* name;  // without the leading "--"
    FlagArity arity;
    FlagRole role;
    const char* why;   // for ignored / not_modelled: what it does
};

// nullptr when the flag is not in the table.
const MegatronFlag* find_megatron_flag(const std::string& name);

}  // namespace lostflops::interop
