// The checks of the framework rules table (lostflops/framework_rules.h): each
// RuleCheck computed from the model and the plan's degrees, in closed form,
// O(layer kinds) per plan. The rules and their sources are the table's.
#include "lostflops/framework_rules.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "lostflops/pipeline_schedules.h"

namespace lostflops {

const char* to_string(LaunchStack s) {
    switch (s) {
        case LaunchStack::megatron_core: return "megatron-core";
        case LaunchStack::megatron_lm: return "megatron-lm";
        case LaunchStack::torchtitan: return "torchtitan";
        case LaunchStack::deepspeed: return "deepspeed";
        case LaunchStack::hf: return "hf";
    }
    return "?";
}

LaunchStack launch_stack(Framework f) {
    switch (f) {
        case Framework::megatron_core: return LaunchStack::megatron_core;
        case Framework::megatron_lm: return LaunchStack::megatron_lm;
        case Framework::fsdp: return LaunchStack::torchtitan;
        case Framework::deepspeed: return LaunchStack::deepspeed;
        case Framework::hf: return LaunchStack::hf;
    }
    return LaunchStack::megatron_core;
}

LaunchPlan launch_plan(const ParallelPlan& p) {
    LaunchPlan l;
    l.tp = p.tp, l.cp = p.cp, l.pp = p.pp, l.dp = p.dp, l.vpp = p.vpp, l.ep = p.ep, l.etp = p.expert_tp();
    l.zero = p.zero;
    l.recompute_layers = p.recompute == Recompute::full ? p.recompute_layers : -1;
    l.schedule = effective_schedule(p);
    l.custom_stages = p.layout != nullptr || p.first_stage_layers >= 0 || p.last_stage_layers >= 0;
    l.cp_comm_type = p.cp_comm_type;
    l.recompute = p.recompute;
    l.moe_a2a_overlap = p.moe_a2a_overlap;
    l.dispatcher = p.moe_dispatcher;
    return l;
}

namespace {

// Why the plan breaks the check; empty when it does not.
std::string broken(RuleCheck c, const Model& m, const LaunchPlan& p, LaunchStack stack) {
    switch (c) {
        case RuleCheck::schedule_runs:
            if (p.pp == 1 || runs_on(p.schedule, stack)) return {};
            return fmt::format("pipeline_schedule {}", schedule_info(p.schedule).name);
        case RuleCheck::kv_heads_over_tp:
            for (const LayerKind& k : m.kinds())
                if (k.mixer == MixerKind::attention && k.attention.kv_heads % p.tp != 0)
                    return fmt::format("tp {}, {} KV heads", p.tp, k.attention.kv_heads);
            return {};
        case RuleCheck::even_stages:
            if (p.custom_stages) return "a custom stage layout";
            if (m.layers % (p.pp * p.vpp) != 0)
                return fmt::format("{} layers over pp x vpp = {} x {}", m.layers, p.pp, p.vpp);
            return {};
        case RuleCheck::no_cp:
            return p.cp > 1 ? fmt::format("cp {}", p.cp) : std::string();
        case RuleCheck::titan_stages: {
            // lostflops export torchtitan writes layers_per_stage = ceil(layers / (pp x vpp))
            // with first/last_stage_less_layers 0; torchtitan counts ceil(layers / that) stages.
            if (p.pp == 1 || p.vpp == 1) return {};
            if (p.custom_stages) return "a custom stage layout";
            const int stages = p.pp * p.vpp;
            const int per_stage = (m.layers + stages - 1) / stages;
            const int made = (m.layers + per_stage - 1) / per_stage;
            if (made == stages) return {};
            return fmt::format("{} layers at {} per stage make {} stages, not pp x vpp = {} x {}", m.layers, per_stage,
                               made, p.pp, p.vpp);
        }
        case RuleCheck::titan_zero:
            if (p.zero == 1 || p.zero == 2) return fmt::format("zero {}", p.zero);
            if (p.zero == 0 && p.cp > 1) return fmt::format("zero 0, cp {} (FSDP shards over cp)", p.cp);
            return {};
        case RuleCheck::titan_expert_tp:
            return m.is_moe() && p.etp > 1 ? fmt::format("etp {}", p.etp) : std::string();
        case RuleCheck::titan_ep_region: {
            const int64_t shard = p.zero == 3 ? p.dp : 1;
            const int64_t region = shard * p.cp * p.tp;
            if (p.ep == 1 || region % p.ep == 0) return {};
            return fmt::format("ep {}, dp_shard x cp x tp = {} x {} x {}", p.ep, shard, p.cp, p.tp);
        }
        case RuleCheck::pp_zero_below_2:
            return p.pp > 1 && p.zero >= 2 ? fmt::format("pp {}, zero {}", p.pp, p.zero) : std::string();
        case RuleCheck::legacy_zero:
            if (p.zero == 2) return "zero 2";
            if (p.zero == 3 && (p.pp > 1 || p.ep > 1)) return fmt::format("zero 3, pp {}, ep {}", p.pp, p.ep);
            return {};
        case RuleCheck::titan_recompute:
            return p.recompute_layers >= 0 ? fmt::format("recompute_layers {}", p.recompute_layers) : std::string();
        case RuleCheck::heads_over_cp:
            if (p.cp == 1) return {};
            for (const LayerKind& k : m.kinds()) {
                if (!k.has_attention()) continue;
                if (k.attention.heads % p.cp != 0) return fmt::format("cp {}, {} heads", p.cp, k.attention.heads);
                if (k.mixer == MixerKind::attention && k.attention.kv_heads % p.cp != 0)
                    return fmt::format("cp {}, {} KV heads", p.cp, k.attention.kv_heads);
            }
            return {};
        case RuleCheck::a2a_local_heads:
            if (p.cp == 1 || p.cp_comm_type != CpCommType::a2a) return {};
            for (const LayerKind& k : m.kinds()) {
                if (!k.has_attention()) continue;
                const int64_t heads = k.attention.heads / p.tp;
                const int64_t kv = k.mixer == MixerKind::attention ? std::max<int64_t>(1, k.attention.kv_heads / p.tp) : heads;
                if (heads % p.cp != 0 || kv % p.cp != 0)
                    return fmt::format("cp {}, {} heads and {} KV heads per tp rank", p.cp, heads, kv);
            }
            return {};
        case RuleCheck::data_parallel_only:
            if (p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1)
                return fmt::format("tp {}, pp {}, cp {}, ep {}", p.tp, p.pp, p.cp, p.ep);
            return {};
        case RuleCheck::hf_recompute:
            if (p.recompute == Recompute::selective) return "recompute selective";
            return p.recompute_layers >= 0 ? fmt::format("recompute_layers {}", p.recompute_layers) : std::string();
        case RuleCheck::cp_not_a2a:
            return p.cp > 1 && p.cp_comm_type == CpCommType::a2a ? fmt::format("cp {}, cp_comm_type a2a", p.cp)
                                                                 : std::string();
        case RuleCheck::a2a_overlap_mcore_only:
            return m.is_moe() && p.moe_a2a_overlap ? "moe_a2a_overlap true" : std::string();
        case RuleCheck::a2a_overlap_setup:
            if (!m.is_moe() || !p.moe_a2a_overlap) return {};
            if (p.ep <= 1) return fmt::format("ep {}", p.ep);
            if (p.dispatcher == MoeDispatcher::allgather) return "moe_dispatcher allgather";
            if (p.pp > 1 && p.vpp <= 1) return fmt::format("pp {}, vpp {}", p.pp, p.vpp);
            return {};
        case RuleCheck::a2a_overlap_recompute:
            if (!m.is_moe() || !p.moe_a2a_overlap || p.recompute != Recompute::full) return {};
            return p.recompute_layers >= 0 ? fmt::format("recompute full x{}", p.recompute_layers) : "recompute full";
        case RuleCheck::titan_dispatcher:
            return m.is_moe() && p.ep > 1 && p.dispatcher == MoeDispatcher::allgather ? "moe_dispatcher allgather"
                                                                                       : std::string();
        case RuleCheck::cp_only_a2a:
            return p.cp > 1 && p.cp_comm_type != CpCommType::a2a
                       ? fmt::format("cp {}, cp_comm_type {}", p.cp, to_string(p.cp_comm_type))
                       : std::string();
    }
    return {};
}

template <class F>
void each_break(const Model& m, const LaunchPlan& p, LaunchStack stack, bool knob_rules, F&& f) {
    for (const FrameworkRule& r : kFrameworkRules) {
        if (r.stack != stack || (r.knob && !knob_rules)) continue;
        std::string why = broken(r.check, m, p, stack);
        if (!why.empty() && !f(RuleBreak{&r, std::move(why)})) return;
    }
}

}  // namespace

std::vector<RuleBreak> rule_breaks(const Model& m, const LaunchPlan& p, LaunchStack stack, bool knob_rules) {
    std::vector<RuleBreak> out;
    each_break(m, p, stack, knob_rules, [&](RuleBreak b) {
        out.push_back(std::move(b));
        return true;
    });
    return out;
}

std::optional<RuleBreak> first_rule_break(const Model& m, const LaunchPlan& p, LaunchStack stack, bool knob_rules) {
    std::optional<RuleBreak> out;
    each_break(m, p, stack, knob_rules, [&](RuleBreak b) {
        out = std::move(b);
        return false;
    });
    return out;
}

bool breaks_rule_on(const Model& m, const LaunchPlan& p, LaunchStack stack, const char* key, bool knob_rules) {
    for (const FrameworkRule& r : kFrameworkRules)
        if (r.stack == stack && (knob_rules || !r.knob) && std::string_view(r.key) == key && !broken(r.check, m, p, stack).empty())
            return true;
    return false;
}

std::vector<RuleBreak> rule_breaks(const Job& job) {
    return rule_breaks(job.model, launch_plan(job.plan), launch_stack(job.training.framework));
}

bool breaks_beyond(const Job& candidate, const Job& base) {
    const std::vector<RuleBreak> mine = rule_breaks(candidate);
    if (mine.empty()) return false;
    const std::vector<RuleBreak> theirs = rule_breaks(base);
    for (const RuleBreak& b : mine) {
        bool known = false;
        for (const RuleBreak& t : theirs) known = known || t.rule == b.rule;
        if (!known) return true;
    }
    return false;
}

std::string rule_break_text(const RuleBreak& b) {
    return fmt::format("cannot launch in {}: {}: {} ({})", to_string(b.rule->stack), b.rule->rule, b.detail,
                       b.rule->source);
}

}  // namespace lostflops
