// The exporters' guard (interop/launch_rules.h): the first broken rule of the
// framework rules table, as an input error naming the rule and its source.
#include "interop/launch_rules.h"

#include "lostflops/error.h"

namespace lostflops::interop {

void check_launch_rules(const Job& job, LaunchStack stack) {
    if (const auto b = first_rule_break(job.model, launch_plan(job.plan), stack))
        throw InputError(job.source, b->rule->key, rule_break_text(*b));
}

}  // namespace lostflops::interop
