// GPU spec parser (schema: data/catalog/gpus.yaml header) and
// Gpu::peak_tflops.
//
// Peaks are dense tensor-core figures (MFU is defined against the dense peak,
// DESIGN.md "Definitions"). The sanity bounds below are not physics, only
// "surely a typo": the largest GPU in the catalog (GB200) has 5e3 dense fp8
// TFLOP/s, 186 GiB and 8e3 GB/s, so 1e6 TFLOP/s, 10 TiB and 1e6 GB/s leave
// two orders of magnitude of headroom and still catch unit slips (bytes for
// GiB, FLOP/s for TFLOP/s).
#include "spec/gpu_parse.h"

#include <cmath>
#include <optional>
#include <vector>

#include "lostflops/error.h"
#include "spec/yaml_reader.h"

namespace lostflops {

namespace {

constexpr double kMaxTflops = 1e6;        // sanity bound, see header comment
constexpr double kMaxMemoryGiB = 10240;   // 10 TiB
constexpr double kMaxBandwidthGBps = 1e6; // 1 PB/s
constexpr int64_t kMaxSmCount = 100'000;
constexpr double kMaxTdpW = 100'000;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;

// Architectures the cost model knows by name; a typo is an error, not a default.
const std::vector<std::string> kArchs = {"volta",  "turing",    "ampere", "ada",
                                         "hopper", "blackwell", "cdna2",  "cdna3"};

std::string last_part(const std::string& key) {
    const auto dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

// A required number in (0, max].
double positive(YamlSection& s, const std::string& key, double max) {
    const double v = s.num_req(key, 0, max);
    if (v <= 0) throw InputError(s.file(), s.key_path(key), "must be greater than 0");
    return v;
}

std::optional<double> positive_opt(YamlSection& s, const std::string& key, double max) {
    auto v = s.num_opt(key, 0, max);
    if (v && *v <= 0) throw InputError(s.file(), s.key_path(key), "must be greater than 0");
    return v;
}

void read_peaks(YamlSection& parent, Gpu& g) {
    YAML::Node n = parent.raw("peak_tflops");
    const std::string path = parent.key_path("peak_tflops");
    if (!n) throw InputError(parent.file(), path, "missing; expected {fp16, bf16, fp8} dense TFLOP/s");
    if (!n.IsMap()) throw InputError(parent.file(), path, "expected a mapping {fp16, bf16, fp8}");
    YamlSection s(n, parent.file(), path);
    // 0 marks a precision without tensor-core support (V100 bf16).
    g.peak_fp16_tflops = s.num_req("fp16", 0, kMaxTflops);
    g.peak_bf16_tflops = s.num_req("bf16", 0, kMaxTflops);
    g.peak_fp8_tflops = s.num_or("fp8", 0, 0, kMaxTflops);
    s.finish();
    if (g.peak_fp16_tflops <= 0 && g.peak_bf16_tflops <= 0)
        throw InputError(parent.file(), path, "fp16 and bf16 are both 0; expected a dense peak");
}

int64_t read_memory_bytes(YamlSection& s) {
    const auto gib = positive_opt(s, "memory_GiB", kMaxMemoryGiB);
    const auto gb = positive_opt(s, "memory_GB", kMaxMemoryGiB * kGiB / kGB);
    if (gib && gb)
        throw InputError(s.file(), s.key_path("memory_GB"),
                         "give memory_GiB or memory_GB, not both");
    if (gib) return std::llround(*gib * kGiB);
    if (gb) return std::llround(*gb * kGB);
    throw InputError(s.file(), s.key_path("memory_GiB"),
                     "missing; expected HBM capacity (memory_GiB, or memory_GB in 1e9 bytes)");
}

}  // namespace

Gpu parse_gpu_node(const YAML::Node& node, const std::string& file, const std::string& key) {
    if (!node || node.IsNull()) throw InputError(file, key, "missing GPU spec");
    if (!node.IsMap())
        throw InputError(file, key, "expected a GPU spec mapping (arch, peak_tflops, memory_GiB, ...)");
    YamlSection s(node, file, key);
    Gpu g;
    g.name = s.str_opt("name").value_or(last_part(key));
    const auto arch = s.choice_opt("arch", kArchs);
    if (!arch) {
        std::string list;
        for (const auto& a : kArchs) list += (list.empty() ? "" : ", ") + a;
        throw InputError(file, s.key_path("arch"), "missing; expected one of: " + list);
    }
    g.arch = *arch;
    read_peaks(s, g);
    g.memory_bytes = read_memory_bytes(s);
    g.hbm_GBps = positive(s, "hbm_GBps", kMaxBandwidthGBps);
    g.nvlink_GBps = positive(s, "nvlink_GBps", kMaxBandwidthGBps);
    g.sm_count = static_cast<int>(s.int_req("sm_count", 1, kMaxSmCount));
    g.tdp_w = positive(s, "tdp_w", kMaxTdpW);
    s.str_opt("source");  // documentation only; must still be text
    s.finish();
    return g;
}

double Gpu::peak_tflops(Precision p) const {
    switch (p) {
        case Precision::fp16: return peak_fp16_tflops;
        case Precision::bf16: return peak_bf16_tflops;
        case Precision::fp8: return peak_fp8_tflops;
    }
    return 0;  // unreachable: every enumerator is handled above
}

}  // namespace lostflops
