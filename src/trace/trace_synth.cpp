// Generator of Kineto-shaped traces with known answers (contract and the
// job it traces: include/lostflops/trace_synth.h). Two passes: the whole job
// op by op in lock step over all ranks, keeping each collective's end per
// group (a collective ends at its latest member's arrival + its transfer
// time, as a ring or tree collective cannot finish before every member has
// joined); then one rank replayed alone with those ends, writing its events
// and counting what they hold. Event fields follow what PyTorch's profiler
// (Kineto) writes: ProfilerStep#N user annotations and cudaLaunchKernel
// runtime events on the CPU, kernels with stream/correlation/grid arguments,
// NCCL kernels with the collective's name, sizes and process group
// (PyTorch 2.x record_param_comms arguments).
#include "lostflops/trace_synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "lostflops/error.h"

namespace lostflops::trace {
namespace {

enum class OpKind : uint8_t { compute, tp_allreduce, dp_bucket, dp_final };

// What a kernel counts as in SynthTruth (the analysis' category names).
struct KernelKind {
    const char* name;
    const char* category;  // "gemm", "attention", "norm_elementwise", "other_compute"
    double base_us;
};

// Base durations: of the order of one layer of a 7B-class model at micro-batch
// 1 x 4096 tokens per GPU (a made-up job: only the known answers matter).
const KernelKind kKernels[] = {
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
     "gemm", 300},  // 0 qkv
    {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, "
     "false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)",
     "attention", 250},  // 1
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     "gemm", 150},  // 2 proj
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
     "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
     "norm_elementwise", 40},  // 3
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
     "gemm", 400},  // 4 mlp up / down
    {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2> >"
     "(int, at::native::GeluCUDAKernelImpl, at::detail::Array<char*, 2>)",
     "norm_elementwise", 60},  // 5
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
     "norm_elementwise", 3},  // 6 tiny: launch bound
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
     "gemm", 400},  // 7 dgrad
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
     "gemm", 400},  // 8 wgrad
    {"void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, "
     "false, false, cutlass::bfloat16_t>, true, false, false, false, false>(flash::Flash_bwd_params)",
     "attention", 500},  // 9
    {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>(c10::BFloat16 "
     "const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
     "norm_elementwise", 50},  // 10
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
     "(at::native::ADAM_MODE)1, false>, bool, float, double, double, double, double, double, double, float*, float*>"
     "(at::native::(anonymous namespace)::TensorListMetadata<4>)",
     "other_compute", 300},  // 11
};

constexpr const char* kNcclName = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr double kHostGapUs = 300;     // GPU idle at each step's start while the CPU prepares the batch
constexpr double kLaunchUs = 6;        // cudaLaunchKernel on the CPU
constexpr double kLaunchLeadUs = 20;   // a launch precedes its kernel by this much
constexpr double kFirstLaunchLeadUs = 5;
constexpr double kStepTailUs = 20;     // the CPU's step ends this long after its last kernel
constexpr int kComputeStream = 7, kCommStream = 20;
constexpr int kCpuPid = 4242;

struct Op {
    OpKind kind;
    int kernel = -1;  // compute: index into kKernels
};

struct CollectiveKind {
    double transfer_us;
    double nelems;  // BFloat16 elements
    const char* group;  // process group description
};
// TP all-reduce of one micro-batch's activations, a DP gradient bucket, the rest.
const CollectiveKind kTp{60, 8192.0 * 4096, "tp"}, kBucket{900, 25e6, "dp"}, kFinal{600, 15e6, "dp"};

std::vector<Op> step_ops(const SynthSpec& s) {
    std::vector<Op> ops;
    const auto c = [&](int k) { ops.push_back({OpKind::compute, k}); };
    const auto tp = [&] {
        if (s.tp > 1) ops.push_back({OpKind::tp_allreduce});
    };
    for (int l = 0; l < s.layers; ++l) {
        c(0), c(1), c(2), tp(), c(3), c(4), c(5), c(4), tp(), c(6);
    }
    for (int l = s.layers - 1; l >= 0; --l) {
        tp();
        if (l == 0) ops.push_back({OpKind::dp_bucket});
        c(7), c(8), c(5), c(7), c(8), c(10), c(7), c(8), c(9), c(7), c(8);
    }
    ops.push_back({OpKind::dp_final});
    c(11), c(11);
    return ops;
}

// Times on a grid of 1/8 us: exact in a double near kSynthEpochUs and in the
// three decimals written, so the counts below are exactly what is read.
double on_grid(double us) { return std::round(us * 8) / 8; }

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

// Where one rank is.
struct Clock {
    double gpu = kSynthEpochUs;   // the compute stream is free from here
    double comm = kSynthEpochUs;  // stream 20 is free from here
    double launch_free = kSynthEpochUs;  // the CPU thread's next launch can start here
    double step_start = kSynthEpochUs;
    bool first_of_step = true;
};

const CollectiveKind& kind_of(OpKind k) {
    return k == OpKind::tp_allreduce ? kTp : k == OpKind::dp_bucket ? kBucket : kFinal;
}
// When a rank's stream reaches the collective: TP on the compute stream, DP on stream 20.
double arrival(const Clock& c, OpKind k) { return k == OpKind::tp_allreduce ? c.gpu : std::max(c.gpu, c.comm); }

}  // namespace

struct SynthJob::Impl {
    SynthSpec spec;
    std::vector<Op> ops;  // one step
    // Collective ends: [step][collective index in the step][group].
    std::vector<std::vector<std::vector<double>>> ends;

    int tp_group(int r) const { return r / spec.tp; }
    int dp_group(int r) const { return r % spec.tp; }
    double factor(int r, int step) const {
        double f = 1;
        if (r == spec.slow_rank) f *= spec.slow_rank_factor;
        if (spec.slow_node >= 0 && r / spec.gpus_per_node == spec.slow_node) f *= spec.slow_node_factor;
        if (spec.jitter_pct > 0) {
            const uint64_t h = splitmix64(spec.seed ^ splitmix64(static_cast<uint64_t>(r) * 0x100000001B3ULL +
                                                                 static_cast<uint64_t>(step)));
            const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
            f *= 1 + spec.jitter_pct / 100 * (2 * u - 1);
        }
        return f;
    }
};

namespace {

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

}  // namespace

void check_synth_spec(const SynthSpec& s) {
    const auto bad = [](const char* key, const std::string& what) { throw InputError("trace synth", key, what); };
    if (s.ranks < 1 || s.ranks > kMaxSynthRanks) bad("--ranks", fmt::format("expected 1 to {}", kMaxSynthRanks));
    if (s.gpus_per_node < 1 || s.gpus_per_node > 64) bad("--gpus-per-node", "expected 1 to 64");
    if (s.tp < 1 || s.gpus_per_node % s.tp != 0 || s.ranks % s.tp != 0)
        bad("--tp", "expected a divisor of --gpus-per-node and of --ranks");
    if (s.steps < 1 || s.steps > 1000) bad("--steps", "expected 1 to 1000");
    if (s.first_step < 0 || s.first_step > (int64_t{1} << 40)) bad("--first-step", "expected 0 to 2^40");
    if (s.layers < 1 || s.layers > 1000) bad("--layers", "expected 1 to 1000");
    if (s.slow_rank >= s.ranks) bad("--slow-rank", "expected a rank below --ranks");
    if (s.slow_node >= (s.ranks + s.gpus_per_node - 1) / s.gpus_per_node) bad("--slow-node", "expected a node of the job");
    if (!(s.slow_rank_factor >= 0.1 && s.slow_rank_factor <= 100)) bad("--slow-rank-factor", "expected 0.1 to 100");
    if (!(s.slow_node_factor >= 0.1 && s.slow_node_factor <= 100)) bad("--slow-node-factor", "expected 0.1 to 100");
    if (!(s.jitter_pct >= 0 && s.jitter_pct <= 50)) bad("--jitter-pct", "expected 0 to 50");
}

SynthJob::SynthJob(const SynthSpec& s) : impl_(std::make_unique<Impl>()) {
    check_synth_spec(s);
    Impl& m = *impl_;
    m.spec = s;
    m.ops = step_ops(s);
    const int n = s.ranks;
    std::vector<Clock> clocks(static_cast<size_t>(n));
    std::vector<double> arrivals(static_cast<size_t>(n));
    m.ends.resize(static_cast<size_t>(s.steps));
    for (int step = 0; step < s.steps; ++step) {
        auto& ends = m.ends[static_cast<size_t>(step)];
        for (int r = 0; r < n; ++r) clocks[static_cast<size_t>(r)].first_of_step = true;
        // Lock step: every rank up to each collective, then its ends per group.
        for (const Op& op : m.ops) {
            for (int r = 0; r < n; ++r) {
                Clock& c = clocks[static_cast<size_t>(r)];
                const double f = m.factor(r, step);
                if (op.kind == OpKind::compute) {
                    double start = c.gpu;
                    if (c.first_of_step) start = std::max(start, c.step_start + kHostGapUs);
                    c.first_of_step = false;
                    c.gpu = start + on_grid(kKernels[op.kernel].base_us * f);
                } else {
                    arrivals[static_cast<size_t>(r)] = arrival(c, op.kind);
                }
            }
            if (op.kind == OpKind::compute) continue;
            const bool tp = op.kind == OpKind::tp_allreduce;
            std::vector<double> group_end(static_cast<size_t>(tp ? n / s.tp : s.tp), 0.0);
            for (int r = 0; r < n; ++r) {
                double& e = group_end[static_cast<size_t>(tp ? m.tp_group(r) : m.dp_group(r))];
                e = std::max(e, arrivals[static_cast<size_t>(r)]);
            }
            for (double& e : group_end) e += kind_of(op.kind).transfer_us;
            for (int r = 0; r < n; ++r) {
                Clock& c = clocks[static_cast<size_t>(r)];
                const double end = group_end[static_cast<size_t>(tp ? m.tp_group(r) : m.dp_group(r))];
                if (tp) c.gpu = end;
                else c.comm = end;
                if (op.kind == OpKind::dp_final) c.gpu = std::max(c.gpu, end);
            }
            ends.push_back(std::move(group_end));
        }
        for (auto& c : clocks) c.step_start = c.gpu + kStepTailUs;
    }
}

SynthJob::~SynthJob() = default;

const SynthSpec& SynthJob::spec() const { return impl_->spec; }

namespace {

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
