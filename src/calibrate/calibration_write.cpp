// Writer of calibration profiles: every key of calibration_fields.h plus the
// `nccl` curves, in the layout of data/calibration/default.yaml. Numbers are
// written in the shortest form that reads back to the same double (fmt "{}"),
// so load_calibration(calibration_to_yaml(c)) == c.
#include <iterator>

#include <fmt/format.h>

#include "calibrate/calibration_fields.h"
#include "lostflops/calibration.h"

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

std::string calibration_to_yaml(const Calibration& c) {
    std::string out;
    auto line = [&out]<typename... Args>(fmt::format_string<Args...> f, Args&&... args) {
        fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
        out += '\n';
    };
    std::string source = c.source;
    for (char& ch : source)
        if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    line("# lostflops calibration profile (source: {}).", source);
    line("# Keys as in data/calibration/default.yaml; `--calibration FILE` reads it.");
    for (const auto& d : calib::kDeviceSections) {
        line("{}:", d.key);
        for (const auto& f : calib::kDeviceFields) line("  {}: {}", f.key, (c.*d.member).*f.member);
    }
    for (const auto& f : calib::kScalarFields) line("{}: {}", f.key, c.*f.member);
    if (c.nccl.empty()) {
        line("nccl: []");
        return out;
    }
    line("# Measured nccl-tests curves (out-of-place): [bytes, busbw_GBps, time_us].");
    line("nccl:");
    for (const auto& curve : c.nccl) {
        line("  - op: {}", to_string(curve.op));
        line("    scope: {}", to_string(curve.scope));
        line("    ranks: {}", curve.ranks);
        line("    points:");
        for (const auto& p : curve.points)
            line("      - [{}, {}, {}]", p.bytes, p.busbw_GBps, p.time_us);
    }
    return out;
}

}  // namespace lostflops
