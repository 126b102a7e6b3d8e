// Nemotron-NAS / DeciLM `block_configs` (model_layers.h NasBlock): one entry
// per layer, as the model's remote code builds it (modeling_decilm.py
// DeciLMDecoderLayer, at nvidia/Llama-3_3-Nemotron-Super-49B-v1):
//   attention.no_op    no input_layernorm and no attention
//   attention.n_heads_in_group  key/value heads = num_attention_heads / n
//   ffn.no_op          no post_attention_layernorm and no MLP
//   ffn.ffn_mult       a gated MLP of _ffn_mult_to_intermediate_size:
//                      int(2 * ffn_mult * hidden_size / 3) rounded up to a
//                      multiple of 256
// Every other variant (replace_with_linear, sparsify, sink tokens, windows,
// and keys of later DeciLM versions) is refused by its key.
#include <cmath>

#include "job/model_layers.h"

namespace lostflops {

namespace {

// The layer's sub-block: refused when it asks for something not modelled.
void refuse_variants(YamlSection& b, std::initializer_list<const char*> flags, std::initializer_list<const char*> values) {
    for (const char* k : flags)
        if (b.bool_or(k, false))
            throw InputError(b.file(), b.key_path(k), "true: not modelled (lostflops models no_op and the plain block)");
    for (const char* k : values)  // raw: a null value is read (and absent), not left as an unknown key
        if (b.raw(k)) throw InputError(b.file(), b.key_path(k), "not modelled (lostflops models null only)");
}

}  // namespace

std::optional<std::vector<NasBlock>> read_block_configs(YamlSection& s, int L, int64_t hidden, int heads) {
    const YAML::Node list = s.raw("block_configs");
    if (!list) return std::nullopt;
    if (!list.IsSequence()) throw InputError(s.file(), s.key_path("block_configs"), "expected a list, one entry per layer");
    if (static_cast<int64_t>(list.size()) != L)
        throw InputError(s.file(), s.key_path("block_configs"),
                         fmt::format("{} entries; expected one per layer ({})", list.size(), L));
    std::vector<NasBlock> out(static_cast<size_t>(L));
    for (int i = 0; i < L; ++i) {
        const YAML::Node entry = list[static_cast<size_t>(i)];
        const std::string at = fmt::format("{}[{}]", s.key_path("block_configs"), i);
        if (!entry.IsMap()) throw InputError(s.file(), at, "expected a mapping with attention and ffn");
        YamlSection e(entry, s.file(), at);
        YamlSection a(e.raw("attention"), s.file(), at + ".attention");
        YamlSection f(e.raw("ffn"), s.file(), at + ".ffn");
        e.finish();
        NasBlock& blk = out[static_cast<size_t>(i)];
        blk.attention = !a.bool_or("no_op", false);
        refuse_variants(a, {"replace_with_linear", "unshifted_sink", "use_prefill_window_in_sink_attention"},
                        {"sparsify", "num_sink_tokens", "window_length"});
        const auto group = a.int_opt("n_heads_in_group", 1, 100'000);
        if (blk.attention) {
            if (!group) throw a.missing("n_heads_in_group", "an attention block needs it (null only with no_op)");
            if (heads % *group != 0)
                throw InputError(s.file(), a.key_path("n_heads_in_group"),
                                 fmt::format("{} does not divide num_attention_heads {}", *group, heads));
            blk.kv_heads = static_cast<int>(heads / *group);
        }
        a.finish();
        blk.ffn = !f.bool_or("no_op", false);
        refuse_variants(f, {"replace_with_linear"}, {"sparsify"});
        const auto mult = f.num_opt("ffn_mult", 1e-3, 1e3);
        if (blk.ffn) {
            if (!mult) throw f.missing("ffn_mult", "an MLP block needs it (null only with no_op)");
            const auto width = static_cast<int64_t>(2 * *mult * static_cast<double>(hidden) / 3);
            blk.ffn_width = (width + 255) / 256 * 256;
        }
        f.finish();
    }
    return out;
}

}  // namespace lostflops
