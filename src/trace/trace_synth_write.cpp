// Generator of Kineto-shaped traces with known answers (contract:
// include/lostflops/trace_synth.h), second pass: one rank replayed alone
// with the collectives' ends of the whole job (trace_synth.cpp), writing its
// events and counting what they hold. Event fields follow what PyTorch's
// profiler (Kineto) writes: ProfilerStep#N user annotations and
// cudaLaunchKernel runtime events on the CPU, kernels with
// stream/correlation/grid arguments, NCCL kernels with the collective's name,
// sizes and process group (PyTorch 2.x record_param_comms arguments).
#include "lostflops/trace_synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>

#include "lostflops/error.h"
#include "trace/trace_synth_job.h"

namespace lostflops::trace {
namespace {

using namespace synth;

constexpr const char* kNcclName = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr double kLaunchUs = 6;        // cudaLaunchKernel on the CPU
constexpr double kLaunchLeadUs = 20;   // a launch precedes its kernel by this much
constexpr double kFirstLaunchLeadUs = 5;
constexpr int kComputeStream = 7, kCommStream = 20;
constexpr int kCpuPid = 4242;

// Plays one step of one rank; `end_of(i, arrival)` gives the i-th collective's
// end; `on_kernel(start, dur, op)` and `on_launch(ts)` see what is written.
template <typename EndOf, typename OnKernel>
void play_step(Clock& c, const std::vector<Op>& ops, double f, EndOf&& end_of, OnKernel&& on_kernel) {
    int coll = 0;
    c.first_of_step = true;
    for (const Op& op : ops) {
        if (op.kind == OpKind::compute) {
            double start = c.gpu;
            if (c.first_of_step) start = std::max(start, c.step_start + kHostGapUs);
            const double dur = on_grid(kKernels[op.kernel].base_us * f);
            on_kernel(start, dur, op, c);
            c.gpu = start + dur;
            continue;
        }
        const double a = arrival(c, op.kind);
        const double end = end_of(coll++, a);
        on_kernel(a, end - a, op, c);
        if (op.kind == OpKind::tp_allreduce) c.gpu = end;
        else c.comm = end;
        if (op.kind == OpKind::dp_final) c.gpu = std::max(c.gpu, end);
    }
}

std::string ranks_text(const std::vector<int>& ranks) {
    std::string s = "[";
    for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
    return s + "]";
}

}  // namespace

std::string SynthJob::trace(int rank, SynthTruth* truth_out) const {
    const Impl& m = *impl_;
    const SynthSpec& s = m.spec;
    if (rank < 0 || rank >= s.ranks) throw InputError("trace synth", "rank", "expected a rank of the job");
    const int local = rank % s.gpus_per_node;
    std::vector<int> tp_ranks, dp_ranks;
    for (int r = m.tp_group(rank) * s.tp; r < (m.tp_group(rank) + 1) * s.tp; ++r) tp_ranks.push_back(r);
    for (int r = m.dp_group(rank); r < s.ranks; r += s.tp) dp_ranks.push_back(r);
    const std::string tp_text = ranks_text(tp_ranks), dp_text = ranks_text(dp_ranks);

    SynthTruth t;
    t.rank = rank;
    t.node = rank / s.gpus_per_node;
    std::string cpu, gpu;
    auto cpu_out = std::back_inserter(cpu);
    auto gpu_out = std::back_inserter(gpu);
    int64_t correlation = 1000;
    double first_start = -1, last_end = 0, overlap = 0;
    std::vector<OpKind> coll_kinds;
    for (const Op& op : m.ops)
        if (op.kind != OpKind::compute) coll_kinds.push_back(op.kind);
    Clock c;
    for (int step = 0; step < s.steps; ++step) {
        const auto& ends = m.ends[static_cast<size_t>(step)];
        const double f = m.factor(rank, step);
        std::optional<double> first_comm;
        double bucket_start = 0, bucket_end = 0, bwd_end = 0;
        const auto on_kernel = [&](double start, double dur, const Op& op, Clock& clk) {
            const bool first = clk.first_of_step;
            clk.first_of_step = false;
            double launch = first ? start - kFirstLaunchLeadUs : std::max(clk.launch_free, start - kLaunchLeadUs);
            clk.launch_free = launch + kLaunchUs;
            ++correlation;
            fmt::format_to(cpu_out,
                           ",\n{{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": {}, "
                           "\"tid\": {}, \"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": {{\"External id\": {}, "
                           "\"cbid\": 211, \"correlation\": {}}}}}",
                           kCpuPid, kCpuPid, launch, kLaunchUs, correlation, correlation);
            const bool comm = op.kind != OpKind::compute;
            const int stream = op.kind == OpKind::compute || op.kind == OpKind::tp_allreduce ? kComputeStream : kCommStream;
            ++t.kernels;
            if (first_start < 0) first_start = start;
            last_end = std::max(last_end, start + dur);
            if (dur < kLaunchUs) ++t.launch_bound;
            if (!comm) {
                const KernelKind& k = kKernels[op.kernel];
                fmt::format_to(gpu_out,
                               ",\n{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": {}, \"tid\": {}, "
                               "\"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": {{\"External id\": {}, \"queued\": 0, "
                               "\"device\": {}, \"context\": 1, \"stream\": {}, \"correlation\": {}, "
                               "\"registers per thread\": 168, \"shared memory\": 98304, \"blocks per SM\": 1, "
                               "\"warps per SM\": 8, \"grid\": [132, 1, 1], \"block\": [256, 1, 1], "
                               "\"est. achieved occupancy %\": 12}}}}",
                               k.name, local, stream, start, dur, correlation, local, stream, correlation);
                t.compute_us += dur;
                const std::string cat = k.category;
                if (cat == "gemm" || cat == "attention") t.matmul_us += dur;
                auto& tot = t.categories[cat];
                ++tot.count;
                tot.time_us += dur;
                return;
            }
            const CollectiveKind& ck = kind_of(op.kind);
            const bool tp = op.kind == OpKind::tp_allreduce;
            const std::vector<int>& members = tp ? tp_ranks : dp_ranks;
            fmt::format_to(gpu_out,
                           ",\n{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": {}, \"tid\": {}, "
                           "\"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": {{\"External id\": {}, \"queued\": 0, "
                           "\"device\": {}, \"context\": 1, \"stream\": {}, \"correlation\": {}, "
                           "\"registers per thread\": 96, \"shared memory\": 87568, \"blocks per SM\": 0.06, "
                           "\"warps per SM\": 1.2, \"grid\": [8, 1, 1], \"block\": [544, 1, 1], "
                           "\"est. achieved occupancy %\": 0, \"Collective name\": \"allreduce\", "
                           "\"In msg nelems\": {:.0f}, \"Out msg nelems\": {:.0f}, \"Group size\": {}, "
                           "\"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", "
                           "\"Process Group Name\": \"{}\", \"Process Group Description\": \"{}\", "
                           "\"Process Group Ranks\": \"{}\"}}}}",
                           kNcclName, local, stream, start, dur, correlation, local, stream, correlation, ck.nelems,
                           ck.nelems, members.size(), tp ? 1 : 2, ck.group, tp ? tp_text : dp_text);
            t.comm_us += dur;
            auto& tot = t.categories["comm:all_reduce"];
            ++tot.count;
            tot.time_us += dur;
            if (!first_comm) first_comm = start;
            if (op.kind == OpKind::dp_bucket) {
                bucket_start = start;
                bucket_end = start + dur;
            }
        };
        // The i-th collective of the step: its group's end.
        const auto group_end = [&](int i, double) {
            const bool tp = coll_kinds[static_cast<size_t>(i)] == OpKind::tp_allreduce;
            return ends[static_cast<size_t>(i)][static_cast<size_t>(tp ? m.tp_group(rank) : m.dp_group(rank))];
        };
        play_step(c, m.ops, f, group_end, [&](double start, double dur, const Op& op, Clock& clk) {
            if (op.kind == OpKind::dp_final) bwd_end = clk.gpu;  // the compute stream's last backward kernel ended here
            on_kernel(start, dur, op, clk);
        });
        // The bucket overlaps layer 0's backward compute, which runs without a gap to bwd_end.
        overlap += std::max(0.0, std::min(bucket_end, bwd_end) - bucket_start);
        const double step_end = c.gpu + kStepTailUs;
        fmt::format_to(cpu_out,
                       ",\n{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{}\", \"pid\": {}, "
                       "\"tid\": {}, \"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": {{\"External id\": {}, "
                       "\"Record function id\": 0, \"Ev Idx\": {}}}}}",
                       s.first_step + step, kCpuPid, kCpuPid, c.step_start, step_end - c.step_start, step + 1, step);
        t.step_numbers.push_back(s.first_step + step);
        t.step_us.push_back(step_end - c.step_start);
        t.first_comm_start_us.push_back(first_comm.value_or(-1));
        c.step_start = step_end;
    }
    t.span_us = last_end - first_start;
    t.exposed_comm_us = t.comm_us - overlap;
    t.idle_us = t.span_us - (t.compute_us + t.comm_us - overlap);
    if (truth_out != nullptr) *truth_out = std::move(t);

    std::string pg_config = fmt::format(
        "[{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {}, "
        "\"ranks\": []}}, {{\"pg_name\": \"1\", \"pg_desc\": \"tp\", \"backend_config\": \"cuda:nccl\", "
        "\"pg_size\": {}, \"ranks\": {}}}, {{\"pg_name\": \"2\", \"pg_desc\": \"dp\", \"backend_config\": "
        "\"cuda:nccl\", \"pg_size\": {}, \"ranks\": {}}}]",
        s.ranks, tp_ranks.size(), tp_text, dp_ranks.size(), dp_text);
    std::string devices;
    for (int d = 0; d < s.gpus_per_node; ++d) {
        devices += fmt::format("{}{{\"id\": {}, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912, "
                               "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}}",
                               d ? ", " : "", d);
    }
    std::string out = fmt::format(
        "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{}],\n  \"distributedInfo\": {{\"backend\": "
        "\"nccl\", \"rank\": {}, \"world_size\": {}, \"pg_count\": 3, \"pg_config\": {}, \"nccl_version\": "
        "\"2.21.5\"}},\n  \"record_shapes\": 0,\n  \"traceEvents\": [\n"
        "{{\"name\": \"process_name\", \"ph\": \"M\", \"ts\": {:.3f}, \"pid\": {}, \"tid\": 0, \"args\": "
        "{{\"name\": \"python\"}}}}",
        devices, rank, s.ranks, pg_config, kSynthEpochUs, kCpuPid);
    out.reserve(out.size() + cpu.size() + gpu.size() + 256);
    out += cpu;
    out += gpu;
    out += fmt::format("\n  ],\n  \"traceName\": \"lostflops trace synth rank {}\",\n  \"displayTimeUnit\": \"ms\",\n"
                       "  \"baseTimeNanoseconds\": 1700000000000000000\n}}\n",
                       rank);
    return out;
}

std::string synth_trace(const SynthSpec& s, int rank, SynthTruth* truth) { return SynthJob(s).trace(rank, truth); }

std::string synth_file_name(int rank) { return fmt::format("rank{:05d}.json", rank); }

}  // namespace lostflops::trace
