// Job -> torchtitan job config TOML (interop.h): the inverse of
// torchtitan_import.cpp, in torchtitan's 2025 layout (job_config.py:
// [training] local_batch_size / global_batch_size / seq_len, [parallelism]
// degrees, [activation_checkpoint]), with the data-parallel shard degree
// written out (not -1) so that the GPU count travels with the file.
#include "interop/job_draft.h"
#include "interop/launch_rules.h"
#include "interop/torchtitan_flavors.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {

ExportResult export_torchtitan(const Job& job) {
    ExportResult out;
    const Training& t = job.training;
    const ParallelPlan& p = job.plan;
    const auto flavor = interop::flavor_of(job.model);
    if (!flavor)
        throw InputError(job.source, "model",
                         "not one of torchtitan's model flavours (" + interop::known_flavors() + ")");
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
    const int layers_per_stage = job.model.layers / (p.pp * p.vpp);
    std::string s;
    const auto line = [&s](const std::string& key, const std::string& value) { s += key + " = " + value + "\n"; };
    const auto q = [](const std::string& v) { return "\"" + v + "\""; };
    // Names are user text: escaped so that a newline in one cannot end the comment.
    s += "# " + interop::comment_text(job.name) + ": " + std::to_string(job.cluster.num_gpus) + " x " +
         interop::comment_text(job.cluster.gpu.name) + " (lostflops export torchtitan)\n";
    s += "[model]\n";
    line("name", q(flavor->name));
    line("flavor", q(flavor->flavor));
    if (t.precision == Precision::fp8) line("converters", "[\"float8\"]");
    s += "\n[training]\n";
    const int64_t local = p.pp > 1 ? t.global_batch / p.dp : t.micro_batch;
    line("local_batch_size", std::to_string(local));
    line("global_batch_size", std::to_string(t.global_batch));
    line("seq_len", std::to_string(t.seq_length));
    line("mixed_precision_param", q(t.precision == Precision::fp16   ? "float16"
                                    : t.precision == Precision::fp32 ? "float32"
                                                                     : "bfloat16"));
    if (t.train_tokens > 0) {
        const double steps = t.train_tokens / (static_cast<double>(t.global_batch) * t.seq_length);
        if (steps == static_cast<double>(static_cast<int64_t>(steps)))
            line("steps", std::to_string(static_cast<int64_t>(steps)));
        else
            out.notes.push_back({NoteKind::not_modelled, "training.train_tokens", "not a whole number of steps"});
    }
    s += "\n[parallelism]\n";
    line("data_parallel_replicate_degree", std::to_string(p.zero == 3 ? 1 : p.dp));
    line("data_parallel_shard_degree", std::to_string(p.zero == 3 ? p.dp : 1));
    line("tensor_parallel_degree", std::to_string(p.tp));
    line("enable_async_tensor_parallel", p.tp_comm_overlap ? "true" : "false");
    line("pipeline_parallel_degree", std::to_string(p.pp));
    if (p.pp > 1) {
        const PipelineSchedule sched = effective_schedule(p);
        line("pipeline_parallel_schedule", q(sched == PipelineSchedule::dualpipev    ? "DualPipeV"
                                             : sched == PipelineSchedule::interleaved ? "Interleaved1F1B"
                                                                                      : "1F1B"));
        line("pipeline_parallel_microbatch_size", std::to_string(t.micro_batch));
        // The embedding and the output not counted as layers (torchtitan's
        // default counts each as one): an even split stays even.
        line("pipeline_parallel_first_stage_less_layers", "0");
        line("pipeline_parallel_last_stage_less_layers", "0");
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
    out.text = std::move(s);
    return out;
}

}  // namespace lostflops
