// Kernel classification by name and profiler category.
//
// HTA-compatible rules (hta/utils/utils.py get_kernel_type, is_comm_kernel,
// is_memory_kernel): communication = name starts with "nccl" or contains
// "ncclKernel" or "gloo:"; memory = name contains "Memcpy" or "Memset";
// computation = everything else. Native rules add the profiler's own
// categories (gpu_memcpy/gpu_memset), the "Collective name" argument PyTorch
// writes on NCCL kernels, NCCL 2.19+ names (ncclDevKernel_*) and RCCL.
// Compute kernels are split by name patterns of the common libraries:
// cuBLAS/cuBLASLt (gemm, sm80_xmma, nvjet), CUTLASS, rocBLAS/Tensile (Cijk_),
// FlashAttention (flash_fwd/bwd), xFormers/PyTorch memory-efficient
// attention (fmha), PyTorch's ATen elementwise/reduce/norm kernels; FBGEMM's
// (Meta's FBGEMM_GPU: embedding bags, jagged tensors) are not GEMMs for
// carrying the library's name.
#include <algorithm>
#include <array>
#include <cctype>

#include "lostflops/trace.h"

namespace lostflops::trace {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool has(std::string_view hay, std::string_view needle) {
    return hay.find(needle) != std::string_view::npos;
}

template <std::size_t N>
bool has_any(std::string_view hay, const std::array<std::string_view, N>& needles) {
    return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) { return has(hay, n); });
}

bool is_comm_name(std::string_view name, bool hta) {
    if (name.substr(0, 4) == "nccl" || has(name, "ncclKernel") || has(name, "gloo:")) return true;
    if (hta) return false;
    const std::string l = lower(name);
    return has(l, "nccldevkernel") || has(l, "ncclkernel") || l.rfind("rccl", 0) == 0 ||
           has(l, "rccl_") || l.rfind("nccl", 0) == 0;
}

KernelCategory compute_category(std::string_view name) {
    std::string l = lower(name);
    // FBGEMM's kernels (fbgemm_gpu::split_embedding_*, batched_unary_embeddings,
    // jagged tensors, ...) carry "gemm" in the library's name, not in what they
    // do: the library name is no evidence of a GEMM (its GEMMs are CUTLASS or
    // name themselves, e.g. grouped_gemm, f8f8bf16 rowwise).
    for (std::size_t at = l.find("fbgemm"); at != std::string::npos; at = l.find("fbgemm", at)) l.replace(at, 6, "fb_lib");
    static constexpr std::array<std::string_view, 7> attention{
        "flash", "fmha", "attention", "attn", "sdpa", "mha_fwd", "mha_bwd"};
    if (has_any(l, attention)) return KernelCategory::attention;
    static constexpr std::array<std::string_view, 14> gemm{
        "gemm", "cijk_", "cutlass", "xmma", "matmul", "cublas", "nvjet", "s16816", "s1688",
        "s884", "hmma", "wgrad", "dgrad", "convolve"};
    if (has_any(l, gemm)) return KernelCategory::gemm;
    if (has(l, "triton") && (has(l, "_mm") || has(l, "bmm") || has(l, "addmm"))) {
        return KernelCategory::gemm;
    }
    static constexpr std::array<std::string_view, 29> elementwise{
        "norm", "softmax", "elementwise", "vectorized", "reduce", "dropout", "gelu", "silu",
        "swiglu", "relu", "activation", "rotary", "rope", "unrolled", "copy", "fill", "cast",
        "transpose", "catarray", "index", "triton", "cross_entropy", "bn_fw", "bn_bw",
        "gammabeta", "moments", "nchwtonhwc", "nhwctonchw", "pool"};
    if (has_any(l, elementwise)) return KernelCategory::norm_elementwise;
    return KernelCategory::other_compute;
}

}  // namespace

const char* to_string(KernelCategory c) {
    switch (c) {
        case KernelCategory::gemm: return "gemm";
        case KernelCategory::attention: return "attention";
        case KernelCategory::norm_elementwise: return "norm_elementwise";
        case KernelCategory::other_compute: return "other_compute";
        case KernelCategory::communication: return "communication";
        case KernelCategory::memcpy: return "memcpy";
        case KernelCategory::memset: return "memset";
        case KernelCategory::sync: return "sync";
    }
    return "other_compute";
}

KernelCategory classify_kernel(std::string_view name, EventKind kind,
                               std::string_view collective_arg, bool hta_compatible) {
    if (kind == EventKind::cuda_sync) return KernelCategory::sync;
    if (hta_compatible) {
        if (is_comm_name(name, true)) return KernelCategory::communication;
        if (has(name, "Memcpy")) return KernelCategory::memcpy;
        if (has(name, "Memset")) return KernelCategory::memset;
        return compute_category(name);
    }
    if (!collective_arg.empty() || is_comm_name(name, false)) return KernelCategory::communication;
    if (kind == EventKind::gpu_memcpy || name.substr(0, 6) == "Memcpy") return KernelCategory::memcpy;
    if (kind == EventKind::gpu_memset || name.substr(0, 6) == "Memset") return KernelCategory::memset;
    return compute_category(name);
}

std::string collective_of(std::string_view name, std::string_view collective_arg) {
    std::string s = lower(collective_arg.empty() ? name : collective_arg);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (has(s, "allreduce")) return "all_reduce";
    if (has(s, "reducescatter")) return "reduce_scatter";
    if (has(s, "allgather")) return "all_gather";
    if (has(s, "alltoall")) return "all_to_all";
    if (has(s, "broadcast") || has(s, "bcast")) return "broadcast";
    if (has(s, "sendrecv") || has(s, "send") || has(s, "recv")) return "send_recv";
    if (has(s, "reduce")) return "reduce";
    return "other";
}

}  // namespace lostflops::trace
