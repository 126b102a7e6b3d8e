// Job -> torchtitan job config TOML (interop.h): the inverse of
// torchtitan_import.cpp, in torchtitan's 2025 layout (torchtitan/config/
// job_config.py before 9810191b, 2026-02-23: [training] local_batch_size /
// global_batch_size / seq_len / steps, [parallelism] degrees,
// [activation_checkpoint], [optimizer], [lr_scheduler], [model]
// hf_assets_path), with the data-parallel shard degree written out (not -1)
// so that the GPU count travels with the file. What the plan does not say is
// a placeholder marked `# yours` (export_launch.h): job_config.py's defaults
// for them (dataset "c4_test", the test tokenizer, lr 8e-4, 200 warm-up
// steps) would train without an error, so each is written.
#include <stdexcept>

#include <fmt/format.h>

#include "interop/export_launch.h"
#include "interop/launch_rules.h"
#include "interop/torchtitan_flavors.h"
#include "interop/torchtitan_stages.h"
#include "job/recompute_modules.h"
#include "lostflops/error.h"
#include "lostflops/fp8_recipe.h"
#include "lostflops/interop.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {

ExportResult export_torchtitan(const Job& job) {
    ExportResult out;
    const Training& t = job.training;
    const ParallelPlan& p = job.plan;
    const auto flavor = interop::flavor_of(job.model);
    if (!flavor) {
        if (const auto near = interop::flavor_near_miss(job.model))
            throw InputError(job.source, "model", "not one of torchtitan's model flavours: " + *near);
        throw InputError(job.source, "model",
                         "not one of torchtitan's model flavours (" + interop::known_flavors() + ")");
    }
    interop::check_launch_rules(job, LaunchStack::torchtitan);
    if (t.framework != Framework::fsdp)
        out.notes.push_back({NoteKind::not_modelled, "training.framework",
                             std::string(to_string(t.framework)) + ": torchtitan runs FSDP2 on an eager model"});
    if (p.tp > 1 && !p.sequence_parallel)
        out.notes.push_back({NoteKind::not_modelled, "parallel.sequence_parallel",
                             "torchtitan's tensor parallelism always shards the sequence"});
    if (t.attention != AttentionKernel::flash)
        out.notes.push_back({NoteKind::not_modelled, "training.attention", "torchtitan uses SDPA (flash)"});
    if (!p.overlap_grad_reduce)
        out.notes.push_back({NoteKind::not_modelled, "parallel.overlap_grad_reduce",
                             "FSDP2 and DDP always overlap the gradient reduction"});
    if (t.optimizer != Optimizer::adam)
        out.notes.push_back({NoteKind::not_modelled, "training.optimizer",
                             std::string(to_string(t.optimizer)) + ": written as AdamW (fp32 state)"});
    if (!p.grad_fp32)
        out.notes.push_back({NoteKind::not_modelled, "parallel.grad_fp32",
                             "false: not written ([training] mixed_precision_reduce is left at torchtitan's float32); "
                             "the gradient reduction was priced in 16 bits"});
    if (p.recompute == Recompute::selective && p.recompute_modules != kDefaultRecomputeModules)
        out.notes.push_back({NoteKind::not_modelled, "parallel.recompute_modules",
                             "not written: torchtitan's selective checkpointing picks its own operators "
                             "(selective_ac_option \"op\", read back as the default, core_attn)"});
    if (interop::moe_fp8_dispatch_priced(job))
        out.notes.push_back({NoteKind::not_modelled, "parallel.moe_fp8_dispatch",
                             "true: not written (the export writes no FP8 dispatch setting); the dispatch was priced at "
                             "1 byte an element"});
    // torchao's float8 converter scales tensorwise (its default) or rowwise;
    // its mx converter runs MXFP8 (mxfp8_cublas: torchtitan docs/mxfp8.md);
    // the others are not torchtitan's (lostflops/fp8_recipe.h torchao_runs).
    const bool mx = t.fp8_recipe == Fp8Recipe::mxfp8;
    if (t.precision == Precision::fp8 && !fp8_recipe_row(t.fp8_recipe).torchao_runs)
        out.notes.push_back({NoteKind::not_modelled, "training.fp8_recipe",
                             std::string(to_string(t.fp8_recipe)) +
                                 ": torchtitan's converters scale tensorwise, rowwise or MXFP8; written as tensorwise "
                                 "(priced differently)"});
    // torchtitan's mx converter asserts "TP not yet supported with
    // torch.compile for mxfp8" (components/quantization/mx.py MXConverter).
    if (t.precision == Precision::fp8 && mx && t.compile && p.tp > 1)
        out.notes.push_back({NoteKind::not_modelled, "training.fp8_recipe",
                             "mxfp8 with tp " + std::to_string(p.tp) +
                                 " and compile: torchtitan's mx converter refuses tensor parallelism under "
                                 "torch.compile; written as priced"});
    const int layers_per_stage = job.model.layers / (p.pp * p.vpp);
    const interop::TorchrunShape shape = interop::torchrun_shape(job);
    out.launch = interop::torchrun_line(job) + " \\\n    -m torchtitan.train --job.config_file CONFIG_FILE\n";
    std::string launch_lines = "Launch it with CONFIG_FILE this file's path, ";
    launch_lines += shape.nodes > 1 ? "on each of the " + std::to_string(shape.nodes) + " nodes (HOST: one of them):"
                                    : std::string("on the node:");
    std::vector<std::string> launch = {launch_lines};
    for (size_t at = 0, end; at < out.launch.size(); at = end + 1) {
        end = out.launch.find('\n', at);
        launch.push_back("  " + out.launch.substr(at, end - at));
    }
    std::string s = interop::export_header(
        job, "torchtitan",
        "the model flavour, the optimizer, the batch, the precision, the run's length, the parallel layout and "
        "activation checkpointing",
        shape.nodes > 1 ? "tokenizer, learning rate, data, the rendezvous host" : "tokenizer, learning rate, data",
        "Left to torchtitan's defaults, yours to set as your run needs: AdamW's betas and weight decay, the "
        "learning rate's decay, gradient clipping, checkpoints ([checkpoint] enable is false), metrics, validation.",
        launch);
    const auto line = [&s](const std::string& key, const std::string& value, const std::string& yours = "",
                           const std::string& remark = "") {
        s += interop::line_text({key + " = " + value, yours, remark}) + "\n";
    };
    const auto q = [](const std::string& v) { return "\"" + v + "\""; };
    s += "\n[model]\n";
    line("name", q(flavor->name));
    line("flavor", q(flavor->flavor));
    line("hf_assets_path", q("TOKENIZER"), "the folder of the model's tokenizer (scripts/download_hf_assets.py)");
    if (t.precision == Precision::fp8) line("converters", mx ? "[\"mx\"]" : "[\"float8\"]");
    if (t.precision == Precision::fp8 && mx) {
        s += "\n[mx]\n";
        line("recipe_name", q("mxfp8_cublas"));
    }
    if (t.precision == Precision::fp8 && t.fp8_recipe == Fp8Recipe::rowwise) {
        s += "\n[float8]\n";
        line("recipe_name", q("rowwise"));
    }
    s += "\n[optimizer]\n";
    line("name", q("AdamW"));  // Adam's state is what the memory estimate holds
    line("implementation", q(t.optimizer_kernel == OptimizerKernel::fused ? "fused" : "foreach"));
    line("lr", q("LR"), "the peak learning rate");
    s += "\n[lr_scheduler]\n";
    line("warmup_steps", q("WARMUP_STEPS"), "steps of warm-up");
    s += "\n[training]\n";
    line("dataset", q("DATA"), "a dataset torchtitan knows (c4, ...) or set dataset_path too");
    const int64_t local = p.pp > 1 ? t.global_batch / p.dp : t.micro_batch;
    line("local_batch_size", std::to_string(local));
    line("global_batch_size", std::to_string(t.global_batch));
    line("seq_len", std::to_string(t.seq_length));
    line("mixed_precision_param", q(t.precision == Precision::fp16   ? "float16"
                                    : t.precision == Precision::fp32 ? "float32"
                                                                     : "bfloat16"));
    if (const auto steps = interop::whole_count(t.train_tokens, static_cast<double>(t.global_batch) * t.seq_length))
        line("steps", std::to_string(steps->count), "", interop::rounded_remark(*steps, "steps"));
    else  // job_config.py's default is 10,000 steps
        s += interop::line_text({"# steps = STEPS", "the run's length (the job gives no training.train_tokens)"}) + "\n";
    s += "\n[parallelism]\n";
    // zero 3 with nothing to shard over (dp x cp = 1): torchtitan builds no FSDP
    // (parallel_dims.py fsdp_enabled: dp_shard > 1 or cp > 1), and zero does nothing here.
    if (p.zero == 3 && static_cast<int64_t>(p.dp) * p.cp == 1)
        out.notes.push_back({NoteKind::ignored, "parallel.zero",
                             "zero 3 over dp x cp = 1 GPU shards nothing: torchtitan runs without FSDP "
                             "(data_parallel_shard_degree 1), as zero 0, priced the same"});
    line("data_parallel_replicate_degree", std::to_string(p.zero == 3 ? 1 : p.dp));
    line("data_parallel_shard_degree", std::to_string(p.zero == 3 ? p.dp : 1));
    line("tensor_parallel_degree", std::to_string(p.tp));
    line("enable_async_tensor_parallel", p.tp_comm_overlap ? "true" : "false");
    line("pipeline_parallel_degree", std::to_string(p.pp));
    if (p.pp > 1) {
        // torchtitan's name for the schedule (its rules let through only the
        // schedules it runs: check_launch_rules above).
        const char* schedule = schedule_info(effective_schedule(p)).torchtitan_name;
        if (schedule == nullptr) throw std::logic_error("torchtitan export: a schedule torchtitan does not run (bug)");
        line("pipeline_parallel_schedule", q(schedule));
        line("pipeline_parallel_microbatch_size", std::to_string(t.micro_batch));
        // The embedding and the output not counted as layers (torchtitan's
        // default counts each as one): an even split stays even. First / last
        // stage layers (one stage a rank: the rule titan_stages) are the
        // middle ranks' count less these (pipeline_parallel.py
        // generate_llm_fqn_per_model_part: (layers + less) / pp per stage,
        // the ends less their weights).
        const interop::StageLess less = interop::torchtitan_stage_less(job);
        line("pipeline_parallel_first_stage_less_layers", std::to_string(less.first));
        line("pipeline_parallel_last_stage_less_layers", std::to_string(less.last));
        if (p.vpp > 1) {
            // ceil(layers / stages) per stage: torchtitan makes pp x vpp
            // stages of them (the rule titan_stages of lostflops/framework_rules.h).
            const int stages = p.pp * p.vpp;
            line("pipeline_parallel_layers_per_stage", std::to_string((job.model.layers + stages - 1) / stages));
        }
    } else if (p.vpp > 1) {
        out.notes.push_back({NoteKind::not_modelled, "parallel.vpp", "vpp without pp"});
    }
    line("context_parallel_degree", std::to_string(p.cp));
    if (p.cp > 1 && p.cp_comm_type == CpCommType::p2p) line("context_parallel_rotate_method", q("alltoall"));
    if (p.cp > 1 && p.cp_comm_type == CpCommType::a2a)
        out.notes.push_back({NoteKind::not_modelled, "parallel.cp_comm_type",
                             "a2a (Ulysses): torchtitan's context parallelism is a ring (rotate method allgather or "
                             "alltoall); written as its default, allgather"});
    if (p.ep > 1) line("expert_parallel_degree", std::to_string(p.ep));
    // torchtitan's expert parallelism sends tokens by all-to-all
    // ([parallelism] expert_parallel_comm_backend "standard", PyTorch's
    // all-to-all, or "deepep", DeepEP's kernels: pytorch/torchtitan#2107,
    // 2025-12-17, job_config.py); it has no all-gather dispatcher.
    if (p.ep > 1 && p.moe_dispatcher == MoeDispatcher::deepep) line("expert_parallel_comm_backend", q("deepep"));
    if (p.ep > 1 && p.moe_dispatcher == MoeDispatcher::allgather)
        out.notes.push_back({NoteKind::not_modelled, "parallel.moe_dispatcher",
                             "allgather: not written; torchtitan dispatches by all-to-all (expert_parallel_comm_backend "
                             "\"standard\", or \"deepep\" for DeepEP)"});
    if (p.ep > 1 && p.moe_capacity_factor > 0)
        out.notes.push_back({NoteKind::not_modelled, "parallel.moe_capacity_factor",
                             fmt::format("{}: not written (the export writes no expert capacity for torchtitan); the "
                                         "plan was priced with it",
                                         p.moe_capacity_factor)});
    // Priced keys with no torchtitan setting: named, not dropped in silence.
    if (p.offload_activations && p.recompute != Recompute::full)
        out.notes.push_back({NoteKind::not_modelled, "parallel.offload_activations",
                             "not written: torchtitan has no activation offload to host memory; the plan was priced "
                             "with the saved activations in host memory, and run as written they stay on the GPU"});
    if (p.zero == 3 && (p.zero_bucket_params >= 0 || p.zero_prefetch >= 0 || p.zero_reduce_bucket_params >= 0 ||
                        p.zero_regather_recompute >= 0 || p.zero_max_live_params >= 0))
        out.notes.push_back({NoteKind::not_modelled, "parallel.zero_*",
                             "FSDP engine settings have no torchtitan key (FSDP2 prefetches one module, unsharded per "
                             "block): not written; the plan was priced with them"});
    s += "\n[activation_checkpoint]\n";
    if (p.recompute == Recompute::none) {
        line("mode", q("none"));
    } else if (p.recompute == Recompute::selective) {
        line("mode", q("selective"));
        line("selective_ac_option", q("op"));
    } else if (p.recompute_layers < 0 || p.recompute_layers == layers_per_stage) {
        line("mode", q("full"));
    } else {
        // Every k-th block: layers per stage / k blocks recomputed.
        if (p.recompute_layers == 0 || layers_per_stage % p.recompute_layers != 0)
            throw InputError(job.source, "parallel.recompute_layers",
                             "torchtitan checkpoints every k-th block: the recomputed layers must divide the " +
                                 std::to_string(layers_per_stage) + " layers per stage");
        line("mode", q("selective"));
        line("selective_ac_option", q(std::to_string(layers_per_stage / p.recompute_layers)));
    }
    // torch.compile of each block (lostflops/spec.h Training::compile):
    // torchtitan's [compile] section (config/job_config.py Compile.enable;
    // the import reads compile.enable as not modelled).
    if (t.compile) {
        s += "\n[compile]\n";
        line("enable", "true");
    }
    out.text = std::move(s);
    return out;
}

}  // namespace lostflops
