// The stack a trace shows (lostflops/trace_stack.h): its markers counted by
// hand on small traces, the settings they make against a job (to a fixed
// point, traced_stack, as trace --job and report --trace find them), and `trace
// --job` on the shared H200 traces with their own job files, whose stack
// (framework fsdp, zero 0) is not the one the traces ran.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "lostflops/error.h"
#include "lostflops/job.h"
#include "lostflops/trace.h"
#include "lostflops/trace_read.h"
#include "lostflops/trace_cluster.h"
#include "lostflops/trace_stack.h"
#include "lostflops/trace_triage.h"
#include "trace/trace_test_util.h"

namespace lostflops::trace {
namespace {

RankReport report_of(const std::vector<test::Ev>& events) {
    return analyze(read_trace_bytes(test::make_trace(events), "t.json"));
}

// Two eager norms' backward, torch.optim's fused AdamW step and FSDP2's
// hooks: each counted once per event, nothing else counted.
std::vector<test::Ev> eager_fsdp2_fused() {
    return {
        {"ProfilerStep#1", "user_annotation", 0, 1000, -1},
        {"FSDP::pre_forward (model.layers.0)", "user_annotation", 10, 5, -1},
        {"FSDP::pre_forward (model.layers.1)", "user_annotation", 20, 5, -1},
        {"FSDP::post_forward (model.layers.1)", "user_annotation", 30, 5, -1},
        {"RsqrtBackward0", "cpu_op", 100, 5, -1},
        {"RsqrtBackward0", "cpu_op", 110, 5, -1},
        {"aten::rsqrt", "cpu_op", 120, 5, -1},
        {"Optimizer.step#AdamW.step", "user_annotation", 500, 100, -1},
        {"aten::_fused_adamw_", "cpu_op", 510, 50, -1},
        {"aten::_foreach_add_", "cpu_op", 570, 5, -1},
        {"k1", "kernel", 130, 50, 7},
    };
}

Job fsdp_job() {
    return load_job(lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml"),
                    {"training.framework=fsdp", "parallel.zero=0", "training.optimizer_kernel=foreach"});
}

TEST(TraceStack, CountsEachMarkerByName) {
    const RankReport r = report_of(eager_fsdp2_fused());
    EXPECT_EQ(r.stack_markers[kMarkFsdp2], 2u);  // pre_forward only
    EXPECT_EQ(r.stack_markers[kMarkEagerNorm], 2u);
    EXPECT_EQ(r.stack_markers[kMarkTorchOptim], 1u);
    EXPECT_EQ(r.stack_markers[kMarkFusedAdam], 1u);
    EXPECT_EQ(r.stack_markers[kMarkForeachAdam], 0u);  // _foreach_add_ is not Adam's
    EXPECT_EQ(r.stack_markers[kMarkInductor], 0u);
}

TEST(TraceStack, SetsWhatTheJobContradicts) {
    const auto s = traced_settings(fsdp_job(), {report_of(eager_fsdp2_fused())});
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(to_override(s[0]), "training.framework=hf");
    EXPECT_EQ(s[0].job, "fsdp");
    EXPECT_EQ(to_override(s[1]), "parallel.zero=3");
    EXPECT_EQ(s[1].job, "0");
    EXPECT_EQ(to_override(s[2]), "training.optimizer_kernel=fused");
    EXPECT_NE(s[2].why.find("1 aten::_fused_adamw_"), std::string::npos) << s[2].why;
    // The job the traces ran: nothing to set.
    const Job ran = load_job(lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml"),
                             {"training.optimizer_kernel=fused"});
    EXPECT_TRUE(traced_settings(ran, {report_of(eager_fsdp2_fused())}).empty());
}

// Inductor's kernels: compiled, so the norms' chains say nothing of the
// modules (Inductor fuses them); the foreach step without a fused one.
TEST(TraceStack, CompiledAndForeach) {
    const auto r = report_of({
        {"ProfilerStep#1", "user_annotation", 0, 1000, -1},
        {"RsqrtBackward0", "cpu_op", 100, 5, -1},
        {"Optimizer.step#AdamW.step", "user_annotation", 500, 100, -1},
        {"aten::_foreach_lerp_", "cpu_op", 510, 5, -1},
        {"aten::_foreach_addcdiv_", "cpu_op", 520, 5, -1},
        {"triton_poi_fused_add_mul_0", "kernel", 130, 50, 7},
        {"triton_red_fused_mean_pow_1", "kernel", 200, 50, 7},
    });
    EXPECT_EQ(r.stack_markers[kMarkInductor], 2u);
    EXPECT_EQ(r.stack_markers[kMarkForeachAdam], 2u);
    const auto s = traced_settings(load_job(lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml"),
                                            {"training.framework=fsdp", "training.optimizer_kernel=fused"}),
                                   {r});
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(to_override(s[0]), "training.compile=true");
    EXPECT_EQ(to_override(s[1]), "training.optimizer_kernel=foreach");
}

// framework hf without FSDP2's hooks: one process holds the model (zero 0);
// a trace without markers sets nothing.
TEST(TraceStack, NoHookIsTheOneProcessRecipe) {
    auto events = eager_fsdp2_fused();
    std::erase_if(events, [](const test::Ev& e) { return e.name.rfind("FSDP::", 0) == 0; });
    const Job hf_zero3 = load_job(lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml"),
                                  {"training.optimizer_kernel=fused"});
    const auto s = traced_settings(hf_zero3, {report_of(events)});
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(to_override(s[0]), "parallel.zero=0");
    EXPECT_TRUE(traced_settings(fsdp_job(), {report_of({{"k1", "kernel", 0, 50, 7}})}).empty());
}

// What the markers do not take for a stack: another optimizer's step (Apex,
// TE and DeepSpeed FusedAdam record Optimizer.step#FusedAdam.step), a few
// Triton kernels among many (one compiled region, Megatron's jit_fuser),
// and no FSDP2 hook on a job of several GPUs (FSDP1, DeepSpeed ZeRO-3).
TEST(TraceStack, NotAStackOfItsOwn) {
    auto events = eager_fsdp2_fused();
    for (auto& e : events)
        if (e.name == "Optimizer.step#AdamW.step") e.name = "Optimizer.step#FusedAdam.step";
    std::erase_if(events, [](const test::Ev& e) { return e.name.rfind("FSDP::", 0) == 0; });
    const auto fused_adam = report_of(events);
    EXPECT_EQ(fused_adam.stack_markers[kMarkTorchOptim], 0u);
    for (const auto& s : traced_settings(fsdp_job(), {fused_adam}))
        EXPECT_NE(s.key, "training.framework") << to_override(s);
    // One Triton kernel among eleven: not a compiled model.
    std::vector<test::Ev> few = {{"triton_poi_fused_add_0", "kernel", 0, 5, 7}};
    for (int i = 0; i < 10; ++i) few.push_back({"k", "kernel", 10.0 + 10 * i, 5, 7});
    const auto r = report_of(few);
    EXPECT_EQ(r.stack_markers[kMarkInductor], 1u);
    EXPECT_TRUE(traced_settings(fsdp_job(), {r}).empty());
    // framework hf, zero 3 on 8 GPUs, no FSDP2 hook: zero stays.
    const Job eight = load_job(lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml"),
                               {"training.optimizer_kernel=fused", "cluster.num_gpus=8", "cluster.gpus_per_node=8",
                                "training.global_batch_size=16"});
    EXPECT_TRUE(traced_settings(eight, {report_of(events)}).empty());
}

// torch.nn.RMSNorm's F.rms_norm (torchtitan's norms) may record the same
// RsqrtBackward0: with aten::rms_norm among them the stack is not hf.
TEST(TraceStack, TorchRmsNormIsNotTransformersChain) {
    auto events = eager_fsdp2_fused();
    events.push_back({"aten::rms_norm", "cpu_op", 90, 5, -1});
    const auto r = report_of(events);
    EXPECT_EQ(r.stack_markers[kMarkRmsNormOp], 1u);
    for (const auto& s : traced_settings(fsdp_job(), {r})) EXPECT_NE(s.key, "training.framework") << to_override(s);
}

// Inductor's split-scan and unknown kernels are the model's; its foreach
// kernels a compiled optimizer step's, named in a note, not a compile.
TEST(TraceStack, InductorKernelKindsAndTheCompiledStep) {
    const auto r = report_of({
        {"ProfilerStep#1", "user_annotation", 0, 1000, -1},
        {"Optimizer.step#AdamW.step", "user_annotation", 500, 100, -1},
        {"triton_spl_fused_cumsum_0", "kernel", 100, 5, 7},
        {"triton_unk_fused_sort_1", "kernel", 110, 5, 7},
        {"triton_for_fused_0", "kernel", 510, 5, 7},
        {"triton_for_fused_1", "kernel", 520, 5, 7},
    });
    EXPECT_EQ(r.stack_markers[kMarkInductor], 2u);
    EXPECT_EQ(r.stack_markers[kMarkCompiledStep], 2u);
    const auto notes = traced_notes(fsdp_job(), {r});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("2 Inductor foreach kernels (triton_for_)"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("torch.optim's foreach one"), std::string::npos) << notes[0];
}

// torch.optim's Adam stepped with neither fused nor foreach kernels: the
// single-tensor loop, named; one with either: nothing to say.
TEST(TraceStack, SingleTensorAdamIsNamed) {
    auto events = eager_fsdp2_fused();
    EXPECT_TRUE(traced_notes(fsdp_job(), {report_of(events)}).empty());
    std::erase_if(events, [](const test::Ev& e) { return e.name == "aten::_fused_adamw_"; });
    events.push_back({"aten::lerp_", "cpu_op", 520, 5, -1});
    const auto notes = traced_notes(fsdp_job(), {report_of(events)});
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("single-tensor Adam (foreach=False)"), std::string::npos) << notes[0];
}

// transformers' KV cache in the training forward: two aten::lift_fresh per
// decoder layer and step (the 16-layer job, one step: 32) set use_cache on
// an eager hf job; fewer (a stray torch.tensor) set nothing; a job that says
// a cache gets use_cache=false from a trace without one; gradient
// checkpointing, which keeps the cache from the layers, takes none; nor does
// a compiled trace.
TEST(TraceStack, KvCacheInTheTrainingForward) {
    const std::string path = lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml");
    const Job hf = load_job(path, {"training.optimizer_kernel=fused"});
    ASSERT_EQ(hf.model.layers, 16);
    std::vector<test::Ev> events = {{"ProfilerStep#1", "user_annotation", 0, 1000, -1}, {"k1", "kernel", 0, 5, 7}};
    for (int i = 0; i < 31; ++i) events.push_back({"aten::lift_fresh", "cpu_op", 10.0 + i, 0.5, -1});
    EXPECT_EQ(report_of(events).stack_markers[kMarkLiftFresh], 31u);
    EXPECT_TRUE(traced_settings(hf, {report_of(events)}).empty());
    EXPECT_EQ(to_override(traced_settings(load_job(path, {"training.optimizer_kernel=fused", "training.use_cache=true"}),
                                          {report_of(events)})
                              .at(0)),
              "training.use_cache=false");
    events.push_back({"aten::lift_fresh", "cpu_op", 50, 0.5, -1});
    const auto s = traced_settings(hf, {report_of(events)});
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(to_override(s[0]), "training.use_cache=true");
    EXPECT_NE(s[0].why.find("32 aten::lift_fresh events in 1 steps of 16 attention layers"), std::string::npos) << s[0].why;
    EXPECT_NE(s[0].why.find("use_cache=False"), std::string::npos) << s[0].why;
    EXPECT_TRUE(traced_settings(load_job(path, {"training.optimizer_kernel=fused", "parallel.recompute=full"}),
                                {report_of(events)})
                    .empty());
    // A compiled trace holds the cache inside its graph: a job saying one keeps it.
    std::vector<test::Ev> compiled = {{"ProfilerStep#1", "user_annotation", 0, 1000, -1}};
    for (int i = 0; i < 4; ++i) compiled.push_back({"triton_poi_fused_" + std::to_string(i), "kernel", 10.0 * i, 5, 7});
    for (const auto& x : traced_settings(load_job(path, {"training.optimizer_kernel=fused", "training.use_cache=true"}),
                                         {report_of(compiled)}))
        EXPECT_NE(x.key, "training.use_cache") << to_override(x);
}

// trace without --job: a host-bound step whose forward builds transformers'
// KV cache (eight or more aten::lift_fresh a step beside eager norms) gets
// use_cache=False among the host wait's remedies; seven a step do not.
TEST(TraceStack, TriageNamesTheCacheOfAHostBoundStep) {
    ClusterReport c;
    c.span_us = 100000;
    c.idle_us = 70000;
    c.host_wait_us = 69000;
    c.kernel_wait_us = 1000;
    c.marked_steps = 3;
    c.stack_markers[kMarkEagerNorm] = 99;
    c.stack_markers[kMarkLiftFresh] = 24;
    const auto said = [&] {
        for (const auto& t : triage(c, nullptr, {}))
            if (t.key == "idle") return t.to_try.find("use_cache=False") != std::string::npos;
        return false;
    };
    EXPECT_TRUE(said());
    c.stack_markers[kMarkLiftFresh] = 21;
    EXPECT_FALSE(said());
    // The cluster sums each rank's markers and the steps of the ranks that recorded any.
    auto events = eager_fsdp2_fused();
    events.push_back({"aten::lift_fresh", "cpu_op", 90, 0.5, -1});
    RankReport other = report_of({{"k1", "kernel", 0, 5, 7}});
    other.rank = 1;
    const auto merged = cluster_report({report_of(events), other});
    EXPECT_EQ(merged.stack_markers[kMarkLiftFresh], 1u);
    EXPECT_EQ(merged.stack_markers[kMarkEagerNorm], 2u);
    EXPECT_EQ(merged.marked_steps, 1);
}

// Each shared H200 trace with its own job file (../shared/reference/h200/runs:
// framework fsdp, zero 0): `trace --job` names the stack the trace ran and its
// as-profiled column prices it; compute and memory-bound walls within 15 %
// of the measured (issue 38), and no job-mismatch once the stack explains it.
TEST(TraceStack, SharedH200TracesPricedAsTheyRan) {
    struct Case {
        const char* trace;
        const char* job;
        std::vector<std::string> settings;
    } cases[] = {
        {"h200-llama3.2-1b-s4096-b2-autocast.json.gz", "h200-llama3.2-1b-s4096-b2x1-none-autocast.json",
         {"training.framework=hf", "training.optimizer_kernel=fused"}},
        {"h200-llama3.2-1b-s4096-b2-fsdp2.json.gz", "h200-llama3.2-1b-s4096-b2x1-none-fsdp2.json",
         {"training.framework=hf", "parallel.zero=3", "training.optimizer_kernel=foreach"}},
        {"h200-llama3.2-3b-s8192-b2-fsdp2-memory.json.gz", "h200-llama3.2-3b-s8192-b2x1-full-fsdp2.json",
         {"training.framework=hf", "parallel.zero=3", "training.optimizer_kernel=foreach"}},
        {"h200-qwen05-like-s2048-b1-autocast.json.gz", "h200-qwen05-like-s2048-b1x1-none-autocast.json",
         {"training.framework=hf", "training.optimizer_kernel=fused"}},
        {"h200-qwen3-moe-4l-s4096-b1-autocast.json.gz", "h200-qwen3-moe-4l-s4096-b1x1-none-autocast.json",
         {"training.framework=hf", "training.optimizer_kernel=fused"}},
    };
    for (const auto& c : cases) {
        LOSTFLOPS_SHARED_TRACE(path, std::string("h200/") + c.trace);
        const std::string job = lostflops::test::source_path(std::string("../shared/reference/h200/runs/") + c.job);
        if (!std::filesystem::exists(job)) GTEST_SKIP() << job << " absent";
        const auto r = lostflops::test::run_cli("--quiet trace --format json " + path + " --job " + job);
        ASSERT_EQ(r.code, 0) << r.all();
        const auto j = nlohmann::json::parse(r.out)["job"];
        EXPECT_EQ(j["profiled_settings"].get<std::vector<std::string>>(), c.settings) << c.trace;
        for (const auto& w : j["warnings"]) EXPECT_EQ(w.get<std::string>().rfind("job-mismatch", 0), std::string::npos) << c.trace << ": " << w;
        for (int i : {0, 1}) {
            const double measured = j["walls"][i]["measured_s"], profiled = j["walls"][i]["predicted_profiled_s"];
            EXPECT_NEAR(profiled, measured, 0.15 * measured) << c.trace << " " << j["walls"][i]["wall"];
        }
        // --set keeps the job's own stack: nothing set for that key.
        const auto kept = lostflops::test::run_cli("--quiet trace --format json " + path + " --job " + job +
                                                   " --set training.framework=fsdp");
        ASSERT_EQ(kept.code, 0) << kept.all();
        const auto kept_job = nlohmann::json::parse(kept.out)["job"];  // a copy: the range below outlives no temporary
        ASSERT_TRUE(kept_job.contains("profiled_settings")) << c.trace;  // the other keys are still set
        for (const auto& s : kept_job["profiled_settings"])
            EXPECT_EQ(s.get<std::string>().rfind("training.framework=", 0), std::string::npos) << c.trace;
    }
}

// report --trace says the stack's settings as trace --job finds them: one
// that follows another (zero 0 for a one-GPU job once it is framework hf)
// from the job re-read.
TEST(TraceStack, ReportSaysTheSettingsThatFollowOthers) {
    LOSTFLOPS_SHARED_TRACE(path, "h200/h200-llama3.2-1b-s4096-b2-autocast-memory.json.gz");
    const std::string job =
        lostflops::test::source_path("../shared/reference/h200/runs/h200-llama3.2-1b-s4096-b2x1-none-autocast.json");
    if (!std::filesystem::exists(job)) GTEST_SKIP() << job << " absent";
    // The job at zero 3 in its own file: a --set of the key would keep it.
    nlohmann::json j = nlohmann::json::parse(std::ifstream(job));
    j["parallel"]["zero"] = 3;
    const std::string zero3 = ::testing::TempDir() + "/stack-report-zero3.json";
    std::ofstream(zero3) << j.dump();
    const std::string html = ::testing::TempDir() + "/stack-report.html";
    const auto r = lostflops::test::run_cli("report -o " + html + " " + zero3 + " --trace " + path);
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_NE(r.err.find("the trace shows training.framework=hf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the trace shows parallel.zero=0"), std::string::npos) << r.err;
    // A key the command line sets is the user's: not said.
    const auto kept = lostflops::test::run_cli("report -o " + html + " " + zero3 + " --trace " + path +
                                               " --set parallel.zero=3");
    ASSERT_EQ(kept.code, 0) << kept.all();
    EXPECT_EQ(kept.err.find("the trace shows parallel.zero"), std::string::npos) << kept.err;
}

// A job that cannot take the stack the trace shows (fp8 under framework hf)
// is priced as given, with a warning saying why: the report is not lost.
TEST(TraceStack, AJobThatCannotTakeTheStackIsPricedAsGiven) {
    LOSTFLOPS_SHARED_TRACE(path, "h200/h200-llama3.2-1b-s4096-b2-autocast.json.gz");
    const std::string job =
        lostflops::test::source_path("../shared/reference/h200/runs/h200-llama3.2-1b-s4096-b2x1-none-autocast.json");
    if (!std::filesystem::exists(job)) GTEST_SKIP() << job << " absent";
    const auto r = lostflops::test::run_cli("--quiet trace --format json " + path + " --job " + job +
                                            " --set training.precision=fp8");
    ASSERT_EQ(r.code, 0) << r.all();
    const auto j = nlohmann::json::parse(r.out)["job"];
    bool said = false;
    for (const auto& w : j["warnings"]) said |= w.get<std::string>().rfind("stack: the job cannot be priced", 0) == 0;
    EXPECT_TRUE(said) << j["warnings"];
    EXPECT_FALSE(j.contains("profiled_settings") && !j["profiled_settings"].empty()) << j;
    // No warning says the settings were priced.
    for (const auto& w : j["warnings"])
        EXPECT_EQ(w.get<std::string>().find("the as-profiled column prices it so"), std::string::npos) << w;
}

}  // namespace
}  // namespace lostflops::trace

namespace lostflops::trace {
namespace {

// traced_stack to its fixed point: FSDP2's hooks, eager norms and the fused
// step make the job framework hf, zero 3, fused; only then does the KV
// cache (32 lift_fresh on 16 layers) count, found on the job re-read. A key
// the command line sets is not looked for; a job that cannot take them is
// kept as given, with why; without a re-read, the first round only.
TEST(TraceStack, FoundToAFixedPoint) {
    const std::string path = lostflops::test::source_path("tests/data/trace/job-h200-llama3.2-1b-s4096-b2-fsdp2.yaml");
    const std::vector<std::string> base = {"training.framework=fsdp", "parallel.zero=0", "training.optimizer_kernel=foreach"};
    auto events = eager_fsdp2_fused();
    for (int i = 0; i < 32; ++i) events.push_back({"aten::lift_fresh", "cpu_op", 200.0 + i, 0.5, -1});
    const std::vector<RankReport> ranks = {report_of(events)};
    int rereads = 0;
    const auto reread = [&](const std::vector<std::string>& found) {
        ++rereads;
        std::vector<std::string> all = base;
        all.insert(all.end(), found.begin(), found.end());
        return load_job(path, all);
    };
    const TracedStack s = traced_stack(fsdp_job(), ranks, base, reread);
    // framework, zero and optimizer_kernel are the command line's here: none found.
    EXPECT_TRUE(s.found.empty());
    EXPECT_EQ(rereads, 0);
    const TracedStack t = traced_stack(fsdp_job(), ranks, {}, reread);
    ASSERT_EQ(t.found.size(), 4u);
    EXPECT_EQ(t.overrides(), (std::vector<std::string>{"training.framework=hf", "parallel.zero=3",
                                                       "training.optimizer_kernel=fused", "training.use_cache=true"}));
    EXPECT_EQ(rereads, 2);  // after the first round and the second (which found the cache); none after the third
    EXPECT_TRUE(t.refused.empty());
    EXPECT_TRUE(t.job.training.use_cache);
    EXPECT_EQ(t.job.training.framework, Framework::hf);
    // The command line keeps the cache off: it is not looked for.
    EXPECT_EQ(traced_stack(fsdp_job(), ranks, {"training.use_cache=false"}, reread).found.size(), 3u);
    // Standard input: read once.
    EXPECT_EQ(traced_stack(fsdp_job(), ranks, {}, nullptr).found.size(), 3u);
    // A job that cannot take them: as given, and why.
    const TracedStack r = traced_stack(fsdp_job(), ranks, {}, [](const std::vector<std::string>&) -> Job {
        throw InputError("job.yaml", "training.framework", "not with this job");
    });
    EXPECT_EQ(r.found.size(), 3u);
    EXPECT_NE(r.refused.find("not with this job"), std::string::npos) << r.refused;
    EXPECT_EQ(r.job.training.framework, Framework::fsdp);
}

}  // namespace
}  // namespace lostflops::trace
