// A job's plan -> MaxText's config keys (interop.h export_maxtext): the mesh
// of ici_*/dcn_*_parallelism, per_device_batch_size, max_target_length,
// num_pipeline_microbatches, num_layers_per_pipeline_stage and
// num_pipeline_repeats = vpp (with a pipeline), remat_policy (none, full, or
// for selective the job's named policy, minimal by default). The plan's ranks are laid out Megatron-style (tp fastest,
// then cp, dp, pp: ARCHITECTURE.md "Parallel groups on the topology") and a
// slice (Cluster::scaleup_gpus) holds consecutive ranks, so each axis is
// split, fastest first, into the part inside a slice (ICI) and the part
// across slices (DCN); an axis that neither fits in what is left of a slice
// nor spans whole slices cannot be written as a MaxText mesh. With
// `lostflops export maxtext --best` this is the search over mesh shapes: the
// best plan of the search, in ICI x DCN axes.
#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "interop/export_launch.h"
#include "interop/maxtext_export.h"
#include "lostflops/interop.h"
#include "lostflops/pipeline_schedules.h"

namespace lostflops {

namespace {

// MaxText's remat_policy for the plan (decoders.py get_remat_policy):
// none is no jax.checkpoint, full saves nothing; selective saves the named
// outputs of the job's parallel.remat_policy (lostflops/spec.h RematPolicy;
// minimal when the job names none), the two *_offloaded policies when the job
// offloads them (parallel.offload_activations), as import maxtext reads them.
std::string remat_policy_of(const ParallelPlan& p, std::vector<ImportNote>& notes) {
    if (p.recompute == Recompute::none) return "none";
    if (p.recompute == Recompute::full) return "full";
    const std::string named = p.remat_policy == RematPolicy::unset ? "minimal" : to_string(p.remat_policy);
    if (!p.offload_activations) return named;
    if (named == "minimal") return "minimal_offloaded";
    if (named == "save_qkv_proj") return "qkv_proj_offloaded";
    notes.push_back({NoteKind::not_modelled, "parallel.offload_activations",
                     "MaxText offloads only minimal's and save_qkv_proj's outputs (minimal_offloaded, "
                     "qkv_proj_offloaded): written as " + named + " in device memory"});
    return named;
}

struct Axis {
    const char* name;  // MaxText's axis name
    const char* key;   // the job's key of its degree
    int degree;
    int64_t ici = 1, dcn = 1;
};

}  // namespace

ExportResult export_maxtext(const Job& job) {
    const ParallelPlan& p = job.plan;
    ExportResult r;
    const int slice = job.cluster.scaleup_gpus();
    const int slices = std::max(1, job.cluster.num_gpus / std::max(1, slice));
    const bool fsdp = p.zero == 3;
    if (p.zero == 1 || p.zero == 2)
        r.notes.push_back({NoteKind::not_modelled, "parallel.zero",
                           fmt::format("ZeRO-{}: MaxText shards optimizer state only with parameters (fsdp axes); written as data axes", p.zero)});
    // Both data axes are written, the one the plan does not use as 1: a
    // config that sets the other (v4-22b.yml's ici_fsdp_parallelism: 64)
    // would otherwise keep it under the export and not be a mesh.
    Axis axes[] = {{"tensor", "parallel.tp", p.tp},
                   {"context", "parallel.cp", p.cp},
                   {fsdp ? "fsdp" : "data", "parallel.dp", p.dp},
                   {fsdp ? "data" : "fsdp", "parallel.dp", 1},
                   {"pipeline", "parallel.pp", p.pp}};
    int64_t left = slice;
    for (Axis& a : axes) {
        if (left % a.degree == 0) {
            a.ici = a.degree;
            left /= a.degree;
        } else if (a.degree % left == 0) {
            a.ici = left;
            a.dcn = a.degree / left;
            left = 1;
        } else {
            throw InputError(job.source, a.key,
                             fmt::format("{} parallelism of {} neither fits in the {} chips left of a slice of {} nor spans "
                                         "whole slices: not a MaxText mesh",
                                         a.name, a.degree, left, slice));
        }
    }
    // MaxText shards the residual stream over the tensor axis (base.yml
    // logical_axis_rules activation_embed -> tensor; import maxtext writes
    // sequence_parallel true): a plan priced without it is not what runs.
    if (p.tp > 1 && !p.sequence_parallel)
        r.notes.push_back({NoteKind::not_modelled, "parallel.sequence_parallel",
                           "MaxText's tensor axis always shards the activations between blocks (activation_embed -> "
                           "tensor): the plan was priced without; --set parallel.sequence_parallel=true prices what runs"});
    if (p.ep > 1)
        r.notes.push_back({NoteKind::not_modelled, "parallel.ep",
                           fmt::format("expert parallelism {}: MaxText's expert axis is a mesh axis of its own; not written", p.ep)});
    if (p.first_stage_layers >= 0 || p.last_stage_layers >= 0 || p.layout)
        r.notes.push_back({NoteKind::not_modelled, "parallel.first_stage_layers",
                           "a stage layout of its own: MaxText splits the layers evenly over its stages; not written"});
    if (!one_f_one_b_family(p.schedule))
        r.notes.push_back({NoteKind::not_modelled, "parallel.pipeline_schedule",
                           fmt::format("pipeline schedule {}: MaxText runs its own; not written", schedule_info(p.schedule).name)});
    std::string out = interop::export_header(
        job, "maxtext", "the mesh, the batch, the sequence, the run's length and the rematerialisation",
        "run name, output, data, tokenizer, learning rate",
        "The model is yours too: model_name or the model's keys in your config. Left to base.yml's "
        "defaults: the optimizer's other settings, checkpoints, evaluation.",
        {"Give them to MaxText's train after your config (KEY=VALUE) or add them to it."});
    // base.yml's defaults (AI-Hypercomputer/maxtext src/maxtext/configs/base.yml
    // @000b810: learning_rate 3e-5, the tfds dataset c4/en:3.1.0, steps
    // 150,001) would train on without a word: each is written.
    const auto yours = [&out](const char* key, const char* value, const char* why) {
        out += interop::line_text({fmt::format("{}: {}", key, value), why}) + "\n";
    };
    yours("run_name", "RUN", "the run's name");
    yours("base_output_directory", "OUTPUT", "where logs and checkpoints go (gs://...)");
    yours("dataset_path", "DATA", "your dataset (and dataset_type as it is stored)");
    yours("tokenizer_path", "TOKENIZER", "the model's tokenizer");
    yours("learning_rate", "LR", "the peak learning rate");
    out += fmt::format("num_slices: {}\n", slices);
    for (const Axis& a : axes) out += fmt::format("ici_{}_parallelism: {}\n", a.name, a.ici);
    for (const Axis& a : axes) out += fmt::format("dcn_{}_parallelism: {}\n", a.name, a.dcn);
    out += fmt::format("max_target_length: {}\n", job.training.seq_length);
    // MaxText's global batch = per_device_batch_size x chips x
    // gradient_accumulation_steps (the micro-batches of one step without a
    // pipeline; with one, the pipeline's micro-batches are MaxText's own).
    const int64_t micro = job.training.global_batch / (static_cast<int64_t>(p.dp) * job.training.micro_batch);
    const int64_t accum = micro > 1 && p.pp == 1 ? micro : 1;
    const double per_device = static_cast<double>(job.training.global_batch) / job.cluster.num_gpus / accum;
    out += fmt::format("per_device_batch_size: {}\n", per_device);
    if (accum > 1) out += fmt::format("gradient_accumulation_steps: {}\n", accum);
    if (p.pp > 1) {
        // pyconfig asserts num_pipeline_microbatches % stages == 0.
        if (micro % p.pp != 0)
            throw InputError(job.source, "training.micro_batch_size",
                             fmt::format("{} micro-batches a step on {} pipeline stages: MaxText's "
                                         "num_pipeline_microbatches must be a multiple of the stages",
                                         micro, p.pp));
        out += fmt::format("num_pipeline_microbatches: {}\n", micro);
        // The circular pipeline (types.py): stages x repeats x layers a stage
        // = the layers; vpp is the repeats, written with the layers a stage
        // (base.yml's default of 1 would make layers / stages repeats).
        const int64_t chunks = static_cast<int64_t>(p.pp) * p.vpp;
        if (job.model.layers % chunks != 0)
            throw InputError(job.source, "parallel.vpp",
                             fmt::format("{} layers over pp x vpp = {} x {}: MaxText's stages x num_pipeline_repeats "
                                         "must divide the layers",
                                         job.model.layers, p.pp, p.vpp));
        out += fmt::format("num_layers_per_pipeline_stage: {}\n", job.model.layers / chunks);
        out += fmt::format("num_pipeline_repeats: {}\n", p.vpp);
    }
    out += "remat_policy: " + remat_policy_of(p, r.notes) + "\n";
    const int64_t tokens_per_step = job.training.global_batch * job.training.seq_length;
    if (const auto steps = interop::whole_count(job.training.train_tokens, static_cast<double>(tokens_per_step)))
        out += interop::line_text({fmt::format("steps: {}", steps->count), "", interop::rounded_remark(*steps, "steps")}) +
               "\n";
    else
        out += interop::line_text({"# steps: STEPS", "the run's length (the job gives no training.train_tokens)"}) + "\n";
    if (job.training.precision == Precision::fp8) out += "quantization: fp8\n";
    r.text = out;
    return r;
}

}  // namespace lostflops
