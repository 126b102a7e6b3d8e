// The estimate's step as a Chrome trace (contract: lostflops/timeline_trace.h).
// Passes: explain/pass_model.cpp's per-(rank, chunk) causes, timed by
// schedule/pipeline_timeline.cpp (Megatron-LM's per-rank order, Narayanan et
// al. 2021 sec. 2.2); each 1F1B pass drawn as its causes in a row (recompute,
// GEMMs and attention, memory-bound operators, exposed TP/CP/EP
// communication), the rest of the pass (kernel overhead, host wait) a gap.
// Pipeline send/receive (1F1B family, virtual stage = chunk * p + rank): the
// part of a transfer a pass waits for, drawn as a receive on its rank. After
// the pipeline phase, on every rank, the breakdown's exposed data-parallel
// traffic and the optimizer step (estimate.cpp adds them there). Event
// format: Trace Event Format (Google, "Complete Events", "Metadata Events").
#include "lostflops/timeline_trace.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "explain/pass_model.h"
#include "lostflops/error.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/pipeline_timeline.h"
#include "lostflops/report.h"

namespace lostflops {
namespace {

// Streams (the "tid" of GPU events, as Kineto writes them) and the CPU thread.
constexpr int kCpuTid = 1, kComputeStream = 7, kModelCommStream = 20, kDpStream = 21, kPpStream = 22;

class TraceWriter {
public:
    explicit TraceWriter(std::string& out) : out_(out) {}

    // A complete event; times in seconds, written in microseconds (ns resolution).
    void kernel(long long pid, int stream, std::string_view name, double start_s, double dur_s,
                std::string_view args = {}) {
        // Start and end on whole nanoseconds; an event shorter than that is left out.
        const double ts_us = std::round(start_s * 1e9) / 1e3, end_us = std::round((start_s + dur_s) * 1e9) / 1e3;
        if (!(end_us > ts_us)) return;
        sep();
        fmt::format_to(std::back_inserter(out_),
                       R"({{"ph":"X","cat":"kernel","name":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},)"
                       R"("args":{{"stream":{}{}{}}}}})",
                       name, pid, stream, ts_us, end_us - ts_us, stream, args.empty() ? "" : ",", args);
    }
    void comm(long long pid, int stream, std::string_view kernel_name, std::string_view collective,
              std::string_view group, double start_s, double dur_s) {
        kernel(pid, stream, kernel_name, start_s, dur_s,
               fmt::format(R"("Collective name":"{}","Process Group Name":"{}","Process Group Description":"{}")",
                           collective, group, group));
    }
    void raw(const std::string& event) {
        sep();
        out_ += event;
    }

private:
    void sep() {
        if (!first_) out_ += ",\n";
        first_ = false;
    }
    std::string& out_;
    bool first_ = true;
};

// A pass's causes in a row from `t`; the rest of [t, end) is left a gap.
void write_pass(TraceWriter& w, const Job& job, long long pid, const PassTime& pt, bool backward, double t,
                const std::string& what) {
    const auto put = [&](int stream, std::string_view name, double d) {
        w.kernel(pid, stream, name, t, d, what);
        if (d > 0) t += d;
    };
    const auto put_comm = [&](std::string_view name, std::string_view coll, std::string_view group, double d) {
        w.comm(pid, kModelCommStream, name, coll, group, t, d);
        if (d > 0) t += d;
    };
    if (backward) {  // the forward redone: its GEMMs and attention, its memory-bound kernels; its launches a gap
        put(kComputeStream, "lostflops_gemm_recompute",
            pt.recompute_s - pt.recompute_memory_bound_s - pt.recompute_overhead_s);
        put(kComputeStream, "lostflops_elementwise_recompute", pt.recompute_memory_bound_s);
        t += pt.recompute_overhead_s;
    }
    put(kComputeStream, backward ? "lostflops_gemm_backward" : "lostflops_gemm_forward", pt.compute_s);
    put(kComputeStream, backward ? "lostflops_elementwise_backward" : "lostflops_elementwise_forward",
        pt.memory_bound_s);
    if (job.plan.sequence_parallel) {
        // ASSUMPTION: the exposed part split evenly between the all-gather
        // and the reduce-scatter of sequence parallelism (same bytes each).
        put_comm("ncclDevKernel_AllGather_RING_LL", "all_gather", "tensor_parallel", pt.tp_comm_s / 2);
        put_comm("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "reduce_scatter", "tensor_parallel", pt.tp_comm_s / 2);
    } else {
        put_comm("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "all_reduce", "tensor_parallel", pt.tp_comm_s);
    }
    put_comm("ncclDevKernel_SendRecv", "send_recv", "context_parallel", pt.cp_comm_s);
    put_comm("ncclDevKernel_AllToAll", "all_to_all", "expert_parallel", pt.ep_comm_s);
}

PassTime scaled_to(PassTime pt, double length_s) {
    const double total = pt.total_s();
    return total > 0 ? pt.scaled(length_s / total) : pt;
}

}  // namespace

std::string timeline_trace_json(const Job& job, const Calibration& cal, const Estimate& e) {
    const long long passes = 2LL * job.plan.pp * rank_chunks(job.plan) * e.micro_batches;
    if (passes > kMaxTimelinePasses) {
        throw InputError(job.source, "--timeline-out",
                         fmt::format("the pipeline has {} passes, more than the {} a timeline records", passes,
                                     kMaxTimelinePasses));
    }
    const JobPasses jp = job_passes(job, cal);
    const PipelineTimeline tl = pipeline_timeline(jp.input);
    const int p = job.plan.pp, v = rank_chunks(job.plan);
    const long long stage_gpus = static_cast<long long>(job.plan.tp) * job.plan.cp * job.plan.dp;
    const auto pid_of = [&](int rank) { return rank * stage_gpus; };
    const int64_t m = jp.micro_batches;
    const bool one_f_one_b = schedule_info(effective_schedule(job.plan)).order == ScheduleOrder::megatron_1f1b;

    // End of each (forward?, virtual stage, micro-batch) pass: the producers of the p2p transfers.
    std::vector<double> end_of(one_f_one_b ? static_cast<size_t>(2 * p * v * m) : 0, -1.0);
    const auto slot = [&](bool fwd, int vs, int mb) { return (static_cast<size_t>(fwd) * p * v + vs) * m + mb; };
    if (one_f_one_b)
        for (const TimelinePass& tp : tl.passes)
            end_of[slot(tp.op.forward, tp.op.chunk * p + tp.rank, tp.op.micro_batch)] = tp.end_s;

    std::string out = "{\"traceEvents\":[\n";
    TraceWriter w(out);
    for (int r = 0; r < p; ++r) {
        const nlohmann::json name = {{"name", fmt::format("pipeline rank {} (global rank {})", r, pid_of(r))}};
        w.raw(nlohmann::json{{"ph", "M"}, {"name", "process_name"}, {"pid", pid_of(r)}, {"tid", 0}, {"args", name}}
                  .dump());
        w.raw(nlohmann::json{{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid_of(r)}, {"tid", 0},
                             {"args", {{"sort_index", r}}}}
                  .dump());
        for (const auto& [tid, label] : {std::pair{kCpuTid, "CPU"}, {kComputeStream, "stream 7: compute"},
                                         {kModelCommStream, "stream 20: TP/CP/EP communication"},
                                         {kDpStream, "stream 21: DP communication"},
                                         {kPpStream, "stream 22: pipeline send/receive"}})
            w.raw(nlohmann::json{{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_of(r)}, {"tid", tid},
                                 {"args", {{"name", label}}}}
                      .dump());
    }
    double rank_free = 0;
    int prev_rank = -1;
    for (const TimelinePass& tp : tl.passes) {
        if (tp.rank != prev_rank) rank_free = 0;
        prev_rank = tp.rank;
        const long long pid = pid_of(tp.rank);
        const int vs = tp.op.chunk * p + tp.rank;
        if (one_f_one_b && jp.input.p2p_s > 0) {
            const int from = tp.op.forward ? vs - 1 : vs + 1;
            if (from >= 0 && from < p * v) {
                const double sent = end_of[slot(tp.op.forward, from, tp.op.micro_batch)];
                const double a = std::max(sent, rank_free), b = std::min(tp.start_s, sent + jp.input.p2p_s);
                w.comm(pid, kPpStream, "ncclDevKernel_SendRecv", "send_recv", "pipeline_parallel", a, b - a);
            }
        }
        rank_free = tp.end_s;
        const size_t i = static_cast<size_t>(tp.rank) * v + tp.op.chunk;
        const std::string what =
            fmt::format(R"("micro_batch":{},"chunk":{},"virtual_stage":{})", tp.op.micro_batch, tp.op.chunk, vs);
        if (tp.op.kind == PassKind::forward || tp.op.kind == PassKind::backward) {
            write_pass(w, job, pid, tp.op.forward ? jp.fwd[i] : jp.bwd[i], !tp.op.forward, tp.start_s, what);
            continue;
        }
        // B or W alone, or an F&B pair: the backward's (F&B: both passes')
        // causes scaled to the pass's length (ASSUMPTION: in proportion).
        PassTime both = jp.bwd[i];
        if (tp.op.kind == PassKind::fwd_bwd) both += jp.fwd[i];
        write_pass(w, job, pid, scaled_to(both, tp.end_s - tp.start_s), true, tp.start_s, what);
    }
    // Exposed data-parallel traffic, split in proportion to its collectives
    // (estimate/estimate_parts.h DpComm), then the optimizer step.
    const double pipeline_s = tl.result.makespan_s;
    const double dp_s = e.breakdown.dp_comm_s, opt_s = e.breakdown.optimizer_s;
    const DpComm& dc = jp.setup.dp;
    const double rs = job.plan.zero == 0 ? 0 : dc.reduce_scatter_s, ag = job.plan.zero == 0 ? 0 : dc.all_gather_s;
    const double sharded = rs + ag > 0 ? rs / (rs + ag) : 0.5;
    for (int r = 0; r < p; ++r) {
        double t = pipeline_s;
        const auto dp = [&](std::string_view name, std::string_view coll, double d) {
            w.comm(pid_of(r), kDpStream, name, coll, "data_parallel", t, d);
            if (d > 0) t += d;
        };
        if (job.plan.zero == 0) {
            dp("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "all_reduce", dp_s);
        } else {
            dp("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "reduce_scatter", dp_s * sharded);
            dp("ncclDevKernel_AllGather_RING_LL", "all_gather", dp_s * (1 - sharded));
        }
        // Its launch gaps (Estimate::optimizer_overhead_s) a gap at its end, as a profiler sees them.
        w.kernel(pid_of(r), kComputeStream, "lostflops_optimizer_step", t, opt_s - e.optimizer_overhead_s);
        // The data loader's wait (Breakdown::data_loader_s) is a gap at the step's end.
        const double step_s = t + std::max(0.0, opt_s) + e.breakdown.data_loader_s;
        w.raw(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":{},"tid":{},)"
                          R"("ts":0.000,"dur":{:.3f}}})",
                          pid_of(r), kCpuTid, step_s * 1e6));
    }
    const nlohmann::json other = {
        {"generator", "lostflops estimate --timeline-out"},
        {"job", job.name},
        {"estimate_step_time_s", e.step_time_s},
        {"pipeline_ranks", p},
        {"note", "one process per pipeline rank (pid: the global rank of the stage's first GPU); "
                 "kernel overhead, host wait, pipeline bubble, the optimizer's launch gaps and the data loader's "
                 "wait are gaps"}};
    const nlohmann::json dist = {{"backend", "nccl"}, {"world_size", job.cluster.num_gpus}};
    out += "\n],\n\"ranksByPid\":true,\n\"displayTimeUnit\":\"ms\",\n\"distributedInfo\":" + dist.dump() +
           ",\n\"otherData\":" + json_text(other, -1) + "}\n";
    return out;
}

}  // namespace lostflops
