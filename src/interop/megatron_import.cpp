// Megatron-LM / Megatron-Core launch flags -> job file (interop.h).
// Flag meanings and defaults from megatron/training/arguments.py (Megatron-LM
// core_r0.8.0): --ffn-hidden-size defaults to 4 x hidden, or with --swiglu to
// int(4 x hidden x 2/3 / 64) x 64; --num-query-groups counts only with
// --group-query-attention; --moe-router-topk defaults to 2; the vocabulary is
// padded to a multiple of --make-vocab-size-divisible-by (default 128) x tp
// (_vocab_size_with_padding in megatron/training/tokenizer); the GPT-2 BPE
// vocabulary has 50,257 entries; --global-batch-size defaults to micro-batch x
// data-parallel size; --recompute-granularity full needs --recompute-method
// (TransformerConfig); embeddings are tied unless
// --untie-embeddings-and-output-weights. World size = torchrun's --nnodes x
// --nproc-per-node.
#include <map>
#include <optional>

#include "interop/job_draft.h"
#include "interop/megatron_flags.h"
#include "interop/shell_words.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

namespace lostflops {

using interop::add;

namespace {

struct Given {
    std::optional<std::string> value;  // nullopt for a flag without value
    int line = 0;
};

struct Parsed {
    std::map<std::string, Given> flags;  // read flags, by name without "--"
    int nnodes = 0, nproc_per_node = 0;
    std::vector<ImportNote> notes;
};

bool is_flag(const std::string& w) { return w.size() > 2 && w.compare(0, 2, "--") == 0; }

bool ends_with(const std::string& s, const char* suffix) {
    const std::string x(suffix);
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// torchrun / torch.distributed.launch flags before the training script.
void read_launcher(const std::vector<interop::ShellWord>& words, size_t end, const std::string& source,
                   Parsed& p) {
    for (size_t i = 0; i < end; ++i) {
        const std::string& w = words[i].text;
        if (!is_flag(w)) continue;
        const auto eq = w.find('=');
        const std::string name = w.substr(0, eq);
        if (name != "--nnodes" && name != "--nproc-per-node" && name != "--nproc_per_node") continue;
        std::string value;
        if (eq != std::string::npos) {
            value = w.substr(eq + 1);
        } else if (i + 1 < end && !is_flag(words[i + 1].text)) {
            value = words[++i].text;
        } else {
            throw InputError(source, name, "expects a value");
        }
        (name == "--nnodes" ? p.nnodes : p.nproc_per_node) = interop::positive_int(value, source, name);
    }
}

Parsed parse_words(const std::vector<interop::ShellWord>& words, const std::string& source) {
    Parsed p;
    size_t begin = 0;
    for (size_t i = 0; i < words.size(); ++i)
        if (ends_with(words[i].text, ".py")) {
            read_launcher(words, i, source, p);
            begin = i + 1;
            break;
        }
    bool seen_flag = false;
    for (size_t i = begin; i < words.size(); ++i) {
        const std::string& w = words[i].text;
        if (!is_flag(w)) {
            // Words before the first flag: `export X=1`, `cd`, variable assignments.
            if (seen_flag)
                p.notes.push_back({NoteKind::unknown, w,
                                   "line " + std::to_string(words[i].line) + ": a word that is not a flag nor a flag's value"});
            continue;
        }
        seen_flag = true;
        const auto eq = w.find('=');
        const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
        const std::string shown = "--" + name;
        std::optional<std::string> value;
        if (eq != std::string::npos) value = w.substr(eq + 1);
        const interop::MegatronFlag* f = interop::find_megatron_flag(name);
        const bool next_is_value = i + 1 < words.size() && !is_flag(words[i + 1].text);
        if (f == nullptr) {
            if (!value && next_is_value) value = words[++i].text;
            p.notes.push_back({NoteKind::unknown, shown + (value ? " " + *value : ""),
                               "not a Megatron-LM flag lostflops knows; not used"});
            continue;
        }
        if (f->arity == interop::FlagArity::one && !value) {
            if (!next_is_value) throw InputError(source, shown, "expects a value");
            value = words[++i].text;
        }
        if (f->arity == interop::FlagArity::none && value)
            throw InputError(source, shown, "takes no value, got '" + *value + "'");
        if (f->role == interop::FlagRole::ignored) {
            p.notes.push_back({NoteKind::ignored, shown, f->why});
            continue;
        }
        if (f->role == interop::FlagRole::not_modelled) {
            p.notes.push_back({NoteKind::not_modelled, shown, f->why});
            continue;
        }
        const auto [it, inserted] = p.flags.emplace(name, Given{value, words[i].line});
        if (!inserted && it->second.value != value)
            throw InputError(source, shown,
                             "given twice with different values ('" + it->second.value.value_or("") + "' and '" +
                                 value.value_or("") + "')");
    }
    return p;
}

class Flags {
public:
    Flags(const Parsed& p, std::string source) : p_(p), source_(std::move(source)) {}
    bool has(const char* name) const { return p_.flags.count(name) != 0; }
    std::optional<std::string> str(const char* name) const {
        const auto it = p_.flags.find(name);
        if (it == p_.flags.end()) return std::nullopt;
        return it->second.value;
    }
    std::optional<int> num(const char* name) const {
        const auto v = str(name);
        if (!v) return std::nullopt;
        return interop::positive_int(*v, source_, std::string("--") + name);
    }
    int required(const char* name) const {
        const auto v = num(name);
        if (!v) throw InputError(source_, std::string("--") + name, "missing: the job needs it");
        return *v;
    }
    void conflict(const char* a, const char* b, const std::string& why) const {
        if (has(a) && has(b)) throw InputError(source_, std::string("--") + b, "conflicts with --" + std::string(a) + ": " + why);
    }
    const std::string& source() const { return source_; }

private:
    const Parsed& p_;
    std::string source_;
};

std::string choice(const Flags& f, const char* name, std::initializer_list<const char*> allowed) {
    const std::string v = *f.str(name);
    std::string list;
    for (const char* a : allowed) {
        if (v == a) return v;
        list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw InputError(f.source(), std::string("--") + name, "expected one of " + list + ", got '" + v + "'");
}

Framework framework_of(const Flags& f, std::vector<ImportNote>& notes, std::string& why) {
    f.conflict("use-mcore-models", "use-legacy-models", "pick one model implementation");
    const std::string impl = f.str("transformer-impl").value_or("");
    if (!impl.empty()) choice(f, "transformer-impl", {"local", "transformer_engine"});
    if (f.has("use-legacy-models") || impl == "local" || f.has("checkpoint-activations") ||
        f.has("activations-checkpoint-method")) {
        why = "legacy Megatron-LM flags (--use-legacy-models, --transformer-impl local or the 2021 recompute flags)";
        return Framework::megatron_lm;
    }
    for (const char* core : {"use-mcore-models", "tp-comm-overlap", "overlap-grad-reduce", "use-torch-fsdp2",
                             "context-parallel-size"})
        if (f.has(core)) {
            why = std::string("--") + core + " is a Megatron-Core flag";
            return Framework::megatron_core;
        }
    if (impl == "transformer_engine") {
        why = "--transformer-impl transformer_engine";
        return Framework::megatron_core;
    }
    why = "no Megatron-Core flag: legacy Megatron-LM assumed";
    notes.push_back({NoteKind::assumed, "training.framework",
                     "no Megatron-Core flag (--use-mcore-models, --transformer-impl transformer_engine, "
                     "--overlap-grad-reduce, --tp-comm-overlap): legacy Megatron-LM assumed; "
                     "--set training.framework=megatron-core if the run used Megatron-Core"});
    return Framework::megatron_lm;
}

}  // namespace

ImportResult import_megatron(const std::string& text, const std::string& source, const ImportOptions& options) {
    Parsed p = parse_words(interop::shell_words(text, source), source);
    const Flags f(p, source);
    interop::JobDraft d;
    d.name = "megatron-import";
    d.source = "Megatron-LM flags (" + source + ")";
    d.header.push_back("Imported by `lostflops import megatron` from " + source + ".");

    // Model.
    const int layers = f.required("num-layers");
    const int hidden = f.required("hidden-size");
    const int heads = f.required("num-attention-heads");
    const int tp = f.num("tensor-model-parallel-size").value_or(1);
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
        add(d.model, "num_key_value_heads", std::to_string(f.num("num-query-groups").value_or(1)),
            "--num-query-groups");
    } else if (f.has("num-query-groups")) {
        p.notes.push_back({NoteKind::ignored, "--num-query-groups",
                           "Megatron uses it only with --group-query-attention"});
    }
    if (const auto kv = f.num("kv-channels"); kv && static_cast<int64_t>(*kv) * heads != hidden)
        p.notes.push_back({NoteKind::not_modelled, "--kv-channels",
                           "head dimension " + std::to_string(*kv) + " differs from hidden / heads; lostflops uses hidden / heads"});
    const int divisible_by = f.num("make-vocab-size-divisible-by").value_or(128);
    std::optional<int64_t> vocab;
    std::string vocab_from;
    if (const auto v = f.num("vocab-size")) {
        vocab = *v;
        vocab_from = "--vocab-size " + std::to_string(*v);
    } else if (f.str("tokenizer-type").value_or("") == "GPT2BPETokenizer") {
        vocab = 50257;
        vocab_from = "GPT-2 BPE's 50,257";
    }
    if (vocab) {
        const int64_t multiple = static_cast<int64_t>(divisible_by) * tp;
        const int64_t padded = (*vocab + multiple - 1) / multiple * multiple;
        add(d.model, "vocab_size", std::to_string(padded),
            vocab_from + " padded to a multiple of " + std::to_string(divisible_by) + " x tp " + std::to_string(tp));
    } else {
        const std::string tok = f.str("tokenizer-type").value_or("none given");
        add(d.model, "vocab_size", "", "vocab_size: the flags do not say (tokenizer " + tok +
                                           "); give --set model.vocab_size=N (padded as Megatron pads)");
        p.notes.push_back({NoteKind::assumed, "--tokenizer-type",
                           "vocabulary size unknown for tokenizer " + tok + ": set model.vocab_size"});
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

    // Cluster: what the launcher says; the rest is the user's.
    const int num_gpus = static_cast<int>(
        options.num_gpus > 0 ? options.num_gpus
                             : interop::gpu_count({p.nnodes, p.nproc_per_node}, source, "--nnodes",
                                                  "torchrun --nnodes x --nproc-per-node"));
    const int per_node = options.gpus_per_node > 0 ? options.gpus_per_node : p.nproc_per_node;
    add(d.cluster, "", "", "the flags do not name the hardware: add gpu and links, or --set cluster.preset=NAME");
    if (num_gpus > 0)
        add(d.cluster, "num_gpus", std::to_string(num_gpus),
            options.num_gpus > 0 ? "--num-gpus" : "torchrun --nnodes x --nproc-per-node");
    else
        add(d.cluster, "", "", "num_gpus: not in the flags (no torchrun --nnodes / --nproc-per-node); --set cluster.num_gpus=N");
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
                         "missing, and the data-parallel size that would default it is unknown (no torchrun world size)");
    }
    add(d.training, "micro_batch_size", std::to_string(micro));
    f.conflict("bf16", "fp16", "pick one precision");
    if (f.has("fp8-format")) {
        choice(f, "fp8-format", {"e4m3", "hybrid"});
        add(d.training, "precision", "fp8", "--fp8-format " + *f.str("fp8-format"));
    } else if (f.has("bf16")) {
        add(d.training, "precision", "bf16");
    } else if (f.has("fp16")) {
        add(d.training, "precision", "fp16");
    } else {
        throw InputError(source, "--bf16", "neither --bf16 nor --fp16: Megatron trains in fp32, which lostflops does not model");
    }
    if (const auto samples = f.num("train-samples")) {
        add(d.training, "train_tokens", std::to_string(static_cast<int64_t>(*samples) * seq), "--train-samples x seq");
    } else if (const auto iters = f.num("train-iters")) {
        add(d.training, "train_tokens", std::to_string(static_cast<int64_t>(*iters) * global * seq),
            "--train-iters x global batch x seq");
    }
    std::string framework_why;
    const Framework fw = framework_of(f, p.notes, framework_why);
    const bool flash = fw == Framework::megatron_core || f.has("use-flash-attn");
    add(d.training, "attention", flash ? "flash" : "unfused",
        fw == Framework::megatron_core ? "Transformer Engine's fused attention"
                                       : (flash ? "--use-flash-attn" : "no --use-flash-attn: Megatron's softmax path"));
    add(d.training, "framework", to_string(fw), framework_why);

    // Parallel plan.
    add(d.parallel, "tp", std::to_string(tp));
    add(d.parallel, "pp", std::to_string(pp));
    int vpp = 1;
    if (const auto per_stage = f.num("num-layers-per-virtual-pipeline-stage")) {
        if (layers % (pp * *per_stage) != 0)
            throw InputError(source, "--num-layers-per-virtual-pipeline-stage",
                             std::to_string(*per_stage) + " x pp " + std::to_string(pp) + " does not divide --num-layers " +
                                 std::to_string(layers));
        vpp = layers / (pp * *per_stage);
    }
    if (const auto v = f.num("virtual-pipeline-model-parallel-size")) {
        if (f.has("num-layers-per-virtual-pipeline-stage") && *v != vpp)
            throw InputError(source, "--virtual-pipeline-model-parallel-size",
                             "conflicts with --num-layers-per-virtual-pipeline-stage, which gives " + std::to_string(vpp));
        vpp = *v;
    }
    add(d.parallel, "vpp", std::to_string(vpp));
    add(d.parallel, "cp", std::to_string(cp));
    add(d.parallel, "ep", std::to_string(f.num("expert-model-parallel-size").value_or(1)));
    f.conflict("use-distributed-optimizer", "use-torch-fsdp2", "FSDP2 shards the optimizer itself");
    const int zero = f.has("use-torch-fsdp2") ? 3 : f.has("use-distributed-optimizer") ? 1 : 0;
    add(d.parallel, "zero", std::to_string(zero),
        zero == 3 ? "--use-torch-fsdp2" : zero == 1 ? "--use-distributed-optimizer" : "no --use-distributed-optimizer");
    add(d.parallel, "sequence_parallel", f.has("sequence-parallel") ? "true" : "false");

    // Recompute: --recompute-granularity, or the 2021-22 names.
    f.conflict("recompute-granularity", "recompute-activations", "--recompute-activations is --recompute-granularity selective");
    f.conflict("recompute-granularity", "checkpoint-activations", "--checkpoint-activations is --recompute-granularity full");
    f.conflict("recompute-activations", "checkpoint-activations", "selective and full recompute");
    f.conflict("recompute-method", "activations-checkpoint-method", "the same setting under two names");
    std::string granularity = f.has("recompute-activations") ? "selective" : f.has("checkpoint-activations") ? "full" : "none";
    if (f.has("recompute-granularity")) granularity = choice(f, "recompute-granularity", {"full", "selective"});
    const char* method_flag = f.has("activations-checkpoint-method") ? "activations-checkpoint-method" : "recompute-method";
    const char* layers_flag = f.has("recompute-num-layers")            ? "recompute-num-layers"
                              : f.has("activations-checkpoint-num-layers") ? "activations-checkpoint-num-layers"
                                                                           : "checkpoint-num-layers";
    std::string method;
    if (f.has(method_flag)) method = choice(f, method_flag, {"uniform", "block"});
    if (granularity == "selective" && !method.empty())
        throw InputError(source, std::string("--") + method_flag, "only with --recompute-granularity full");
    if (granularity == "full" && method.empty()) {
        if (!f.has("checkpoint-activations"))
            throw InputError(source, "--recompute-granularity",
                             "full needs --recompute-method uniform or block (Megatron-Core refuses it without)");
        method = "uniform";  // --checkpoint-activations: uniform chunks of --checkpoint-num-layers (default 1)
    }
    add(d.parallel, "recompute", granularity);
    if (granularity == "full") {
        const int n = f.num(layers_flag).value_or(1);
        if (method == "block") {
            add(d.parallel, "recompute_layers", std::to_string(n), "--recompute-method block --recompute-num-layers");
        } else if (n > 1) {
            p.notes.push_back({NoteKind::not_modelled, std::string("--") + layers_flag,
                               "uniform recompute in chunks of " + std::to_string(n) +
                                   " layers keeps fewer checkpoints; costed as every layer checkpointed"});
        }
    } else if (f.has(layers_flag)) {
        p.notes.push_back({NoteKind::ignored, std::string("--") + layers_flag, "only with full recompute"});
    }
    add(d.parallel, "overlap_grad_reduce", f.has("overlap-grad-reduce") ? "true" : "false");
    add(d.parallel, "tp_comm_overlap", f.has("tp-comm-overlap") ? "true" : "false");
    return {interop::render_yaml(d), std::move(p.notes)};
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
