// GPU spec parser (schema: data/catalog/gpus.yaml header) and
// Gpu::peak_tflops.
//
// fp32 training (Precision::fp32) is priced at the TF32 tensor-core peak
// (peak_tflops.tf32), not the fp32 CUDA-core one: Megatron-Core's default
// layers are Transformer Engine's, whose cuBLASLt GEMM sets
// CUBLAS_COMPUTE_32F_FAST_TF32 for every input type but fp8 e5m2 ("default
// to tf32", transformer_engine/common/gemm/cublaslt_gemm.cu, cublas_gemm());
// PyTorch's own matmuls default to full fp32 since 1.12
// (torch.backends.cuda.matmul.allow_tf32 = False; docs/source/notes/
// cuda.rst "TensorFloat-32 (TF32) on Ampere (and later) devices", pytorch PR
// #76509), but NVIDIA's PyTorch containers, which Megatron-LM's docker/
// Dockerfile.ci.* build on (nvcr.io/nvidia/pytorch), set
// TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (an NGC build reports allow_tf32 True
// in pytorch/pytorch#100145); Megatron-LM itself never sets
// allow_tf32 (only its batch-invariance tests turn it off). A GPU without
// a TF32 figure refuses fp32 jobs (job/validate.cpp).
//
// Peaks are dense tensor-core figures (MFU is defined against the dense peak,
// PaLM, Chowdhery et al. 2022, Appendix B). Every figure must lie in its plausible range
// (job/hardware_bounds.h, with the reasoning): not physics, only "surely a typo
// or a unit slip" (bytes for GiB, FLOP/s for TFLOP/s).
#include "job/gpu_parse.h"

#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "lostflops/accelerator.h"
#include "lostflops/error.h"
#include "job/hardware_bounds.h"
#include "job/yaml_reader.h"

namespace lostflops {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;

// Architectures the cost model knows by name (lostflops/accelerator.h); a
// typo is an error, not a default.
// On first use (not a global initialised from another file's table: the
// order of static initialisation across files is unspecified).
const std::vector<std::string>& archs() {
    static const std::vector<std::string> a = accelerator_archs();
    return a;
}

std::string last_part(const std::string& key) {
    const auto dot = key.rfind('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

// A peak: 0 (no tensor cores for this precision) or in [kMinTflops, kMaxTflops].
double peak(YamlSection& s, const std::string& key, std::optional<double> fallback) {
    const auto v = fallback ? s.num_or(key, *fallback, 0, bounds::kMaxTflops) : s.num_req(key, 0, bounds::kMaxTflops);
    if (v != 0 && v < bounds::kMinTflops)
        throw InputError(s.file(), s.key_path(key),
                         fmt::format("{} TFLOP/s is out of range; expected 0 (no tensor cores for this precision) "
                                     "or {} to {} dense TFLOP/s",
                                     v, bounds::kMinTflops, bounds::kMaxTflops));
    return v;
}

void read_peaks(YamlSection& parent, Gpu& g) {
    YAML::Node n = parent.raw("peak_tflops");
    const std::string path = parent.key_path("peak_tflops");
    if (!n) throw parent.missing("peak_tflops", "expected {fp16, bf16, fp8, tf32, fp32} dense TFLOP/s");
    if (!n.IsMap()) throw InputError(parent.file(), path, "expected a mapping {fp16, bf16, fp8, tf32, fp32}");
    YamlSection s(n, parent.file(), path);
    // The whole schema first: a missing fp16 beside a given bf16 is "missing",
    // not a typo of bf16.
    s.check_keys({"fp16", "bf16", "fp8", "tf32", "fp32"});
    // 0 marks a precision without tensor-core support (V100 bf16).
    g.peak_fp16_tflops = peak(s, "fp16", std::nullopt);
    g.peak_bf16_tflops = peak(s, "bf16", std::nullopt);
    g.peak_fp8_tflops = peak(s, "fp8", 0.0);
    g.peak_tf32_tflops = peak(s, "tf32", 0.0);
    g.peak_fp32_tflops = peak(s, "fp32", 0.0);
    s.finish();
    if (g.peak_fp16_tflops <= 0 && g.peak_bf16_tflops <= 0)
        throw InputError(parent.file(), path, "fp16 and bf16 are both 0; expected a dense peak");
}

int64_t read_memory_bytes(YamlSection& s) {
    const auto gib = s.num_opt("memory_GiB", bounds::kMinMemoryGiB, bounds::kMaxMemoryGiB);
    // The same 1 GiB .. 10 TiB in 1e9-byte GB, rounded to whole GB.
    const auto gb = s.num_opt("memory_GB", 1.0, 10'995.0);
    if (gib && gb)
        throw InputError(s.file(), s.key_path("memory_GB"),
                         "give memory_GiB or memory_GB, not both");
    if (gib) return std::llround(*gib * kGiB);
    if (gb) return std::llround(*gb * kGB);
    throw s.missing("memory_GiB", "expected HBM capacity (memory_GiB, or memory_GB in 1e9 bytes)");
}

}  // namespace

Gpu parse_gpu_node(const YAML::Node& node, const std::string& file, const std::string& key) {
    if (!node || node.IsNull()) throw InputError(file, key, "missing GPU spec");
    if (!node.IsMap())
        throw InputError(file, key, "expected a GPU spec mapping (arch, peak_tflops, memory_GiB, ...)");
    YamlSection s(node, file, key);
    Gpu g;
    g.name = s.str_opt("name").value_or(last_part(key));
    const auto arch = s.choice_opt("arch", archs());
    if (!arch) {
        std::string list;
        for (const auto& a : archs()) list += (list.empty() ? "" : ", ") + a;
        throw InputError(file, s.key_path("arch"), "missing; expected one of: " + list);
    }
    g.arch = *arch;
    read_peaks(s, g);
    g.memory_bytes = read_memory_bytes(s);
    // The driver's figure (a measurement with its source): at most the
    // datasheet's, at least 80 % of it (the catalog's are 98.9-99.2 %).
    if (const auto total = s.num_opt("memory_total_GiB", bounds::kMinMemoryGiB, bounds::kMaxMemoryGiB)) {
        const double datasheet_gib = static_cast<double>(g.memory_bytes) / kGiB;
        if (*total > datasheet_gib || *total < 0.8 * datasheet_gib)
            throw InputError(file, s.key_path("memory_total_GiB"),
                             fmt::format("{} GiB; what the driver reports is within 80-100 % of the HBM capacity "
                                         "({:.1f} GiB)", *total, datasheet_gib));
        g.memory_total_bytes = std::llround(*total * kGiB);
    }
    g.hbm_GBps = s.num_req("hbm_GBps", bounds::kMinHbmGBps, bounds::kMaxHbmGBps);
    g.nvlink_GBps = s.num_req("nvlink_GBps", bounds::kMinLinkGBps, bounds::kMaxLinkGBps);
    g.sm_count = static_cast<int>(s.int_req("sm_count", 1, bounds::kMaxSmCount));
    g.tdp_w = s.num_req("tdp_w", bounds::kMinTdpW, bounds::kMaxTdpW);
    g.source = s.str_opt("source").value_or("");  // documentation only; must still be text
    s.finish();
    return g;
}

double Gpu::peak_tflops(Precision p) const {
    switch (p) {
        case Precision::fp16: return peak_fp16_tflops;
        case Precision::bf16: return peak_bf16_tflops;
        case Precision::fp8: return peak_fp8_tflops;
        case Precision::fp32: return peak_tf32_tflops;
    }
    return 0;  // unreachable: every enumerator is handled above
}

}  // namespace lostflops
