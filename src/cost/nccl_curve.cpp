// Collective time from a measured nccl-tests bus-bandwidth curve.
//
// Bus factor F(op, n) from NVIDIA/nccl-tests doc/PERFORMANCE.md ("Summary"):
// busbw = algbw * F, algbw = S / t with S the full buffer size, so
// t = S * F(op, n) / busbw. Between measured sizes busbw is interpolated
// linearly in ln(S) (nccl-tests steps sizes geometrically, by -f 2 usually);
// outside the range the alpha-beta model (Hockney 1994; Thakur, Rabenseifner
// & Gropp 2005) t = a + b*S is drawn through the two nearest points, so a
// message below the sweep pays the latency a and one above it the measured
// per-byte slope. Curves are matched by placement (ranks per node, scope),
// never across placements. Hot path of an estimate: no allocation, a linear
// scan over the few curves and a binary search over the points.
#include "lostflops/nccl_curve.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "lostflops/accelerator.h"

namespace lostflops {

double bus_factor(Collective op, int ranks) {
    if (ranks <= 1) return 0.0;
    const double n = ranks;
    switch (op) {
        case Collective::all_reduce: return 2.0 * (n - 1.0) / n;
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all: return (n - 1.0) / n;
        case Collective::send_recv: return 1.0;
    }
    return 1.0;
}

CurveKey curve_layout(const BusBwCurve& c) {
    if (c.nodes > 0) return {c.ranks, c.ranks_per_node, c.nodes};
    if (c.scope == LinkScope::intra_node) return {c.ranks, c.ranks, 1};
    return {c.ranks, 0, 0};
}

const BusBwCurve* find_curve(const Calibration& cal, Collective op, const CurveKey& key) {
    const BusBwCurve* best = nullptr;
    double best_distance = 0;
    for (const BusBwCurve& c : cal.nccl) {
        if (c.op != op || c.points.empty() || c.ranks < 1) continue;
        const CurveKey l = curve_layout(c);
        if (l.ranks_per_node == 0 || l.ranks_per_node != key.ranks_per_node) continue;
        if ((l.nodes > 1) != (key.nodes > 1)) continue;
        // Node count: distance in log (as a ratio >= 1, so that 2x either
        // way ties exactly); a tie goes to the larger measured run.
        const double a = l.nodes, b = std::max(key.nodes, 1);
        const double d = a > b ? a / b : b / a;
        if (!best || d < best_distance || (d == best_distance && c.ranks > best->ranks)) {
            best = &c;
            best_distance = d;
        }
    }
    return best;
}

double curve_busbw_GBps(const BusBwCurve& curve, double bytes) {
    const auto& p = curve.points;
    if (p.empty()) return 0.0;
    if (bytes <= p.front().bytes) return p.front().busbw_GBps;
    if (bytes >= p.back().bytes) return p.back().busbw_GBps;
    // First point with size > bytes; its predecessor has size <= bytes.
    auto hi = std::upper_bound(p.begin(), p.end(), bytes,
                               [](double b, const BusBwPoint& q) { return b < q.bytes; });
    auto lo = hi - 1;
    const double span = std::log(hi->bytes / lo->bytes);
    if (!(span > 0)) return lo->busbw_GBps;
    const double w = std::log(bytes / lo->bytes) / span;
    return lo->busbw_GBps + w * (hi->busbw_GBps - lo->busbw_GBps);
}

namespace {

// Time of point p for `factor` = F(op, ranks) of the group priced.
double point_time_s(const BusBwPoint& p, double factor) { return p.bytes * factor / (p.busbw_GBps * 1e9); }

// t = a + b*S through points p and q (p.bytes < q.bytes), evaluated at S;
// a negative intercept (a curve that is bandwidth-bound already) becomes 0.
double alpha_beta_s(const BusBwPoint& p, const BusBwPoint& q, double factor, double bytes, bool below) {
    const double tp = point_time_s(p, factor), tq = point_time_s(q, factor);
    double b = (tq - tp) / (q.bytes - p.bytes);
    if (!(b >= 0)) b = 0;
    if (below) {
        double a = tp - b * p.bytes;
        if (a < 0) {
            a = 0;
            b = tp / p.bytes;
        }
        return a + b * bytes;
    }
    return tq + b * (bytes - q.bytes);
}

}  // namespace

std::optional<double> curve_time_s(const Calibration& cal, Collective op, const CurveKey& key, double bytes) {
    if (key.ranks <= 1) return 0.0;  // no traffic, curve or not
    const BusBwCurve* curve = find_curve(cal, op, key);
    if (!curve) return std::nullopt;
    if (!(bytes > 0)) return 0.0;
    const double factor = bus_factor(op, key.ranks);
    const auto& p = curve->points;
    if (p.size() == 1) return point_time_s(p.front(), factor) * bytes / p.front().bytes;
    if (bytes < p.front().bytes) return alpha_beta_s(p[0], p[1], factor, bytes, true);
    if (bytes > p.back().bytes) return alpha_beta_s(p[p.size() - 2], p.back(), factor, bytes, false);
    const double busbw_GBps = curve_busbw_GBps(*curve, bytes);
    if (!(busbw_GBps > 0)) return std::nullopt;
    return bytes * factor / (busbw_GBps * 1e9);
}

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// GPU models by the token nccl-tests' device names carry ("NVIDIA H100 80GB
// HBM3", "Tesla T4"), with their architecture: the `models` of the
// accelerator traits table (lostflops/accelerator.h), longer tokens first
// (gb200 before b200: "b200" is inside "gb200").
struct ModelToken {
    std::string token;
    std::string arch;
};

const std::vector<ModelToken>& model_tokens() {
    static const std::vector<ModelToken> table = [] {
        std::vector<ModelToken> out;
        for (const auto& t : accelerator_traits()) {
            std::string_view rest = t.models;
            while (!rest.empty()) {
                const auto sp = rest.find(' ');
                const std::string_view tok = rest.substr(0, sp);
                if (!tok.empty()) out.push_back({std::string(tok), std::string(t.arch)});
                rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
            }
        }
        std::stable_sort(out.begin(), out.end(),
                         [](const ModelToken& a, const ModelToken& b) { return a.token.size() > b.token.size(); });
        return out;
    }();
    return table;
}

const ModelToken* model_in(const std::string& text) {
    const std::string t = lower(text);
    for (const auto& m : model_tokens()) {
        const auto at = t.find(m.token);
        if (at == std::string::npos) continue;
        // A token, not part of a longer one ("a10" in "a100").
        const std::size_t end = at + m.token.size();
        if (end < t.size() && std::isalnum(static_cast<unsigned char>(t[end]))) continue;
        return &m;
    }
    return nullptr;
}

}  // namespace

std::optional<std::string> curve_gpu_mismatch(const BusBwCurve& curve, const Gpu& gpu) {
    if (curve.gpu.empty()) return std::string("the curve does not record the GPU it was measured on");
    const ModelToken* measured = model_in(curve.gpu);
    const ModelToken* job = model_in(gpu.name);
    if (measured && job && measured->token != job->token)
        return "measured on " + curve.gpu + ", the job runs on " + gpu.name;
    if (measured && gpu.arch != measured->arch)
        return "measured on " + curve.gpu + " (" + measured->arch + "), the job's GPU is " + gpu.arch;
    return std::nullopt;
}

}  // namespace lostflops
