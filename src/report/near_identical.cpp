// Near-identical plans of a search's listing (contract: report/near_identical.h).
//
// Algorithm: plans in rank order; two plans are one knob apart when they give
// the same keys and all but one of their KEY=VALUE arguments are equal, or
// when one gives the other's arguments and one more (a stage layout's keys
// are given only by the plans that have one). Each plan not folded under an
// earlier one is indexed by each of its arguments' keys with its other
// arguments, and by all its arguments (hashes of the strings; a match is
// checked on the strings), so a plan finds its candidates by its own
// arguments instead of among every plan before it: `search --top all` lists
// every plan of a search, 10^5 and more (docs/performance.md).
#include "report/near_identical.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lostflops {

std::string near_identical(const Job& job, const std::vector<PlanScore>& listed, double ratio) {
    if (listed.size() < 2) return "";
    // The other arguments than k (all of them for k = size), after `head`.
    const auto others = [](const std::vector<std::string>& set, size_t k, std::string head) {
        for (size_t a = 0; a < set.size(); ++a)
            if (a != k) (head += '\n') += set[a];
        return head;
    };
    const auto key_of = [](const std::string& arg) { return arg.substr(0, arg.find('=')); };
    struct Group {
        size_t head = 0;
        std::string knob;  // "vpp"
        std::vector<std::string> ranks, values;
    };
    std::vector<Group> groups;
    std::map<std::pair<size_t, std::string>, size_t> group_of;  // (head, knob) -> index in groups
    // Plans not folded, by rank, under the hashes of their strings (a match is
    // checked on the strings): the key and other arguments -> plan; all
    // arguments -> plan.
    const std::hash<std::string> hash;
    std::unordered_map<size_t, std::vector<size_t>> by_other_args;
    std::unordered_map<size_t, std::vector<size_t>> by_args;
    const auto set_of = [&](size_t i) { return plan_set_arguments(job, listed[i]); };
    for (size_t j = 0; j < listed.size(); ++j) {
        const std::vector<std::string> set = plan_set_arguments(job, listed[j]);
        // The first plan before j, one knob apart and within the interval.
        size_t best = listed.size(), best_arg = 0;
        const auto within = [&](size_t i) {
            return !(listed[j].tokens_per_s_per_gpu < ratio * listed[i].tokens_per_s_per_gpu);
        };
        for (size_t k = 0; k < set.size(); ++k) {
            const std::string around = others(set, k, key_of(set[k]));
            if (const auto it = by_other_args.find(hash(around)); it != by_other_args.end())
                for (size_t i : it->second) {
                    if (i >= best) break;
                    if (!within(i)) continue;
                    const std::vector<std::string> s = set_of(i);
                    const auto at = std::find_if(s.begin(), s.end(), [&](const std::string& a) {
                        return key_of(a) == key_of(set[k]);
                    });
                    if (at == s.end() || *at == set[k] ||
                        others(s, static_cast<size_t>(at - s.begin()), key_of(set[k])) != around)
                        continue;
                    best = i;
                    best_arg = k;
                    break;
                }
            const std::string rest = others(set, k, "");
            if (const auto it = by_args.find(hash(rest)); it != by_args.end())
                for (size_t i : it->second) {
                    if (i >= best) break;
                    if (!within(i) || others(set_of(i), set.size(), "") != rest) continue;
                    best = i;
                    best_arg = k;
                    break;
                }
        }
        if (best < listed.size()) {
            const std::string& arg = set[best_arg];
            const size_t dot = arg.find('.') + 1, eq = arg.find('=');
            const std::string knob = arg.substr(dot, eq - dot);
            const auto [g, added] = group_of.try_emplace({best, knob}, groups.size());
            if (added) groups.push_back(Group{best, knob, {}, {}});
            groups[g->second].ranks.push_back(std::to_string(j + 1));
            groups[g->second].values.push_back(arg.substr(eq + 1));
            continue;
        }
        for (size_t k = 0; k < set.size(); ++k)
            by_other_args[hash(others(set, k, key_of(set[k])))].push_back(j);
        by_args[hash(others(set, set.size(), ""))].push_back(j);
    }
    if (groups.empty()) return "";
    std::string out = "  near-identical (one knob apart, within the better plan's 80 % interval):\n";
    for (const Group& g : groups)
        out += fmt::format("    rank{} {}: rank {} with {} {}\n", g.ranks.size() > 1 ? "s" : "",
                           fmt::join(g.ranks, ", "), g.head + 1, g.knob, fmt::join(g.values, ", "));
    return out;
}

}  // namespace lostflops
