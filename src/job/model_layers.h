// The model reader's internals shared by its files (model_read.cpp: the
// shapes; model_layers.cpp: which kind each layer is; model_blocks.cpp:
// Nemotron-NAS blocks; model_positions.cpp: positions, rotary, the attention
// transformers runs, dropout).
// Internal to src/job.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "job/model_families.h"
#include "job/validate.h"
#include "job/yaml_reader.h"

namespace lostflops {

inline constexpr int64_t kMaxSize = 10'000'000;  // widths and ranks: 10x beyond any published model

// Keys that name one value in several ways (Hugging Face families, Megatron).
class Reader {
public:
    Reader(YamlSection& s, const std::string& file) : s_(s), file_(file) {}

    // The first of `keys` given; the others, when given too, must agree.
    std::optional<int64_t> alias_int(std::initializer_list<const char*> keys, int64_t min, int64_t max) {
        std::optional<int64_t> out;
        const char* first = nullptr;
        for (const char* k : keys) {
            const auto v = s_.int_opt(k, min, max);
            if (!v) continue;
            if (out && *out != *v)
                throw InputError(file_, s_.key_path(k), fmt::format("{} disagrees with {}: {}", *v, first, *out));
            if (!out) first = k;
            out = v;
        }
        return out;
    }
    int64_t alias_req(std::initializer_list<const char*> keys, int64_t min, int64_t max) {
        if (auto v = alias_int(keys, min, max)) return *v;
        throw s_.missing(*keys.begin(), "expected an integer");  // names a misspelt key present
    }
    std::optional<std::string> alias_str(std::initializer_list<const char*> keys) {
        std::optional<std::string> out;
        const char* first = nullptr;
        for (const char* k : keys) {
            const auto v = s_.str_opt(k);
            if (!v) continue;
            if (out && *out != *v)
                throw InputError(file_, s_.key_path(k), fmt::format("'{}' disagrees with {}: '{}'", *v, first, *out));
            if (!out) first = k;
            out = v;
        }
        return out;
    }
    // A sequence of `n` integers (n < 0: any length).
    std::optional<std::vector<int64_t>> int_list(const char* key, int64_t min, int64_t max, int64_t n) {
        const YAML::Node v = s_.raw(key);
        if (!v) return std::nullopt;
        if (!v.IsSequence()) throw InputError(file_, s_.key_path(key), "expected a list of integers");
        if (n >= 0 && static_cast<int64_t>(v.size()) != n)
            throw InputError(file_, s_.key_path(key), fmt::format("{} entries; expected one per layer ({})", v.size(), n));
        std::vector<int64_t> out;
        out.reserve(v.size());
        for (size_t i = 0; i < v.size(); ++i)
            out.push_back(scalar_integer(v[i], file_, fmt::format("{}[{}]", s_.key_path(key), i), min, max));
        return out;
    }
    std::optional<std::vector<std::string>> str_list(const char* key, int64_t n) {
        const YAML::Node v = s_.raw(key);
        if (!v) return std::nullopt;
        if (!v.IsSequence()) throw InputError(file_, s_.key_path(key), "expected a list of strings");
        if (static_cast<int64_t>(v.size()) != n)
            throw InputError(file_, s_.key_path(key), fmt::format("{} entries; expected one per layer ({})", v.size(), n));
        std::vector<std::string> out;
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].IsScalar()) throw InputError(file_, fmt::format("{}[{}]", s_.key_path(key), i), "expected a string");
            out.push_back(v[i].Scalar());
        }
        return out;
    }
    // A rule across the model's keys: a PlanError whose related section is
    // "model", so an error a --set into the model caused is the --set's.
    [[noreturn]] void fail(const char* key, const std::string& msg) const {
        throw PlanError(file_, s_.key_path(key), msg, {"model"});
    }
    // A required key absent: a misspelt key present is named instead.
    [[noreturn]] void missing(const char* key, const std::string& expected) const { throw s_.missing(key, expected); }

private:
    YamlSection& s_;
    const std::string& file_;
};

// What each layer is, before it becomes a LayerKind.
enum class MixerChoice : uint8_t { attention, linear, mamba, mamba1, none };
struct LayerPlan {
    MixerChoice mixer = MixerChoice::attention;
    bool window = false;
    bool chunk = false;
    enum class Ffn : uint8_t { dense, moe, none } ffn = Ffn::dense;
};


// Each layer's plan and the per-layer sizes the family's rules use.
struct LayerPattern {
    std::vector<LayerPlan> plan;
    bool hybrid_pattern = false;  // hybrid_override_pattern given
    int64_t window = 0;           // sliding window of the layers that slide
    int64_t chunk = 0;            // attention chunk of the layers that chunk
};
// Reads hybrid_override_pattern, attn_type_list, layer_types,
// full_attention_interval, the window and chunk keys and the MoE layer keys
// (`moe`: the model has routed experts). O(layers + list lengths).
LayerPattern read_layer_pattern(YamlSection& s, Reader& r, const ModelFamily& fam, int L, bool moe);

// The Mamba-1 mixer of a Mamba, Falcon-Mamba or Jamba config (the family's
// keys and defaults); given_inner > 0: a d_inner the config gives
// (Falcon-Mamba's intermediate_size), else expand x hidden.
LinearMixer read_mamba1_mixer(YamlSection& s, Reader& r, const ModelFamily& fam, int64_t given_inner, int64_t h);

// One layer of a Nemotron-NAS (DeciLM) model: its attention (or none) and
// its gated MLP's width (or none).
struct NasBlock {
    bool attention = true;
    int kv_heads = 0;
    bool ffn = true;
    int64_t ffn_width = 0;
};
// block_configs, one entry per layer (model_blocks.cpp); nullopt when absent.
std::optional<std::vector<NasBlock>> read_block_configs(YamlSection& s, int L, int64_t hidden, int heads);

// Positions, rotary's share, eager scores (a config asking for eager
// attention is said in `notes`) and block dropout into `m`, whose
// hidden size is set (model_positions.cpp). family_known: `fam` is a row of
// kFamilies; typed: the config gives a model_type (known or not);
// head_dim: the attention's, when it has one.
void read_positions(YamlSection& s, Reader& r, const ModelFamily& fam, bool family_known, bool typed,
                    std::optional<int64_t> head_dim, Model& m, std::vector<Model::NotModelled>& notes);

}  // namespace lostflops
