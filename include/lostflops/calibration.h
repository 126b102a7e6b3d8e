// Calibration profile: every efficiency factor of the cost model in one place.
//
// The defaults live in data/calibration/default.yaml (embedded in the binary),
// each with its source or with what it was fitted on. A user with measurements
// replaces any of them with `--calibration FILE` (a YAML file with the same keys;
// keys not given keep the default). `lostflops calibrate nccl` writes the
// `nccl` section from nccl-tests output.
//
// The GPU side is a table of device families (`devices:`), one per
// architecture family, each calibrated on component micro-benchmarks only
// (data/calibration/gemm.csv, attention.csv, memory_bound.csv, each row with
// its source; `lostflops calibrate components` derives the factors, and the
// attention curves are read from the table itself). Whole runs never set a
// component; they judge the whole (`validate`, leave-one-source-out).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
enum class LinkScope { intra_node, inter_node };

// A measured bus-bandwidth-by-size curve (nccl-tests "busbw", out-of-place).
struct BusBwPoint {
    double bytes = 0;
    double busbw_GBps = 0;
    double time_us = 0;  // measured time of the whole collective at that size
};
struct BusBwCurve {
    Collective op = Collective::all_reduce;
    LinkScope scope = LinkScope::intra_node;
    int ranks = 0;                    // ranks in the measured run
    std::vector<BusBwPoint> points;   // sorted by bytes, strictly increasing
    // Where the ranks sat (nccl-tests' "# Rank N ... on HOST" lines): curves
    // price only groups of the same ranks per node (nccl_curve.h). 0 = not
    // recorded (profiles written before they were): an intra-node curve is
    // then taken as `ranks` on one node, an inter-node one is not used.
    int ranks_per_node = 0;
    int nodes = 0;
    std::string gpu;                  // device name nccl-tests printed ("" = not recorded)
};

// GemmDtype, the GEMM operand formats a device profile prices separately
// (data/calibration/gemm.csv), is spec.h's: a job's fp8 recipe names one.

// Attention kernels with published curves (data/calibration/attention.csv):
// FlashAttention-2 (also PyTorch SDPA's flash backend), FlashAttention-3, and
// cuDNN fused attention (Transformer Engine's FusedAttention).
enum class AttentionImpl { fa2, fa3, cudnn };
inline constexpr int kAttentionImplCount = 3;

// One measured attention point: efficiency = achieved FLOP/s over the GPU's
// bf16 dense peak (FLOPs as the FlashAttention papers count them: forward
// 4*b*s^2*h*d halved under the causal mask, backward 2.5x forward).
struct AttentionPoint {
    AttentionImpl kernel = AttentionImpl::fa2;
    bool backward = false;
    bool causal = false;
    int head_dim = 0;
    double seq = 0;
    double efficiency = 0;
};

// A family's attention curves: the measured points, sorted by kernel, pass,
// causal mask, head dimension and seq, and where each curve (the run of one
// kernel, pass, mask and head dimension) lies among them, indexed once when
// the points are set: an estimate looks curves up per plan
// (cost/attention_lookup.cpp) without searching the points. The points change only
// by assignment, so the index always describes them.
class AttentionCurves {
public:
    // points()[begin, end): one curve, by increasing seq.
    struct Curve {
        int head_dim = 0;
        uint32_t begin = 0, end = 0;
    };

    AttentionCurves() = default;
    // Sorts the points (unless sorted already) and indexes them.
    AttentionCurves(std::vector<AttentionPoint> points);  // NOLINT(google-explicit-constructor): a family's curves are its points

    const std::vector<AttentionPoint>& points() const { return points_; }
    // Names these points: a new set of points (construction, assignment of
    // points) gets a new id, a copy keeps it; 0 = no points. Lets a reader
    // memoise what it computes from the curves (attention_lookup.cpp).
    uint64_t id() const { return id_; }
    std::size_t size() const { return points_.size(); }
    bool empty() const { return points_.empty(); }
    const AttentionPoint& operator[](std::size_t i) const { return points_[i]; }
    auto begin() const { return points_.begin(); }
    auto end() const { return points_.end(); }

    // The curves of one kernel, pass and mask, by increasing head dimension.
    std::span<const Curve> curves(AttentionImpl kernel, bool backward, bool causal) const;
    // The curve of exactly this head dimension; nullptr when not measured.
    const Curve* curve(AttentionImpl kernel, bool backward, bool causal, int head_dim) const;

private:
    static constexpr int kKeys = kAttentionImplCount * 4;  // kernel x pass x mask
    static int key(AttentionImpl kernel, bool backward, bool causal) {
        return static_cast<int>(kernel) * 4 + (backward ? 2 : 0) + (causal ? 1 : 0);
    }
    std::vector<AttentionPoint> points_;
    std::vector<Curve> curves_;               // in the points' order
    std::array<uint32_t, kKeys + 1> first_{};  // curves_ of key k: [first_[k], first_[k + 1])
    uint64_t id_ = 0;
};

// The device profile of one architecture family: every efficiency of the
// GPU-side cost model for the GPUs whose `arch` it lists. A family is a table
// entry (data/calibration/default.yaml `devices:`), so a new accelerator
// family is a new entry, not new code.
struct DeviceFamily {
    std::string name;                // "hopper"
    std::vector<std::string> archs;  // Gpu::arch values it prices
    // Large-GEMM efficiency per GemmDtype, a fraction of the dense peak of the
    // precision; 0 = no measurement (an estimate that needs it is refused).
    std::array<double, kGemmDtypeCount> gemm_max{};
    double memory_bound = 0.7;       // fraction of HBM bandwidth of streaming kernels
    // Power: sustained compute scales as (W per dense bf16 TFLOP/s of the GPU
    // / reference_w_per_tflop)^power_exponent below the reference (a
    // power-capped board clocks down), 1 at or above it.
    double reference_w_per_tflop = 0;
    double power_exponent = 0;
    // The attention kernel each training stack runs on this family, indexed by
    // Framework (spec.h).
    std::array<AttentionImpl, kFrameworkCount> attention_kernel{};
    AttentionCurves attention;  // the curves, by kernel/pass/causal/head_dim/seq
};

// Calibration{} is the default profile's scalars: each default below is the
// value of data/calibration/default.yaml, where its source is (test
// CalibrationIo.StructDefaultsAreTheDefaultProfile holds them equal). The
// device families and the fitted_on list come from the file alone.
struct Calibration {
    std::string source = "<builtin>";
    std::vector<DeviceFamily> devices;
    double gemm_k_half = 24;          // k at which a GEMM's main loop runs at half speed, per dense TFLOP/s of an SM
    // Compute throughput a training job sustains over what the component
    // micro-benchmarks measured (kernels back to back for hours at the power
    // limit, beside NCCL kernels; micro-benchmarks run one kernel for
    // milliseconds and report the best shapes). System-level: fitted to runs.
    double sustained_compute = 0.9333;
    double kernel_overhead_us = 15;   // per kernel: launch + tail, GPU side
    double collective_launch_us = 15; // per collective, on top of link latency
    double host_op_us = 21;           // CPU time per operator issued from Python (forward, Python backward)
    double host_bwd_op_us = 5;        // CPU time per autograd node the backward's C++ engine evaluates
    // Framework hf (a transformers model in eager PyTorch; counts in
    // workload/host_ops_hf.cpp): CPU per top-level forward operator and per
    // backward autograd node, and torch.optim's Python per parameter tensor
    // and optimizer step.
    double hf_host_op_us = 28;
    double hf_host_bwd_op_us = 25;
    double hf_optimizer_tensor_us = 10;
    // Framework hf, the step's host work outside its operators and at its
    // synchronisations (docs/host-time.md): CPU per backward call (the
    // autograd engine's start and finish), per parameter tensor of
    // zero_grad, the GPU's idle after a blocking device-to-host copy until
    // the next kernel, and CPU per group of _grouped_mm's fallback loop.
    double hf_backward_call_us = 1300;
    double hf_zero_grad_tensor_us = 2;
    double hf_sync_us = 120;
    double hf_expert_loop_us = 19;
    // Framework hf in eager PyTorch in 16-bit, autocast or FSDP2's bf16
    // parameters (docs/eager-gpu.md "The GPU side"): the GPU's gap between back-to-back kernels, in place of
    // kernel_overhead_us (also a compiled transformers step's, Inductor's
    // kernels queued or replayed: DeviceUse::compiled_hf, 1.37-1.84 us on
    // the compiled traces of data/measured/h200-steps), and the achieved bandwidth, as a fraction of the
    // catalog HBM bandwidth, of PyTorch's slower elementwise paths: the
    // unvectorised bf16-to-fp32 copy, the fp32 multiply with a broadcast
    // operand, and mixed-dtype broadcasts and strided halves (rotary).
    double hf_kernel_gap_us = 2;
    double hf_upcast_hbm_fraction = 0.411;
    double hf_broadcast_hbm_fraction = 0.492;
    double hf_strided_hbm_fraction = 0.238;
    // Framework hf: the GEMM rate of the back-to-back components (power-bound)
    // over the same GEMM's inside a step whose other kernels let the board
    // clock up (data/measured/h200-steps); the GEMMs are priced at
    // gemm_max / this.
    double hf_power_bound_gemm_fraction = 0.864;
    // Framework hf under torch.compile: SDPA with transformers' boolean causal
    // mask (hf_attention.h masked_square_attention) runs the whole square at this
    // fraction of the unmasked kernel's rate, forward and backward.
    double hf_masked_attention_fwd_fraction = 0.51;
    double hf_masked_attention_bwd_fraction = 0.58;
    // Framework hf under torch.compile: CPU per kernel Inductor's wrapper launches.
    double compiled_launch_us = 19.1;
    // CUDA graphs (training.cuda_graphs): the host's cudaGraphLaunch per
    // kernel in the replayed graph.
    double cuda_graph_node_us = 2.9;
    // The PyTorch profiler's own host time per host event it records
    // (trace --job's prediction of the profiled step, lostflops/host_speed.h).
    double profiler_event_us = 1.44;
    // cuBLAS's fp32 GEMMs on the CUDA cores (TF32 off), of the fp32 peak.
    double fp32_gemm_efficiency = 0.51;
    double bus_eff_intra = 0.8;       // busbw / link bandwidth, NVLink
    double bus_eff_inter = 0.95;      // busbw / link bandwidth, network
    double p2p_eff = 0.8;             // send/recv bandwidth fraction (pipeline, CP ring)
    double dp_overlap = 0.9;          // share of last backward usable to hide DP traffic
    double tp_overlap = 0.6;          // share of TP traffic hidden when tp_comm_overlap
    double overlap_slowdown = 0.1;    // compute lost per second of hidden communication
    double optimizer_bytes_per_param = 32;  // Adam step traffic, mixed precision
    double memory_usable_fraction = 0.95;   // of HBM, rest: fragmentation
    double memory_reserved_bytes = 2.5e9;   // outside the allocator on a multi-GPU job: CUDA context, NCCL buffers
    double cuda_context_bytes = 0.5913e9;   // outside the allocator on one GPU: the CUDA context
    double workspace_bytes = 68e6;          // cuBLAS / cuDNN workspaces the allocator hands out
    std::vector<BusBwCurve> nccl;     // measured curves; override the factors above
    // The run tables the fitted (system-level) factors were fitted on, paths
    // from the repository root: `validate` refits without each source family
    // of them for its leave-one-source-out error.
    std::vector<std::string> fitted_on;

    // The family that prices GPUs of `arch`; throws InputError (naming the
    // profile and the architecture) when no family lists it.
    const DeviceFamily& device(const std::string& arch) const;
    DeviceFamily* find_family(const std::string& name);
    const DeviceFamily* find_family(const std::string& name) const;
};

// Built-in defaults (data/calibration/default.yaml).
Calibration default_calibration();
// Defaults overlaid with the keys of a YAML file; throws InputError.
Calibration load_calibration(const std::string& path);
// Serialise (the writer of `lostflops calibrate`); round-trips with load.
std::string calibration_to_yaml(const Calibration& c);

const char* to_string(Collective c);
const char* to_string(LinkScope s);
const char* to_string(GemmDtype d);
const char* to_string(AttentionImpl k);

// Defaults overlaid with the keys of YAML text; `source` names it in errors
// (load_calibration reads the file and calls this). Throws InputError.
Calibration parse_calibration_text(std::string_view text, const std::string& source);
// `base` overlaid with the keys of YAML text; keys absent keep base values.
Calibration overlay_calibration(const Calibration& base, std::string_view text,
                                const std::string& source);
// Inverse of to_string; nullopt for an unknown name.
std::optional<Collective> collective_from_string(std::string_view name);
std::optional<LinkScope> link_scope_from_string(std::string_view name);
std::optional<GemmDtype> gemm_dtype_from_string(std::string_view name);
std::optional<AttentionImpl> attention_impl_from_string(std::string_view name);

}  // namespace lostflops
