// Achieved bandwidth of the collectives of one rank (definitions in
// include/lostflops/trace.h, CollectiveStats): each analysed communication
// kernel joined by its correlation id with the message size Kineto recorded
// on it; per collective the summed size over the summed kernel time, and the
// bus bandwidth by nccl-tests' factors (NVIDIA nccl-tests, doc/PERFORMANCE.md:
// all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
// broadcast, reduce, send/recv 1). Element sizes: PyTorch's dtypes
// (c10/core/ScalarType.h) under the names Kineto writes.
#include <algorithm>
#include <map>

#include "lostflops/trace.h"
#include "trace/trace_internal.h"

namespace lostflops::trace::detail {
namespace {

double bus_factor(const std::string& collective, double n) {
    if (n < 1) return 1;
    if (collective == "all_reduce") return 2 * (n - 1) / n;
    if (collective == "all_gather" || collective == "reduce_scatter" || collective == "all_to_all") return (n - 1) / n;
    return 1;
}

}  // namespace

double dtype_bytes(std::string_view t) {
    static const std::pair<std::string_view, double> kSizes[] = {
        {"Float", 4},   {"Double", 8},  {"Half", 2},       {"BFloat16", 2}, {"Int", 4},
        {"Long", 8},    {"Short", 2},   {"Char", 1},       {"Byte", 1},     {"Bool", 1},
        {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1},
        {"Float8_e4m3fnuz", 1}, {"Float8_e5m2fnuz", 1}, {"UInt32", 4}, {"UInt64", 8}, {"UInt16", 2},
        // MX formats (PyTorch 2.7+): the e8m0 scales, and two fp4 values a byte.
        {"Float8_e8m0fnu", 1}, {"Float4_e2m1fn_x2", 1}, {"ComplexHalf", 4},
    };
    for (const auto& [name, bytes] : kSizes) {
        if (t == name) return bytes;
    }
    return 0;
}

std::vector<CollectiveStats> collective_stats(const TraceData& d, const std::vector<Picked>& ks) {
    std::map<std::string, CollectiveStats> by;
    for (const auto& k : ks) {
        if (k.cat != KernelCategory::communication) continue;
        const GpuEvent& g = d.gpu[k.ev];
        if (g.correlation == kNoCorrelation) continue;
        const auto it = std::lower_bound(d.comm_sizes.begin(), d.comm_sizes.end(), g.correlation,
                                         [](const CommSize& c, uint32_t key) { return c.correlation < key; });
        if (it == d.comm_sizes.end() || it->correlation != g.correlation) continue;
        const GpuLabel& l = d.label(g);
        const std::string name = collective_of(d.names[l.name_id], d.names[l.collective_id]);
        CollectiveStats& s = by[name];
        s.collective = name;
        ++s.calls;
        s.group_size = std::max<int64_t>(s.group_size, it->group_size);
        s.bytes += std::max(it->in_bytes, it->out_bytes);
        s.time_us += k.iv.end - k.iv.start;
    }
    std::vector<CollectiveStats> out;
    for (auto& [_, s] : by) {
        if (s.time_us > 0) {
            s.algbw_gbps = s.bytes / (s.time_us * 1e-6) / 1e9;
            s.busbw_gbps = s.algbw_gbps * bus_factor(s.collective, static_cast<double>(s.group_size));
        }
        out.push_back(s);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const CollectiveStats& a, const CollectiveStats& b) { return a.time_us > b.time_us; });
    return out;
}

}  // namespace lostflops::trace::detail
