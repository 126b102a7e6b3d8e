// Cross-field checks of a parsed Job (divisibility of the plan, precision
// support, ranges that depend on several keys). Throws InputError naming the
// file and the key that has to change.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lostflops/error.h"
#include "lostflops/spec.h"

namespace lostflops {

// A cross-field error: key() is the key to change, related() every other key
// the rule reads, so that an error caused by a --set of one of them is
// reported against that --set (job_overrides.h override_for).
class PlanError : public InputError {
public:
    PlanError(std::string file, std::string key, const std::string& message, std::vector<std::string> related)
        : InputError(std::move(file), std::move(key), message), related_(std::move(related)) {}
    const std::vector<std::string>& related() const { return related_; }

private:
    std::vector<std::string> related_;
};

// Why tensor parallelism of `tp` cannot split some layer kind of `m` (heads,
// key/value heads, widths, mixer heads and groups, the vocabulary), as the job
// key to change and a message; nullopt when it can. Shared by validate_job and
// the search's enumeration.
struct PlanIssue {
    std::string key;
    std::string message;
};
std::optional<PlanIssue> tp_issue(const Model& m, int64_t tp);
// Why the plan's stage layout (the default split, first/last stage layer
// counts, or an explicit layout) cannot hold the model on pp x vpp stages.
std::optional<PlanIssue> stage_layout_issue(const Job& job);

// Why the plan cannot run its pipeline schedule with `micro_batches` per step.
std::optional<PlanIssue> schedule_issue(const ParallelPlan& p, int64_t micro_batches);

// Why the job's optimizer cannot run at ZeRO stage `zero` under its
// framework: FSDP2's fp32 shards are themselves the master weights and
// torch's AdamW keeps fp32 moments, so only training.optimizer adam runs
// under framework fsdp at zero 3. Shared by validate_job and the search's
// ZeRO knob.
std::optional<PlanIssue> optimizer_issue(const Training& t, int zero);

// without_plan: the model, cluster and training checks only (the search's
// job, whose parallel section may be partial).
enum class JobChecks { all, without_plan };
void validate_job(const Job& job, JobChecks checks = JobChecks::all);

}  // namespace lostflops
