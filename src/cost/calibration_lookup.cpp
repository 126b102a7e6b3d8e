// The lookups of lostflops/calibration.h that the cost model calls (moved
// from calibrate/ so that cost/ includes nothing above it): the names of the
// profile's enums, a device family by architecture, and the index of a
// family's attention curves (cost/attention_lookup.cpp looks them up per plan).
#include "cost/calibration_lookup.h"

#include <algorithm>
#include <atomic>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "lostflops/error.h"

namespace lostflops {

const char* to_string(Collective c) {
    switch (c) {
        case Collective::all_reduce: return "all_reduce";
        case Collective::all_gather: return "all_gather";
        case Collective::reduce_scatter: return "reduce_scatter";
        case Collective::all_to_all: return "all_to_all";
        case Collective::send_recv: return "send_recv";
    }
    return "unknown";
}

const char* to_string(LinkScope s) {
    switch (s) {
        case LinkScope::intra_node: return "intra_node";
        case LinkScope::inter_node: return "inter_node";
    }
    return "unknown";
}

std::optional<Collective> collective_from_string(std::string_view name) {
    for (Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                         Collective::all_to_all, Collective::send_recv})
        if (name == to_string(c)) return c;
    return std::nullopt;
}

std::optional<LinkScope> link_scope_from_string(std::string_view name) {
    for (LinkScope s : {LinkScope::intra_node, LinkScope::inter_node})
        if (name == to_string(s)) return s;
    return std::nullopt;
}

const char* to_string(GemmDtype d) {
    switch (d) {
        case GemmDtype::bf16: return "bf16";
        case GemmDtype::fp8_tensor: return "fp8_tensor";
        case GemmDtype::fp8_row: return "fp8_row";
        case GemmDtype::fp8_block: return "fp8_block";
        case GemmDtype::mxfp8: return "mxfp8";
    }
    return "?";
}

const char* to_string(AttentionImpl k) {
    switch (k) {
        case AttentionImpl::fa2: return "fa2";
        case AttentionImpl::fa3: return "fa3";
        case AttentionImpl::cudnn: return "cudnn";
    }
    return "?";
}

// The enums' values are 0 .. count - 1 in declaration order (calibration.h).
std::optional<GemmDtype> gemm_dtype_from_string(std::string_view name) {
    for (int i = 0; i < kGemmDtypeCount; ++i)
        if (name == to_string(static_cast<GemmDtype>(i))) return static_cast<GemmDtype>(i);
    return std::nullopt;
}

std::optional<AttentionImpl> attention_impl_from_string(std::string_view name) {
    for (int i = 0; i < kAttentionImplCount; ++i)
        if (name == to_string(static_cast<AttentionImpl>(i))) return static_cast<AttentionImpl>(i);
    return std::nullopt;
}

namespace {

bool attention_order(const AttentionPoint& a, const AttentionPoint& b) {
    return std::tie(a.kernel, a.backward, a.causal, a.head_dim, a.seq) <
           std::tie(b.kernel, b.backward, b.causal, b.head_dim, b.seq);
}

}  // namespace

void calib::sort_attention_points(std::vector<AttentionPoint>& v) {
    std::sort(v.begin(), v.end(), attention_order);
}

AttentionCurves::AttentionCurves(std::vector<AttentionPoint> points) : points_(std::move(points)) {
    static std::atomic<uint64_t> next_id{1};
    id_ = points_.empty() ? 0 : next_id.fetch_add(1, std::memory_order_relaxed);
    if (!std::is_sorted(points_.begin(), points_.end(), attention_order)) calib::sort_attention_points(points_);
    // One pass: a curve ends where the (kernel, pass, mask, head dim) changes.
    const auto n = static_cast<uint32_t>(points_.size());
    int k = 0;
    for (uint32_t i = 0; i < n;) {
        const AttentionPoint& p = points_[i];
        const int pk = key(p.kernel, p.backward, p.causal);
        uint32_t j = i + 1;
        while (j < n && key(points_[j].kernel, points_[j].backward, points_[j].causal) == pk &&
               points_[j].head_dim == p.head_dim)
            ++j;
        for (; k <= pk; ++k) first_[k] = static_cast<uint32_t>(curves_.size());
        curves_.push_back({p.head_dim, i, j});
        i = j;
    }
    for (; k <= kKeys; ++k) first_[k] = static_cast<uint32_t>(curves_.size());
}

std::span<const AttentionCurves::Curve> AttentionCurves::curves(AttentionImpl kernel, bool backward,
                                                                bool causal) const {
    const int k = key(kernel, backward, causal);
    if (k < 0 || k >= kKeys) return {};
    return {curves_.data() + first_[k], curves_.data() + first_[k + 1]};
}

const AttentionCurves::Curve* AttentionCurves::curve(AttentionImpl kernel, bool backward, bool causal,
                                                     int head_dim) const {
    for (const Curve& c : curves(kernel, backward, causal))
        if (c.head_dim == head_dim) return &c;
    return nullptr;
}

const DeviceFamily* Calibration::find_family(const std::string& name) const {
    for (const auto& f : devices)
        if (f.name == name) return &f;
    return nullptr;
}

DeviceFamily* Calibration::find_family(const std::string& name) {
    for (auto& f : devices)
        if (f.name == name) return &f;
    return nullptr;
}

const DeviceFamily& Calibration::device(const std::string& arch) const {
    for (const auto& f : devices)
        if (std::find(f.archs.begin(), f.archs.end(), arch) != f.archs.end()) return f;
    std::string names;
    for (const auto& f : devices) names += (names.empty() ? "" : ", ") + f.name;
    throw InputError(source, "devices", fmt::format("no device family prices GPUs of architecture '{}' "
                                                    "(families: {}); add it to a family's archs",
                                                    arch, names.empty() ? "none" : names));
}

}  // namespace lostflops
