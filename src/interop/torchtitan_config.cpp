// The keys of a torchtitan job config that lostflops does not read, sorted
// into notes (torchtitan_config.h): whole tables and single keys that do not
// change the cost of a step, and keys that change it but are not modelled
// (torchtitan/config/job_config.py, 2025; config_manager.py, Oct 2024).
#include "interop/torchtitan_config.h"

#include <algorithm>
#include <iterator>

#include "job/did_you_mean.h"

namespace lostflops::interop {

namespace {

// Tables whose keys do not change the cost of a step.
constexpr const char* kIgnoredTables[] = {"job", "metrics", "checkpoint", "profiling", "optimizer", "lr_scheduler",
                                          "validation", "fault_tolerance", "memory_estimation", "comm"};
// Keys of the read tables that do not change the cost.
constexpr const char* kIgnoredKeys[] = {
    "model.tokenizer_path", "model.hf_assets_path", "model.norm_type", "training.dataset", "training.dataset_path",
    "training.max_norm", "training.lr", "training.warmup_steps", "training.seed", "training.deterministic",
    "training.gc_freq", "training.use_cpu_offload_for_data", "parallelism.disable_loss_parallel",
    "training.disable_loss_parallel", "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
    "training.mixed_precision_reduce", "experimental.custom_model_path", "experimental.custom_import"};
constexpr const char* kNotModelledKeys[] = {
    "compile.components", "training.enable_cpu_offload",
    "parallelism.fsdp_reshard_after_forward", "training.fsdp_reshard_after_forward",
    "parallelism.enable_compiled_autograd", "experimental.enable_compiled_autograd",
    "float8.enable_fsdp_float8_all_gather", "float8.precompute_float8_dynamic_scale_for_fsdp",
    "float8.filter_fqns", "mx.filter_fqns", "mx.mxfp8_dim1_cast_kernel_choice", "mx.moe_fqns_prototype",
    "parallelism.pipeline_parallel_split_points", "experimental.pipeline_parallel_split_points"};

bool in(const char* const* list, size_t n, const std::string& s) {
    for (size_t i = 0; i < n; ++i)
        if (s == list[i]) return true;
    return false;
}

}  // namespace

std::vector<ImportNote> Config::leftovers() const {
    std::vector<ImportNote> notes;
    std::vector<std::string> known = asked_;
    known.insert(known.end(), std::begin(kIgnoredKeys), std::end(kIgnoredKeys));
    known.insert(known.end(), std::begin(kNotModelledKeys), std::end(kNotModelledKeys));
    for (const auto& [key, v] : t_) {
        if (std::find(used_.begin(), used_.end(), key) != used_.end()) continue;
        const std::string table = key.substr(0, key.find('.'));
        if (in(kIgnoredTables, std::size(kIgnoredTables), table) || in(kIgnoredKeys, std::size(kIgnoredKeys), key))
            notes.push_back({NoteKind::ignored, key, "does not change the cost of a step"});
        else if (in(kNotModelledKeys, std::size(kNotModelledKeys), key) && std::get_if<bool>(&v.v) &&
                 !std::get<bool>(v.v))
            notes.push_back({NoteKind::ignored, key, "off"});
        else if (in(kNotModelledKeys, std::size(kNotModelledKeys), key))
            notes.push_back({NoteKind::not_modelled, key, "changes the cost; lostflops does not model it"});
        else
            notes.push_back({NoteKind::unknown, key,
                             "not a torchtitan setting lostflops knows; not used" + did_you_mean(key, known)});
    }
    return notes;
}

}  // namespace lostflops::interop
