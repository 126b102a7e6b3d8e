// Layout enumeration by divisors: the candidates are divisors (of the GPUs,
// the batch, the experts), and each rule of job/validate.cpp (after
// Megatron-LM's argument checks, megatron/training/arguments.py) is checked on
// them in closed form —
//   tp divides heads, ffn (and the experts' ffn), and tp and the kv heads
//     divide one another; tp <= vocab;
//   tp * cp * pp divides num_gpus (dp follows); 2 * cp divides seq_length;
//   dp * micro_batch divides the global batch; pp * vpp <= layers;
//   vpp > 1 needs pp > 1 and micro-batches divisible by pp;
//   ep divides the experts, etp divides tp and the experts' width, and
//     etp * ep divides tp * cp * dp (MoE parallel folding; mixture-of-experts
//     models only); etp is 1 or tp (the two Megatron-Core recipes use;
//     Megatron-Core allows more); the dispatcher is the fixed one, else
//     alltoall here and the search picks the fastest for each layout
//     (search/dispatcher_choice.h: it changes only the dispatch time);
//   micro-batches x pp x vpp <= 5e7 (what the schedules handle);
//   moe_a2a_overlap (Megatron-Core's --overlap-moe-expert-parallel-comm) off,
//     and on for an MoE model under megatron-core with ep > 1, a 1F1B-family
//     schedule, vpp > 1 when pp > 1 and a dispatcher other than a fixed
//     allgather (lostflops/framework_rules.h a2a_overlap_setup): one more
//     layout each, visited right after its twin;
//   where the framework says a stage layout (Megatron-Core; torchtitan with
//     one stage a rank) and the job gives none, a layout of pp > 1 also with
//     its first / last rank 1 or 2 layers a chunk shorter (stage_variants:
//     at most 3 more per layout), each its own layout after its a2a twins;
//   with LayoutFix::launch, the layout rules of that framework
//     (lostflops/framework_rules.h; launchable() below).
#include "search/enumerate.h"

#include "job/stage_layout.h"
#include "job/validate.h"
#include "lostflops/pipeline_schedules.h"

#include <algorithm>
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

// Whether Megatron-Core can overlap this layout's expert all-to-all: its
// rules on moe_a2a_overlap (lostflops/framework_rules.h), but the recompute
// one (a knob: knob_set's), with the fixed dispatcher or one it runs.
bool a2a_overlap_layout(const Job& job, const Layout& l, const LayoutFix& fix) {
    if (!job.model.is_moe() || job.training.framework != Framework::megatron_core || !standard_mapping(job.plan))
        return false;
    LaunchPlan lp = launch_plan(job.plan);
    lp.tp = l.tp, lp.cp = l.cp, lp.pp = l.pp, lp.dp = l.dp, lp.vpp = l.vpp, lp.ep = l.ep, lp.etp = l.etp;
    lp.moe_a2a_overlap = true;
    lp.dispatcher = fix.dispatcher >= 0 ? static_cast<MoeDispatcher>(fix.dispatcher) : MoeDispatcher::alltoall;
    return !breaks_rule_on(job.model, lp, LaunchStack::megatron_core, "parallel.moe_a2a_overlap", false);
}

// The schedules a layout also runs beside the 1F1B family, each its own
// layout: the table's twins at the layout's vpp (DualPipeV and ZB-V on vpp 2,
// their V of two chunks per rank), in table order, where the job names no
// schedule and the framework launches them (torchtitan:
// lostflops/framework_rules.h). Not on a TPU: its job is JAX's, launched as
// MaxText's keys (src/cli/cmd_search.cpp), which have none of
// torch.distributed.pipelining's schedules.
void schedule_twins(const Job& job, const Layout& l, int launch, const std::function<void(PipelineSchedule)>& visit) {
    if (job.plan.schedule_given || launch < 0 || l.pp < 2 || !standard_mapping(job.plan) || job.training.xla) return;
    LaunchPlan p = launch_plan(job.plan);
    p.tp = l.tp, p.cp = l.cp, p.pp = l.pp, p.dp = l.dp, p.vpp = l.vpp, p.ep = l.ep, p.etp = l.etp;
    for (const ScheduleInfo& si : kSchedules) {  // the table's search_twin_vpp
        if (si.search_twin_vpp != l.vpp) continue;
        p.schedule = si.id;
        if (!first_rule_break(job.model, p, static_cast<LaunchStack>(launch), false)) visit(si.id);
    }
}

// Whether the framework the search launches for can say a layout's first /
// last stage layers: Megatron-Core's --decoder-first/last-pipeline-num-layers
// (any vpp), torchtitan's pipeline_parallel_first/last_stage_less_layers
// (one stage a rank: with more, only the first and the last virtual stage
// get fewer layers, which is not this split), each by the framework rules'
// custom-stage checks (lostflops/framework_rules.h); none without a
// framework to launch (LayoutFix::launch), on a TPU job (launched as
// MaxText, whose stages are even: cmd_search.cpp), under a job that gives a
// stage layout or names a schedule of another stage mapping.
bool stage_layouts_expressible(const Job& job, const Layout& l, int launch) {
    if (launch < 0 || job.training.xla || l.pp < 2 || job.model.layers % l.vpp != 0 || !default_split(job.plan) ||
        !standard_mapping(job.plan) || l.schedule != kDefaultSchedule)
        return false;  // (a rank's layers are a multiple of vpp: stage_variants)
    const auto stack = static_cast<LaunchStack>(launch);
    if (stack != LaunchStack::megatron_core && !(stack == LaunchStack::torchtitan && l.vpp == 1)) return false;
    LaunchPlan p = launch_plan(job.plan);
    p.tp = l.tp, p.cp = l.cp, p.pp = l.pp, p.dp = l.dp, p.vpp = l.vpp, p.ep = l.ep, p.etp = l.etp;
    p.custom_stages = true;
    p.moe_a2a_overlap = l.a2a_overlap;
    return !first_rule_break(job.model, p, stack, false);
}

// Whether chunks of `first` layers on rank 0, `last` on rank pp - 1 and
// `middle` on the others are the default split (job/stage_layout.h
// layers_on, which shortens the end stages when pp x vpp does not divide
// the layers): then the layout is the base one, evaluated already.
bool same_as_default_split(int layers, int pp, int vpp, int first, int middle, int last) {
    for (int c = 0; c < vpp; ++c)
        for (int r = 0; r < pp; ++r)
            if (layers_on(layers, pp, vpp, r, c) != (r == 0 ? first : r == pp - 1 ? last : middle)) return false;
    return true;
}

// The stage layouts an engineer tries beside the even split: the first rank
// (the embedding's) and the last (the loss's) each 0, 1 or 2 layers a chunk
// shorter than the others, not both 0, where the other ranks then split the
// rest evenly (Megatron-Core's get_num_layers_to_build: every rank's layers
// a multiple of vpp) -- which also makes layer counts that pp does not
// divide possible without a layout string. With c layers a middle chunk,
// vpp x (pp x c - a - b) = layers, so for pp >= 5 only a + b = the one value
// in 1..4 that pp divides layers / vpp + a + b by: at most 3 variants (as
// for pp 2, 3 and 4). pp 2: one rank given (the shorter; the other takes the
// rest), variants equal in their layers counted once. Calls visit(first,
// last) with -1 for a rank not given.
template <class Visit>
void stage_variants(int layers, int pp, int vpp, Visit&& visit) {
    if (pp < 2 || layers % vpp != 0) return;
    const int per_chunk_row = layers / vpp;  // the layers of chunk c on every rank together
    int seen_first[8], seen = 0;             // pp 2: the first rank's layers of each visited
    for (int sum = 1; sum <= 4; ++sum) {
        if ((per_chunk_row + sum) % pp != 0) continue;
        const int c = (per_chunk_row + sum) / pp;
        for (int a = std::max(0, sum - 2); a <= std::min(2, sum); ++a) {
            const int b = sum - a;
            if (c - a < 1 || c - b < 1) continue;
            if (same_as_default_split(layers, pp, vpp, c - a, c, c - b)) continue;  // priced already
            if (pp == 2) {
                if (a == b) continue;  // the even split
                const int first = vpp * (c - a);
                if (std::find(seen_first, seen_first + seen, first) != seen_first + seen) continue;
                seen_first[seen++] = first;
                if (a > b) visit(first, -1);
                else visit(-1, vpp * (c - b));
                continue;
            }
            visit(a > 0 ? vpp * (c - a) : -1, b > 0 ? vpp * (c - b) : -1);
        }
    }
}

// The framework's rules that do not depend on zero (those are knob_set's).
bool launchable(const Job& job, const Layout& l, int launch) {
    if (launch < 0) return true;
    LaunchPlan p = launch_plan(job.plan);
    p.tp = l.tp, p.cp = l.cp, p.pp = l.pp, p.dp = l.dp, p.vpp = l.vpp, p.ep = l.ep, p.etp = l.etp;
    if (one_f_one_b_family(job.plan.schedule)) p.schedule = schedule_for_vpp(job.plan.schedule, l.vpp);
    return !first_rule_break(job.model, p, static_cast<LaunchStack>(launch), false);
}

}  // namespace

std::vector<Shape> enumerate_shapes(const Job& job, const LayoutFix& fix) {
    const int64_t gpus = job.cluster.num_gpus;
    std::vector<Shape> out;
    for_divisors(gpus, [&](int64_t tp) {
        if (!free_or(fix.tp, tp)) return;
        for_divisors(gpus / tp, [&](int64_t cp) {
            if (!free_or(fix.cp, cp)) return;
            for_divisors(gpus / (tp * cp), [&](int64_t pp) {
                const int64_t dp = gpus / (tp * cp * pp);
                if (!free_or(fix.pp, pp) || !free_or(fix.dp, dp)) return;
                out.push_back(Shape{static_cast<int>(tp), static_cast<int>(cp), static_cast<int>(pp),
                                    static_cast<int>(dp)});
            });
        });
    });
    return out;
}

LayoutCounts enumerate_shape(const Job& job, const Shape& s, const std::function<void(const Layout&)>& visit,
                             const std::function<void(const RejectedRun&)>& rejected, const LayoutFix& fix) {
    const Model& m = job.model;
    const Training& t = job.training;
    LayoutCounts counts;
    const bool shape_ok = tp_fits_model(m, s.tp) && (s.cp == 1 || t.seq_length % (2 * s.cp) == 0) &&
                          s.pp <= m.layers;
    const int max_vpp = s.pp == 1 || s.pp > m.layers ? 1 : m.layers / s.pp;
    const int vpp_first = fix.vpp == 0 ? 1 : fix.vpp;
    const int vpp_last = fix.vpp == 0 ? max_vpp : std::min(fix.vpp, max_vpp);
    if (vpp_first > vpp_last) return counts;
    // The expert layouts: (ep 1, etp 1) for a dense model; otherwise each
    // divisor of the experts with etp 1 and, when tp > 1, etp tp; those the
    // fix allows. The dispatcher: the fixed one, else alltoall (search_plans
    // picks the fastest per layout).
    struct Expert {
        int ep, etp;
    };
    std::vector<Expert> eps;
    const auto add_ep = [&](int64_t ep, int64_t etp) {
        if (free_or(fix.ep, ep) && free_or(fix.etp, etp)) eps.push_back({static_cast<int>(ep), static_cast<int>(etp)});
    };
    int64_t expert_width_gcd = 0;  // what etp must divide
    for (const LayerKind& k : m.kinds())
        if (k.is_moe()) expert_width_gcd = std::gcd(expert_width_gcd, k.moe.expert.ffn);
    if (m.is_moe()) {
        for_divisors(m.experts_gcd(), [&](int64_t ep) {
            add_ep(ep, 1);
            if (s.tp > 1) add_ep(ep, s.tp);
        });
    } else {
        add_ep(1, 1);
    }
    if (eps.empty()) return counts;
    const auto n_eps = static_cast<int64_t>(eps.size());
    const MoeDispatcher dispatcher = fix.dispatcher >= 0 ? static_cast<MoeDispatcher>(fix.dispatcher)
                                                         : MoeDispatcher::alltoall;
    const auto reject = [&](const Layout& l, int last, int64_t times) {
        counts.candidates += times * (last - l.vpp + 1);
        if (rejected) rejected(RejectedRun{l, last, times});
    };
    Layout l{s.tp, s.cp, s.pp, s.dp, vpp_first, eps.front().ep, 1};
    l.etp = eps.front().etp;
    l.dispatcher = dispatcher;
    l.cp_comm_type = job.plan.cp_comm_type;  // search_plans picks each layout's (search/cp_comm_choice.h)
    const auto first_expert = [&] {
        l.ep = eps.front().ep;
        l.etp = eps.front().etp;
    };
    if (!shape_ok) {  // every micro-batch, vpp and ep of the shape at once
        int64_t mbs = 0;
        for_divisors(t.global_batch, [&](int64_t mb) {
            if (!free_or(fix.micro_batch, mb)) return;
            if (mbs++ == 0) l.micro_batch = mb;
        });
        if (mbs > 0) reject(l, vpp_last, mbs * n_eps);
        return counts;
    }
    for_divisors(t.global_batch, [&](int64_t mb) {
        if (!free_or(fix.micro_batch, mb)) return;
        l.micro_batch = mb;
        l.vpp = vpp_first;
        first_expert();
        if (t.global_batch % (s.dp * mb) != 0) {
            reject(l, vpp_last, n_eps);
            return;
        }
        const int64_t micro_batches = t.global_batch / (s.dp * mb);
        for (int vpp = vpp_first; vpp <= vpp_last; ++vpp) {
            l.vpp = vpp;
            first_expert();
            const bool vpp_ok = vpp == 1 || micro_batches % s.pp == 0;
            const bool cells_ok = static_cast<double>(micro_batches) * s.pp * vpp <= 5e7;
            if (!vpp_ok || !cells_ok) {
                reject(l, vpp, n_eps);
                continue;
            }
            for (const Expert& e : eps) {
                l.ep = e.ep;
                l.etp = e.etp;
                const int64_t stage = static_cast<int64_t>(s.tp) * s.cp * s.dp;
                if ((!m.is_moe() || (stage % (static_cast<int64_t>(e.etp) * e.ep) == 0 && expert_width_gcd % e.etp == 0)) &&
                    launchable(job, l, fix.launch)) {
                    // Without the all-to-all overlap, then with it where it runs.
                    const bool overlap = a2a_overlap_layout(job, l, fix);
                    for (int a = 0; a <= 1; ++a) {
                        if (a == 1 && !overlap) break;
                        l.a2a_overlap = a == 1;
                        if (fix.a2a_overlap >= 0 && fix.a2a_overlap != a) {
                            if (!overlap) reject(l, vpp, 1);  // fixed on where it cannot run
                            continue;
                        }
                        ++counts.candidates;
                        ++counts.valid;
                        visit(l);
                    }
                    l.a2a_overlap = false;
                    // The same layout with its end ranks shorter, where the framework says it.
                    if (stage_layouts_expressible(job, l, fix.launch)) {
                        for (int a = 0; a <= 1; ++a) {
                            if (a == 1 && !overlap) break;
                            if (fix.a2a_overlap >= 0 && fix.a2a_overlap != a) continue;
                            l.a2a_overlap = a == 1;
                            stage_variants(m.layers, s.pp, vpp, [&](int first, int last) {
                                l.first_stage_layers = first;
                                l.last_stage_layers = last;
                                ++counts.candidates;
                                ++counts.valid;
                                visit(l);
                            });
                        }
                        l.first_stage_layers = l.last_stage_layers = -1;
                        l.a2a_overlap = false;
                    }
                    // The same layout under the other schedules the framework has.
                    if (fix.a2a_overlap != 1)
                        schedule_twins(job, l, fix.launch, [&](PipelineSchedule twin) {
                            l.schedule = twin;
                            ++counts.candidates;
                            ++counts.valid;
                            visit(l);
                            l.schedule = kDefaultSchedule;
                        });
                } else {
                    reject(l, vpp, 1);
                }
            }
        }
    });
    return counts;
}

LayoutCounts enumerate_layouts(const Job& job, const std::function<void(const Layout&)>& visit,
                               const std::function<void(const RejectedRun&)>& rejected, const LayoutFix& fix) {
    LayoutCounts counts;
    for (const Shape& s : enumerate_shapes(job, fix)) {
        const LayoutCounts c = enumerate_shape(job, s, visit, rejected, fix);
        counts.candidates += c.candidates;
        counts.valid += c.valid;
    }
    return counts;
}

void apply_layout(ParallelPlan& p, const Layout& l) {
    p.tp = l.tp;
    p.cp = l.cp;
    p.pp = l.pp;
    p.dp = l.dp;
    p.vpp = l.vpp;
    p.ep = l.ep;
    p.etp = l.etp;
    p.moe_dispatcher = l.dispatcher;
    p.cp_comm_type = l.cp_comm_type;
    p.moe_a2a_overlap = l.a2a_overlap;
    if (l.stage_variant()) {
        p.first_stage_layers = l.first_stage_layers;
        p.last_stage_layers = l.last_stage_layers;
    }
    if (l.schedule != kDefaultSchedule) {
        p.schedule = l.schedule;
        p.schedule_given = true;  // its rules (micro-batches, stage mapping) checked as a named one
    }
}

Job with_layout(const Job& job, const Layout& l) {
    Job out = job;
    apply_layout(out.plan, l);
    out.training.micro_batch = l.micro_batch;
    return out;
}

}  // namespace lostflops::search
