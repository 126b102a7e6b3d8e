// Writer of calibration profiles: every key of calibration_fields.h plus the
// `nccl` curves, in the layout of data/calibration/default.yaml. Numbers are
// written in the shortest form that reads back to the same double (fmt "{}"),
// so load_calibration(calibration_to_yaml(c)) == c.
#include <iterator>

#include <fmt/format.h>

#include "calibrate/calibration_fields.h"
#include "lostflops/calibration.h"

namespace lostflops {

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
    if (c.devices.empty())
        line("devices: {{}}");
    else
        line("devices:");
    for (const auto& d : c.devices) {
        line("  {}:", d.name);
        std::string archs;
        for (const auto& a : d.archs) archs += (archs.empty() ? "" : ", ") + a;
        line("    archs: [{}]", archs);
        std::string gemm;
        for (GemmDtype t : calib::kGemmDtypes)
            gemm += fmt::format("{}{}: {}", gemm.empty() ? "" : ", ", to_string(t), d.gemm_max[static_cast<int>(t)]);
        line("    gemm_max: {{{}}}", gemm);
        for (const auto& f : calib::kFamilyFields) line("    {}: {}", f.key, d.*f.member);
        std::string kernels;
        for (Framework fw : calib::kFrameworks)
            kernels += fmt::format("{}{}: {}", kernels.empty() ? "" : ", ", calib::framework_key(fw),
                                   to_string(d.attention_kernel[static_cast<int>(fw)]));
        line("    attention_kernel: {{{}}}", kernels);
        if (d.attention.empty()) continue;
        line("    # [kernel, pass, causal, head_dim, seq, efficiency of the bf16 dense peak]");
        line("    attention:");
        for (const auto& p : d.attention)
            line("      - [{}, {}, {}, {}, {}, {}]", to_string(p.kernel), p.backward ? "bwd" : "fwd", p.causal ? 1 : 0,
                 p.head_dim, p.seq, p.efficiency);
    }
    for (const auto& f : calib::kScalarFields) line("{}: {}", f.key, c.*f.member);
    if (c.fitted_on.empty()) {
        line("fitted_on: []");
    } else {
        line("fitted_on:");
        for (const auto& t : c.fitted_on) {
            std::string q = t;
            for (char& ch : q)
                if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20) ch = '_';
            line("  - \"{}\"", q);
        }
    }
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
        if (curve.nodes > 0) {
            line("    ranks_per_node: {}", curve.ranks_per_node);
            line("    nodes: {}", curve.nodes);
        }
        if (!curve.gpu.empty()) {
            std::string g = curve.gpu;
            for (char& ch : g)
                // Device names are ASCII ("NVIDIA H100 80GB HBM3"); anything else
                // (control bytes, bytes that are not UTF-8) would not read back.
                if (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f)
                    ch = ' ';
            line("    gpu: \"{}\"", g);
        }
        line("    points:");
        for (const auto& p : curve.points)
            line("      - [{}, {}, {}]", p.bytes, p.busbw_GBps, p.time_us);
    }
    return out;
}

}  // namespace lostflops
