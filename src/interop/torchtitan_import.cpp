// torchtitan job config (TOML) -> job file (interop.h). Keys and defaults
// from torchtitan/config/job_config.py (pytorch/torchtitan, 2025) and, for the
// 2024 layout that kept the parallel degrees and batch_size under [training],
// torchtitan/config_manager.py (Oct 2024, the release of the published runs):
//   training.local_batch_size (2024: batch_size) sequences per data-parallel
//   rank per step; training.global_batch_size (default -1: local x dp; larger
//   = gradient accumulation); parallelism.data_parallel_shard_degree (default
//   -1: the GPUs left over) is FSDP's sharding group, replicate_degree (1)
//   plain DDP (both > 1: HSDP); tensor parallelism always shards the sequence
//   between blocks (SequenceParallel on the norms) and may run async TP;
//   pipeline_parallel_microbatch_size (default 1) is the micro-batch with pp;
//   multi-stage schedules (Interleaved1F1B, ...) put 2 stages on each rank
//   unless pipeline_parallel_layers_per_stage says; activation_checkpoint.mode
//   defaults to "selective" with selective_ac_option "2" (every 2nd block
//   fully checkpointed), "op" = per-operator selective recompute.
// Model flavours map to the presets of data/catalog/models.yaml with the same
// shape, with the flavour's overrides (src/interop/torchtitan_flavors.cpp:
// llama3, llama2, deepseek_v3, qwen3, llama4, gpt_oss).
#include <algorithm>
#include <cstdint>
#include <iterator>

#include "interop/job_draft.h"
#include "interop/toml_subset.h"
#include "interop/torchtitan_config.h"
#include "interop/torchtitan_command.h"
#include "interop/torchtitan_flavors.h"
#include "interop/torchtitan_stages.h"
#include "job/did_you_mean.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {

using interop::add;
using interop::Config;
using interop::TomlValue;

namespace {

// torchtitan's mx converter (components/quantization/mx.py MXConverter,
// registered "mx"): torchao's MXLinear with [mx] recipe_name
// (MXLinearConfig.from_recipe_name; docs/mxfp8.md recommends mxfp8_cublas on
// B200). An mxfp8 recipe on the hardware's MX tensor cores is
// training.fp8_recipe mxfp8; an emulated one runs 16-bit GEMMs and the fp4
// recipes are not modelled: noted, the job stays 16-bit.
bool read_mx_recipe(interop::Config& c, const std::string& source, std::vector<ImportNote>& notes) {
    const std::string recipe = c.text({"mx.recipe_name"}, "mxfp8_cublas");
    const bool known = recipe.rfind("mxfp8", 0) == 0 || recipe.rfind("mxfp4", 0) == 0 || recipe.rfind("nvfp4", 0) == 0;
    if (!known)
        throw InputError(source, "mx.recipe_name",
                         "expected one of torchao's MX recipes (mxfp8_cublas, mxfp8_cutlass, mxfp8_emulated, "
                         "mxfp4_*, nvfp4_*), got '" + recipe + "'");
    if (recipe.rfind("mxfp8", 0) == 0 && recipe.find("emulated") == std::string::npos) return true;
    notes.push_back({NoteKind::not_modelled, "mx.recipe_name",
                     recipe + ": only MXFP8 on MX tensor cores is priced; the linear layers priced in 16-bit"});
    return false;
}

// The job of a torchtitan configuration (TOML, or a command line's base and
// overrides); `gpus_from` says where options.num_gpus came from, `base` what
// a command line's base configuration was.
ImportResult import_table(interop::TomlTable table, const std::string& source, const ImportOptions& options,
                          std::vector<ImportNote> notes, const std::string& gpus_from, const std::string& base) {
    // torchtitan since 2026: tokens per micro-batch and the context length
    // (torchtitan/config/configs.py TrainingConfig) for local batch x seq_len.
    if (const auto it = table.find("training.max_context_length"); it != table.end()) {
        if (table.count("training.seq_len")) throw InputError(source, "training.max_context_length", "the same setting as training.seq_len; give one");
        table["training.seq_len"] = it->second;
        table.erase(it);
    }
    if (const auto it = table.find("training.num_tokens_per_microbatch_per_dp_rank"); it != table.end()) {
        const auto* tokens = std::get_if<int64_t>(&it->second.v);
        const auto seq_it = table.find("training.seq_len");
        const auto* seq = seq_it == table.end() ? nullptr : std::get_if<int64_t>(&seq_it->second.v);
        if (!tokens || !seq || *seq <= 0 || *tokens % *seq != 0)
            throw InputError(source, "training.num_tokens_per_microbatch_per_dp_rank",
                             "expected a multiple of the context length (training.max_context_length)");
        table["training.local_batch_size"] = interop::TomlValue{*tokens / *seq, it->second.line};
        table.erase(it);
    }
    Config c(std::move(table), source);
    interop::JobDraft d;
    d.name = "torchtitan-import";
    d.source = "torchtitan job config (" + source + ")";
    d.header.push_back("Imported by `lostflops import torchtitan` from " + source + ".");
    if (!base.empty()) d.header.push_back("torchtitan command line: " + base + " with the --section.key overrides given.");

    const std::string name = c.text({"model.name"}, "");
    const std::string flavor = c.text({"model.flavor"}, "");
    if (name.empty()) throw InputError(source, "model.name", "missing: the model (llama3, llama2, deepseek_v3, qwen3, llama4, gpt_oss)");
    if (flavor.empty()) throw InputError(source, "model.flavor", "missing: the model's size (8B, 70B, ...)");
    const auto known = interop::flavor_by_name(name, flavor);
    if (!known)
        throw InputError(source, "model.flavor",
                         "no lostflops preset for torchtitan's " + name + " '" + flavor + "' (known: " +
                             interop::known_flavors() + "); write the model section yourself" +
                             interop::flavor_did_you_mean(name, flavor));
    add(d.model, "preset", known->preset, "torchtitan " + name + " " + flavor);
    for (const auto& o : known->overrides) add(d.model, o.key, o.value, o.why);
    const int64_t layers = interop::flavor_shape(*known).layers;

    // Degrees: [parallelism] (2025) or [training] (2024).
    const int64_t replicate =
        c.integer({"parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree"}, 1);
    const int64_t shard_given = c.integer(
        {"parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree", "training.data_parallel_degree"},
        -1, -1);
    if (shard_given == 0) throw InputError(source, "parallelism.data_parallel_shard_degree", "expected -1 or a positive integer");
    const int64_t tp = c.integer({"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"}, 1);
    const int64_t pp = c.integer({"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree"}, 1);
    const int64_t cp = c.integer({"parallelism.context_parallel_degree", "experimental.context_parallel_degree"}, 1);
    const int64_t ep = c.integer({"parallelism.expert_parallel_degree"}, 1);
    // The routed experts' tensor parallelism: torchtitan of mid-2025
    // (aeb3a4b .. 9810191) had expert_tensor_parallel_degree, default 1, "either
    // etp = tp or etp = 1", no effect with ep 1 (job_config.py Parallelism);
    // today's (b5bcd76) experts are not tensor-parallel: etp 1.
    const int64_t etp = c.integer({"parallelism.expert_tensor_parallel_degree"}, 1);
    if (etp != 1 && etp != tp)
        throw InputError(source, "parallelism.expert_tensor_parallel_degree",
                         std::to_string(etp) + ": expected 1 or the tensor-parallel degree " + std::to_string(tp) +
                             " (torchtitan supports etp = tp or etp = 1)");
    const int64_t model_parallel = interop::gpu_count({replicate, tp, pp, cp}, source, "parallelism",
                                                      "data_parallel_replicate_degree x tp x pp x cp");
    int64_t num_gpus = options.num_gpus;
    int64_t shard = shard_given;
    if (shard < 0) {
        if (num_gpus <= 0)
            throw InputError(source, "parallelism.data_parallel_shard_degree",
                             "-1 (the GPUs left over) needs the GPU count: give --num-gpus N (torchtitan's NGPU x nodes)");
        if (num_gpus % model_parallel != 0)
            throw InputError(source, "parallelism.data_parallel_shard_degree",
                             std::to_string(num_gpus) + " GPUs are not a multiple of replicate x tp x pp x cp = " +
                                 std::to_string(model_parallel));
        shard = num_gpus / model_parallel;
    } else if (num_gpus > 0 && num_gpus != shard * model_parallel) {
        throw InputError(source, "parallelism.data_parallel_shard_degree",
                         "the degrees multiply to " + std::to_string(shard * model_parallel) + " GPUs, not --num-gpus " +
                             std::to_string(num_gpus));
    } else {
        num_gpus = interop::gpu_count({shard, model_parallel}, source, "parallelism",
                                      "the degrees (replicate x shard x tp x pp x cp)");
    }
    const int64_t dp = replicate * shard;

    add(d.cluster, "", "", "torchtitan's config does not name the hardware: add gpu and links, or --set cluster.preset=NAME");
    add(d.cluster, "num_gpus", std::to_string(num_gpus),
        shard_given < 0 ? gpus_from : "replicate x shard x tp x pp x cp degrees");
    if (options.gpus_per_node > 0) add(d.cluster, "gpus_per_node", std::to_string(options.gpus_per_node));

    const int64_t seq = c.integer({"training.seq_len"}, 2048);
    const int64_t local = c.integer({"training.local_batch_size", "training.batch_size"}, 8);
    const int64_t global_given = c.integer({"training.global_batch_size"}, -1, -1);
    const int64_t global = global_given > 0 ? global_given : local * dp;
    const int64_t micro = pp > 1 ? c.integer({"parallelism.pipeline_parallel_microbatch_size"}, 1) : local;
    add(d.training, "seq_length", std::to_string(seq));
    add(d.training, "global_batch_size", std::to_string(global),
        global_given > 0 ? "training.global_batch_size" : "local batch x dp " + std::to_string(dp));
    add(d.training, "micro_batch_size", std::to_string(micro),
        pp > 1 ? "parallelism.pipeline_parallel_microbatch_size" : "local batch");
    const std::string param = c.text({"training.mixed_precision_param"}, "bfloat16");
    bool fp8 = c.flag({"float8.enable_float8_linear"});
    bool mx_converter = false;  // torchtitan's mx converter (MXLinear)
    bool mxfp8 = false;         // ... with an mxfp8 recipe
    std::string converters_key;
    if (const TomlValue* conv = c.find({"model.converters"}, &converters_key)) {
        const auto names = toml_string_list(*conv);
        if (!names) throw InputError(source, converters_key, "expected an array of strings or a comma-separated string");
        for (const std::string& name : *names) {
            if (name == "float8") {
                fp8 = true;
            } else if (name == "mx") {
                mx_converter = true;
                mxfp8 = read_mx_recipe(c, source, notes);
            } else {
                notes.push_back({NoteKind::not_modelled, converters_key, "converter " + name});
            }
        }
    }
    if (!mx_converter && c.find({"mx.recipe_name"}))
        notes.push_back({NoteKind::ignored, "mx.recipe_name", "mx is not in model.converters"});
    // Both converters: each would swap the same linear layers; priced as mx.
    const bool float8_and_mx = fp8 && mxfp8;
    if (float8_and_mx) {
        notes.push_back({NoteKind::not_modelled, converters_key, "float8 and mx together: priced as mx (MXFP8)"});
        fp8 = false;
    }
    if (param != "bfloat16" && param != "float16" && param != "float32")
        throw InputError(source, "training.mixed_precision_param", "expected bfloat16, float16 or float32, got '" + param + "'");
    // float32: priced at the TF32 peak (job/gpu_parse.cpp), which PyTorch's
    // own matmuls reach only with TF32 allowed (NVIDIA's containers set
    // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1; plain PyTorch defaults to full fp32).
    if (param == "float32" && !fp8) {
        add(d.training, "precision", "fp32", "training.mixed_precision_param float32");
        notes.push_back({NoteKind::assumed, "training.mixed_precision_param",
                         "float32 GEMMs priced at the TF32 peak: needs TF32 allowed "
                         "(torch.backends.cuda.matmul.allow_tf32, or NVIDIA's PyTorch containers)"});
    } else {
        add(d.training, "precision", fp8 || mxfp8 ? "fp8" : param == "float16" ? "fp16" : "bf16");
    }
    if (mxfp8) add(d.training, "fp8_recipe", "mxfp8", "converter mx, mx.recipe_name " + c.text({"mx.recipe_name"}, "mxfp8_cublas"));
    // float8.recipe_name (torchtitan config: None is torchao's tensorwise
    // dynamic scaling; rowwise; rowwise_with_gw_hp keeps the weight gradient's
    // GEMM in 16-bit).
    const std::string recipe = c.text({"float8.recipe_name"}, "tensorwise");
    if (recipe != "tensorwise" && recipe != "rowwise" && recipe != "rowwise_with_gw_hp")
        throw InputError(source, "float8.recipe_name",
                         "expected tensorwise, rowwise or rowwise_with_gw_hp, got '" + recipe + "'");
    if (fp8) {
        const bool gw_hp = recipe == "rowwise_with_gw_hp";
        add(d.training, "fp8_recipe", gw_hp ? "rowwise" : recipe,
            c.find({"float8.recipe_name"}) ? "float8.recipe_name " + recipe : "torchao's default, tensorwise dynamic scaling");
        if (gw_hp)
            notes.push_back({NoteKind::not_modelled, "float8.recipe_name",
                             "rowwise_with_gw_hp: the weight gradient's GEMM in 16-bit; priced as rowwise"});
    } else if (c.find({"float8.recipe_name"})) {
        notes.push_back({NoteKind::ignored, "float8.recipe_name",
                         recipe + (float8_and_mx ? ": priced as mx" : ": float8 is off")});
    }
    // steps (below 2^31) x global x seq can pass int64: checked in
    // double against training.train_tokens' range (1e18) first.
    if (const int64_t steps = c.integer({"training.steps"}, 0, 0); steps > 0) {
        if (static_cast<double>(steps) * static_cast<double>(global) * static_cast<double>(seq) > 1e18)
            throw InputError(source, "training.steps",
                             std::to_string(steps) + " steps x " + std::to_string(global) + " sequences x " +
                                 std::to_string(seq) + " tokens is more than 1e18 tokens (training.train_tokens' range)");
        add(d.training, "train_tokens", std::to_string(steps * global * seq), "training.steps x global batch x seq");
    } else if (c.find({"training.steps"})) {
        notes.push_back({NoteKind::ignored, "training.steps", "0: a run of no steps gives no training.train_tokens"});
    }
    add(d.training, "attention", "flash", "PyTorch SDPA (flash)");
    add(d.training, "framework", "fsdp", "torchtitan: FSDP2 on an eager model");
    {
        // AdamW's kernel (torchtitan config/job_config.py Optimizer.implementation:
        // for-loop, foreach or fused, default fused): foreach holds a temporary
        // the size of the fp32 parameters (lostflops/spec.h OptimizerKernel),
        // so it changes the memory; the rest of [optimizer] does not.
        // optimizer.name: torchtitan builds "Adam" or "AdamW" and raises
        // NotImplementedError on any other name (components/optimizer.py
        // build_optimizers, optimizer_classes; case-sensitive); both keep
        // Adam's state, which is what lostflops prices.
        const std::string optimizer = c.text({"optimizer.name"}, "AdamW");
        if (optimizer != "Adam" && optimizer != "AdamW")
            throw InputError(c.source(), "optimizer.name",
                             "expected Adam or AdamW (torchtitan's optimizers), got '" + optimizer + "'" +
                                 did_you_mean(optimizer, {"Adam", "AdamW"}));
        const std::string impl = c.text({"optimizer.implementation"}, "fused");
        if (impl == "foreach") {
            add(d.training, "optimizer_kernel", "foreach", "optimizer.implementation foreach");
        } else if (impl == "for-loop") {
            add(d.training, "optimizer_kernel", "foreach", "optimizer.implementation for-loop");
            notes.push_back({NoteKind::not_modelled, "optimizer.implementation",
                             "for-loop (one tensor at a time): priced as foreach"});
        } else if (impl != "fused") {
            throw InputError(c.source(), "optimizer.implementation",
                             "expected for-loop, foreach or fused, got '" + impl + "'");
        }
    }
    // torch.compile of each block (lostflops/spec.h Training::compile; 2024's
    // training.compile, 2025's [compile] enable).
    if (c.flag({"compile.enable", "training.compile"})) add(d.training, "compile", "true", "compile.enable");

    add(d.parallel, "tp", std::to_string(tp));
    add(d.parallel, "pp", std::to_string(pp));
    const std::string schedule =
        c.text({"parallelism.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule"}, "1F1B");
    int64_t vpp = 1;
    const bool multi_stage = schedule == "Interleaved1F1B" || schedule == "LoopedBFS" ||
                             schedule == "InterleavedZeroBubble" || schedule == "ZBVZeroBubble" ||
                             schedule == "DualPipeV";
    const int64_t layers_per_stage = c.integer({"parallelism.pipeline_parallel_layers_per_stage"}, 0, 0);
    // torchtitan counts the embedding and the output as this many layers each (default 1) when it cuts
    // stages (pipeline_parallel.py _get_pipeline_metadata): ceil((layers + first + last) / layers_per_stage).
    const int64_t first_less = c.integer({"parallelism.pipeline_parallel_first_stage_less_layers"}, 1, 0);
    const int64_t last_less = c.integer({"parallelism.pipeline_parallel_last_stage_less_layers"}, 1, 0);
    if (pp > 1 && multi_stage) {
        if (layers_per_stage > 0) {
            const int64_t stages = (layers + first_less + last_less + layers_per_stage - 1) / layers_per_stage;
            if (stages % pp != 0)
                throw InputError(source, "parallelism.pipeline_parallel_layers_per_stage",
                                 std::to_string(stages) + " stages of " + std::to_string(layers_per_stage) +
                                     " layers (" + std::to_string(layers) + " layers, the embedding and output " +
                                     "counted as " + std::to_string(first_less) + " and " +
                                     std::to_string(last_less) + ") are not divisible by pp " + std::to_string(pp));
            vpp = stages / pp;
            if (first_less + last_less > 0 || layers % stages != 0)
                notes.push_back({NoteKind::assumed, "parallelism.pipeline_parallel_layers_per_stage",
                                 std::to_string(layers) + " layers on " + std::to_string(stages) +
                                     " stages: costed with lostflops' default split (fewer layers on the end "
                                     "stages), not torchtitan's exact one"});
        } else {
            vpp = 2;
            notes.push_back({NoteKind::assumed, "parallelism.pipeline_parallel_schedule",
                             schedule + " without pipeline_parallel_layers_per_stage: 2 stages per rank (torchtitan's default)"});
        }
    }
    if (pp > 1 && !multi_stage) interop::torchtitan_stage_keys(layers, pp, first_less, last_less, d.parallel, notes);
    // Ours by torchtitan's name (lostflops/pipeline_schedules.h); the 1F1B
    // family follows vpp.
    const ScheduleInfo* ours = nullptr;
    for (const ScheduleInfo& si : kSchedules)
        if (si.torchtitan_name != nullptr && schedule == si.torchtitan_name) ours = &si;
    if (pp > 1 && ours != nullptr && !one_f_one_b_family(ours->id)) add(d.parallel, "pipeline_schedule", ours->name);
    if (pp > 1 && ours == nullptr)
        notes.push_back({NoteKind::not_modelled, "parallelism.pipeline_parallel_schedule",
                         schedule + ": costed as " + schedule_info(schedule_for_vpp(kDefaultSchedule, multi_stage ? 2 : 1)).words});
    add(d.parallel, "vpp", std::to_string(vpp));
    add(d.parallel, "cp", std::to_string(cp));
    {
        // PyTorch's context_parallel rotates K/V by all-gather (torchtitan's
        // default) or by all-to-all passes along the ring (p2p's schedule).
        const std::string rotate = c.text({"parallelism.context_parallel_rotate_method",
                                           "experimental.context_parallel_rotate_method"}, "allgather");
        if (rotate != "allgather" && rotate != "alltoall")
            throw InputError(c.source(), "parallelism.context_parallel_rotate_method",
                             "expected allgather or alltoall, got '" + rotate + "'");
        if (cp > 1)
            add(d.parallel, "cp_comm_type", rotate == "alltoall" ? "p2p" : "allgather",
                "context_parallel_rotate_method " + rotate);
    }
    add(d.parallel, "ep", std::to_string(ep));
    // Left out, a job's etp is its tp (Megatron-Core's default): write torchtitan's.
    if (ep > 1)
        add(d.parallel, "etp", std::to_string(etp),
            etp > 1 ? "expert_tensor_parallel_degree (torchtitan of mid-2025; today's has none)"
                    : "torchtitan's routed experts are not tensor-parallel");
    else if (etp > 1)
        notes.push_back({NoteKind::ignored, "parallelism.expert_tensor_parallel_degree",
                         "no effect with expert_parallel_degree 1 (torchtitan job_config.py)"});
    {
        // The tokens' transport: PyTorch's all-to-all ("standard") or DeepEP's
        // kernels ("deepep"; pytorch/torchtitan#2107, 2025-12-17).
        const std::string backend = c.text({"parallelism.expert_parallel_comm_backend"}, "standard");
        if (backend != "standard" && backend != "deepep")
            throw InputError(c.source(), "parallelism.expert_parallel_comm_backend",
                             "expected standard or deepep, got '" + backend + "'");
        if (ep > 1 && backend == "deepep")
            add(d.parallel, "moe_dispatcher", "deepep", "expert_parallel_comm_backend deepep");
    }
    // FSDP2 runs when dp_shard > 1 or cp > 1 (parallel_dims.py fsdp_enabled), over dp_shard x cp.
    add(d.parallel, "zero", shard > 1 || cp > 1 ? "3" : "0",
        shard > 1 ? "FSDP2 full shard over the shard degree" : cp > 1 ? "FSDP2 full shard over cp" : "DDP replicas");
    if (shard > 1 && replicate > 1)
        notes.push_back({NoteKind::not_modelled, "parallelism.data_parallel_replicate_degree",
                         "HSDP: costed as ZeRO-3 over all " + std::to_string(dp) + " data-parallel ranks"});
    add(d.parallel, "sequence_parallel", tp > 1 ? "true" : "false", "torchtitan's TP shards the sequence between blocks");

    const std::string mode = c.text({"activation_checkpoint.mode"}, "selective");
    const std::string option = c.text({"activation_checkpoint.selective_ac_option"}, "2");
    if (mode == "none") {
        add(d.parallel, "recompute", "none");
    } else if (mode == "full") {
        add(d.parallel, "recompute", "full");
    } else if (mode == "selective") {
        if (option == "op") {
            add(d.parallel, "recompute", "selective", "selective_ac_option op");
        } else {
            const int k = interop::positive_int(option, source, "activation_checkpoint.selective_ac_option");
            add(d.parallel, "recompute", "full", "selective_ac_option " + option + ": every " + option + "-th block");
            const int64_t per_stage = layers / (pp * vpp);
            if (per_stage % k != 0)
                notes.push_back({NoteKind::not_modelled, "activation_checkpoint.selective_ac_option",
                                 "every " + option + "-th of " + std::to_string(per_stage) +
                                     " blocks per stage: costed as " + std::to_string(per_stage / k)});
            add(d.parallel, "recompute_layers", std::to_string(per_stage / k), "blocks per stage / " + option);
        }
    } else {
        throw InputError(source, "activation_checkpoint.mode", "expected none, selective or full, got '" + mode + "'");
    }
    add(d.parallel, "overlap_grad_reduce", "true", "FSDP2 / DDP overlap the gradient reduction with backward");
    add(d.parallel, "tp_comm_overlap",
        c.flag({"parallelism.enable_async_tensor_parallel", "training.enable_async_tensor_parallel"}) ? "true" : "false",
        "enable_async_tensor_parallel");

    const auto left = c.leftovers();
    notes.insert(notes.end(), left.begin(), left.end());
    if (options.strict) interop::refuse_unmodelled(notes, source);
    std::string yaml = interop::render_yaml(d);
    return {yaml, std::move(notes)};
}

}  // namespace

ImportResult import_torchtitan(const std::string& text, const std::string& source, const ImportOptions& options) {
    if (interop::looks_like_toml(text))
        return import_table(interop::parse_toml_subset(text, source), source, options, {}, "--num-gpus", "");
    std::vector<ImportNote> notes;
    interop::TorchtitanCommand cmd = interop::torchtitan_command(text, source, options, notes);
    ImportOptions o = options;
    std::string gpus_from = "--num-gpus";
    if (o.num_gpus <= 0 && cmd.num_gpus) {
        o.num_gpus = *cmd.num_gpus;
        gpus_from = cmd.gpus_from;
    }
    return import_table(std::move(cmd.table), source, o, std::move(notes), gpus_from, cmd.base);
}

}  // namespace lostflops
