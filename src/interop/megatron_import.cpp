// Megatron-LM / Megatron-Core launch -> job file (interop.h): the training
// command (megatron_command.h), its flags as argparse reads them
// (megatron_args.h), mapped to the job's keys: the model (megatron_model.h),
// the cluster from the launcher, training, the plan (megatron_plan.h). Flag
// meanings and defaults from megatron/training/arguments.py (NVIDIA/
// Megatron-LM d98e8a64): --global-batch-size defaults to micro-batch x
// data-parallel size;
// embeddings are tied unless --untie-embeddings-and-output-weights;
// --attention-backend unfused / local and --transformer-impl local run
// Megatron's unfused softmax attention, the others Transformer Engine's
// fused / flash kernels.
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "interop/job_draft.h"
#include "interop/megatron_args.h"
#include "interop/megatron_command.h"
#include "interop/megatron_mimo.h"
#include "interop/megatron_model.h"
#include "interop/megatron_plan.h"
#include "lostflops/error.h"
#include "lostflops/spec.h"
#include "lostflops/interop.h"

namespace lostflops {

using interop::add;

namespace {

// --train-samples / --train-iters: argparse's int has no bound; a count past
// 1e18 would pass training.train_tokens' range (1e18) on its own.
constexpr int64_t kMaxRunCount = 1'000'000'000'000'000'000;

std::string precision(const interop::MegatronArgs& f) {
    if (f.has("bf16") && f.has("fp16")) throw InputError(f.source(), "--fp16", "conflicts with --bf16: pick one precision");
    if (f.has("fp8-format")) return "fp8";
    if (f.has("bf16")) return "bf16";
    if (f.has("fp16")) return "fp16";
    return "fp32";  // Megatron's default: megatron/training/arguments.py "args.params_dtype = torch.float"
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

    const int tp = f.num("tensor-model-parallel-size").value_or(1);
    const std::string program = cmd.program.substr(cmd.program.rfind('/') == std::string::npos ? 0 : cmd.program.rfind('/') + 1);
    // Megatron-LM's MIMO trainer builds its language model from --model-provider (megatron_mimo.h).
    std::optional<interop::MimoRun> mimo;
    if (interop::is_mimo_trainer(cmd.program)) mimo = interop::mimo_run(cmd.words, source, notes);
    int layers = 0;
    if (mimo) {
        layers = interop::mimo_model(*mimo->provider, d);
    } else {
        layers = interop::megatron_model(f, d, notes, tp, program == "pretrain_bert.py");
        interop::megatron_layer_keys(f, layers, d, notes);
    }

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
    const int seq = mimo ? mimo->seq_length : f.required(seq_flag);
    if (f.has("decoder-seq-length") && !multimodal)
        notes.push_back({NoteKind::ignored, "--decoder-seq-length", "the decoder of an encoder-decoder model"});
    const int micro = f.required("micro-batch-size");
    const int pp = f.num("pipeline-model-parallel-size").value_or(1);
    const int cp = f.num("context-parallel-size").value_or(1);
    add(d.training, "seq_length", std::to_string(seq),
        mimo                                 ? mimo->seq_from
        : std::string(seq_flag) == "seq-length" ? ""
                                                : std::string("--") + seq_flag);
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
    else if (prec == "fp32") add(d.training, "precision", "fp32", "neither --bf16 nor --fp16: Megatron trains in fp32");
    else add(d.training, "precision", prec);
    // --fp8-recipe (megatron/training/arguments.py: delayed by default;
    // tensorwise, blockwise, mxfp8; custom, a user's recipe class).
    if (f.has("fp8-recipe")) {
        const std::string recipe = f.choice("fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8", "custom"});
        if (prec != "fp8")
            notes.push_back({NoteKind::ignored, "--fp8-recipe", recipe + ": fp8 is off (no --fp8-format)"});
        else if (recipe == "custom")
            notes.push_back({NoteKind::not_modelled, "--fp8-recipe",
                             "custom: a user's recipe class; priced as delayed scaling"});
        else
            add(d.training, "fp8_recipe", recipe, "--fp8-recipe " + recipe);
    }
    // A run's length passes 2^31 sequences (14.8 T tokens of 4,096 is 3.6 G):
    // read as 64-bit, the tokens checked against training.train_tokens' range.
    const auto run_tokens = [&](const char* flag, int64_t count, int64_t per_count, const char* why) {
        if (static_cast<double>(count) * static_cast<double>(per_count) > 1e18)
            throw InputError(source, std::string("--") + flag,
                             fmt::format("{} x {} tokens is more than 1e18 (training.train_tokens' range)", count,
                                         per_count));
        add(d.training, "train_tokens", std::to_string(count * per_count), why);
    };
    if (const auto samples = f.str("train-samples")) {
        run_tokens("train-samples", interop::positive_int64(*samples, source, "--train-samples", kMaxRunCount), seq,
                   "--train-samples x seq");
    } else if (const auto iters = f.str("train-iters")) {
        run_tokens("train-iters", interop::positive_int64(*iters, source, "--train-iters", kMaxRunCount), global * seq,
                   "--train-iters x global batch x seq");
    }
    std::string framework_why;
    const Framework fw = interop::megatron_framework(f, notes, framework_why);
    std::string attention = "flash", attention_why;
    if (prec == "fp32") {
        // Flash and fused attention take only bf16/fp16 (job/job.cpp, attention: auto).
        attention = "unfused";
        attention_why = "fp32: flash and fused attention kernels take only bf16/fp16 inputs";
    } else if (fw == Framework::megatron_lm) {
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
    // The data loader's workers (docs/data-loader.md); its CPU time is not in a script.
    // A value the script does not state keeps auto: it prices nothing
    // without the loader's time, which no script gives.
    if (f.has("num-workers")) {
        const auto v = f.known_str("num-workers");
        if (!v) {
            notes.push_back({NoteKind::assumed, "--num-workers",
                             "its value is not in the script: training.data_loader_workers stays auto (2)"});
        } else {
            const bool digits = !v->empty() && v->size() <= 4 &&
                                v->find_first_not_of("0123456789") == std::string::npos;
            if (!digits || std::stoi(*v) > kMaxDataLoaderWorkers)
                throw InputError(source, "--num-workers",
                                 "'" + *v + "': expected a whole number of workers, 0 to " +
                                     std::to_string(kMaxDataLoaderWorkers));
            add(d.training, "data_loader_workers", std::to_string(std::stoi(*v)), "--num-workers");
        }
    }
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
