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

void model_section(const interop::MegatronArgs& f, interop::JobDraft& d, std::vector<ImportNote>& notes, int layers,
                   int tp) {
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
        const std::string tokenizer = f.str("tokenizer-type").value_or("");
        if (const auto v = f.num("vocab-size")) {
            vocab = *v;
            vocab_from = "--vocab-size " + std::to_string(*v);
        } else if (tokenizer == "GPT2BPETokenizer" || tokenizer.empty()) {
            vocab = 50257;
            vocab_from = tokenizer.empty() ? "GPT-2 BPE's 50,257 (pretrain_gpt.py's default tokenizer)" : "GPT-2 BPE's 50,257";
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
    model_section(f, d, notes, layers, tp);

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
    const int seq = f.required("seq-length");
    const int micro = f.required("micro-batch-size");
    const int pp = f.num("pipeline-model-parallel-size").value_or(1);
    const int cp = f.num("context-parallel-size").value_or(1);
    add(d.training, "seq_length", std::to_string(seq));
    int64_t global = 0;
    if (const auto g = f.num("global-batch-size")) {
        global = *g;
        add(d.training, "global_batch_size", std::to_string(*g));
    } else if (num_gpus > 0 && num_gpus % (tp * pp * cp) == 0) {
        global = static_cast<int64_t>(micro) * (num_gpus / (tp * pp * cp));
        add(d.training, "global_batch_size", std::to_string(global), "Megatron's default: micro-batch x data-parallel size");
    } else {
        throw InputError(source, "--global-batch-size",
                         "missing, and the data-parallel size that would default it is unknown (no GPU count: give --num-gpus)");
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

    if (options.strict)
        for (const auto& n : notes)
            if (n.kind == NoteKind::not_modelled || n.kind == NoteKind::unknown)
                throw InputError(source, n.setting,
                                 std::string(n.kind == NoteKind::unknown ? "unknown" : "not modelled") + " (--strict): " +
                                     n.message);
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
