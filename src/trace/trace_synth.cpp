// Generator of Kineto-shaped traces with known answers (contract and the
// job it traces: include/lostflops/trace_synth.h), first pass: the whole job
// op by op in lock step over all ranks, keeping each collective's end per
// group (a collective ends at its latest member's arrival + its transfer
// time, as a ring or tree collective cannot finish before every member has
// joined). The second pass, one rank replayed alone with those ends writing
// its events, is trace_synth_write.cpp.
#include "lostflops/trace_synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lostflops/error.h"
#include "trace/trace_synth_job.h"

namespace lostflops::trace {

namespace synth {

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

// TP all-reduce of one micro-batch's activations, a DP gradient bucket, the rest.
const CollectiveKind kTp{60, 8192.0 * 4096, "tp"}, kBucket{900, 25e6, "dp"}, kFinal{600, 15e6, "dp"};

// Times on a grid of 1/8 us: exact in a double near kSynthEpochUs and in the
// three decimals written, so the counts below are exactly what is read.
double on_grid(double us) { return std::round(us * 8) / 8; }

const CollectiveKind& kind_of(OpKind k) {
    return k == OpKind::tp_allreduce ? kTp : k == OpKind::dp_bucket ? kBucket : kFinal;
}
double arrival(const Clock& c, OpKind k) { return k == OpKind::tp_allreduce ? c.gpu : std::max(c.gpu, c.comm); }

}  // namespace synth

namespace {

using namespace synth;

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

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

}  // namespace

double SynthJob::Impl::factor(int r, int step) const {
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

void check_synth_spec(const SynthSpec& s) {
    const auto bad = [](const char* key, const std::string& what) { throw InputError("trace synth", key, what); };
    if (s.ranks < 1 || s.ranks > kMaxSynthRanks) bad("--ranks", fmt::format("expected 1 to {}", kMaxSynthRanks));
    if (s.gpus_per_node < 1 || s.gpus_per_node > 64) bad("--gpus-per-node", "expected 1 to 64");
    if (s.tp < 1 || s.gpus_per_node % s.tp != 0 || s.ranks % s.tp != 0)
        bad("--tp", "expected a divisor of --gpus-per-node and of --ranks");
    if (s.steps < 1 || s.steps > 1000) bad("--steps", "expected 1 to 1000");
    if (s.first_step < 0 || s.first_step > (int64_t{1} << 40)) bad("--first-step", "expected 0 to 2^40");
    if (s.layers < 1 || s.layers > 1000) bad("--layers", "expected 1 to 1000");
    if (s.slow_rank < -1 || s.slow_rank >= s.ranks) bad("--slow-rank", "expected a rank below --ranks");
    if (s.slow_node < -1 || s.slow_node >= (s.ranks + s.gpus_per_node - 1) / s.gpus_per_node) bad("--slow-node", "expected a node of the job");
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

}  // namespace lostflops::trace
