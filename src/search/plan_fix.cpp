// Fixed settings of a search: from the job's parallel section (the keys it
// gives) and from --fix / --compare text ("tp=8,zero=1"), with the job file's
// spellings and ranges: the rows of lostflops/plan_keys.h the search varies.
#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "lostflops/error.h"
#include "lostflops/framework_rules.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/plan_keys.h"
#include "lostflops/search.h"
#include "job/did_you_mean.h"

namespace lostflops {

namespace {

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

int64_t parse_int(const std::string& v, const std::string& key, const std::string& source, int64_t lo, int64_t hi) {
    int64_t x = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || ptr != v.data() + v.size() || v.empty())
        throw InputError(source, key, fmt::format("'{}' is not an integer", v));
    if (x < lo || x > hi) throw InputError(source, key, fmt::format("{} is out of range; expected {} to {}", x, lo, hi));
    return x;
}

bool parse_bool(const std::string& v, const std::string& key, const std::string& source) {
    if (v == "true" || v == "on" || v == "1") return true;
    if (v == "false" || v == "off" || v == "0") return false;
    throw InputError(source, key, fmt::format("'{}': expected true or false", v));
}

// A searched key's value from `from` into the fix (the rows of
// lostflops/plan_keys.h with `searched`; etp resolved: tp when not given).
void fix_key(PlanFix& f, std::string_view key, const ParallelPlan& from) {
    if (key == "tp") f.tp = from.tp;
    else if (key == "cp") f.cp = from.cp;
    else if (key == "pp") f.pp = from.pp;
    else if (key == "dp") f.dp = from.dp;
    else if (key == "vpp") f.vpp = from.vpp;
    else if (key == "ep") f.ep = from.ep;
    else if (key == "etp") f.etp = from.expert_tp();
    else if (key == "moe_dispatcher") f.moe_dispatcher = from.moe_dispatcher;
    else if (key == "moe_a2a_overlap") f.moe_a2a_overlap = from.moe_a2a_overlap;
    else if (key == "cp_comm_type") f.cp_comm_type = from.cp_comm_type;
    else if (key == "zero") f.zero = from.zero;
    else if (key == "sequence_parallel") f.sequence_parallel = from.sequence_parallel;
    else if (key == "tp_comm_overlap") f.tp_comm_overlap = from.tp_comm_overlap;
    else if (key == "overlap_grad_reduce") f.overlap_grad_reduce = from.overlap_grad_reduce;
    else if (key == "recompute") f.recompute = from.recompute;
    else if (key == "recompute_layers") f.recompute_layers = from.recompute_layers;
    else throw std::logic_error("plan_fix.cpp: searched key " + std::string(key) + " has no PlanFix field (bug)");
}

// The searched row `key` names (its name or its --fix alias), or nullptr.
const PlanKey* searched_key(const std::string& key) {
    for (const PlanKey& k : plan_keys())
        if (k.searched && (key == k.name || (k.fix_alias != nullptr && key == k.fix_alias))) return &k;
    return nullptr;
}

// "a, b or c"
std::string alternatives(const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

void set_key(PlanFix& f, const std::string& key, const std::string& v, const std::string& source) {
    if (key == "micro_batch_size" || key == "mbs") {  // training's, searched with the plan
        f.micro_batch = parse_int(v, key, source, 1, 1'000'000);
        return;
    }
    const PlanKey* k = searched_key(key);
    if (k == nullptr) {
        std::vector<std::string> names, spellings;
        for (const PlanKey& row : plan_keys())
            if (row.searched) {
                names.emplace_back(row.name);
                spellings.emplace_back(row.name);
                if (row.fix_alias != nullptr) spellings.emplace_back(row.fix_alias);
            }
        names.emplace_back("micro_batch_size");
        spellings.emplace_back("micro_batch_size");
        spellings.emplace_back("mbs");
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        // A plan key --fix does not take (the search keeps it as the job
        // gives it; some, as the schedule and the stage layout, it varies
        // only when the job leaves them out).
        if (find_plan_key(key) != nullptr)
            throw InputError(source, key,
                             "--fix and --compare do not take parallel." + key +
                                 ": give it under parallel: in the job, where the search keeps it; expected one of " +
                                 list);
        throw InputError(source, key, "unknown setting; expected one of " + list + did_you_mean(key, spellings));
    }
    double value = 0;
    switch (k->type) {
        case PlanKeyType::integer:
        case PlanKeyType::special: {
            // --fix recompute_layers: at least one layer (0 would read as every layer, search/knobs.h).
            const int64_t lo = std::string_view(k->name) == "recompute_layers" ? 1 : static_cast<int64_t>(k->min);
            value = static_cast<double>(parse_int(v, key, source, lo, static_cast<int64_t>(k->max)));
            break;
        }
        case PlanKeyType::boolean: value = parse_bool(v, key, source) ? 1 : 0; break;
        case PlanKeyType::number: throw std::logic_error("plan_fix.cpp: a searched number (bug)");
        case PlanKeyType::choice: {
            const std::vector<std::string> names = plan_key_choices(*k);
            const auto at = std::find(names.begin(), names.end(), v);
            if (at == names.end()) throw InputError(source, key, fmt::format("'{}': expected {}", v, alternatives(names)));
            value = static_cast<double>(at - names.begin());
            break;
        }
    }
    ParallelPlan given;
    k->field.set(given, value);
    fix_key(f, k->name, given);
    // A recompute depth is full recompute's; another mode has none.
    if (std::string_view(k->name) == "recompute_layers") f.recompute = Recompute::full;
    if (std::string_view(k->name) == "recompute" && *f.recompute != Recompute::full) f.recompute_layers.reset();
}

template <class T>
bool agrees(const std::optional<T>& fixed, const T& value) {
    return !fixed || *fixed == value;
}

}  // namespace

PlanFix plan_fix_from(const SearchJob& sj) {
    PlanFix f;
    // grad_fp32 and the zero_* engine keys are not searched: kept as given.
    for (const std::string& k : sj.fixed_keys)
        if (const PlanKey* row = searched_key(k); row != nullptr && k == row->name) fix_key(f, row->name, sj.job.plan);
    if (f.recompute && *f.recompute == Recompute::full && !f.recompute_layers) f.recompute_layers = -1;
    f.launch = launch_stack(sj.job.training.framework);
    return f;
}

PlanFix plan_fix_all(const Job& job) {
    const ParallelPlan& p = job.plan;
    PlanFix f;
    for (const PlanKey& k : plan_keys())
        if (k.searched && (!k.experts_only || job.model.is_moe())) fix_key(f, k.name, p);
    f.micro_batch = job.training.micro_batch;
    f.recompute_layers = p.recompute == Recompute::full ? p.recompute_layers : -1;
    f.schedule = effective_schedule(p);
    f.first_stage_layers = p.first_stage_layers;
    f.last_stage_layers = p.last_stage_layers;
    return f;
}

void add_plan_fix(PlanFix& fix, const std::string& text, const std::string& source,
                  std::map<std::string, std::string>* given) {
    std::map<std::string, std::string> local;
    std::map<std::string, std::string>& seen = given != nullptr ? *given : local;
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = text.find(',', at);
        const std::string item = trim(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        at = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (item.empty()) continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos)
            throw InputError(source, item, "expected key=value (e.g. tp=8,zero=1)");
        const std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
        if (value.empty()) throw InputError(source, key, "empty value");
        set_key(fix, key, value, source);
        // One value a setting: tp=8,tp=4 kept the last without a word.
        const PlanKey* k = searched_key(key);
        const std::string name = k != nullptr ? k->name : "micro_batch_size";
        const auto [it, added] = seen.emplace(name, value);
        if (!added && it->second != value)
            throw InputError(source, key, fmt::format("given as {} and as {}; give one value", it->second, value));
    }
    if (fix.recompute && *fix.recompute == Recompute::full && !fix.recompute_layers) fix.recompute_layers = -1;
}

void check_fix_launchable(const Job& job, const PlanFix& f) {
    const std::vector<UnlaunchableFix> u = unlaunchable_fixes(job, f);
    if (!u.empty()) throw InputError(job.source, u.front().key, u.front().rule + "; no plan with it can be launched");
}

std::vector<UnlaunchableFix> unlaunchable_fixes(const Job& job, const PlanFix& f) {
    std::vector<UnlaunchableFix> out;
    if (!f.launch) return out;
    // The setting fixed alone, the others at their neutral values (the
    // schedule with a pipeline): a rule broken here is broken by every plan
    // (lostflops/framework_rules.h).
    LaunchPlan sched, zero;
    sched.pp = 2;
    sched.schedule = schedule_for_vpp(job.plan.schedule, 1);
    zero.zero = f.zero.value_or(0);
    const auto refuse = [&](const LaunchPlan& lp, const std::string& key) {
        for (const RuleBreak& b : rule_breaks(job.model, lp, *f.launch))
            if (b.rule->key == key) {
                out.push_back({key, rule_break_text(b)});
                return;
            }
    };
    if (job.plan.schedule_given) refuse(sched, "parallel.pipeline_schedule");
    if (f.zero) refuse(zero, "parallel.zero");
    if (f.moe_a2a_overlap.value_or(false)) {  // on at its most permissive: ep 2, no pipeline, no recompute
        LaunchPlan a2a;
        a2a.ep = 2;
        a2a.moe_a2a_overlap = true;
        refuse(a2a, "parallel.moe_a2a_overlap");
    }
    return out;
}

bool plan_matches(const PlanFix& f, const PlanScore& s) {
    const ParallelPlan& p = s.plan;
    return agrees(f.tp, p.tp) && agrees(f.cp, p.cp) && agrees(f.pp, p.pp) && agrees(f.dp, p.dp) &&
           agrees(f.vpp, p.vpp) && agrees(f.ep, p.ep) && agrees(f.zero, p.zero) &&
           (!f.etp || *f.etp == p.expert_tp()) && agrees(f.moe_dispatcher, p.moe_dispatcher) &&
           agrees(f.moe_a2a_overlap, p.moe_a2a_overlap) &&
           (!f.cp_comm_type || p.cp == 1 || *f.cp_comm_type == p.cp_comm_type) &&
           agrees(f.micro_batch, s.micro_batch) && agrees(f.recompute, p.recompute) &&
           (!f.recompute_layers || p.recompute != Recompute::full || *f.recompute_layers == p.recompute_layers) &&
           agrees(f.sequence_parallel, p.sequence_parallel) && agrees(f.tp_comm_overlap, p.tp_comm_overlap) &&
           agrees(f.overlap_grad_reduce, p.overlap_grad_reduce) &&
           (!f.schedule || *f.schedule == effective_schedule(p)) &&
           agrees(f.first_stage_layers, p.first_stage_layers) && agrees(f.last_stage_layers, p.last_stage_layers);
}

std::string plan_words(const PlanScore& s) {
    const ParallelPlan& p = s.plan;
    std::string rc = to_string(p.recompute);
    if (p.recompute == Recompute::full && p.recompute_layers >= 0) rc = fmt::format("full x{}", p.recompute_layers);
    std::string out = fmt::format("tp {}, cp {}", p.tp, p.cp);
    if (p.cp > 1) out += fmt::format(" ({})", to_string(p.cp_comm_type));
    out += fmt::format(", pp {}", p.pp);
    if (!standard_mapping(p)) out += fmt::format(" ({})", schedule_info(p.schedule).name);
    else if (p.vpp > 1) out += fmt::format(" (vpp {})", p.vpp);
    // A stage layout: "pp 4 (first 7, last 7 layers)".
    if (p.first_stage_layers >= 0 && p.last_stage_layers >= 0)
        out += fmt::format(" (first {}, last {} layers)", p.first_stage_layers, p.last_stage_layers);
    else if (p.first_stage_layers >= 0 || p.last_stage_layers >= 0)
        out += fmt::format(" ({} {} layers)", p.first_stage_layers >= 0 ? "first" : "last",
                           std::max(p.first_stage_layers, p.last_stage_layers));
    out += fmt::format(", dp {}", p.dp);
    if (p.ep > 1) out += fmt::format(", ep {}", p.ep);
    if (p.ep > 1 && p.etp > 0) out += fmt::format(", etp {}", p.etp);  // experts only: a dense plan has none
    if (p.ep > 1) out += fmt::format(", {}", to_string(p.moe_dispatcher));
    if (p.moe_a2a_overlap) out += ", a2a-overlap";
    out += fmt::format(", mbs {}, zero {}, recompute {}", s.micro_batch, p.zero, rc);
    if (p.sequence_parallel) out += ", sp";
    if (p.tp_comm_overlap) out += ", tp-overlap";
    out += p.overlap_grad_reduce ? ", dp-overlap" : ", no dp-overlap";
    return out;
}

}  // namespace lostflops
