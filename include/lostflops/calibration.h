// Calibration profile: every efficiency factor of the cost model in one place.
//
// The defaults live in data/calibration/default.yaml (embedded in the binary),
// each with its source or with what it was fitted on. A user with measurements
// replaces any of them with `--calibration FILE` (a YAML file with the same keys;
// keys not given keep the default). `lostflops calibrate nccl` writes the
// `nccl` section from nccl-tests output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
};

// Efficiency factors for one GPU architecture (all fractions in (0, 1]).
struct DeviceFactors {
    double gemm_max = 0.8;        // best fraction of dense peak a large GEMM reaches
    double attention_fwd = 0.7;   // flash-attention forward, relative to gemm_max
    double attention_bwd = 0.55;  // flash-attention backward, relative to gemm_max
    double memory_bound = 0.7;    // fraction of HBM bandwidth of elementwise kernels
};

struct Calibration {
    std::string source = "<builtin>";
    DeviceFactors ampere;    // also used for volta and cdna
    DeviceFactors hopper;    // also used for blackwell
    double gemm_k_half = 64;          // k at which the main loop runs at half speed
    double kernel_overhead_us = 4;    // per kernel: launch + tail, GPU side
    double collective_launch_us = 15; // per collective, on top of link latency
    double host_op_us = 20;           // CPU time per framework op the forward issues (eager Python)
    double host_bwd_op_us = 8;        // CPU time per autograd node the backward runs (C++ engine)
    double bus_eff_intra = 0.8;       // busbw / link bandwidth, NVLink
    double bus_eff_inter = 0.85;      // busbw / link bandwidth, network
    double p2p_eff = 0.8;             // pipeline send/recv bandwidth fraction
    double dp_overlap = 0.9;          // share of last backward usable to hide DP traffic
    double tp_overlap = 0.6;          // share of TP traffic hidden when tp_comm_overlap
    double overlap_slowdown = 0.2;    // compute lost per second of hidden communication
    double optimizer_bytes_per_param = 32;  // Adam step traffic, mixed precision
    double memory_usable_fraction = 0.95;   // of HBM, rest: fragmentation
    double memory_reserved_bytes = 2.5e9;   // CUDA context, cuBLAS/NCCL workspaces
    std::vector<BusBwCurve> nccl;     // measured curves; override the factors above

    const DeviceFactors& device(const std::string& arch) const {
        return (arch == "hopper" || arch == "blackwell") ? hopper : ampere;
    }
};

// Built-in defaults (data/calibration/default.yaml).
Calibration default_calibration();
// Defaults overlaid with the keys of a YAML file; throws InputError.
Calibration load_calibration(const std::string& path);
// Serialise (the writer of `lostflops calibrate`); round-trips with load.
std::string calibration_to_yaml(const Calibration& c);

const char* to_string(Collective c);
const char* to_string(LinkScope s);

// Defaults overlaid with the keys of YAML text; `source` names it in errors
// (load_calibration reads the file and calls this). Throws InputError.
Calibration parse_calibration_text(std::string_view text, const std::string& source);
// `base` overlaid with the keys of YAML text; keys absent keep base values.
Calibration overlay_calibration(const Calibration& base, std::string_view text,
                                const std::string& source);
// Inverse of to_string; nullopt for an unknown name.
std::optional<Collective> collective_from_string(std::string_view name);
std::optional<LinkScope> link_scope_from_string(std::string_view name);

}  // namespace lostflops
