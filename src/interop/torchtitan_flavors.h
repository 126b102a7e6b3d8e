// torchtitan's model flavours and the presets of data/catalog/models.yaml
// with the same shape, both ways.
#pragma once

#include <optional>
#include <string>

#include "lostflops/spec.h"

namespace lostflops::interop {

struct TorchtitanFlavor {
    std::string name;    // "llama3"
    std::string flavor;  // "8B"
    std::string preset;  // "llama3-8b"
};

// nullopt when torchtitan has no such flavour that lostflops knows.
std::optional<TorchtitanFlavor> flavor_by_name(const std::string& name, const std::string& flavor);
// The flavour whose preset has this model's shape (layers, hidden, ffn, heads,
// kv heads, vocab, MLP, tied embeddings, dense).
std::optional<TorchtitanFlavor> flavor_of(const Model& m);
// The shape of a built-in model preset (throws std::logic_error for a name
// not in the catalog: a bug, the table below lists catalog names).
Model preset_shape(const std::string& preset);
// "llama3 8B/70B/405B, llama2 7B/13B/70B"
std::string known_flavors();

}  // namespace lostflops::interop
