// Job -> Megatron-LM / Megatron-Core launch script (interop.h): the inverse
// of megatron_import.cpp, flag by flag, so that importing the output gives
// the job back (tests/interop), laid out as Megatron-LM's own example
// scripts are (examples/gpt3/train_gpt3_175b_distributed.sh at d98e8a64:
// bash arrays of flags, torchrun "${DISTRIBUTED_ARGS[@]}" pretrain_gpt.py
// "${MODEL_ARGS[@]}" ...), which lets a comment follow each flag. Flag names
// from megatron/training/arguments.py (Megatron-LM core_r0.8.0;
// --attention-backend and --grad-reduce-in-bf16 as at d98e8a64, 2026-08).
// The vocabulary is written as padded; when it is not a multiple of 128 x
// tp, --make-vocab-size-divisible-by is lowered so that Megatron's padding
// leaves it as it is. What the plan does not say (data, tokenizer, learning
// rate, checkpoints, the rendezvous host) is a placeholder marked `# yours`
// (export_launch.h).
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "interop/export_launch.h"
#include "interop/launch_rules.h"
#include "interop/megatron_export_model.h"
#include "interop/megatron_export_parallel.h"
#include "lostflops/error.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/interop.h"
#include "job/human_format.h"

namespace lostflops {

namespace {

using interop::ExportLine;

struct Group {
    const char* name;
    std::vector<ExportLine> lines;
    void add(const std::string& flag, const std::string& value = "") { lines.push_back({value.empty() ? flag : flag + " " + value}); }
    void add(const std::string& flag, int64_t value) { add(flag, std::to_string(value)); }
    void yours(const std::string& flag, const std::string& why) { lines.push_back({flag, why}); }
};

void vocab_flags(const Job& job, Group& g, std::vector<ImportNote>& notes) {
    const int64_t vocab = job.model.vocab, tp = job.plan.tp;
    g.add("--vocab-size", vocab);
    // Megatron pads to a multiple of divisible_by x tp: keep 128 when the
    // vocabulary already is one, else the largest divisor that leaves it.
    if (vocab % (128 * tp) == 0) return;
    if (vocab % tp != 0)
        notes.push_back({NoteKind::not_modelled, "model.vocab_size",
                         "not a multiple of tp " + std::to_string(tp) + ": Megatron will pad it"});
    else
        g.add("--make-vocab-size-divisible-by", std::gcd(vocab / tp, int64_t{128}));
}

void training_flags(const Job& job, Group& g, std::vector<ImportNote>& notes) {
    const Training& t = job.training;
    g.add("--micro-batch-size", t.micro_batch);
    g.add("--global-batch-size", t.global_batch);
    if (const auto samples = interop::whole_count(t.train_tokens, static_cast<double>(t.seq_length)))
        g.lines.push_back({"--train-samples " + std::to_string(samples->count), "", interop::rounded_remark(*samples, "sequences")});
    else  // Megatron needs --train-samples or --train-iters (training_config.py TrainingConfig)
        g.lines.push_back({"# --train-samples SAMPLES", "the run's length in sequences (the job gives no training.train_tokens)"});
    if (t.precision == Precision::fp16) {
        g.add("--fp16");
    } else if (t.precision != Precision::fp32) {  // fp32: no flag, Megatron trains in fp32 without --bf16 / --fp16
        g.add("--bf16");
        if (t.precision == Precision::fp8) {
            g.add("--fp8-format", "hybrid");
            // --fp8-recipe (delayed is Megatron's default); a recipe Transformer
            // Engine does not run (lostflops/fp8_recipe.h te_runs) is not written.
            if (!fp8_recipe_row(t.fp8_recipe).te_runs)
                notes.push_back({NoteKind::not_modelled, "training.fp8_recipe",
                                 std::string(to_string(t.fp8_recipe)) +
                                     " is torchao's; Megatron has no such recipe: written with its default, "
                                     "delayed (priced differently)"});
            else if (t.fp8_recipe != Fp8Recipe::delayed)
                g.add("--fp8-recipe", to_string(t.fp8_recipe));
        }
    }
    // The data loader's workers when the job gives them (auto is Megatron's own default, 2).
    if (!t.data_loader_workers_auto) g.add("--num-workers", t.data_loader_workers);
    if (t.framework == Framework::megatron_core) {
        g.add("--use-mcore-models");
        g.add("--transformer-impl", "transformer_engine");
        if (t.attention == AttentionKernel::unfused) g.add("--attention-backend", "unfused");
    } else {
        g.add("--use-legacy-models");
        g.add("--transformer-impl", "local");
        if (t.attention == AttentionKernel::flash) g.add("--use-flash-attn");
    }
}

// The user's: data, tokenizer, the learning-rate schedule, checkpoints.
// Megatron-LM's arguments (training_config.py at d98e8a64): --lr has no
// default; --lr-decay-style one of constant, linear, cosine,
// inverse-square-root, WSD; --tokenizer-type one of its tokenizer classes.
void user_groups(const Job& job, std::vector<Group>& groups, std::vector<ImportNote>& notes) {
    Group data{"DATA_ARGS", {}};
    data.yours("--data-path DATA", "the prefix of your tokenized dataset (tools/preprocess_data.py)");
    data.yours("--tokenizer-type TOKENIZER_TYPE", "HuggingFaceTokenizer for a Hugging Face tokenizer");
    data.yours("--tokenizer-model TOKENIZER",
               "its name or folder; " + grouped(static_cast<double>(job.model.vocab)) + " tokens, the vocabulary priced");
    Group optim{"OPTIMIZER_ARGS", {}};
    optim.add("--optimizer", "adam");  // Adam's state is what the memory estimate holds
    if (job.training.optimizer != Optimizer::adam)
        notes.push_back({NoteKind::not_modelled, "training.optimizer",
                         std::string(to_string(job.training.optimizer)) +
                             ": written as Megatron's adam (fp32 state); its lower-precision state is not written"});
    optim.yours("--lr LR", "the peak learning rate");
    optim.yours("--min-lr MIN_LR", "the learning rate at the end of the decay");
    optim.yours("--lr-decay-style LR_DECAY_STYLE", "constant, linear, cosine, inverse-square-root or WSD");
    optim.yours("--lr-warmup-samples WARMUP_SAMPLES", "sequences of warm-up");
    Group ckpt{"CHECKPOINT_ARGS", {}};
    ckpt.yours("--save CHECKPOINTS", "where checkpoints go");
    ckpt.yours("--load CHECKPOINTS", "where a restart reads them");
    ckpt.yours("--save-interval SAVE_INTERVAL", "steps between checkpoints");
    if (interop::megatron_fsdp(job.plan)) ckpt.lines.push_back({"--ckpt-format fsdp_dtensor", "", "Megatron-FSDP asserts it"});
    groups.push_back(std::move(data));
    groups.push_back(std::move(optim));
    groups.push_back(std::move(ckpt));
}

// CUDA_DEVICE_MAX_CONNECTIONS (arguments.py validate_args at d98e8a64):
// with tp or cp > 1 on a device before Blackwell (compute capability < 10)
// Megatron asserts it is 1, but for FSDP (ZeRO 2 and 3 here, which asserts
// it is not 1) and the MoE communication overlap (a warning only).
std::string environment(const Job& job) {
    const ParallelPlan& p = job.plan;
    if ((p.tp > 1 || p.cp > 1) && p.zero < 2 && !p.moe_a2a_overlap && job.cluster.gpu.arch != "blackwell")
        return "export CUDA_DEVICE_MAX_CONNECTIONS=1  # Megatron-LM asserts it with tp or cp > 1 (arguments.py)\n\n";
    return "";
}

std::string render(const Job& job, const std::vector<Group>& groups, const std::string& program) {
    const interop::TorchrunShape shape = interop::torchrun_shape(job);
    const std::string where = shape.nodes > 1 ? fmt::format("Run this script on each of the {} nodes.", shape.nodes)
                                              : std::string("Run this script on the node.");
    std::string text = "#!/bin/bash\n" +
                       interop::export_header(job, "megatron",
                                              "the model's shape, the batch, the precision, the run's length and the "
                                              "parallel layout",
                                              shape.nodes > 1 ? "data, tokenizer, learning rate, checkpoints, the rendezvous host"
                                                              : "data, tokenizer, learning rate, checkpoints",
                                              "Left to Megatron-LM's defaults, yours to set as your model and run need: the "
                                              "model's numerics (--normalization, --position-embedding-type where the model does not rotate, "
                                              "--disable-bias-linear, --init-method-std), Adam's betas, weight decay, "
                                              "gradient clipping, logging and evaluation.",
                                              {where}) +
                       "\n" + environment(job);
    for (const Group& g : groups) {
        text += std::string(g.name) + "=(\n";
        for (const ExportLine& l : g.lines) text += "    " + interop::line_text(l) + "\n";
        text += ")\n\n";
    }
    text += "torchrun \"${DISTRIBUTED_ARGS[@]}\" " + program;
    for (size_t i = 1; i < groups.size(); ++i) text += std::string(" \\\n    \"${") + groups[i].name + "[@]}\"";
    return text + "\n";
}

}  // namespace

ExportResult export_megatron(const Job& job) {
    ExportResult out;
    const Training& t = job.training;
    if (t.framework == Framework::fsdp || t.framework == Framework::deepspeed || t.framework == Framework::hf)
        throw InputError(job.source, "training.framework",
                         std::string(to_string(t.framework)) + " is not a Megatron stack (lostflops export torchtitan for FSDP)");
    interop::check_launch_rules(job, launch_stack(t.framework));
    std::vector<Group> groups;
    groups.push_back({"DISTRIBUTED_ARGS", interop::torchrun_options(job)});
    std::vector<std::string> model_flags;
    interop::megatron_model_flags(job.model, model_flags, out.notes);
    // A --hybrid-layer-pattern builds a hybrid (Mamba) model: Megatron-LM's
    // pretrain_hybrid.py at d98e8a64; pretrain_gpt.py builds GPT models only.
    const bool hybrid = std::any_of(model_flags.begin(), model_flags.end(),
                                    [](const std::string& f) { return f.rfind("--hybrid-layer-pattern ", 0) == 0; });
    const std::vector<ExportLine> parallel = interop::megatron_parallel_flags(job, model_flags, out.notes);
    Group model{"MODEL_ARGS", {}};
    for (const std::string& f : model_flags) model.add(f);
    model.add("--seq-length", t.seq_length);
    model.add("--max-position-embeddings", t.seq_length);
    vocab_flags(job, model, out.notes);
    Group training{"TRAINING_ARGS", {}};
    training_flags(job, training, out.notes);
    groups.push_back(std::move(model));
    groups.push_back(std::move(training));
    groups.push_back({"PARALLEL_ARGS", parallel});
    user_groups(job, groups, out.notes);
    out.text = render(job, groups, hybrid ? "pretrain_hybrid.py" : "pretrain_gpt.py");
    return out;
}

}  // namespace lostflops
