// Issue 18 (a typo in a key is named, with the nearest valid key) and issue 20
// items 10 and 12 on the job reader: YAML 1.2 scalars (a quoted '8' is a
// string, `yes` is not a boolean), errors caused by a --set reported against
// the --set, and the pre-scan that bounds what yaml-cpp is given.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibration_fields.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/job.h"
#include "job/yaml_document.h"
#include "job/yaml_reader.h"
#include "test_util.h"

namespace lostflops {
namespace {

using test::small_job_text;

InputError error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
    try {
        parse_job(text, "job.yaml", overrides);
    } catch (const InputError& e) {
        return e;
    }
    ADD_FAILURE() << "parsed without error";
    return InputError("", "", "");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// --- did you mean -------------------------------------------------------------

TEST(JobKeys, NearestKey) {
    EXPECT_EQ(did_you_mean("global_bach_size", {"seq_length", "global_batch_size"}), "; did you mean `global_batch_size`?");
    EXPECT_EQ(did_you_mean("Global-Batch-Size", {"global_batch_size"}), "; did you mean `global_batch_size`?");
    EXPECT_EQ(did_you_mean("tpp", {"cp", "pp", "tp"}), "; did you mean `tp`?");  // ties: longer common prefix
    EXPECT_EQ(did_you_mean("zzzzzz", {"tp", "pp", "global_batch_size"}), "");
    EXPECT_EQ(did_you_mean("x", {}), "");
}

// The issue 18 reproducer: a misspelt required key was "missing".
TEST(JobKeys, MisspeltRequiredKeyIsNamed) {
    const InputError e = error_of(replaced(small_job_text(), "global_batch_size", "global_bach_size"));
    EXPECT_EQ(e.key(), "training.global_bach_size") << e.what();
    EXPECT_TRUE(has(e.message(), "unknown key; did you mean `global_batch_size`?")) << e.what();
}

// Every section of the job file: a misspelt optional key names the valid one.
TEST(JobKeys, EverySectionSuggests) {
    struct Case {
        std::string from, to, key, hint;
    };
    const std::vector<Case> cases = {
        {"name: small", "nme: small", "nme", "`name`"},
        {"parallel:", "paralel:", "paralel", "`parallel`"},
        {"training:", "trainig:", "trainig", "`training`"},
        {"  vocab_size: 51200", "  vocab_sise: 51200", "model.vocab_sise", "`vocab_size`"},
        {"  hidden_size: 2048", "  hiden_size: 2048", "model.hiden_size", "`hidden_size`"},
        {"  gpus_per_node: 8", "  gpu_per_node: 8", "cluster.gpu_per_node", "`gpus_per_node`"},
        {"  num_gpus: 16", "  num_gpu: 16", "cluster.num_gpu", "`num_gpus`"},
        {"{bandwidth_GBps: 25, latency_us: 5}", "{bandwidth_GBps: 25, latency: 5}", "cluster.inter_node.latency",
         "`latency_us`"},
        {"{bandwidth_GBps: 25, latency_us: 5}", "{bandwith_GBps: 25, latency_us: 5}", "cluster.inter_node.bandwith_GBps",
         "`bandwidth_GBps`"},
        {"  micro_batch_size: 2", "  micro_bach_size: 2", "training.micro_bach_size", "`micro_batch_size`"},
        {"  precision: bf16", "  precison: bf16", "training.precison", "`precision`"},
        {"  pp: 2", "  pp: 2\n  sequence_paralel: true", "parallel.sequence_paralel", "`sequence_parallel`"},
        {"  pp: 2", "  pp: 2\nrun:\n  spare_node: 1", "run.spare_node", "`spare_nodes`"},
        // An MTBF is the failure rate's inverse: no spelling of it is near the key.
        {"  pp: 2", "  pp: 2\nrun:\n  mtbf_hours: 50000", "run.mtbf_hours", "`gpu_failure_rate`"},
    };
    for (const auto& c : cases) {
        const InputError e = error_of(replaced(small_job_text(), c.from, c.to));
        EXPECT_EQ(e.key(), c.key) << e.what();
        EXPECT_TRUE(has(e.message(), "did you mean " + c.hint)) << e.what();
    }
}

// Misspelt values of a choice or a catalog name get the nearest one too.
TEST(JobKeys, ValuesSuggest) {
    struct Case {
        std::string from, to, key, hint;
    };
    for (const Case& c : {Case{"  precision: bf16", "  precision: bf61", "training.precision", "`bf16`"},
                          Case{"  gpu: a100-sxm-80gb", "  gpu: a100-sxm-80g", "cluster.gpu", "`a100-sxm-80gb`"}}) {
        const InputError e = error_of(replaced(small_job_text(), c.from, c.to));
        EXPECT_EQ(e.key(), c.key) << e.what();
        EXPECT_TRUE(has(e.message(), "did you mean " + c.hint)) << e.what();
    }
}

// training.fp8_recipe: read with precision fp8 alone; a misspelt recipe gets
// the nearest one.
TEST(JobKeys, Fp8RecipeNeedsFp8) {
    const InputError bf16 = error_of(small_job_text(), {"training.fp8_recipe=tensorwise"});
    EXPECT_EQ(bf16.key(), "training.fp8_recipe") << bf16.what();
    EXPECT_TRUE(has(bf16.message(), "precision fp8")) << bf16.what();
    const InputError typo = error_of(small_job_text(), {"training.precision=fp8", "training.fp8_recipe=tensorwize"});
    EXPECT_EQ(typo.key(), "training.fp8_recipe") << typo.what();
    EXPECT_TRUE(has(typo.message(), "did you mean `tensorwise`")) << typo.what();
}

TEST(JobKeys, InlineGpuSuggests) {
    const std::string gpu = "  gpu: {arch: hopper, peak_tflop: {fp16: 989, bf16: 989}, memory_GB: 80, hbm_GBps: 3350, "
                            "nvlink_GBps: 450, sm_count: 132, tdp_w: 700}";
    const InputError e = error_of(replaced(small_job_text(), "  gpu: a100-sxm-80gb", gpu));
    EXPECT_EQ(e.key(), "cluster.gpu.peak_tflop") << e.what();
    EXPECT_TRUE(has(e.message(), "did you mean `peak_tflops`?")) << e.what();
}

// A key of the schema that is present is not offered as a typo of a missing
// one: bf16 given, fp16 absent says fp16 is missing (it said "bf16: unknown
// key; did you mean `fp16`?").
TEST(JobKeys, AMissingKeyIsNotBlamedOnAPresentOne) {
    const std::string gpu = "  gpu: {arch: hopper, peak_tflops: {bf16: 989, fp8: 1979}, memory_GiB: 80, "
                            "hbm_GBps: 3350, nvlink_GBps: 450, sm_count: 132, tdp_w: 700}";
    const InputError e = error_of(replaced(small_job_text(), "  gpu: a100-sxm-80gb", gpu));
    EXPECT_EQ(e.key(), "cluster.gpu.peak_tflops.fp16") << e.what();
    EXPECT_TRUE(has(e.message(), "missing")) << e.what();
}

TEST(JobKeys, SetKeysSuggest) {
    const InputError e = error_of(small_job_text(), {"training.global_bach_size=8"});
    EXPECT_EQ(e.file(), "--set training.global_bach_size=8");
    EXPECT_TRUE(has(e.message(), "did you mean `global_batch_size`?")) << e.what();
    const InputError section = error_of(small_job_text(), {"trainng.seq_length=4"});
    EXPECT_EQ(section.file(), "--set trainng.seq_length=4");
    EXPECT_EQ(section.key(), "trainng");
    EXPECT_TRUE(has(section.message(), "did you mean `training`?")) << section.what();
}

TEST(JobKeys, CalibrationSuggests) {
    struct Case {
        std::string text, key, hint;
    };
    const std::vector<Case> cases = {
        {"devices: {ampere: {memory_bund: 0.8}}\n", "devices.ampere.memory_bund", "`memory_bound`"},
        {"device: {ampere: {memory_bound: 0.8}}\n", "device", "`devices`"},
        {"kernel_overhead: 5\n", "kernel_overhead", "`kernel_overhead_us`"},
        {"nccl:\n  - {op: all_reduce, scope: intra_node, rank: 8, points: [[1, 1]]}\n", "nccl[0].rank", "`ranks`"},
    };
    for (const auto& c : cases) {
        try {
            parse_calibration_text(c.text, "cal.yaml");
            ADD_FAILURE() << c.text;
        } catch (const InputError& e) {
            EXPECT_EQ(e.key(), c.key) << e.what();
            EXPECT_TRUE(has(e.message(), "did you mean " + c.hint)) << e.what();
        }
    }
}

// Issue 20 item 11: 100 for an efficiency is above 1, not "below 1 %".
TEST(JobKeys, CalibrationPercentIsAboveOne) {
    try {
        parse_calibration_text("devices: {ampere: {memory_bound: 100}}\n", "cal.yaml");
        ADD_FAILURE();
    } catch (const InputError& e) {
        EXPECT_TRUE(has(e.message(), "above 1")) << e.what();
        EXPECT_FALSE(has(e.message(), "below 1 %")) << e.what();
    }
}

// --- YAML 1.2 scalars (item 10) -----------------------------------------------

TEST(JobKeys, QuotedNumberIsAString) {
    for (const char* tp : {"'2'", "\"2\"", "!!str 2"}) {
        const InputError e = error_of(replaced(small_job_text(), "  tp: 2", std::string("  tp: ") + tp));
        EXPECT_EQ(e.key(), "parallel.tp") << e.what();
        EXPECT_TRUE(has(e.message(), "string")) << e.what();
    }
    // A JSON job's quoted number too.
    const InputError json = error_of(replaced(small_job_text(), "  global_batch_size: 64", "  global_batch_size: \"64\""));
    EXPECT_EQ(json.key(), "training.global_batch_size");
    // Explicit numeric tags and plain forms stay numbers.
    EXPECT_EQ(test::parse_error(replaced(small_job_text(), "  tp: 2", "  tp: !!int 2")), "");
}

TEST(JobKeys, Yaml11BooleansAreErrors) {
    for (const char* v : {"yes", "no", "on", "off", "Y", "'true'"}) {
        const InputError e =
            error_of(replaced(small_job_text(), "  pp: 2", std::string("  pp: 2\n  sequence_parallel: ") + v));
        EXPECT_EQ(e.key(), "parallel.sequence_parallel") << v << ": " << e.what();
    }
    for (const char* v : {"true", "True", "TRUE", "false", "False", "FALSE"})
        EXPECT_EQ(test::parse_error(replaced(small_job_text(), "  pp: 2", std::string("  pp: 2\n  sequence_parallel: ") + v)),
                  "")
            << v;
}

// --- errors a --set causes are the --set's (item 10) ---------------------------

TEST(JobKeys, CrossFieldErrorsOfASetNameTheSet) {
    struct Case {
        std::string set, key;
    };
    // Each --set makes a rule fail at a key the --set did not write.
    const std::vector<Case> cases = {
        {"parallel.pp=3", "cluster.num_gpus"},              // 16 GPUs not divisible by tp*pp*cp = 6
        {"cluster.gpus_per_node=3", "cluster.num_gpus"},    // whole nodes
        {"model.num_attention_heads=15", "model.hidden_size"},
        {"training.micro_batch_size=3", "training.global_batch_size"},
        {"parallel.tp=32", "parallel"},                      // tp*pp*cp > num_gpus
    };
    for (const auto& c : cases) {
        const InputError e = error_of(small_job_text(), {c.set});
        EXPECT_EQ(e.file(), "--set " + c.set) << e.what();
        EXPECT_EQ(e.key(), c.key) << e.what();
    }
    // A preset fills its section: its errors are the --set's.
    const InputError preset = error_of(small_job_text(), {"model.preset=gpt3-175b"});
    EXPECT_EQ(preset.file(), "--set model.preset=gpt3-175b") << preset.what();
}

// --- the pre-scan (item 12) ---------------------------------------------------

TEST(JobKeys, PrescanBoundsDepthAndItems) {
    // 1 MiB of '[' took 250 MB in yaml-cpp's scanner; now refused at once.
    const std::string brackets((1u << 20) - 64, '[');
    const InputError deep = error_of(brackets);
    EXPECT_TRUE(has(deep.message(), "nesting deeper than")) << deep.what();
    std::string many = small_job_text() + "run: {x: [";
    for (int i = 0; i < 60'000; ++i) many += "1,";
    many += "1]}\n";
    const InputError items = error_of(many);
    EXPECT_TRUE(has(items.message(), "more than 100000 YAML items")) << items.what();
    // Quotes, comments and block scalars hide what looks like structure.
    EXPECT_NO_THROW(prescan_yaml("a: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n"
                                 "b: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n"
                                 "c: 1 # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
                                 "d: |\n  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
                                 "e: x[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n",
                                 "t.yaml", 100));
    // ... but not structure after them: a quote that a block scalar holds
    // does not swallow the rest of the document.
    std::string after = "d: |\n  'x\nb: " + std::string(100, '[') + "\n";
    EXPECT_THROW(prescan_yaml(after, "t.yaml", 1000), InputError);
    const std::size_t limit = 10;
    EXPECT_THROW(prescan_yaml("a: [1, 2, 3, 4, 5, 6, 7, 8]\n", "t.yaml", limit), InputError);
    EXPECT_NO_THROW(prescan_yaml("a: [1, 2, 3]\n", "t.yaml", limit));
}

// Every real input stays far inside the bound: the published jobs, the
// examples, the catalogs (loaded at start-up) and the default profile.
TEST(JobKeys, RealInputsPassThePrescan) {
    for (const char* dir : {"data/published/runs", "examples"}) {
        for (const auto& entry : std::filesystem::directory_iterator(test::source_path(dir))) {
            const std::string path = entry.path().string();
            if (entry.path().extension() != ".yaml" && entry.path().extension() != ".json") continue;
            EXPECT_NO_THROW(load_search_job(path, {}, SearchJobPlan::ignore)) << path;
        }
    }
    EXPECT_NO_THROW(default_calibration());
}

// training.optimizer: a mistyped choice is named with the nearest one; the
// settings it cannot describe are errors naming the key.
TEST(JobKeys, OptimizerChoiceAndItsLimits) {
    const InputError typo = error_of(small_job_text(), {"training.optimizer=adam-param-remainder"});
    EXPECT_EQ(typo.key(), "training.optimizer") << typo.what();
    EXPECT_TRUE(has(typo.what(), "did you mean `adam-param-remainders`?")) << typo.what();
    const InputError fp16 =
        error_of(small_job_text(), {"training.precision=fp16", "training.optimizer=adam-param-remainders"});
    EXPECT_EQ(fp16.key(), "training.optimizer") << fp16.what();
    const InputError fsdp = error_of(small_job_text(), {"training.framework=fsdp", "parallel.zero=3",
                                                        "training.optimizer=adam-param-remainders"});
    EXPECT_EQ(fsdp.key(), "training.optimizer") << fsdp.what();
    const Job job = parse_job(small_job_text(), "job.yaml", {"training.optimizer=adam-param-remainders"});
    EXPECT_EQ(job.training.optimizer, Optimizer::adam_param_remainders);
    EXPECT_FALSE(job.training.optimizer_auto);
    const Job plain = parse_job(small_job_text(), "job.yaml");
    EXPECT_EQ(plain.training.optimizer, Optimizer::adam);
    EXPECT_TRUE(plain.training.optimizer_auto);
}

// A key set to null is not given: `--set parallel.KEY=null` takes a key out
// of a job without editing it. A key the reader only asks has() of
// (recompute_modules) was an "unknown key"; a null parallel key was a fixed
// setting of the search (pp fixed at 1, zero at 0).
TEST(JobKeys, NullIsNotGiven) {
    const std::string text = replaced(small_job_text(), "parallel:", "parallel:\n  recompute_modules: [core_attn]");
    const Job job = parse_job(text, "job.yaml", {"parallel.recompute_modules=null"});
    EXPECT_EQ(job.plan.recompute_modules, parse_job(small_job_text(), "job.yaml").plan.recompute_modules);
    const InputError typo = error_of(text, {"parallel.recompute_moduls=null"});
    EXPECT_TRUE(has(typo.message(), "did you mean `recompute_modules`?")) << typo.what();
    const SearchJob sj = parse_search_job(small_job_text(), "job.yaml", {"parallel.pp=null", "parallel.zero=null"},
                                          SearchJobPlan::fixed_where_given);
    for (const std::string& k : sj.fixed_keys) {
        EXPECT_NE(k, "pp");
        EXPECT_NE(k, "zero");
    }
    EXPECT_FALSE(sj.fixed_keys.empty());  // the job's other parallel keys stay fixed
}

}  // namespace
}  // namespace lostflops
