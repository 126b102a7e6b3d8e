// The keys of a job's `parallel:` section (docs/job-file.md), one row per
// key: its type and range, its default and what leaving it out means, the
// frameworks that take it, the launch flag it maps to, its words, whether the
// search varies it, and how to read and write its field of ParallelPlan
// (lostflops/spec.h). The rows live in src/job/plan_keys.cpp, in the order the
// job reader reads them (a rule reads the keys above it).
//
// The table drives the job reader's plain keys (job/job_sections.cpp
// read_parallel), --fix / --compare (search/plan_fix.cpp), the plan's echo in
// `estimate --format json` (report/job_json.cpp) and the test that
// docs/job-file.md names every key (tests/job/plan_keys_test.cpp). Adding a
// plan setting: its field in ParallelPlan, its row, and the code that prices
// it (ARCHITECTURE.md "How to add …"); plan_keys.cpp fails to compile while
// ParallelPlan has a field without a row.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/spec.h"

namespace lostflops {

enum class PlanKeyType {
    integer,  // a whole number in [min, max]
    boolean,  // true / false
    number,   // a real number in [min, max]
    choice,   // one of `choices` names (the value is the name's index)
    special,  // read by code of its own (job/job_sections.cpp read_parallel)
};

// When the `parallel` object of `estimate --format json` shows the key
// (report/job_json.cpp; besides `experts_only`, shown only for a model with
// experts). The JSON v1 keys: a row's echo keeps them as they are.
// resolved: shown with the value the estimate resolves, not the field's
// (the schedule vpp picks, etp as tp, null for "every layer" or "none", the
// ZeRO-3 engine's framework defaults): job_json.cpp writes those itself.
enum class PlanKeyEcho { always, deepep, context_parallel, selective, zero3, resolved, never };

// What the reader's rules see besides the plan read so far.
struct PlanKeyContext {
    Framework framework = Framework::megatron_core;
    std::string arch;
};

// Reads and writes the key's value in a plan: integers, booleans (0 / 1),
// numbers as they are, a choice as its index.
struct PlanKeyAccess {
    double (*get)(const ParallelPlan&) = nullptr;
    void (*set)(ParallelPlan&, double) = nullptr;
};

// Why the key cannot be given here ("" when it can), from the plan read so far.
using PlanKeyRule = std::string (*)(const ParallelPlan&, const PlanKeyContext&);

struct PlanKey {
    const char* name;
    PlanKeyType type;
    double min = 0, max = 0;                  // integer, number: the accepted range, inclusive
    int choices = 0;                          // choice: how many names
    const char* (*choice)(int) = nullptr;     // choice: the i-th name
    PlanKeyAccess field;                      // not for special keys
    const char* default_value = "";           // the value when not given, in words
    const char* not_given = "";               // what leaving it out means, where more than the default
    const char* frameworks = "";              // the frameworks that take it, where a rule says so ("" every one)
    const char* megatron = "";                // the Megatron-LM flag (src/interop/megatron_export_parallel.cpp)
    const char* torchtitan = "";              // torchtitan's job-config key (src/interop/torchtitan_export.cpp)
    const char* maxtext = "";                 // MaxText's key (src/interop/maxtext_export.cpp)
    const char* words = "";                   // one line on what it does
    bool searched = false;                    // `search` varies it; --fix / --compare take it
    const char* fix_alias = nullptr;          // another --fix spelling
    bool experts_only = false;                // means something only for a model with experts
    PlanKeyEcho echo = PlanKeyEcho::never;
    PlanKeyRule refuse_given = nullptr;       // checked before the value is read, when given
    PlanKeyRule refuse_value = nullptr;       // checked after the value is set, when given
    void (*when_not_given)(ParallelPlan&, const PlanKeyContext&) = nullptr;  // the default, when it depends
};

// Every key, in reading order.
std::span<const PlanKey> plan_keys();
// The row named `name`, or nullptr.
const PlanKey* find_plan_key(std::string_view name);
// A choice key's names, in index order.
std::vector<std::string> plan_key_choices(const PlanKey& k);

}  // namespace lostflops
