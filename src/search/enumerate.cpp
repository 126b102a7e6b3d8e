// Layout enumeration by divisors: the candidates are divisors (of the GPUs,
// the batch, the experts), and each rule of spec/validate.cpp (after
// Megatron-LM's argument checks, megatron/training/arguments.py) is checked on
// them in closed form —
//   tp divides heads, ffn (and the experts' ffn), and tp and the kv heads
//     divide one another; tp <= vocab;
//   tp * cp * pp divides num_gpus (dp follows); 2 * cp divides seq_length;
//   dp * micro_batch divides the global batch; pp * vpp <= layers;
//   vpp > 1 needs pp > 1 and micro-batches divisible by pp;
//   ep divides the experts and dp * cp (mixture-of-experts models only);
//   micro-batches x pp x vpp <= 5e7 (what the schedules handle).
#include "search/enumerate.h"

#include "spec/validate.h"

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

bool tp_fits_model(const Model& m, int64_t tp) { return !tp_issue(m, tp); }

bool free_or(int64_t fixed, int64_t value) { return fixed == 0 || fixed == value; }

}  // namespace

LayoutCounts enumerate_layouts(const Job& job, const std::function<void(const Layout&)>& visit,
                               const std::function<void(const Layout&)>& rejected, const LayoutFix& fix) {
    const Model& m = job.model;
    const Training& t = job.training;
    const int64_t gpus = job.cluster.num_gpus;
    LayoutCounts counts;
    for_divisors(gpus, [&](int64_t tp) {
        if (!free_or(fix.tp, tp)) return;
        const bool tp_ok = tp_fits_model(m, tp);
        for_divisors(gpus / tp, [&](int64_t cp) {
            if (!free_or(fix.cp, cp)) return;
            const bool cp_ok = cp == 1 || t.seq_length % (2 * cp) == 0;
            for_divisors(gpus / (tp * cp), [&](int64_t pp) {
                const int64_t dp = gpus / (tp * cp * pp);
                if (!free_or(fix.pp, pp) || !free_or(fix.dp, dp)) return;
                const bool pp_ok = pp <= m.layers;
                for_divisors(t.global_batch, [&](int64_t mb) {
                    if (!free_or(fix.micro_batch, mb)) return;
                    const bool batch_ok = t.global_batch % (dp * mb) == 0;
                    const int64_t micro_batches = batch_ok ? t.global_batch / (dp * mb) : 0;
                    const int64_t max_vpp = pp == 1 || !pp_ok ? 1 : m.layers / pp;
                    for (int64_t vpp = 1; vpp <= max_vpp; ++vpp) {
                        if (!free_or(fix.vpp, vpp)) continue;
                        const bool vpp_ok = vpp == 1 || micro_batches % pp == 0;
                        const bool cells_ok = static_cast<double>(micro_batches) * pp * vpp <= 5e7;
                        const bool ok = tp_ok && cp_ok && pp_ok && batch_ok && vpp_ok && cells_ok;
                        const auto emit = [&](int64_t ep) {
                            if (!free_or(fix.ep, ep)) return;
                            const Layout l{static_cast<int>(tp), static_cast<int>(cp), static_cast<int>(pp),
                                           static_cast<int>(dp), static_cast<int>(vpp), static_cast<int>(ep), mb};
                            ++counts.candidates;
                            const bool ep_ok = !m.is_moe() || (dp * cp) % ep == 0;
                            if (ok && ep_ok) {
                                ++counts.valid;
                                visit(l);
                            } else if (rejected) {
                                rejected(l);
                            }
                        };
                        if (!m.is_moe()) {
                            emit(1);
                            continue;
                        }
                        for_divisors(m.experts_gcd(), emit);
                    }
                });
            });
        });
    });
    return counts;
}

void apply_layout(ParallelPlan& p, const Layout& l) {
    p.tp = l.tp;
    p.cp = l.cp;
    p.pp = l.pp;
    p.dp = l.dp;
    p.vpp = l.vpp;
    p.ep = l.ep;
}

Job with_layout(const Job& job, const Layout& l) {
    Job out = job;
    apply_layout(out.plan, l);
    out.training.micro_batch = l.micro_batch;
    return out;
}

}  // namespace lostflops::search
