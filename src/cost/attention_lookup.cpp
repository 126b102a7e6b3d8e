// Efficiency of attention kernels from a device family's measured curves
// (calibration.h AttentionCurves: data/calibration/attention.csv by kernel,
// pass, mask, head dimension and sequence length; FlashAttention-3 paper
// figs. 5-6 and others): the curve at the nearest head dimension in
// log(head dim), log-linear in seq between measured lengths and flat outside;
// a causal or backward curve not measured is derived from the family's
// ratios (AttentionLookup below). The values at a job's shape are memoised
// per thread (attention_at).
#include "cost/attention_lookup.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace lostflops {

namespace {

// Points of one curve: kernel, pass, causal, one head dimension, sorted by
// seq. Empty if none.
struct Curve {
    const AttentionPoint* begin = nullptr;
    const AttentionPoint* end = nullptr;
    bool empty() const { return begin == end; }
};

// Log-linear in seq between points (sorted by seq), flat outside. `weight`
// gives the interpolation weight log(seq / a) / log(b / a) between the points
// at seq a < b.
template <class Weight>
double curve_at(const Curve& c, double seq, Weight&& weight) {
    if (seq <= c.begin->seq) return c.begin->efficiency;
    const AttentionPoint* last = c.end - 1;
    if (seq >= last->seq) return last->efficiency;
    for (const AttentionPoint* p = c.begin; p + 1 < c.end; ++p) {
        if (seq > (p + 1)->seq) continue;
        const double w = weight(seq, p->seq, (p + 1)->seq);
        return p->efficiency + w * ((p + 1)->efficiency - p->efficiency);
    }
    return last->efficiency;
}

// The curves of one kernel's lookups at one head dimension, read from the
// family's index of its curves (calibration.h AttentionCurves, built when the
// profile is read):
//  - nearest(pass, mask): the kernel's curve at the head dimension nearest
//    `head_dim` in log(head dim), i.e. the smallest ratio max(a/b, b/a)
//    (ties: the larger);
//  - ratio: the family's mask ratio over every kernel's curves at the three
//    common head dimensions; the pass ratio from the kernel's own pairs when
//    the family has any (backward_ratio), else over every kernel's; kept
//    once computed (make_device_model asks for the forward and the backward
//    pass at the same seq).
class AttentionLookup {
public:
    AttentionLookup(const DeviceFamily& f, AttentionImpl kernel, int head_dim)
        : curves_(f.attention), kernel_(kernel), want_(std::max(1, head_dim)) {}

    double efficiency(bool backward, bool causal, double seq) {
        const Curve exact = nearest(backward, causal);
        if (!exact.empty()) return at(exact, seq);
        if (causal) {
            // Causal not measured: the non-causal curve times the family's
            // causal / non-causal ratio of forward passes (short sequences
            // lose most).
            const double base = efficiency(backward, false, seq);
            const double r = ratio(causal_ratio_, seq, false, true);
            return base * (r > 0 ? r : 1.0);
        }
        if (backward) {
            const double fwd = efficiency(false, false, seq);
            const double r = backward_ratio(seq);
            return r > 0 ? fwd * r : 0.0;
        }
        return 0.0;
    }

private:
    struct Ratio {
        double seq = -1;
        double value = 0;
    };

    // The curves of a family share their seq grids, so the ratios ask for
    // the same few weights over and over: kept (same value, two logs fewer).
    struct Weight {
        double seq = 0, a = 0, b = 0, w = 0;
    };

    double weight(double seq, double a, double b) {
        for (int i = 0; i < weights_used_; ++i) {
            const Weight& m = weights_[i];
            if (m.seq == seq && m.a == a && m.b == b) return m.w;
        }
        const double w = std::log(seq / a) / std::log(b / a);
        weights_[weights_next_] = {seq, a, b, w};
        weights_next_ = (weights_next_ + 1) % kWeights;
        weights_used_ = std::min(weights_used_ + 1, kWeights);
        return w;
    }

    double at(const Curve& c, double seq) {
        return curve_at(c, seq, [this](double x, double a, double b) { return weight(x, a, b); });
    }

    Curve points_of(const AttentionCurves::Curve* c) const {
        if (!c) return {};
        const AttentionPoint* p = curves_.points().data();
        return {p + c->begin, p + c->end};
    }

    Curve nearest(bool backward, bool causal) const {
        const AttentionCurves::Curve* best = nullptr;
        double best_d = 0;
        for (const AttentionCurves::Curve& c : curves_.curves(kernel_, backward, causal)) {
            const double r = c.head_dim / want_, d = std::max(r, 1.0 / r);
            if (!best || d < best_d || (d == best_d && c.head_dim > best->head_dim)) {
                best = &c;
                best_d = d;
            }
        }
        return points_of(best);
    }

    // Running sum of the ratios num / den at `seq` of the kernel's curve
    // pair at one head dimension (nothing when either is not measured).
    struct RatioSum {
        double sum = 0;
        int n = 0;
        double mean() const { return n ? sum / n : 0.0; }
    };
    void add_pair(RatioSum& r, AttentionImpl kernel, int hd, double seq, bool num_bwd, bool num_causal,
                  bool den_causal) {
        const Curve num = points_of(curves_.curve(kernel, num_bwd, num_causal, hd));
        if (num.empty()) return;
        const Curve den = points_of(curves_.curve(kernel, false, den_causal, hd));
        if (den.empty()) return;
        r.sum += at(num, seq) / at(den, seq);
        ++r.n;
    }

    // Mean ratio (num pass, num mask) / (forward, non-causal) of the
    // family's curve pairs at the same kernel and head dimension (64, 128,
    // 256), each at `seq` (0 if no pair is measured).
    double ratio(Ratio& memo, double seq, bool num_bwd, bool num_causal) {
        if (memo.seq == seq) return memo.value;
        RatioSum r;
        for (int k = 0; k < kAttentionImplCount; ++k)
            for (int hd : {64, 128, 256}) add_pair(r, static_cast<AttentionImpl>(k), hd, seq, num_bwd, num_causal, false);
        memo = {seq, r.mean()};
        return memo.value;
    }

    // Backward over forward of the same mask. A kernel's own pairs (either
    // mask, any head dimension) when the family measured any: the ratio is
    // a property of the kernel's implementation (on Blackwell, FlashAttention-2
    // runs Ampere-style MMA at ~0.88-0.96 backward/forward, cuDNN 0.78-0.80:
    // attention.csv), so the same kernel's other mask is better evidence
    // than another kernel's same mask. Else the family's mean over every
    // kernel's non-causal pairs.
    double backward_ratio(double seq) {
        if (own_backward_ratio_.seq != seq) {
            RatioSum r;
            for (bool causal : {false, true})
                for (int hd : {64, 128, 256}) add_pair(r, kernel_, hd, seq, true, causal, causal);
            own_backward_ratio_ = {seq, r.mean()};
        }
        if (own_backward_ratio_.value > 0) return own_backward_ratio_.value;
        return ratio(backward_ratio_, seq, true, false);
    }

    const AttentionCurves& curves_;
    AttentionImpl kernel_;
    double want_;
    Ratio causal_ratio_, backward_ratio_, own_backward_ratio_;
    static constexpr int kWeights = 8;
    Weight weights_[kWeights];
    int weights_used_ = 0, weights_next_ = 0;
};

}  // namespace

AttentionEfficiency attention_at(const DeviceFamily& f, AttentionImpl kernel, const DeviceUse& use) {
    struct Entry {
        uint64_t id = 0;
        AttentionImpl kernel{};
        int head_dim = 0;
        bool causal = false;
        double seq = -1;
        AttentionEfficiency eff;
    };
    static thread_local Entry memo[8];
    const uint64_t id = (use.seq >= 0 && use.seq < 1e15) ? f.attention.id() : 0;  // 0: not memoised
    const auto h = static_cast<size_t>((id * 0x9E3779B97F4A7C15ull ^ (id ? static_cast<uint64_t>(use.seq) : 0) * 31 ^
                                        static_cast<uint64_t>(use.head_dim) * 7 ^ static_cast<uint64_t>(kernel) ^
                                        (use.causal ? 4u : 0u)) % 8);  // an hf job looks up both masks
    Entry& e = memo[h];
    if (id != 0 && e.id == id && e.kernel == kernel && e.head_dim == use.head_dim && e.causal == use.causal &&
        e.seq == use.seq)
        return e.eff;
    AttentionLookup lookup(f, kernel, use.head_dim);
    const AttentionEfficiency eff{lookup.efficiency(false, use.causal, use.seq), lookup.efficiency(true, use.causal, use.seq)};
    if (id != 0) e = {id, kernel, use.head_dim, use.causal, use.seq, eff};
    return eff;
}

std::array<double, 2> attention_efficiency_at(const Gpu& gpu, const Calibration& cal, const DeviceModel& d,
                                              const DeviceUse& use) {
    const AttentionEfficiency a = attention_at(cal.device(gpu.arch), d.attention_kernel, use);
    return {a.fwd * d.power_factor, a.bwd * d.power_factor};
}

double attention_efficiency(const DeviceFamily& f, AttentionImpl kernel, bool backward, bool causal, int head_dim,
                            double seq) {
    return AttentionLookup(f, kernel, head_dim).efficiency(backward, causal, seq);
}

}  // namespace lostflops
