// The fitting plan nearest to a job's own (search.h nearest_fitting_plan):
// the fewest changed settings, ties to the faster, then to the plan's place in
// the enumeration — the plan a scan of the whole ranking picks — without
// evaluating the whole search space when a near plan fits.
//
// Method (a best-first search by distance, exact): a plan's changes are its
// layout changes lc (tp, cp, pp, dp, vpp, ep, micro-batch that differ from
// the job's) plus its knob changes (zero, recompute, recompute_layers,
// sequence parallelism, tp_comm_overlap, overlap_grad_reduce). Layouts are
// visited in groups of equal lc = 0, 1, 2, ...; group g comes from one
// enumerate_layouts per subset S of the seven layout settings with |S| = g,
// the others fixed to the job's, keeping the layouts that differ in every
// setting of S (so each layout is visited once). After group g every plan not
// yet seen has more than g changes, so the search stops as soon as the best
// seen has at most g. Worst case (no plan fits): every layout once, as the
// full search. A plan whose pipeline the screen only bounds (uneven
// interleaving, search/evaluate_layout.h) keeps its bound while it cannot
// come before the best seen; when one could, its layout is priced exactly. The best of each group is the minimum of a total order, so
// the worker threads change nothing.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "lostflops/search.h"
#include "search/enumerate.h"
#include "search/evaluate_layout.h"
#include "search/knobs.h"
#include "search/layout_space.h"

namespace lostflops {

namespace {

constexpr int kLayoutSettings = 7;  // tp, cp, pp, dp, vpp, ep, micro-batch
constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t layout_value(const SearchLayout& l, int setting) {
    switch (setting) {
        case 0: return l.tp;
        case 1: return l.cp;
        case 2: return l.pp;
        case 3: return l.dp;
        case 4: return l.vpp;
        case 5: return l.ep;
        default: return l.micro_batch;
    }
}

// The layout settings (bit i: setting i) in which `l` differs from `job`'s.
unsigned differing(const SearchLayout& l, const SearchLayout& job) {
    unsigned d = 0;
    for (int i = 0; i < kLayoutSettings; ++i)
        if (layout_value(l, i) != layout_value(job, i)) d |= 1u << i;
    return d;
}

// `job`'s layout with the settings outside `free_mask` fixed; an MoE job's
// etp and dispatcher always (the nearest plan keeps them).
// A Hugging Face model (framework hf) gets only the layouts its stack
// launches (data parallelism only); the other frameworks' plans may keep
// what the job already asks.
search::LayoutFix fix_outside(const SearchLayout& job, unsigned free_mask, bool moe, Framework fw) {
    search::LayoutFix f;
    if (fw == Framework::hf) f.launch = static_cast<int>(LaunchStack::hf);
    if (moe) {
        f.etp = job.etp;
        f.dispatcher = static_cast<int>(job.dispatcher);
        f.a2a_overlap = job.a2a_overlap ? 1 : 0;
    }
    const auto fixed = [&](int i) { return (free_mask >> i & 1u) == 0; };
    if (fixed(0)) f.tp = job.tp;
    if (fixed(1)) f.cp = job.cp;
    if (fixed(2)) f.pp = job.pp;
    if (fixed(3)) f.dp = job.dp;
    if (fixed(4)) f.vpp = job.vpp;
    if (fixed(5)) f.ep = job.ep;
    if (fixed(6)) f.micro_batch = job.micro_batch;
    return f;
}

// A candidate: its layout, knob code, changes and step; `before` is the
// nearest plan's order (changes, then the ranking's: step time, then the
// place in the enumeration, lexicographic in tp, cp, pp, micro-batch, vpp,
// ep, then the knob code).
struct Candidate {
    SearchLayout layout;
    RankedPlan plan;  // order: knob code only (the layout is above)
    int changes = 0;
};

auto place(const Candidate& c) {
    const SearchLayout& l = c.layout;
    return std::tuple(c.changes, c.plan.step_time_s, l.tp, l.cp, l.pp, l.micro_batch, l.vpp, l.ep, c.plan.order);
}

bool before(const Candidate& a, const Candidate& b) { return place(a) < place(b); }

// Changes of the knobs of `code` against the job's plan `q`.
int knob_changes(const ParallelPlan& q, uint32_t code) {
    ParallelPlan p;
    search::apply_knob_code(p, code);
    const int rl = p.recompute == Recompute::full ? p.recompute_layers : -1;
    const int ql = q.recompute == Recompute::full ? q.recompute_layers : -1;
    return (p.zero != q.zero) + (p.recompute != q.recompute) + (rl != ql) +
           (p.sequence_parallel != q.sequence_parallel) + (p.tp_comm_overlap != q.tp_comm_overlap) +
           (p.overlap_grad_reduce != q.overlap_grad_reduce);
}

struct GroupWorker {
    std::optional<Candidate> best;
    std::vector<RankedPlan> plans;
    SearchCounts counts;
};

// The best candidate of `layouts` (all with `lc` layout changes).
std::optional<Candidate> best_of(const Job& job, const Calibration& cal, const std::vector<SearchLayout>& layouts,
                                 int lc, int threads, SearchCounts& counts) {
    unsigned n = threads > 0 ? static_cast<unsigned>(threads) : std::thread::hardware_concurrency();
    n = std::max(1u, std::min<unsigned>(n, static_cast<unsigned>(std::max<size_t>(1, layouts.size() / 64))));
    std::vector<GroupWorker> workers(n);
    std::atomic<size_t> next{0};
    const auto work = [&](GroupWorker& w) {
        PlanFix fix;
        if (job.training.framework == Framework::hf) fix.launch = LaunchStack::hf;  // its recompute and zero rules
        search::LayoutEvaluator ev(job, cal, fix);
        const auto offer = [&](const SearchLayout& l, const RankedPlan& rp) {
            const auto code = static_cast<uint32_t>(rp.order & 0xffffffffu);
            Candidate c{l, rp, lc + knob_changes(job.plan, code)};
            c.plan.order = code;
            if (!w.best || before(c, *w.best)) w.best = c;
        };
        for (size_t i; (i = next.fetch_add(1)) < layouts.size();) {
            w.plans.clear();
            // Past the first layout, a plan the screen bounds (uneven interleaving) above the
            // best's step keeps its bound (search/evaluate_layout.h): it is priced exactly
            // below only if it could still come before the best.
            RankedPlan cut;
            if (w.best) cut.step_time_s = std::nextafter(w.best->plan.step_time_s, kInf);
            ev.run(layouts[i], 0, w.counts, w.plans, w.best ? &cut : nullptr);
            bool bounds = false;
            for (const RankedPlan& rp : w.plans) {
                if (search::is_bound(rp)) bounds = true;
                else offer(layouts[i], rp);
            }
            // A bound (at most the exact step) that could come before the best: fewer changes,
            // or as many and no slower. Then the layout's plans, all exact.
            const auto could_win = [&](const RankedPlan& rp) {
                const auto code = static_cast<uint32_t>(rp.order & 0xffffffffu & ~search::kBoundBit);
                const int changes = lc + knob_changes(job.plan, code);
                return changes < w.best->changes ||
                       (changes == w.best->changes && rp.step_time_s <= w.best->plan.step_time_s);
            };
            if (bounds && std::any_of(w.plans.begin(), w.plans.end(),
                                      [&](const RankedPlan& rp) { return search::is_bound(rp) && could_win(rp); }))
                for (const RankedPlan& rp : ev.exact_plans(layouts[i], 0)) offer(layouts[i], rp);
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(work, std::ref(workers[t]));
    work(workers[0]);
    for (auto& th : pool) th.join();
    std::optional<Candidate> best;
    for (const GroupWorker& w : workers) {
        counts.enumerated += w.counts.enumerated;
        counts.pruned_divisibility += w.counts.pruned_divisibility;
        counts.pruned_memory += w.counts.pruned_memory;
        counts.evaluated += w.counts.evaluated;
        counts.layouts += w.counts.layouts;
        if (w.best && (!best || before(*w.best, *best))) best = w.best;
    }
    return best;
}

NearestPlan nearest_of(const Job& job, const Candidate& c) {
    SearchResult one;
    one.layouts = {c.layout};
    const PlanScore s = plan_score(job, one, c.plan);
    NearestPlan best{s, c.changes, {}};
    const ParallelPlan& p = s.plan;
    const ParallelPlan& q = job.plan;
    const auto add = [&](bool differs, const std::string& kv) {
        if (differs) best.set.push_back(kv);
    };
    add(p.tp != q.tp, fmt::format("parallel.tp={}", p.tp));
    add(p.cp != q.cp, fmt::format("parallel.cp={}", p.cp));
    add(p.pp != q.pp, fmt::format("parallel.pp={}", p.pp));
    add(p.dp != q.dp, fmt::format("parallel.dp={}", p.dp));
    add(p.vpp != q.vpp, fmt::format("parallel.vpp={}", p.vpp));
    add(p.ep != q.ep, fmt::format("parallel.ep={}", p.ep));
    add(s.micro_batch != job.training.micro_batch, fmt::format("training.micro_batch_size={}", s.micro_batch));
    add(p.zero != q.zero, fmt::format("parallel.zero={}", p.zero));
    add(p.recompute != q.recompute, fmt::format("parallel.recompute={}", to_string(p.recompute)));
    if (p.recompute == Recompute::full && p.recompute_layers >= 0 && p.recompute_layers != q.recompute_layers)
        best.set.push_back(fmt::format("parallel.recompute_layers={}", p.recompute_layers));
    add(p.sequence_parallel != q.sequence_parallel, fmt::format("parallel.sequence_parallel={}", p.sequence_parallel));
    add(p.tp_comm_overlap != q.tp_comm_overlap, fmt::format("parallel.tp_comm_overlap={}", p.tp_comm_overlap));
    add(p.overlap_grad_reduce != q.overlap_grad_reduce,
        fmt::format("parallel.overlap_grad_reduce={}", p.overlap_grad_reduce));
    return best;
}

}  // namespace

NearestSearch nearest_fitting_plan(const Job& job, const Calibration& cal, int64_t max_plans, int threads) {
    NearestSearch out;
    const ParallelPlan& q = job.plan;
    SearchLayout own{q.tp, q.cp, q.pp, q.dp, q.vpp, q.ep, job.training.micro_batch};
    own.etp = q.expert_tp();
    own.dispatcher = q.moe_dispatcher;
    own.a2a_overlap = q.moe_a2a_overlap;
    own.cp_comm_type = q.cp_comm_type;
    const PlanFix free;
    search::PlanCounter counter(job, free);
    std::optional<Candidate> best;
    std::vector<SearchLayout> group;
    for (int g = 0; g <= kLayoutSettings; ++g) {
        group.clear();
        int64_t plans = 0;
        for (unsigned s = 0; s < (1u << kLayoutSettings); ++s) {
            if (std::popcount(s) != g) continue;
            search::enumerate_layouts(
                job,
                [&](const SearchLayout& l) {
                    if (differing(l, own) != s) return;
                    group.push_back(l);
                    if (max_plans > 0) plans += counter(l);
                },
                {}, fix_outside(own, s, job.model.is_moe(), job.training.framework));
        }
        if (max_plans > 0 && out.plans + plans > max_plans) {
            out.complete = false;
            return out;
        }
        out.plans += plans;  // counted only under a bound
        if (const auto b = best_of(job, cal, group, g, threads, out.counts); b && (!best || before(*b, *best)))
            best = b;
        if (best && best->changes <= g) break;
    }
    if (best) out.plan = nearest_of(job, *best);
    return out;
}

}  // namespace lostflops
