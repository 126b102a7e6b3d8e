// The table of `parallel:` keys (lostflops/plan_keys.h, issue 40): the job
// reader reads exactly its keys, each row reads and writes its own field,
// docs/job-file.md names every key, the launch flags it names are the
// exporters' own, the importers write only its keys, and --fix takes the
// searched rows with "did you mean".
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "lostflops/error.h"
#include "lostflops/plan_keys.h"
#include "lostflops/search.h"
#include "job/hardware_bounds.h"
#include "job/job_sections.h"
#include "test_util.h"

namespace lostflops {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

ParallelPlan read_plan(const std::string& yaml) {
    return read_parallel(YAML::Load(yaml), "job.yaml", 64, "hopper", Framework::megatron_core);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A key set to null is not given: every row's key is one the reader asks
// about (it would be "unknown key" otherwise), and a key of no row is refused.
TEST(PlanKeys, ReaderTakesExactlyTheTablesKeys) {
    std::set<std::string> names;
    for (const PlanKey& k : plan_keys()) {
        EXPECT_TRUE(names.insert(k.name).second) << "two rows named " << k.name;
        EXPECT_NE(std::string(k.words), "") << k.name << " has no words";
        EXPECT_NE(std::string(k.default_value), "") << k.name << " has no default";
        EXPECT_NO_THROW(read_plan(std::string("{tp: 2, ") + k.name + ": null}")) << k.name;
    }
    try {
        read_plan("{tp: 2, not_a_plan_key: true}");
        ADD_FAILURE() << "a key of no row was read";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "parallel.not_a_plan_key");
        EXPECT_TRUE(has(e.message(), "unknown key")) << e.what();
    }
    try {
        read_plan("{tp: 2, sequence_paralel: true}");
        ADD_FAILURE() << "a misspelt key was read";
    } catch (const InputError& e) {
        EXPECT_TRUE(has(e.message(), "did you mean `sequence_parallel`?")) << e.what();
    }
}

// A value other than the default, for a row that has a field.
double other_value(const PlanKey& k, double def) {
    switch (k.type) {
        case PlanKeyType::boolean: return def != 0 ? 0 : 1;
        case PlanKeyType::choice: return static_cast<double>((static_cast<int>(def) + 1) % k.choices);
        default: return def == k.min ? k.min + 1 : k.min;
    }
}

// Each row writes its own field and no other row's (a row wired to the
// wrong member fails here), and reads back what it wrote.
TEST(PlanKeys, EachRowReadsAndWritesItsOwnField) {
    const ParallelPlan base;
    for (const PlanKey& a : plan_keys()) {
        if (a.field.get == nullptr) continue;
        ParallelPlan p;
        const double v = other_value(a, a.field.get(base));
        a.field.set(p, v);
        EXPECT_EQ(a.field.get(p), v) << a.name;
        for (const PlanKey& b : plan_keys())
            if (&b != &a && b.field.get != nullptr) {
                EXPECT_EQ(b.field.get(p), b.field.get(base)) << a.name << " wrote " << b.name;
            }
    }
}

// Integers, numbers, choices and booleans as the job file gives them; dp derived.
TEST(PlanKeys, ReaderReadsEachType) {
    for (const PlanKey& k : plan_keys()) {
        if (k.type != PlanKeyType::choice) continue;
        for (const std::string& name : plan_key_choices(k)) EXPECT_FALSE(name.empty()) << k.name;
        EXPECT_GT(k.choices, 1) << k.name;
    }
    const ParallelPlan p = read_plan("{tp: 2, pp: 2, moe_imbalance: 1000, recompute: full, recompute_layers: 0, "
                                     "cp_comm_type: a2a, grad_fp32: false}");
    EXPECT_EQ(p.moe_imbalance, 1000);
    EXPECT_EQ(p.recompute, Recompute::full);
    EXPECT_EQ(p.recompute_layers, 0);
    EXPECT_EQ(p.cp_comm_type, CpCommType::a2a);
    EXPECT_FALSE(p.grad_fp32);
    EXPECT_EQ(p.dp, 16);  // 64 / (2 x 2)
}

// Every key is named in docs/job-file.md's `parallel:` list.
TEST(PlanKeys, DocsNameEveryKey) {
    const std::string doc = read_text(test::source_path("docs/job-file.md"));
    const size_t at = doc.find("\n- `parallel:`");
    ASSERT_NE(at, std::string::npos) << "docs/job-file.md has no `parallel:` list";
    const size_t end = doc.find("\n- `", at + 1);
    const std::string list = doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
    for (const PlanKey& k : plan_keys())
        EXPECT_TRUE(has(list, std::string("`") + k.name + "`")) << k.name << " is missing from docs/job-file.md's parallel: list";
}

// The launch flags and keys a row names are the exporters' own, not invented.
TEST(PlanKeys, LaunchNamesAreTheExportersOwn) {
    std::string exporters;
    for (const auto& e : std::filesystem::directory_iterator(test::source_path("src/interop")))
        if (e.path().extension() == ".cpp") exporters += read_text(e.path().string());
    for (const PlanKey& k : plan_keys())
        for (const char* names : {k.megatron, k.torchtitan, k.maxtext}) {
            std::stringstream in(names);
            for (std::string name; std::getline(in, name, ',');) {
                name = name.substr(name.find_first_not_of(' '));
                name = name.substr(0, name.find(' '));  // "--grad-reduce-in-bf16 (false)"
                // MaxText's mesh keys are written as ici_{}_parallelism of an axis name.
                const bool mesh = (name.starts_with("ici_") || name.starts_with("dcn_")) && name.ends_with("_parallelism");
                const std::string axis = mesh ? name.substr(4, name.size() - 4 - 12) : "";
                // A flag as written; a config key as a key ("mode =", "\"mode\""), not a word of any text.
                const bool flag = name.starts_with("--");
                const bool named = mesh   ? has(exporters, name.substr(0, 4) + "{}_parallelism") && has(exporters, "\"" + axis + "\"")
                                   : flag ? has(exporters, name)
                                          : has(exporters, name + " =") || has(exporters, "\"" + name + "\"") ||
                                                has(exporters, name + ": ");
                EXPECT_TRUE(named) << k.name << ": " << name << " is in no file of src/interop";
            }
        }
}

// Every parallel key an importer writes into a job (interop/job_draft.h,
// `add(d.parallel, "KEY", ...)`) is a row: an imported job reads back.
TEST(PlanKeys, ImportersWriteTheTablesKeys) {
    int keys = 0;
    for (const auto& e : std::filesystem::directory_iterator(test::source_path("src/interop"))) {
        if (e.path().extension() != ".cpp") continue;
        const std::string text = read_text(e.path().string());
        const std::string call = "add(d.parallel, \"";
        for (size_t at = text.find(call); at != std::string::npos; at = text.find(call, at + 1)) {
            const size_t from = at + call.size();
            const std::string key = text.substr(from, text.find('"', from) - from);
            EXPECT_NE(find_plan_key(key), nullptr) << e.path().filename() << " writes parallel." << key << ", a key of no row";
            ++keys;
        }
    }
    EXPECT_GT(keys, 20);  // the importers write the plan this way
}

// --fix takes the searched rows (and their aliases) and refuses the others by name.
TEST(PlanKeys, FixTakesTheSearchedRows) {
    PlanFix f;
    add_plan_fix(f, "sp=true,tp=4,moe_dispatcher=deepep,recompute_layers=2", "--fix");
    EXPECT_EQ(f.sequence_parallel, true);
    EXPECT_EQ(f.tp, 4);
    EXPECT_EQ(f.moe_dispatcher, MoeDispatcher::deepep);
    EXPECT_EQ(f.recompute, Recompute::full);
    EXPECT_EQ(f.recompute_layers, 2);
    for (const PlanKey& k : plan_keys()) {
        PlanFix g;
        std::string value = k.type == PlanKeyType::boolean  ? "true"
                            : k.type == PlanKeyType::choice ? plan_key_choices(k).back()
                                                            : "1";
        if (k.searched) EXPECT_NO_THROW(add_plan_fix(g, std::string(k.name) + "=" + value, "--fix")) << k.name;
        else EXPECT_THROW(add_plan_fix(g, std::string(k.name) + "=" + value, "--fix"), InputError) << k.name;
    }
    try {
        add_plan_fix(f, "overlap_grad_reduse=true", "--fix");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_TRUE(has(e.message(), "did you mean `overlap_grad_reduce`?")) << e.what();
    }
    try {
        add_plan_fix(f, "grad_fp32=true", "--fix");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_TRUE(has(e.message(), "do not take parallel.grad_fp32")) << e.what();
    }
    try {  // an alias is a spelling too
        add_plan_fix(f, "mbz=2", "--fix");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_TRUE(has(e.message(), "did you mean `mbs`?")) << e.what();
    }
}

// A row's rule refuses its key, by name, when what it depends on is not so:
// on a plain plan (alltoall dispatcher, zero 0, no recompute, no capacity
// factor, a GPU) every rule of the table has something to refuse.
TEST(PlanKeys, RulesRefuseTheirKeyByName) {
    int rules = 0;
    for (const PlanKey& k : plan_keys()) {
        if (k.refuse_given == nullptr && k.refuse_value == nullptr) continue;
        ++rules;
        const std::string value = k.type == PlanKeyType::boolean  ? "true"
                                  : k.type == PlanKeyType::choice ? plan_key_choices(k).back()
                                                                  : "1";
        try {
            read_plan(std::string("{") + k.name + ": " + value + "}");
            ADD_FAILURE() << k.name << ": " << value << " was taken on a plain plan";
        } catch (const InputError& e) {
            EXPECT_EQ(e.key(), std::string("parallel.") + k.name) << e.what();
        }
    }
    EXPECT_GE(rules, 8);
}

// A choice row has as many names as its enum: one past the last is no name.
TEST(PlanKeys, ChoiceRowsCountTheirEnums) {
    for (const char* name : {"cp_comm_type", "moe_dispatcher", "recompute", "remat_policy"}) {
        const PlanKey* k = find_plan_key(name);
        ASSERT_NE(k, nullptr) << name;
        ASSERT_EQ(k->type, PlanKeyType::choice);
        EXPECT_EQ(std::string(k->choice(k->choices)), "?") << name << " has more values than its row's " << k->choices;
        for (int i = 0; i < k->choices; ++i) EXPECT_NE(std::string(k->choice(i)), "?") << name << " " << i;
    }
}

// A count of layers in a plan is bounded as the model's layers are
// (job/hardware_bounds.h): the bound itself is a legal value of each such row.
TEST(PlanKeys, LayerCountsAreBoundedAsTheModelsLayers) {
    for (const char* name : {"first_stage_layers", "last_stage_layers", "recompute_layers"}) {
        const PlanKey* k = find_plan_key(name);
        ASSERT_NE(k, nullptr) << name;
        EXPECT_EQ(k->type, PlanKeyType::integer) << name;
        EXPECT_EQ(k->max, static_cast<double>(bounds::kMaxLayers)) << name;
    }
}

// The defaults that depend on the framework (job/job_sections.cpp comments
// give their sources): the context-parallel variant and the DP overlap.
TEST(PlanKeys, FrameworkDefaults) {
    const auto plan = [](Framework fw, const std::string& yaml) {
        return read_parallel(YAML::Load(yaml), "job.yaml", 64, "hopper", fw);
    };
    EXPECT_EQ(plan(Framework::megatron_core, "{cp: 2}").cp_comm_type, CpCommType::p2p);
    EXPECT_EQ(plan(Framework::fsdp, "{cp: 2}").cp_comm_type, CpCommType::allgather);
    EXPECT_EQ(plan(Framework::deepspeed, "{cp: 2}").cp_comm_type, CpCommType::a2a);
    EXPECT_FALSE(plan(Framework::megatron_lm, "{tp: 2}").overlap_grad_reduce);
    EXPECT_TRUE(plan(Framework::megatron_lm, "{zero: 3}").overlap_grad_reduce);
    EXPECT_TRUE(plan(Framework::megatron_core, "{tp: 2}").overlap_grad_reduce);
    EXPECT_TRUE(plan(Framework::megatron_core, "{tp: 2, sequence_parallel: true}").tp_comm_overlap);
    EXPECT_FALSE(plan(Framework::fsdp, "{tp: 2, sequence_parallel: true}").tp_comm_overlap);
}

}  // namespace
}  // namespace lostflops
