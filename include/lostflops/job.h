// Loading a job: YAML or JSON (JSON is valid YAML) with sections model,
// cluster, training, parallel; presets from the built-in catalogs; `hf_config:`
// pointing at a Hugging Face config.json; `--set section.key=value` overrides.
//
// Every check of job/validate.cpp runs here, so a returned Job is consistent
// (divisibility of heads, GPUs and batch by the plan; positive sizes; fits in
// int ranges). Any problem throws InputError naming the file and the key.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

// Reads and validates a job file ("-": standard input). overrides:
// "section.key=value" strings, applied before the sections are read; an error
// about a key an override gave (or lies under, or a section it created) has
// InputError::file() "--set section.key=value", not the job file. An empty
// value is an error ("key=null" falls back to the default).
Job load_job(const std::string& path, const std::vector<std::string>& overrides = {});

// Same, from text already in memory; `source` names it in error messages.
Job parse_job(const std::string& text, const std::string& source,
              const std::vector<std::string>& overrides = {});

// The built-in default job (Llama-3-70B on 1,024 H100 SXM, DGX H100 topology).
Job default_job(const std::vector<std::string>& overrides = {});
const std::string& default_job_text();

// A job for the search (`lostflops search`): the parallel section may be
// absent or partial; the keys it gives are the settings the search may not
// change (fixed_keys, in file order); the plan is not checked against the
// model and cluster (the search enumerates the plans that pass). Model,
// cluster and training are checked as load_job checks them.
struct SearchJob {
    Job job;
    std::vector<std::string> fixed_keys;  // keys present under `parallel:`
    bool micro_batch_given = false;       // training.micro_batch_size present (the search varies it)
};
enum class SearchJobPlan { fixed_where_given, ignore };
SearchJob load_search_job(const std::string& path, const std::vector<std::string>& overrides = {},
                          SearchJobPlan plan = SearchJobPlan::fixed_where_given);
SearchJob parse_search_job(const std::string& text, const std::string& source,
                           const std::vector<std::string>& overrides, SearchJobPlan plan);
// The built-in default job's model, cluster and training; its plan ignored.
SearchJob default_search_job(const std::vector<std::string>& overrides = {});

// A setting that is accepted but does nothing, or costs much, under this job
// (ZeRO with dp = 1, a TP group spanning nodes, sequence parallelism with
// tp = 1, pipeline stages with unequal layer counts, ...; the list is in
// docs/job-file.md and src/job/job_warnings.cpp). `key` is the dotted key
// the warning is about ("parallel.zero"); `message` says why, with the job's numbers.
struct JobWarning {
    std::string key;
    std::string message;
};
std::vector<JobWarning> job_warnings(const Job& job);
// What the model reader said about the model's keys (Model::not_modelled), as
// warnings keyed "model.KEY": "not modelled: why", or the reading it made.
std::vector<JobWarning> model_warnings(const Model& m);

// The loader's value of parallel.overlap_grad_reduce / tp_comm_overlap when
// the job leaves the key out, for plan `p` under `fw` on GPU architecture
// `arch` (job/job_sections.cpp states the sources).
bool default_overlap_grad_reduce(const ParallelPlan& p, Framework fw);
bool default_tp_comm_overlap(const ParallelPlan& p, Framework fw, const std::string& arch);
// A plan derived from a loaded job by changing its fields (the advice's
// changes) keeps the job's overlap knobs; loaded again with --set for the
// changed fields, a knob the job left out takes the default for the new plan.
// The --set arguments that keep them: each knob of `job` that is not the
// loader's default for its plan ({"parallel.tp_comm_overlap=false"}, ...).
std::vector<std::string> overlap_pins(const Job& job);

// The attention kernel `training.attention: auto` resolves to, from the job's
// top-level `source:` text: unfused softmax for runs dated 2015-2022 (before
// FlashAttention was in Megatron-LM and PyTorch), flash otherwise.
AttentionKernel default_attention(const std::string& cited_source);
// `framework: auto`: the stack the cited source names (torchtitan, FSDP,
// llm-foundry -> fsdp; Megatron-DeepSpeed -> megatron-lm; DeepSpeed ->
// deepspeed; Megatron-Core -> megatron-core); otherwise Megatron-LM's legacy
// stack when the attention is the unfused softmax path (which `attention:
// auto` picks for sources dated before 2023), Megatron-Core otherwise.
Framework default_framework(const std::string& cited_source, AttentionKernel attention);
// The stack the cited source names, as above; nullopt when it names none.
std::optional<Framework> framework_in_source(const std::string& cited_source);

}  // namespace lostflops
