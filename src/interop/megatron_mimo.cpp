// The MIMO trainer's language models (megatron_mimo.h), read at
// NVIDIA/Megatron-LM d98e8a64 (2026-08-22):
//   mock       examples/mimo/configs/mock.py get_mock_language_model_config:
//              TransformerConfig(num_layers=1, hidden_size=128,
//              num_attention_heads=4), TransformerConfig's defaults (MLP
//              4 x hidden, GELU); examples/mimo/model_providers/mock.py
//              GPTModel vocab_size 50304.
//   llava_vlm, video_llava_vlm, llava_avlm
//              examples/mimo/configs/llava_vlm.py
//              get_vicuna_language_model_config: Vicuna-7B, 32 layers, hidden
//              4096, 32 heads, ffn 11008, SwiGLU; model_providers/
//              llava_vlm.py and llava_avlm.py GPTModel vocab_size 32256
//              (video_llava_vlm is llava_vlm with video input, train.py
//              _MODEL_PROVIDERS).
// The flags train.py adds (its add_mimo_args): --model-provider default
// 'mock', --total-seq-length default 512, --dataset-provider, --image-size,
// --pad-token-id, --image-token-id, --language-model-checkpoint.
#include "interop/megatron_mimo.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "lostflops/error.h"

namespace lostflops::interop {

namespace {

constexpr const char* kVicuna = "Vicuna-7B (examples/mimo/configs/llava_vlm.py, model_providers/llava_vlm.py)";
constexpr std::array<MimoProvider, 4> kProviders{{
    {"mock", 1, 128, 4, 512, "gelu", 50304, "examples/mimo/configs/mock.py, model_providers/mock.py"},
    {"llava_vlm", 32, 4096, 32, 11008, "silu", 32256, kVicuna},
    {"video_llava_vlm", 32, 4096, 32, 11008, "silu", 32256, kVicuna},
    {"llava_avlm", 32, 4096, 32, 11008, "silu", 32256,
     "Vicuna-7B (examples/mimo/configs/llava_vlm.py, model_providers/llava_avlm.py)"},
}};

// The flags of train.py's MIMO group that do not change the step's cost.
constexpr std::array<const char*, 5> kMimoOther{
    {"dataset-provider", "image-size", "pad-token-id", "image-token-id", "language-model-checkpoint"}};

// The last value of --NAME (either spelling) in `words`, with its line.
const ShellField* last_value(const std::vector<ShellField>& words, const std::string& name) {
    const ShellField* out = nullptr;
    const std::string flag = "--" + name;
    for (size_t i = 0; i < words.size(); ++i) {
        if (words[i].text == flag && i + 1 < words.size()) out = &words[i + 1];
        else if (words[i].text.rfind(flag + "=", 0) == 0) out = &words[i];
    }
    return out;
}

std::string value_of(const ShellField& f, const std::string& name) {
    const std::string prefix = "--" + name + "=";
    return f.text.rfind(prefix, 0) == 0 ? f.text.substr(prefix.size()) : f.text;
}

}  // namespace

bool is_mimo_trainer(const std::string& program) {
    const std::string tail = "mimo/train.py";
    return program.size() >= tail.size() && program.compare(program.size() - tail.size(), tail.size(), tail) == 0;
}

MimoRun mimo_run(const std::vector<ShellField>& words, const std::string& source, std::vector<ImportNote>& notes) {
    MimoRun r;
    std::string provider = "mock";
    if (const ShellField* v = last_value(words, "model-provider")) {
        if (!v->known())
            throw InputError(source, "--model-provider",
                             "cannot evaluate: its value (line " + std::to_string(v->line) + ") is " + v->unknown);
        provider = value_of(*v, "model-provider");
    }
    for (const MimoProvider& p : kProviders)
        if (provider == p.name) r.provider = &p;
    if (r.provider == nullptr)
        throw InputError(source, "--model-provider",
                         "'" + provider + "': examples/mimo/train.py's providers are mock, llava_vlm, video_llava_vlm "
                                          "and llava_avlm");
    r.seq_from = "examples/mimo/train.py's default --total-seq-length 512";
    if (const ShellField* v = last_value(words, "total-seq-length")) {
        if (!v->known())
            throw InputError(source, "--total-seq-length",
                             "cannot evaluate: its value (line " + std::to_string(v->line) + ") is " + v->unknown);
        r.seq_length = positive_int(value_of(*v, "total-seq-length"), source, "--total-seq-length");
        r.seq_from = "--total-seq-length: the packed sequence of text and image tokens";
    }
    // The MIMO flags are train.py's, not Megatron's: no "unknown" note.
    const auto mimo_flag = [](const ImportNote& n) {
        if (n.kind != NoteKind::unknown || n.setting.rfind("--", 0) != 0) return false;
        const std::string name = n.setting.substr(2, n.setting.find_first_of(" =") - 2);
        return name == "model-provider" || name == "total-seq-length" ||
               std::find_if(kMimoOther.begin(), kMimoOther.end(), [&](const char* o) { return name == o; }) !=
                   kMimoOther.end();
    };
    notes.erase(std::remove_if(notes.begin(), notes.end(), mimo_flag), notes.end());
    notes.push_back({NoteKind::assumed, "--model-provider",
                     provider + ": examples/mimo/train.py builds this language model in Python (" + r.provider->source +
                         "); the script's model flags (--num-layers, --hidden-size, tokenizer, ...) are not used"});
    return r;
}

int mimo_model(const MimoProvider& p, JobDraft& d) {
    const std::string from = std::string("--model-provider ") + p.name;
    add(d.model, "num_hidden_layers", std::to_string(p.layers), from);
    add(d.model, "hidden_size", std::to_string(p.hidden));
    add(d.model, "intermediate_size", std::to_string(p.ffn));
    add(d.model, "num_attention_heads", std::to_string(p.heads));
    add(d.model, "vocab_size", std::to_string(p.vocab), "GPTModel's vocab_size in the provider");
    add(d.model, "hidden_act", p.act, std::strcmp(p.act, "silu") == 0 ? "gated MLP (SwiGLU)" : "GELU MLP");
    add(d.model, "tie_word_embeddings", "true", "GPTModel's default share_embeddings_and_output_weights");
    return p.layers;
}

}  // namespace lostflops::interop
