// Measured vs predicted step breakdown and MFU (definitions in
// include/lostflops/trace_compare.h; MFU as PaLM defines it,
// Chowdhery et al. 2022, appendix B).
#include "lostflops/trace_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "lostflops/error.h"
#include "lostflops/walls.h"

namespace lostflops::trace {
namespace {

// The walls compared, in order: what a profiler measures of each group.
struct WallGroup {
    const char* name;
    TraceGroup group;
};
constexpr WallGroup kWallGroups[] = {
    {"compute (GEMM, attention)", TraceGroup::compute},
    {"memory-bound (elementwise, norms, copies)", TraceGroup::memory_bound},
    {"communication (exposed)", TraceGroup::comm},
    {"idle (bubble, overhead, host)", TraceGroup::idle},
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// What each measured memory peak is held against: the estimate's worst
// stage's most allocated over the step (Memory::allocated_bytes, as
// torch.cuda.max_memory_allocated) and most reserved (Memory::reserved_bytes,
// as max_memory_reserved; docs/memory.md). An estimate that leaves them
// unset falls back to its one peak.
struct PredictedMemory {
    double allocated_bytes = 0, reserved_bytes = 0;
};
PredictedMemory predicted_memory(const Estimate& est) {
    const Memory& m = est.memory;
    return {m.allocated_bytes > 0 ? m.allocated_bytes : m.peak_bytes,
            m.reserved_bytes > 0 ? m.reserved_bytes : m.peak_bytes};
}

// A row's predicted figure of `est`: allocated or reserved.
double row_bytes(const MemoryRow& row, const Estimate& est) {
    const PredictedMemory p = predicted_memory(est);
    return row.memory == "peak reserved" ? p.reserved_bytes : p.allocated_bytes;
}

std::vector<MemoryRow> memory_rows(const std::vector<RankReport>& ranks, const Estimate& est) {
    const RankReport* alloc = nullptr;
    const RankReport* resv = nullptr;
    for (const auto& r : ranks) {
        if (!r.memory) continue;
        if (alloc == nullptr || r.memory->peak_allocated_bytes > alloc->memory->peak_allocated_bytes) alloc = &r;
        if (resv == nullptr || r.memory->peak_reserved_bytes > resv->memory->peak_reserved_bytes) resv = &r;
    }
    if (alloc == nullptr) return {};
    const PredictedMemory p = predicted_memory(est);
    return {{"peak allocated", alloc->memory->peak_allocated_bytes, alloc->rank, p.allocated_bytes},
            {"peak reserved", resv->memory->peak_reserved_bytes, resv->rank, p.reserved_bytes}};
}

}  // namespace

JobComparison compare_with_estimate(const std::vector<RankReport>& ranks, const Estimate& est,
                                    int num_gpus, double peak_flops_per_gpu,
                                    const std::string& job_source, int ranks_per_stage) {
    if (ranks.empty()) throw InputError(job_source, "", "no trace ranks to compare with");
    if (!(peak_flops_per_gpu > 0) || num_gpus <= 0) {
        throw InputError(job_source, "cluster.gpu", "peak FLOP/s and GPU count must be positive");
    }
    JobComparison c;
    std::vector<double> steps_us;
    bool all_steps = true;
    for (const auto& r : ranks) {
        if (r.mean_step_us > 0) steps_us.push_back(r.mean_step_us);
        else all_steps = false;
    }
    if (!all_steps || steps_us.empty()) {
        steps_us.clear();
        for (const auto& r : ranks) steps_us.push_back(r.kernel_span_us);
        c.step_source = "kernel span";
    } else {
        c.step_source = "ProfilerStep";
    }
    c.measured_step_s = median(steps_us) * 1e-6;
    c.predicted_step_s = est.step_time_s;
    c.predicted_mfu = est.mfu;
    if (c.measured_step_s > 0) {
        c.measured_mfu = est.model_flops_per_step /
                         (c.measured_step_s * static_cast<double>(num_gpus) * peak_flops_per_gpu);
    }
    // Shares of a step, averaged over the ranks of each pipeline stage; the
    // busiest stage's (least idle) are the measured walls. With ProfilerSteps
    // a rank's kernel span covers its n steps but not the GPU's wait before
    // the first kernel of a step or after the last (a data loader's, a host's
    // start): span / n short of the mean step, idle too. Without them the
    // span is the step.
    struct Shares {
        double matmul = 0, other = 0, comm = 0, idle = 0;
        int n = 0;
    };
    std::map<int, Shares> stages;
    for (const auto& r : ranks) {
        if (!(r.kernel_span_us > 0)) continue;
        const bool by_step = c.step_source == "ProfilerStep" && r.steps_total > 0;
        const double n = by_step ? static_cast<double>(r.steps_total) : 1.0;
        const double per_step = r.kernel_span_us / n;
        const double step = by_step ? std::max(r.mean_step_us, per_step) : per_step;
        Shares& s = stages[ranks_per_stage > 0 ? r.rank / ranks_per_stage : 0];
        s.matmul += r.matmul_us / n / step;
        s.other += (r.compute_us - r.matmul_us + r.exposed_memory_us) / n / step;
        s.comm += r.exposed_comm_us / n / step;
        s.idle += (r.idle_us / n + step - per_step) / step;
        ++s.n;
    }
    double matmul = 0, other = 0, comm = 0, idle = 0;
    c.stages = static_cast<int>(stages.size());
    for (auto& [stage, s] : stages) {
        s.idle /= s.n;
        if (c.measured_stage >= 0 && s.idle >= idle) continue;
        c.measured_stage = stage;
        matmul = s.matmul / s.n;
        other = s.other / s.n;
        comm = s.comm / s.n;
        idle = s.idle;
    }
    const double step = c.measured_step_s;
    const double measured_share[] = {matmul, other, comm, idle};
    for (std::size_t i = 0; i < std::size(kWallGroups); ++i)
        c.walls.push_back({kWallGroups[i].name, measured_share[i] * step, trace_group_s(est, kWallGroups[i].group)});
    c.memory = memory_rows(ranks, est);
    const double measured = c.walls[0].measured_s, predicted = c.walls[0].predicted_s;
    if (predicted > 0 && !(measured * kJobMismatchRatio >= predicted && measured <= kJobMismatchRatio * predicted)) {
        c.warnings.push_back(fmt::format(
            "job-mismatch: {}: predicted compute (GEMM, attention) {:.4g} s per step, measured {:.4g} s ({}): the "
            "job does not seem to describe the traced run (model, batch, sequence, plan, GPU?); the comparison below "
            "is of two different runs",
            job_source, predicted, measured,
            measured > 0 ? fmt::format("{:.2g}x", predicted / measured) : std::string("no GEMM or attention kernels")));
    }
    return c;
}

JobComparison compare_with_job(const std::vector<RankReport>& ranks, const Job& job, const Estimate& est,
                               const std::string& job_source) {
    const double peak = job.cluster.gpu.peak_tflops(job.training.precision) * 1e12;
    return compare_with_estimate(ranks, est, job.cluster.num_gpus, peak, job_source,
                                 job.plan.tp * job.plan.cp * job.plan.dp);
}

double profiler_host_s(const std::vector<RankReport>& ranks, double event_us) {
    double sum_us = 0;
    int n = 0;
    for (const auto& r : ranks) {
        if (!(r.host_events_per_step > 0)) continue;
        // No more than the rank's measured step: what the profiler cost the
        // host happened inside it.
        sum_us += std::min(r.host_events_per_step * event_us + r.profiler_overhead_us_per_step, r.mean_step_us);
        ++n;
    }
    return n > 0 ? sum_us / n * 1e-6 : 0.0;
}

double trace_host_speed(const std::vector<RankReport>& ranks) {
    double sum = 0;
    int n = 0;
    for (const auto& r : ranks)
        if (r.host_speed > 0) {
            sum += r.host_speed;
            ++n;
        }
    return n > 0 ? sum / n : 0.0;
}

std::vector<StepHostSpeed> trace_step_host_speeds(const std::vector<RankReport>& ranks) {
    if (ranks.empty()) return {};
    const std::size_t steps = ranks.front().step_host_speeds.size();
    std::vector<StepHostSpeed> out(steps);
    for (const auto& r : ranks) {
        if (r.step_host_speeds.size() != steps) return {};
        for (std::size_t k = 0; k < steps; ++k) {
            const StepHostSpeed& s = r.step_host_speeds[k];
            if (!(s.python > 0 && s.autograd > 0)) return {};
            out[k].python += s.python / static_cast<double>(ranks.size());
            out[k].autograd += s.autograd / static_cast<double>(ranks.size());
        }
    }
    return out;
}

void add_profiled_prediction(JobComparison& c, const Estimate& profiled, double host_s, double host_speed,
                             const std::vector<std::string>& settings) {
    add_profiled_prediction(c, std::vector<Estimate>{profiled}, {}, host_s, host_speed, settings);
}

void add_profiled_prediction(JobComparison& c, const std::vector<Estimate>& profiled,
                             const std::vector<StepHostSpeed>& speeds, double host_s, double host_speed,
                             const std::vector<std::string>& settings) {
    if (profiled.empty()) return;
    const auto n = static_cast<double>(profiled.size());
    const auto mean = [&](TraceGroup g) {
        double sum = 0;
        for (const Estimate& e : profiled) sum += trace_group_s(e, g);
        return sum / n;
    };
    c.profiler_host_s = host_s;
    c.profiled_settings = settings;
    // The job's stack, not its run, differed from the traces' when the
    // stack they show prices the compute within the ratio: no mismatch.
    if (!settings.empty() && !c.walls.empty()) {
        const double measured = c.walls[0].measured_s, profiled_s = mean(kWallGroups[0].group);
        if (profiled_s > 0 && measured * kJobMismatchRatio >= profiled_s && measured <= kJobMismatchRatio * profiled_s)
            std::erase_if(c.warnings, [](const std::string& w) { return w.rfind("job-mismatch", 0) == 0; });
    }
    c.host_speed = host_speed;
    c.step_host_speeds = speeds;
    double step_s = 0;
    for (const Estimate& e : profiled) step_s += e.step_time_s / n;
    c.predicted_profiled_step_s = step_s;
    // The same model FLOPs a step: the MFU of the mean step.
    c.predicted_profiled_mfu = step_s > 0 ? profiled.front().mfu * profiled.front().step_time_s / step_s : 0.0;
    for (std::size_t i = 0; i < c.walls.size() && i < std::size(kWallGroups); ++i)
        c.walls[i].predicted_profiled_s = mean(kWallGroups[i].group);
    // Memory: the traced stack's (FSDP2's bf16 copies, autocast's casts);
    // every step's estimate holds the same bytes.
    for (MemoryRow& row : c.memory) row.predicted_profiled_bytes = row_bytes(row, profiled.front());
}

}  // namespace lostflops::trace
