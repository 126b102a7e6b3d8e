// torchtitan's model flavours and the presets of data/catalog/models.yaml
// with the same shape, both ways.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops::interop {

// A model key set on top of the preset where torchtitan's flavour differs
// from the published model (e.g. no multi-token prediction module).
struct FlavorOverride {
    std::string key;    // a `model:` key (src/job/model_keys.h)
    std::string value;  // as a YAML scalar ("0", "null")
    std::string why;
};

struct TorchtitanFlavor {
    std::string name;    // "llama3"
    std::string flavor;  // "8B"
    std::string preset;  // "llama3-8b"
    std::vector<FlavorOverride> overrides;
};

// nullopt when torchtitan has no such flavour that lostflops knows.
std::optional<TorchtitanFlavor> flavor_by_name(const std::string& name, const std::string& flavor);
// The flavour whose model (preset plus overrides) has this model's shape
// (Model::same_shape: the layer stack, dense or MoE, and MTP modules).
std::optional<TorchtitanFlavor> flavor_of(const Model& m);
// The shape of a flavour: its preset with its overrides (throws
// std::logic_error for a preset not in the catalog: a bug, the table lists
// catalog names).
Model flavor_shape(const TorchtitanFlavor& f);
// "llama3 8B/70B/405B, llama2 7B/13B/70B, ..."
std::string known_flavors();
// "; did you mean `llama3 8B`?" for a name and flavour no row has, naming the
// nearest "name flavour" of the table (job/did_you_mean.h), or "".
std::string flavor_did_you_mean(const std::string& name, const std::string& flavor);
// A model that is a flavour's preset but for the flavour's overrides (the
// DeepSeek-V3 example's one MTP module): "the preset deepseek-v3 is
// torchtitan's deepseek_v3 671B but for: <why> (model.KEY: VALUE)"; none
// otherwise.
std::optional<std::string> flavor_near_miss(const Model& m);
// The same near miss as `--set` overrides that make the model the flavour's
// ("model.num_nextn_predict_layers=0"); empty when the model is a flavour or
// no flavour's preset. export torchtitan --best applies them, saying so.
std::vector<std::string> flavor_near_miss_sets(const Model& m);

}  // namespace lostflops::interop
