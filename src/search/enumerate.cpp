// Layout enumeration by divisors: each rule of spec/validate.cpp (after
// Megatron-LM's argument checks, megatron/training/arguments.py) becomes a
// restriction of a candidate set instead of a test of a finished plan —
//   tp divides heads, ffn (and the experts' ffn), and tp and the kv heads
//     divide one another; tp <= vocab;
//   tp * cp * pp divides num_gpus (dp follows); 2 * cp divides seq_length;
//   dp * micro_batch divides the global batch; pp * vpp <= layers;
//   vpp > 1 needs pp > 1 and micro-batches divisible by pp;
//   ep divides the experts and dp * cp (mixture-of-experts models only);
//   micro-batches x pp x vpp <= 5e7 (what the schedules handle).
#include "search/enumerate.h"

#include <numeric>

namespace lostflops::search {

namespace {

// Calls f(d) for each divisor d of n, ascending.
template <class F>
void for_divisors(int64_t n, F&& f) {
    if (n <= 0) return;
    int64_t small = 1;
    for (; small * small < n; ++small)
        if (n % small == 0) f(small);
    const int64_t mid = small;
    if (mid * mid == n) f(mid);
    for (int64_t d = mid - 1; d >= 1; --d)
        if (n % d == 0) f(n / d);
}

bool tp_fits_model(const Model& m, int64_t tp) {
    if (m.heads % tp != 0 || m.ffn % tp != 0 || m.vocab < tp) return false;
    if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0) return false;
    if (m.is_moe() && m.moe_ffn % tp != 0) return false;
    return true;
}

}  // namespace

LayoutCounts enumerate_layouts(const Job& job, const std::function<void(const Layout&)>& visit) {
    const Model& m = job.model;
    const Training& t = job.training;
    const int64_t gpus = job.cluster.num_gpus;
    LayoutCounts counts;
    // Every tp divides the heads, so only divisors of gcd(heads, gpus) can pass.
    for_divisors(std::gcd(static_cast<int64_t>(m.heads), gpus), [&](int64_t tp) {
        if (!tp_fits_model(m, tp)) return;
        for_divisors(gpus / tp, [&](int64_t cp) {
            if (cp > 1 && t.seq_length % (2 * cp) != 0) return;
            for_divisors(gpus / (tp * cp), [&](int64_t pp) {
                if (pp > m.layers) return;
                const int64_t dp = gpus / (tp * cp * pp);
                if (t.global_batch % dp != 0) return;
                for_divisors(t.global_batch / dp, [&](int64_t mb) {
                    const int64_t micro_batches = t.global_batch / (dp * mb);
                    const int64_t max_vpp = pp == 1 ? 1 : m.layers / pp;
                    for (int64_t vpp = 1; vpp <= max_vpp; ++vpp) {
                        if (vpp > 1 && micro_batches % pp != 0) break;
                        if (static_cast<double>(micro_batches) * pp * vpp > 5e7) break;
                        const auto emit = [&](int64_t ep) {
                            Layout l;
                            l.tp = static_cast<int>(tp);
                            l.cp = static_cast<int>(cp);
                            l.pp = static_cast<int>(pp);
                            l.dp = static_cast<int>(dp);
                            l.vpp = static_cast<int>(vpp);
                            l.ep = static_cast<int>(ep);
                            l.micro_batch = mb;
                            ++counts.valid;
                            visit(l);
                        };
                        if (!m.is_moe()) {
                            emit(1);
                            continue;
                        }
                        for_divisors(std::gcd(static_cast<int64_t>(m.experts), dp * cp), emit);
                    }
                });
            });
        });
    });
    return counts;
}

Job with_layout(const Job& job, const Layout& l) {
    Job out = job;
    out.plan.tp = l.tp;
    out.plan.cp = l.cp;
    out.plan.pp = l.pp;
    out.plan.dp = l.dp;
    out.plan.vpp = l.vpp;
    out.plan.ep = l.ep;
    out.training.micro_batch = l.micro_batch;
    return out;
}

}  // namespace lostflops::search
