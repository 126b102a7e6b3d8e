// The model of Megatron's flags in the job file's keys (megatron_model.h):
// hidden size, heads and key/value groups, --kv-channels as head_dim, the MLP
// width with Megatron's defaults (4 x hidden, or int(4 x hidden x 2/3 / 64)
// x 64 with --swiglu), its kind, the vocabulary as Megatron pads it
// (megatron/core/tokenizers/utils/build_tokenizer.py vocab_size_with_padding:
// a multiple of --make-vocab-size-divisible-by x tp; --padded-vocab-size as
// given), experts with --moe-router-topk defaulting to 2, rotary's share of
// each head. Megatron-LM d98e8a64 megatron/training/arguments.py.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interop/megatron_model.h"
#include "job/did_you_mean.h"
#include "lostflops/error.h"

#include <fmt/format.h>

namespace lostflops::interop {

namespace {

// Vocabularies of Megatron's tokenizers when no --vocab-size says: GPT-2's
// BPE has 50,257 entries (OpenAI encoder.json); Llama 2's SentencePiece model
// 32,000 (Touvron et al. 2023, section 2.1); BERT's WordPiece 30,522
// uncased and 28,996 cased (google-research/bert vocab.txt of BERT-Large).
// The file is the user's: all but GPT-2's are assumed.
struct KnownVocab {
    int64_t size;
    std::string what;
    bool assumed;
};
// A Hugging Face tokenizer (--tokenizer-model ORG/NAME, or a cache folder
// models--ORG--NAME) of a model whose config.json gives its embedding rows:
// DeepSeek-V3 129,280, Llama 3 / 3.1 8B 128,256, Qwen2 / Qwen2.5 152,064
// (../shared/realworld/hf/*.json and the models' pages); Mistral-7B-v0.3
// 32,768; Yi-34B 64,000 (Young et al. 2024, "Yi", section 2.2). Megatron
// pads the tokenizer's length, which these rows bound: assumed.
struct HfVocab {
    const char* name;
    int64_t size;
};
constexpr HfVocab kHfVocabs[] = {
    {"deepseek-ai/DeepSeek-V3", 129280},          {"meta-llama/Llama-3.1-8B-Instruct", 128256},
    {"meta-llama/Llama-3.1-8B", 128256},          {"meta-llama/Meta-Llama-3.1-8B-Instruct", 128256},
    {"meta-llama/Meta-Llama-3-8B-Instruct", 128256}, {"meta-llama/Meta-Llama-3-8B", 128256},
    {"Qwen/Qwen2-72B-Instruct", 152064},          {"Qwen/Qwen2.5-7B-Instruct", 152064},
    {"mistralai/Mistral-7B-Instruct-v0.3", 32768}, {"NousResearch/Nous-Hermes-2-Yi-34B", 64000},
};

std::optional<KnownVocab> tokenizer_vocab(const std::string& tokenizer, const std::string& model) {
    if (tokenizer == "GPT2BPETokenizer") return KnownVocab{50257, "50,257", false};
    if (tokenizer == "Llama2Tokenizer") return KnownVocab{32000, "32,000", true};
    if (tokenizer == "BertWordPieceLowerCase") return KnownVocab{30522, "30,522", true};
    if (tokenizer == "BertWordPieceCase") return KnownVocab{28996, "28,996", true};
    // SFTTokenizer wraps the HuggingFace tokenizer of --tokenizer-model (Megatron-LM
    // megatron/core/tokenizers/text/libraries/sft_tokenizer.py: AutoTokenizer.from_pretrained).
    if (tokenizer != "HuggingFaceTokenizer" && tokenizer != "MultimodalTokenizer" && tokenizer != "SFTTokenizer")
        return std::nullopt;
    for (const auto& v : kHfVocabs) {
        const std::string name = v.name;
        std::string cached = "models--" + name;
        cached.replace(cached.find('/'), 1, "--");
        if (model.find(name) != std::string::npos || model.find(cached) != std::string::npos)
            return KnownVocab{v.size, std::to_string(v.size) + " (" + name + "'s config.json)", true};
    }
    // Every Llama 3.x text model has the Llama 3 tokenizer's 128,256 rows
    // (Llama 3 / 3.1 / 3.2 config.json in ../shared/realworld/hf).
    if (model.find("Llama-3") != std::string::npos)
        return KnownVocab{128256, "128,256 (the Llama 3 tokenizer of " + model + ")", true};
    return std::nullopt;
}

}  // namespace

int megatron_model(const MegatronArgs& f, JobDraft& d, std::vector<ImportNote>& notes, int tp, bool bert) {
    const int hybrid = hybrid_layers(f);
    if (hybrid > 0 && f.has("num-layers") && f.required("num-layers") != hybrid)
        throw InputError(f.source(), "--num-layers",
                         std::to_string(f.required("num-layers")) + " layers, but the hybrid layer pattern has " +
                             std::to_string(hybrid));
    const int layers = hybrid > 0 ? hybrid : f.required("num-layers");
    const int hidden = f.required("hidden-size");
    const int heads = f.required("num-attention-heads");
    add(d.model, "num_hidden_layers", std::to_string(layers), hybrid > 0 ? "the hybrid layer pattern's" : "");
    add(d.model, "hidden_size", std::to_string(hidden));
    const bool swiglu = f.has("swiglu") || f.has("quick-geglu");
    if (const auto ffn = f.num("ffn-hidden-size")) {
        add(d.model, "intermediate_size", std::to_string(*ffn));
    } else {
        const int64_t ffn_default =
            swiglu ? static_cast<int64_t>(4.0 * hidden * 2.0 / 3.0 / 64.0) * 64 : 4 * static_cast<int64_t>(hidden);
        add(d.model, "intermediate_size", std::to_string(ffn_default),
            swiglu ? "Megatron's default with --swiglu: int(4 x hidden x 2/3 / 64) x 64" : "Megatron's default: 4 x hidden");
    }
    add(d.model, "num_attention_heads", std::to_string(heads));
    if (f.has("group-query-attention")) {
        add(d.model, "num_key_value_heads", std::to_string(f.num("num-query-groups").value_or(1)), "--num-query-groups");
    } else if (f.has("num-query-groups")) {
        notes.push_back({NoteKind::ignored, "--num-query-groups", "Megatron uses it only with --group-query-attention"});
    }
    if (const auto kv = f.num("kv-channels"); kv && f.has("multi-latent-attention"))
        notes.push_back({NoteKind::ignored, "--kv-channels", "multi-latent attention's heads are --qk-head-dim + --qk-pos-emb-head-dim"});
    else if (kv && static_cast<int64_t>(*kv) * heads != hidden)
        add(d.model, "head_dim", std::to_string(*kv), "--kv-channels");
    if (const auto padded = f.num("padded-vocab-size")) {
        add(d.model, "vocab_size", std::to_string(*padded), "--padded-vocab-size");
    } else {
        const int divisible_by = f.num("make-vocab-size-divisible-by").value_or(128);
        std::optional<int64_t> vocab;
        std::string vocab_from;
        std::string tokenizer = f.str("tokenizer-type").value_or("");
        if (tokenizer.empty()) tokenizer = bert ? "BertWordPieceLowerCase" : "GPT2BPETokenizer";  // the programs' args_defaults
        if (const auto v = f.num("vocab-size")) {
            vocab = *v;
            vocab_from = "--vocab-size " + std::to_string(*v);
        } else if (const auto known = tokenizer_vocab(tokenizer, f.known_str("tokenizer-model").value_or(""))) {
            vocab = known->size;
            vocab_from = tokenizer + "'s " + known->what;
            if (known->assumed)
                notes.push_back({NoteKind::assumed, "--tokenizer-type", tokenizer + ": " + known->what +
                                                                            " assumed (the vocabulary of its usual model file)"});
        }
        if (vocab) {
            const int64_t multiple = static_cast<int64_t>(divisible_by) * tp;
            const int64_t padded = (*vocab + multiple - 1) / multiple * multiple;
            add(d.model, "vocab_size", std::to_string(padded),
                vocab_from + " padded to a multiple of " + std::to_string(divisible_by) + " x tp " + std::to_string(tp));
        } else {
            // The tokenizer's file or name, when the flags say which: its
            // vocabulary is in that file, which lostflops does not read.
            std::string shown = tokenizer.empty() ? "none given" : tokenizer;
            if (const auto file = f.known_str("tokenizer-model")) shown += " of " + *file;
            add(d.model, "vocab_size", "", "vocab_size: the flags do not say (tokenizer " + shown +
                                               "); give --set model.vocab_size=N (padded as Megatron pads)");
            notes.push_back({NoteKind::assumed, "--tokenizer-type",
                             "vocabulary size unknown for tokenizer " + shown +
                                 " (no --vocab-size; the vocabulary is in the tokenizer, which lostflops does not "
                                 "read): set model.vocab_size"});
        }
    }
    // The MLP's kind and function (the function costs alike; kept for export).
    if (f.has("quick-geglu")) add(d.model, "hidden_act", "geglu", "--quick-geglu: gated quick-GELU MLP");
    else if (f.has("swiglu")) add(d.model, "hidden_act", "silu", "--swiglu: gated MLP");
    else if (f.has("squared-relu")) add(d.model, "hidden_act", "relu2", "--squared-relu: two-matrix MLP");
    else add(d.model, "hidden_act", "gelu", "no --swiglu: GELU MLP");
    // Megatron's hidden dropout (default 0.1) is the block dropout a
    // two-matrix MLP's masks and kernels follow (Model::block_dropout);
    // checked here (0 to 1) and written as a number.
    if (const auto drop = f.str("hidden-dropout")) {
        const double p = number_in(*drop, f.source(), "--hidden-dropout", 0, 1);
        add(d.model, "hidden_dropout", fmt::format("{}", p), "--hidden-dropout");
    }
    // Rotary (Model::rotary_share): --position-embedding-type rope (mrope,
    // yarn; the older --use-rotary-position-embeddings) rotates
    // --rotary-percent of each head (default 1.0, arguments.py), written
    // where it is a part; none rotates nothing. All of it, and
    // learned_absolute (Megatron's default), are left to the reading of a
    // model without model_type (all in a gated layer, none in a two-matrix
    // one): the published Megatron GPT runs (data/published) launch GELU
    // models with rope, and their fused rotary kernel is inside the
    // per-kernel overhead fitted on them (calibration kernel_overhead_us).
    // The type is checked as argparse's choices check it; then Megatron's
    // validate_args sets rope wherever the legacy flag is given, whatever
    // the type says ("Legacy RoPE arguments").
    const std::string given_type = f.str("position-embedding-type").value_or("");
    const std::vector<std::string> position_types = {"learned_absolute", "rope", "mrope", "yarn", "relative", "none"};
    if (!given_type.empty() && std::find(position_types.begin(), position_types.end(), given_type) == position_types.end())
        throw InputError(f.source(), "--position-embedding-type",
                         "'" + given_type + "': expected learned_absolute, rope, mrope, yarn, relative or none" +
                             did_you_mean(given_type, position_types));
    const std::string positions = f.has("use-rotary-position-embeddings") ? "rope" : given_type;
    const bool rotates = positions == "rope" || positions == "mrope" || positions == "yarn";
    if (rotates) {
        const double share = f.str("rotary-percent") ? number_in(*f.str("rotary-percent"), f.source(), "--rotary-percent", 0, 1) : 1.0;
        if (share < 1) add(d.model, "partial_rotary_factor", fmt::format("{}", share), "--rotary-percent");
    } else if (positions == "none") {
        add(d.model, "partial_rotary_factor", "0", "--position-embedding-type none");
    }
    // Megatron reads --rotary-percent only for rotary position types
    // (GPTModel's RotaryEmbedding is built for rope, mrope and yarn).
    if (!rotates && f.str("rotary-percent"))
        notes.push_back({NoteKind::ignored, "--rotary-percent",
                         "Megatron uses it only with --position-embedding-type rope, mrope or yarn (here " +
                             (positions.empty() ? std::string("learned_absolute, the default") : positions) + ")"});
    if (f.has("qk-layernorm")) add(d.model, "qk_layernorm", "true", "--qk-layernorm");
    add(d.model, "tie_word_embeddings", f.has("untie-embeddings-and-output-weights") ? "false" : "true");
    if (const auto experts = f.num("num-experts")) {
        add(d.model, "num_local_experts", std::to_string(*experts));
        add(d.model, "num_experts_per_tok", std::to_string(f.num("moe-router-topk").value_or(2)),
            f.has("moe-router-topk") ? "" : "Megatron's default --moe-router-topk 2");
        if (const auto moe_ffn = f.num("moe-ffn-hidden-size"))
            add(d.model, "moe_intermediate_size", std::to_string(*moe_ffn));
        // The aux-loss-free router's per-expert score bias (DeepSeek-V3's noaux_tc).
        if (f.has("moe-router-enable-expert-bias"))
            add(d.model, "topk_method", "noaux_tc", "--moe-router-enable-expert-bias: a score-correction bias per expert");
    }
    return layers;
}


}  // namespace lostflops::interop
