// Megatron-LM / Megatron-Core launch -> job file (interop.h): the training
// command (megatron_command.h), its flags as argparse reads them
// (megatron_args.h), mapped to the job's keys. Flag meanings and defaults
// from megatron/training/arguments.py (NVIDIA/Megatron-LM d98e8a64):
// --ffn-hidden-size defaults to 4 x hidden, or with --swiglu to int(4 x
// hidden x 2/3 / 64) x 64; --num-query-groups counts only with
// --group-query-attention; --moe-router-topk defaults to 2; the vocabulary
// is --padded-vocab-size when given, else the tokenizer's padded to a
// multiple of --make-vocab-size-divisible-by (default 128) x tp
// (megatron/core/tokenizers/utils/build_tokenizer.py
// vocab_size_with_padding); the GPT-2 BPE vocabulary has 50,257 entries;
// --global-batch-size defaults to micro-batch x data-parallel size;
// embeddings are tied unless --untie-embeddings-and-output-weights;
// --attention-backend unfused / local and --transformer-impl local run
// Megatron's unfused softmax attention, the others Transformer Engine's
// fused / flash kernels.
#include <cstdint>

#include "interop/job_draft.h"
#include "interop/megatron_args.h"
#include "interop/megatron_command.h"
#include "interop/megatron_plan.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

namespace lostflops {

using interop::add;

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
    if (tokenizer != "HuggingFaceTokenizer" && tokenizer != "MultimodalTokenizer") return std::nullopt;
    for (const auto& v : kHfVocabs) {
        const std::string name = v.name;
        std::string cached = "models--" + name;
        cached.replace(cached.find('/'), 1, "--");
        if (model.find(name) != std::string::npos || model.find(cached) != std::string::npos)
            return KnownVocab{v.size, std::to_string(v.size) + " (" + name + "'s config.json)", true};
    }
    return std::nullopt;
}

void model_section(const interop::MegatronArgs& f, interop::JobDraft& d, std::vector<ImportNote>& notes, int layers,
                   int tp, bool bert) {
    const int hidden = f.required("hidden-size");
    const int heads = f.required("num-attention-heads");
    add(d.model, "num_hidden_layers", std::to_string(layers));
    add(d.model, "hidden_size", std::to_string(hidden));
    const bool swiglu = f.has("swiglu");
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
    if (const auto kv = f.num("kv-channels"); kv && static_cast<int64_t>(*kv) * heads != hidden)
        notes.push_back({NoteKind::not_modelled, "--kv-channels",
                         "not modelled yet: head dimension " + std::to_string(*kv) +
                             " differs from hidden / heads and needs per-kind layers in lostflops' model (issue 18); "
                             "costed as hidden / heads"});
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
            const std::string shown = tokenizer.empty() ? "none given" : tokenizer;
            add(d.model, "vocab_size", "", "vocab_size: the flags do not say (tokenizer " + shown +
                                               "); give --set model.vocab_size=N (padded as Megatron pads)");
            notes.push_back({NoteKind::assumed, "--tokenizer-type",
                             "vocabulary size unknown for tokenizer " + shown + ": set model.vocab_size"});
        }
    }
    add(d.model, "hidden_act", swiglu ? "silu" : "gelu", swiglu ? "--swiglu: gated MLP" : "no --swiglu: GELU MLP");
    add(d.model, "tie_word_embeddings", f.has("untie-embeddings-and-output-weights") ? "false" : "true");
    if (const auto experts = f.num("num-experts")) {
        add(d.model, "num_local_experts", std::to_string(*experts));
        add(d.model, "num_experts_per_tok", std::to_string(f.num("moe-router-topk").value_or(2)),
            f.has("moe-router-topk") ? "" : "Megatron's default --moe-router-topk 2");
        if (const auto moe_ffn = f.num("moe-ffn-hidden-size"))
            add(d.model, "moe_intermediate_size", std::to_string(*moe_ffn));
    }
}

std::string precision(const interop::MegatronArgs& f) {
    if (f.has("bf16") && f.has("fp16")) throw InputError(f.source(), "--fp16", "conflicts with --bf16: pick one precision");
    if (f.has("fp8-format")) return "fp8";
    if (f.has("bf16")) return "bf16";
    if (f.has("fp16")) return "fp16";
    throw InputError(f.source(), "--bf16", "neither --bf16 nor --fp16: Megatron trains in fp32, which lostflops does not model");
}

}  // namespace

ImportResult import_megatron(const std::string& text, const std::string& source, const ImportOptions& options) {
    std::vector<ImportNote> notes;
    const interop::MegatronCommand cmd = interop::megatron_command(text, source, options, notes);
    const interop::MegatronArgs f(cmd.words, source, notes);
    interop::JobDraft d;
    d.name = "megatron-import";
    d.source = "Megatron-LM flags (" + source + ")";
    d.header.push_back("Imported by `lostflops import megatron` from " + source + ".");

    if (!f.has("num-layers") && (f.given("hybrid-layer-pattern") || f.given("hybrid-override-pattern")))
        throw InputError(source, "--num-layers",
                         "missing: the hybrid layer pattern gives the layers, and lostflops cannot model a hybrid "
                         "(Mamba) stack yet (issue 18)");
    const int layers = f.required("num-layers");
    const int tp = f.num("tensor-model-parallel-size").value_or(1);
    const std::string program = cmd.program.substr(cmd.program.rfind('/') == std::string::npos ? 0 : cmd.program.rfind('/') + 1);
    model_section(f, d, notes, layers, tp, program == "pretrain_bert.py");

    // Cluster: what the launcher says; the rest is the user's.
    const int num_gpus = options.num_gpus > 0 ? options.num_gpus : cmd.num_gpus.value_or(0);
    const int per_node = options.gpus_per_node > 0 ? options.gpus_per_node : cmd.gpus_per_node.value_or(0);
    add(d.cluster, "", "", "the flags do not name the hardware: add gpu and links, or --set cluster.preset=NAME");
    if (num_gpus > 0)
        add(d.cluster, "num_gpus", std::to_string(num_gpus), options.num_gpus > 0 ? "--num-gpus" : cmd.gpus_from);
    else
        add(d.cluster, "", "", "num_gpus: not known (" + (cmd.gpus_unknown.empty() ? "no launcher" : cmd.gpus_unknown) +
                                   "); give --num-gpus N or --set cluster.num_gpus=N");
    if (per_node > 0) add(d.cluster, "gpus_per_node", std::to_string(per_node));

    // Training.
    // --encoder-seq-length is the same setting as --seq-length; a multimodal
    // model's language model runs --decoder-seq-length tokens (examples/
    // multimodal: --seq-length counts the image embeddings).
    const bool multimodal = cmd.program.find("multimodal/") != std::string::npos || cmd.program.find("mimo/") != std::string::npos;
    if (f.has("seq-length") && f.has("encoder-seq-length"))
        throw InputError(source, "--encoder-seq-length", "the same setting as --seq-length; give one");
    const char* seq_flag = multimodal && f.has("decoder-seq-length") ? "decoder-seq-length"
                           : f.has("encoder-seq-length")             ? "encoder-seq-length"
                                                                      : "seq-length";
    const int seq = f.required(seq_flag);
    if (f.has("decoder-seq-length") && !multimodal)
        notes.push_back({NoteKind::ignored, "--decoder-seq-length", "the decoder of an encoder-decoder model"});
    const int micro = f.required("micro-batch-size");
    const int pp = f.num("pipeline-model-parallel-size").value_or(1);
    const int cp = f.num("context-parallel-size").value_or(1);
    add(d.training, "seq_length", std::to_string(seq), std::string(seq_flag) == "seq-length" ? "" : std::string("--") + seq_flag);
    int64_t global = 0;
    if (const auto g = f.num("global-batch-size")) {
        global = *g;
        add(d.training, "global_batch_size", std::to_string(*g));
    } else if (num_gpus > 0 && num_gpus % (tp * pp * cp) == 0) {
        global = static_cast<int64_t>(micro) * (num_gpus / (tp * pp * cp));
        add(d.training, "global_batch_size", std::to_string(global), "Megatron's default: micro-batch x data-parallel size");
    } else {
        throw InputError(source, "--global-batch-size",
                         "missing, and the data-parallel size that would default it is unknown (the GPU count: " +
                             (num_gpus > 0 ? std::to_string(num_gpus) + " GPUs are not a multiple of tp x pp x cp"
                                           : cmd.gpus_unknown.empty() ? std::string("no launcher") : cmd.gpus_unknown) +
                             "; give --num-gpus)");
    }
    add(d.training, "micro_batch_size", std::to_string(micro));
    const std::string prec = precision(f);
    if (prec == "fp8") add(d.training, "precision", "fp8", "--fp8-format " + f.choice("fp8-format", {"e4m3", "hybrid"}));
    else add(d.training, "precision", prec);
    if (const auto samples = f.num("train-samples")) {
        add(d.training, "train_tokens", std::to_string(static_cast<int64_t>(*samples) * seq), "--train-samples x seq");
    } else if (const auto iters = f.num("train-iters")) {
        add(d.training, "train_tokens", std::to_string(static_cast<int64_t>(*iters) * global * seq),
            "--train-iters x global batch x seq");
    }
    std::string framework_why;
    const Framework fw = interop::megatron_framework(f, notes, framework_why);
    std::string attention = "flash", attention_why;
    if (fw == Framework::megatron_lm) {
        attention = f.has("use-flash-attn") ? "flash" : "unfused";
        attention_why = f.has("use-flash-attn") ? "--use-flash-attn" : "no --use-flash-attn: Megatron's softmax path";
    } else if (f.has("transformer-impl") && f.choice("transformer-impl", {"local", "transformer_engine", "inference_optimized"}) == "local") {
        attention = "unfused";
        attention_why = "--transformer-impl local: Megatron-Core's own softmax attention";
    } else if (f.has("attention-backend")) {
        const std::string b = f.choice("attention-backend", {"flash", "fused", "unfused", "local", "auto"});
        attention = b == "unfused" || b == "local" ? "unfused" : "flash";
        attention_why = "--attention-backend " + b;
    } else {
        attention_why = "Transformer Engine's fused attention";
    }
    add(d.training, "attention", attention, attention_why);
    add(d.training, "framework", to_string(fw), framework_why);
    if (f.has("optimizer") && f.choice("optimizer", {"adam", "sgd", "muon", "dist_muon", "lion", "soap", "adaptive_muon"}) != "adam")
        notes.push_back({NoteKind::not_modelled, "--optimizer", *f.str("optimizer") + ": its state and step are costed as Adam's"});

    interop::megatron_parallel(f, layers, prec == "bf16" || prec == "fp8", d, notes);

    if (options.strict) interop::refuse_unmodelled(notes, source);
    return {interop::render_yaml(d), std::move(notes)};
}

const char* to_string(NoteKind k) {
    switch (k) {
        case NoteKind::not_modelled: return "not modelled";
        case NoteKind::ignored: return "ignored";
        case NoteKind::unknown: return "unknown";
        case NoteKind::assumed: return "assumed";
    }
    return "?";
}

}  // namespace lostflops
