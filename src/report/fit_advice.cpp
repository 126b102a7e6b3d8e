// "Does not fit" advice that can be acted on: every candidate change of the
// plan is a copy of the Job with plan fields changed, checked by
// job/validate.cpp's validate_job and re-estimated; only the changes that
// lower the memory are kept, each with the memory it gives and whether it fits.
// Then the smallest number of the job's GPUs on which the model fits with a
// minimum-memory plan, and the fitting plan nearest the job's
// (search/nearest_plan.cpp); those two searches, with AdviceSearch::if_cheap,
// only within a count of evaluations fixed in advance (the output does not
// depend on the machine's speed). Method: lostflops/report.h (fit_advice).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/error.h"
#include "lostflops/framework_rules.h"
#include "lostflops/report.h"
#include "lostflops/search.h"
#include "estimate/memory.h"
#include "job/validate.h"
#include "workload/flops.h"

namespace lostflops {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMinGainBytes = 0.05 * kGiB;  // below the text's 0.1 GiB precision
constexpr int kMaxCountsTried = 256;           // GPU counts the search tries at most

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

// `job` changed from `base`: nullopt when it is not a valid plan, or breaks a
// launch rule of its framework that `base` does not.
std::optional<Estimate> evaluate(const Job& job, const Calibration& cal, const Job& base) {
    try {
        validate_job(job);
    } catch (const InputError&) {
        return std::nullopt;
    }
    if (breaks_beyond(job, base)) return std::nullopt;
    return estimate(job, cal);
}

// `set` with the overlap knobs of `changed` that a reload would change (lostflops/job.h
// overlap_pins), so that `estimate --set ...` gives the figures priced here.
std::vector<std::string> with_pins(std::vector<std::string> set, const Job& changed) {
    for (std::string& pin : overlap_pins(changed)) {
        const std::string key = pin.substr(0, pin.find('='));
        if (std::none_of(set.begin(), set.end(), [&](const std::string& s) { return s.rfind(key + "=", 0) == 0; }))
            set.push_back(std::move(pin));
    }
    return set;
}

PlanChange make_change(std::string change, std::vector<std::string> set, const Job& changed, const Estimate& e) {
    set = with_pins(std::move(set), changed);
    return PlanChange{std::move(change), std::move(set), e.memory.peak_bytes, e.memory.capacity_bytes,
                      e.memory.fits ? Fit::fits : Fit::does_not_fit, e.step_time_s};
}

int layers_per_virtual_stage(const Job& job) {
    const int k = job.plan.pp * job.plan.vpp;
    return (job.model.layers + k - 1) / k;
}

// tp or pp doubled until it fits (the smallest that does), else the one with
// the lowest peak; dp follows from the GPU count.
std::optional<PlanChange> scale_dimension(const Job& job, const Calibration& cal, const char* name, int ParallelPlan::*dim,
                                          int limit) {
    std::optional<PlanChange> best;
    for (int v = job.plan.*dim * 2; v <= limit; v *= 2) {
        Job j = job;
        j.plan.*dim = v;
        const int64_t model_par = static_cast<int64_t>(j.plan.tp) * j.plan.pp * j.plan.cp;
        if (model_par > j.cluster.num_gpus || j.cluster.num_gpus % model_par != 0) break;
        j.plan.dp = static_cast<int>(j.cluster.num_gpus / model_par);
        const auto e = evaluate(j, cal, job);
        if (!e) continue;
        PlanChange c = make_change(fmt::format("{} {} (dp {})", name, v, j.plan.dp),
                                   {fmt::format("parallel.{}={}", name, v), fmt::format("parallel.dp={}", j.plan.dp)}, j, *e);
        if (!best || c.peak_bytes < best->peak_bytes) best = c;
        if (c.fit == Fit::fits) return c;
    }
    return best;
}

std::vector<PlanChange> candidate_changes(const Job& job, const Calibration& cal) {
    std::vector<PlanChange> out;
    const ParallelPlan& p = job.plan;
    const auto single = [&](std::string change, std::vector<std::string> set, const Job& j) {
        if (const auto e = evaluate(j, cal, job)) out.push_back(make_change(std::move(change), std::move(set), j, *e));
    };
    if (static_cast<int64_t>(p.dp) * p.cp > 1) {
        for (int z = p.zero + 1; z <= 3; ++z) {
            Job j = job;
            j.plan.zero = z;
            single(fmt::format("zero {}", z), {fmt::format("parallel.zero={}", z)}, j);
        }
    }
    if (job.training.micro_batch > 1) {
        std::vector<int64_t> sizes;
        for (int64_t d = job.training.micro_batch / 2; d >= 1; --d) {
            if (job.training.micro_batch % d == 0) {
                sizes.push_back(d);
                break;
            }
        }
        if (sizes.back() != 1) sizes.push_back(1);
        for (const int64_t d : sizes) {
            Job j = job;
            j.training.micro_batch = d;
            single(fmt::format("micro_batch_size {}", d), {fmt::format("training.micro_batch_size={}", d)}, j);
        }
    }
    if (p.recompute == Recompute::none) {
        Job j = job;
        j.plan.recompute = Recompute::selective;
        single("recompute selective", {"parallel.recompute=selective"}, j);
    }
    if (p.recompute != Recompute::full || p.recompute_layers >= 0) {
        Job j = job;
        j.plan.recompute = Recompute::full;
        j.plan.recompute_layers = -1;
        std::vector<std::string> set = {"parallel.recompute=full"};
        if (p.recompute_layers >= 0)
            set.push_back(fmt::format("parallel.recompute_layers={}", layers_per_virtual_stage(job)));
        single("recompute full (every layer)", std::move(set), j);
    }
    const int tp_limit = std::min(job.cluster.scaleup_gpus(), job.cluster.num_gpus);
    if (auto c = scale_dimension(job, cal, "tp", &ParallelPlan::tp, tp_limit)) out.push_back(*c);
    if (auto c = scale_dimension(job, cal, "pp", &ParallelPlan::pp, job.model.layers / p.vpp)) out.push_back(*c);
    if (p.tp > 1 && !p.sequence_parallel) {
        Job j = job;
        j.plan.sequence_parallel = true;
        single("sequence_parallel on", {"parallel.sequence_parallel=true"}, j);
    }
    return out;
}

// GPU counts in the order tried: divisors of a node below it, then whole nodes.
std::vector<int> gpu_counts_from(int lower, int gpus_per_node) {
    std::vector<int> counts;
    for (int c = 1; c < gpus_per_node && static_cast<int>(counts.size()) < kMaxCountsTried; ++c)
        if (gpus_per_node % c == 0 && c >= lower) counts.push_back(c);
    int64_t nodes = std::max<int64_t>(1, (static_cast<int64_t>(lower) + gpus_per_node - 1) / gpus_per_node);
    while (static_cast<int>(counts.size()) < kMaxCountsTried && nodes * gpus_per_node <= 1'000'000)
        counts.push_back(static_cast<int>(nodes++ * gpus_per_node));
    return counts;
}

struct Candidate {
    Job job;
    Estimate e;
};

// The fastest plan of the minimum-memory family that fits on `n` GPUs, if
// any; each estimate takes one from `budget` (none left: stops, budget < 0).
std::optional<Candidate> fitting_plan(const Job& job, const Calibration& cal, int n, int64_t& budget) {
    std::optional<Candidate> best;
    for (int tp = 1; tp <= std::min(n, job.cluster.gpus_per_node); tp *= 2) {
        const int64_t rest = n / (static_cast<int64_t>(tp) * job.plan.cp);
        if (rest < 1 || rest * tp * job.plan.cp != n) continue;
        for (int64_t pp = 1; pp <= rest && pp <= job.model.layers; ++pp) {
            if (rest % pp != 0) continue;
            Job j = job;
            j.cluster.num_gpus = n;
            ParallelPlan& p = j.plan;
            p.tp = tp;
            p.pp = static_cast<int>(pp);
            p.dp = static_cast<int>(rest / pp);
            p.vpp = 1;
            p.zero = static_cast<int64_t>(p.dp) * p.cp > 1 ? 3 : 0;
            p.recompute = Recompute::full;
            p.recompute_layers = -1;
            p.sequence_parallel = tp > 1;
            j.training.micro_batch = 1;
            if (--budget < 0) return best;
            const auto e = evaluate(j, cal, job);
            if (e && e->memory.fits && (!best || e->step_time_s < best->e.step_time_s)) best = Candidate{j, *e};
        }
    }
    return best;
}

// nullopt: `budget` estimates were not enough to decide.
std::optional<MinGpus> min_gpus_to_fit(const Job& job, const Calibration& cal, const Memory& current, int64_t budget) {
    MinGpus out;
    // Lower bound: weights, gradients and Adam state fully sharded over every GPU.
    // (A TPU job: MaxText's fp32 state and no framework reserve, estimate/memory_xla.cpp.)
    const bool xla = job.training.xla;
    const double bytes_per_param =
        xla ? xla_state_bytes_per_param(job.training.optimizer)
            : tensor_bytes(job.training.precision) + grad_bytes_per_param(job.plan, job.training.precision) +
                  optimizer_state_bytes_per_param(job.training.optimizer, job.training.precision);
    const double states = count_params(job.model).total * bytes_per_param;
    const double room = current.capacity_bytes - (xla ? 0.0 : cal.workspace_bytes);
    if (room <= 0) return out;
    const double bound = std::ceil(states / room);
    const int lower = static_cast<int>(std::clamp(bound, 1.0, 1e6));
    out.searched_from = lower;
    for (const int n : gpu_counts_from(lower, job.cluster.gpus_per_node)) {
        out.searched_up_to = n;
        const auto c = fitting_plan(job, cal, n, budget);
        if (budget < 0) return std::nullopt;
        if (!c) continue;
        const ParallelPlan& p = c->job.plan;
        out.num_gpus = n;
        out.peak_bytes = c->e.memory.peak_bytes;
        out.step_time_s = c->e.step_time_s;
        out.plan = fmt::format("tp {} pp {} dp {} cp {} ep {}, zero {}, recompute full, micro-batch 1, "
                               "sequence parallel {}",
                               p.tp, p.pp, p.dp, p.cp, p.ep, p.zero, p.sequence_parallel ? "on" : "off");
        out.set = {fmt::format("cluster.num_gpus={}", n),         fmt::format("parallel.tp={}", p.tp),
                   fmt::format("parallel.pp={}", p.pp),           fmt::format("parallel.dp={}", p.dp),
                   "parallel.vpp=1",                              fmt::format("parallel.zero={}", p.zero),
                   "parallel.recompute=full",                     "training.micro_batch_size=1",
                   fmt::format("parallel.sequence_parallel={}", p.sequence_parallel)};
        if (job.plan.recompute_layers >= 0)
            out.set.push_back(fmt::format("parallel.recompute_layers={}", layers_per_virtual_stage(c->job)));
        out.set = with_pins(std::move(out.set), c->job);
        break;
    }
    return out;
}

std::string set_args(const std::vector<std::string>& set) {
    std::string out;
    for (const auto& s : set) out += (out.empty() ? "--set " : " --set ") + s;
    return out;
}

}  // namespace

std::vector<PlanChange> memory_savers(const Job& job, const Calibration& cal) {
    const Estimate now = estimate(job, cal);
    std::vector<PlanChange> out;
    for (auto& c : candidate_changes(job, cal))
        if (c.peak_bytes <= now.memory.peak_bytes - kMinGainBytes) out.push_back(std::move(c));
    std::stable_sort(out.begin(), out.end(), [](const PlanChange& x, const PlanChange& y) {
        if (x.fit != y.fit) return x.fit == Fit::fits;
        return x.fit == Fit::fits ? x.step_time_s < y.step_time_s : x.peak_bytes < y.peak_bytes;
    });
    return out;
}

bool tight_fit(const Memory& m) {
    return m.fits && m.margin_bytes + m.headroom_bytes < kTightMarginShare * m.usable_bytes;
}

FitAdvice fit_advice(const Job& job, const Calibration& cal, AdviceSearch search) {
    FitAdvice a;
    const Estimate now = estimate(job, cal);
    a.changes = memory_savers(job, cal);
    const bool cheap = search == AdviceSearch::if_cheap;
    const auto m = min_gpus_to_fit(job, cal, now.memory,
                                   cheap ? kCheapMinGpusEstimates : std::numeric_limits<int64_t>::max());
    a.min_gpus_searched = m.has_value();
    if (m) a.min_gpus = *m;
    const NearestSearch n = nearest_fitting_plan(job, cal, cheap ? kCheapNearestPlans : 0);
    a.nearest_searched = n.complete;
    if (const auto& p = n.plan)
        a.nearest = NearestFit{p->changes, plan_words(p->plan), with_pins(p->set, job_with_plan(job, p->plan)),
                               p->plan.peak_bytes, p->plan.step_time_s};
    return a;
}

std::string fit_advice_text(const FitAdvice& a) {
    std::string out;
    if (a.changes.empty()) {
        out += "no single change of zero, micro-batch, recompute, tp, pp or sequence parallelism lowers the "
               "memory per GPU\n";
    } else {
        out += "changes, each alone and re-estimated (those that fit first, fastest first):\n";
        for (const auto& c : a.changes)
            out += fmt::format("  {:<30} {:>10}  {:<12}  {:8.3f} s/step   {}\n", c.change, gib(c.peak_bytes),
                               c.fit == Fit::fits ? "fits" : "does not fit", c.step_time_s, set_args(c.set));
    }
    if (!a.nearest_searched)
        out += fmt::format("smallest change that fits: not searched (more than {},{:03} plans; estimate --advice "
                           "searches every plan on these GPUs)\n",
                           kCheapNearestPlans / 1000, kCheapNearestPlans % 1000);
    else if (a.nearest)
        out += fmt::format("smallest change that fits (search of every plan on these GPUs): {} setting{}: {}: {}, "
                           "{:.3f} s/step\n  {}\n",
                           a.nearest->changes, a.nearest->changes == 1 ? "" : "s", a.nearest->plan,
                           gib(a.nearest->peak_bytes), a.nearest->step_time_s, set_args(a.nearest->set));
    else
        out += "no plan fits on these GPUs (search of every plan)\n";
    const MinGpus& m = a.min_gpus;
    if (!a.min_gpus_searched) {
        out += fmt::format("fewest of these GPUs that fit the model: not searched (more than {} estimates; "
                           "estimate --advice searches)\n", kCheapMinGpusEstimates);
        return out;
    }
    if (m.num_gpus > 0) {
        out += fmt::format("fewest of these GPUs that fit the model: {}, with {}: {}, {:.3f} s/step\n  {}\n",
                           m.num_gpus, m.plan, gib(m.peak_bytes), m.step_time_s, set_args(m.set));
    } else {
        out += fmt::format("the model fits on none of {} to {} of these GPUs\n", m.searched_from, m.searched_up_to);
    }
    out += "  (searched from the count that the fully sharded weights, gradients and optimizer state fill, "
           "whole nodes above one; plans with every tp within a node and every pp, ZeRO-3 over dp, full "
           "recompute, micro-batch 1; the fastest that fits)\n";
    return out;
}

std::string memory_savers_text(const std::vector<PlanChange>& savers, std::size_t most) {
    std::string out;
    for (std::size_t i = 0; i < savers.size() && i < most; ++i) {
        const PlanChange& c = savers[i];
        out += fmt::format("  {:<30} {:>10}  {:8.3f} s/step   {}\n", c.change, gib(c.peak_bytes), c.step_time_s,
                           set_args(c.set));
    }
    return out;
}

nlohmann::json plan_changes_json(const std::vector<PlanChange>& list) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : list)
        changes.push_back({{"change", c.change},
                           {"set", c.set},
                           {"peak_bytes", c.peak_bytes},
                           {"capacity_bytes", c.capacity_bytes},
                           {"fits", c.fit == Fit::fits},
                           {"step_time_s", c.step_time_s}});
    return changes;
}

nlohmann::json fit_advice_json(const FitAdvice& a) {
    const nlohmann::json changes = plan_changes_json(a.changes);
    const MinGpus& m = a.min_gpus;
    nlohmann::json min = {{"num_gpus", nullptr},
                          {"searched_from_gpus", m.searched_from},
                          {"searched_up_to_gpus", m.searched_up_to}};
    if (m.num_gpus > 0) {
        min["num_gpus"] = m.num_gpus;
        min["plan"] = m.plan;
        min["set"] = m.set;
        min["peak_bytes"] = m.peak_bytes;
        min["step_time_s"] = m.step_time_s;
    }
    nlohmann::json nearest = nullptr;
    if (a.nearest)
        nearest = {{"changes", a.nearest->changes}, {"plan", a.nearest->plan}, {"set", a.nearest->set},
                   {"peak_bytes", a.nearest->peak_bytes}, {"step_time_s", a.nearest->step_time_s}};
    nlohmann::json out = {{"advice", changes}};
    if (a.nearest_searched) out["nearest_fitting_plan"] = nearest;
    if (a.min_gpus_searched) out["min_gpus_to_fit"] = min;
    return out;
}

}  // namespace lostflops
