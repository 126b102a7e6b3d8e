// Where a model's tokens get their positions, and what else of its
// attention and blocks a family fixes: learned position embeddings (GPT-2's
// wpe, OPT's offset table) and OPT's narrower embeddings; rotary's share of
// each head's q and k (Model::rotary_share); whether transformers keeps the
// attention scores in memory (Model::hf_eager_scores: the family's, or the
// config's attn_implementation); and dropout after
// each block (Model::block_dropout). Sources: each family's
// configuration_<family>.py defaults, cited in model_families.h.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "job/did_you_mean.h"
#include "job/model_layers.h"

namespace lostflops {

namespace {

// The attention transformers runs (Model::hf_eager_scores): the family's,
// unless the config names another. PretrainedConfig pops attn_implementation
// into _attn_implementation_internal, then sets the rest of the keys, so a
// _attn_implementation (its property; transformers never saves it, a
// hand-made config may give it) wins; from_pretrained honours the result
// unless given another (configuration_utils.py; 4.36 to 4.57's from_dict
// dropped a saved attn_implementation, 5.x keeps it). Names
// (modeling_utils.py): eager, sdpa, flash_attention_2/3/4, flex_attention, a
// kernel repository "org/name", "paged|" variants and 4.5x's *_paged ones.
// "eager" is the modelling file's own attention, its scores in memory,
// priced as BLOOM's (layer_work.cpp); a fused name where the family has it
// (SDPA families: any; GPT-J and InternLM2's remote code: flash_attention_2;
// gpt-oss: flash_attention_*, flex_attention or a kernel repository, not
// sdpa; BLOOM: none), else the family's own, as transformers refuses the name. A
// mapping (5.x: one per sub-config) is left to the family, and said. Said
// as read, one warning: it changes the price under framework hf alone.
void read_attention_implementation(YamlSection& s, const ModelFamily& fam, Model& m,
                                   std::vector<Model::NotModelled>& notes) {
    m.hf_fused = fam.scores;
    m.hf_eager_scores = fam.scores != Model::HfFused::sdpa;
    m.hf_eager_chain = {fam.eager_score_bytes, fam.eager_score_kernels, fam.eager_score_bf16_bytes,
                        fam.eager_score_bf16_kernels};
    std::optional<std::string> name;
    const char* key = nullptr;
    for (const char* k : {"attn_implementation", "_attn_implementation"}) {
        if (!s.has(k)) continue;
        const YAML::Node v = s.raw(k);
        if (!v.IsScalar()) {
            notes.push_back({k, "not a name (transformers 5 takes one per sub-config): not read; the family's "
                                "attention is priced",
                             Model::NotModelled::Kind::ignored});
            continue;
        }
        if (name && *name != v.Scalar())
            notes.push_back({"attn_implementation",
                             "'" + *name + "' is overridden by _attn_implementation '" + v.Scalar() +
                                 "', as PretrainedConfig sets it after",
                             Model::NotModelled::Kind::ignored});
        name = v.Scalar();
        key = k;
    }
    if (!name) return;
    const std::string base = name->rfind("paged|", 0) == 0 ? name->substr(6) : *name;
    const bool eager = base == "eager" || base == "eager_paged";
    const std::vector<std::string> known = {"eager", "sdpa", "flash_attention_2", "flash_attention_3",
                                            "flash_attention_4", "flex_attention", "sdpa_paged", "eager_paged",
                                            "paged_attention"};
    const bool named = std::find(known.begin(), known.end(), base) != known.end() || base.find('/') != std::string::npos;
    const bool flash_name = base.rfind("flash_attention_", 0) == 0 || base == "flex_attention" ||
                            base.find('/') != std::string::npos;
    const bool fused_here = fam.scores == Model::HfFused::sdpa ||
                            (fam.scores == Model::HfFused::flash_attention_2 && base == "flash_attention_2") ||
                            (fam.scores == Model::HfFused::sink_kernels && flash_name);
    // flash_attention_* take window_size, flex_attention a block mask, the
    // hub's kernels (kernels-community/...) the flash kernels' arguments:
    // each skips what a window or chunk leaves out (modeling_flash_attention_utils.py,
    // masking_utils.py flash_attention_mask / flex_attention_mask).
    m.hf_kernel_windows = fused_here && flash_name;
    std::string why;
    if (!named)
        why = "'" + *name + "' is not an attention transformers names (eager, sdpa, flash_attention_2/3/4, "
              "flex_attention, a kernel repository 'org/name'); read as " +
              (fused_here ? std::string("a fused kernel") : "this family's own attention") + did_you_mean(*name, known);
    if (eager && !m.hf_eager_scores) {
        m.hf_eager_scores = true;
        why = "'" + *name + "': transformers runs this model's own attention, its scores in memory; framework hf "
              "prices it so unless training.attention says flash (set model." + key + ": sdpa to price SDPA)";
    } else if (!eager && m.hf_eager_scores) {
        if (fused_here && named) {
            m.hf_eager_scores = false;
            why = "'" + *name + "': transformers runs a fused attention kernel in place of this family's eager "
                  "attention; framework hf prices it so";
        } else if (named) {
            why = "'" + *name + "': transformers has no such attention for this family (it refuses the name); "
                  "priced as the family's own eager attention";
        }
    }
    if (!why.empty()) notes.push_back({key, why, Model::NotModelled::Kind::ignored});
}

}  // namespace

void read_positions(YamlSection& s, Reader& r, const ModelFamily& fam, bool family_known, bool typed,
                    std::optional<int64_t> head_dim, Model& m, std::vector<Model::NotModelled>& notes) {
    // Learned positions and OPT's narrower embeddings (Model::positions, embed_dim).
    const auto n_positions = s.int_opt("n_positions", 1, 100'000'000);
    const auto max_positions = s.int_opt("max_position_embeddings", 1, 100'000'000);
    if (fam.positions == PositionRule::n_positions) m.positions = n_positions.value_or(1024);  // GPT2Config default
    if (fam.positions == PositionRule::opt) m.positions = max_positions.value_or(2048) + 2;    // OPTConfig default
    if (const auto e = s.int_opt("word_embed_proj_dim", 1, 1'000'000); e && *e != m.hidden) m.embed_dim = *e;

    // Rotary (Model::rotary_share): partial_rotary_factor (Phi, StableLM,
    // Phi-3; transformers 5 nests it in rope_parameters, model_read.cpp
    // flatten_model_node: the outer one first), rotary_pct (GPT-NeoX) or rotary_dim (GPT-J, dims
    // of a head), the first given, else the family's configuration default
    // (an unknown model_type: Llama's, all of q and k); none with learned
    // positions or ALiBi (BLOOM, Falcon's alibi). A hand-written model that
    // gives none keeps -1.
    std::optional<double> rotary = s.num_opt("partial_rotary_factor", 0, 1);
    if (const auto nested = s.num_opt("rope_parameters.partial_rotary_factor", 0, 1); !rotary)
        rotary = nested;
    else if (nested && *nested != *rotary)  // two values: the one left out is said, not passed over
        notes.push_back({"rope_parameters.partial_rotary_factor",
                         fmt::format("{:g} disagrees with partial_rotary_factor {:g}, which is read here (transformers' "
                                     "own precedence varies by family and version)",
                                     *nested, *rotary),
                         Model::NotModelled::Kind::ignored});
    if (const auto pct = s.num_opt("rotary_pct", 0, 1); !rotary) rotary = pct;
    const auto rotary_dim = s.int_opt("rotary_dim", 0, kMaxSize);
    if (rotary_dim && head_dim && *rotary_dim > *head_dim)
        r.fail("rotary_dim", fmt::format("{} exceeds the head's {} dims", *rotary_dim, *head_dim));
    if (!rotary && rotary_dim && head_dim) rotary = static_cast<double>(*rotary_dim) / static_cast<double>(*head_dim);
    if (!rotary && typed)
        rotary = fam.rotary_dim > 0 && head_dim ? std::min(1.0, fam.rotary_dim / static_cast<double>(*head_dim)) : fam.rotary;
    if (fam.positions != PositionRule::none || s.bool_or("alibi", false)) rotary = 0.0;
    if (rotary) m.rotary_share = *rotary;
    read_attention_implementation(s, fam, m, notes);

    // Dropout after each block (Model::block_dropout): the config's own
    // probability where it gives one, else its family's default; a model
    // without model_type, or of a model_type not in the table (older
    // GPT-style classes default to 0.1: OpenAI-GPT, CTRL, XGLM), that gives
    // none says nothing (-1: on for a two-matrix MLP, as before).
    std::optional<double> p_drop;
    for (const char* key : {"resid_pdrop", "hidden_dropout", "residual_dropout", "dropout"})
        if (const auto v = s.num_opt(key, 0, 1)) p_drop = std::max(p_drop.value_or(0.0), *v);
    if (p_drop)
        m.block_dropout = *p_drop > 0 ? 1 : 0;
    else if (family_known)
        m.block_dropout = fam.dropout ? 1 : 0;
}

}  // namespace lostflops
