// export -> import gives the job back, for every published run: the Megatron
// runs through `export megatron` / `import megatron`, the torchtitan runs
// through the torchtitan pair. The cluster is not a framework setting: it is
// given back as the user would (--set cluster=...).
#include "interop/interop_util.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace lostflops::test {
namespace {

Job round_trip(const Job& job, const std::string& name, bool torchtitan) {
    const ExportResult e = torchtitan ? export_torchtitan(job) : export_megatron(job);
    EXPECT_TRUE(e.notes.empty()) << name << ": " << (e.notes.empty() ? "" : e.notes.front().message);
    const ImportResult r = torchtitan ? import_torchtitan(e.text, name + " (exported)")
                                      : import_megatron(e.text, name + " (exported)");
    for (const auto& n : r.notes) EXPECT_EQ(n.kind, NoteKind::ignored) << name << ": " << n.setting << ": " << n.message;
    return parse_job(r.job_yaml, name + " (round trip)", {run_cluster_override(name)});
}

TEST(InteropRoundTrip, EveryPublishedRunComesBack) {
    int runs = 0;
    for (const std::string& name : published_run_names()) {
        const bool torchtitan = name.rfind("torchtitan", 0) == 0;
        ASSERT_TRUE(torchtitan || is_megatron_run(name)) << name << ": which framework?";
        const Job job = load_job(run_path(name));
        expect_same_job(round_trip(job, name, torchtitan), job, name);
        ++runs;
    }
    EXPECT_EQ(runs, 29);
}

TEST(InteropRoundTrip, PlansBeyondThePublishedOnesComeBack) {
    // Knobs the published runs leave at their defaults.
    const std::vector<std::vector<std::string>> variants = {
        {"parallel.cp=2", "parallel.recompute=full", "parallel.recompute_layers=3", "training.precision=fp8"},
        {"parallel.zero=3", "parallel.overlap_grad_reduce=true", "training.framework=megatron-core"},
        {"model.num_key_value_heads=8", "model.hidden_act=silu", "model.tie_word_embeddings=false",
         "training.train_tokens=1e12"},
        {"model.num_local_experts=8", "model.num_experts_per_tok=2", "model.moe_intermediate_size=8192",
         "parallel.ep=4"},
        {"training.attention=unfused", "parallel.grad_fp32=false"},  // --attention-backend unfused, --grad-reduce-in-bf16
        {"training.precision=fp32", "training.attention=unfused"},   // no --bf16 / --fp16
        // DeepSeek-V3's 14.8 T tokens: --train-samples 3,613,281,250 at seq 4,096, past 2^31.
        {"training.train_tokens=14.8e12"},
    };
    const std::string name = "megatron24-h100-gpt-70b";
    for (const auto& v : variants) {
        const Job job = load_job(run_path(name), v);
        expect_same_job(round_trip(job, name, false), job, name + " " + v.front());
    }
    // ZeRO-2 and ZeRO-3 with a pipeline: Megatron-FSDP.
    for (const char* zero : {"parallel.zero=2", "parallel.zero=3"}) {
        const Job job = load_job(run_path(name), {zero, "parallel.overlap_grad_reduce=true", "training.framework=megatron-core"});
        expect_same_job(round_trip(job, name, false), job, name + " " + zero);
    }
    // torchtitan: pipeline with interleaving, async TP.
    const Job tt = load_job(run_path("torchtitan24-a100-llama3-70b-full"),
                            {"parallel.pp=4", "parallel.vpp=2", "parallel.tp=2", "parallel.sequence_parallel=true",
                             "parallel.tp_comm_overlap=true"});
    expect_same_job(round_trip(tt, "torchtitan24-a100-llama3-70b-full", true), tt, "torchtitan variant");
}

TEST(InteropRoundTrip, TorchtitanZbvComesBackAsZBVZeroBubble) {
    // ZB-V (lostflops/pipeline_schedules.h): torchtitan's ZBVZeroBubble, two stages a rank.
    const std::string name = "torchtitan24-a100-llama3-70b-full";
    const Job job = load_job(run_path(name), {"parallel.pp=4", "parallel.vpp=2", "parallel.pipeline_schedule=zbv"});
    const ExportResult e = export_torchtitan(job);
    EXPECT_NE(e.text.find("pipeline_parallel_schedule = \"ZBVZeroBubble\""), std::string::npos) << e.text;
    const Job back = round_trip(job, name, true);
    EXPECT_EQ(back.plan.schedule, PipelineSchedule::zbv);
    EXPECT_EQ(back.plan.vpp, 2);
    expect_same_job(back, job, "torchtitan zbv");
}

// zero 3 on a plan with one data-parallel rank shards nothing; torchtitan
// builds no FSDP then (shard degree 1) and the import reads zero 0. The
// export said nothing of it; it now notes it, and both price alike.
TEST(InteropRoundTrip, TorchtitanZero3OnOneRankIsNotedAndPricedAlike) {
    const std::string name = "torchtitan24-a100-llama3-70b-full";
    const Job job = load_job(run_path(name), {"cluster.num_gpus=64", "parallel.tp=8", "parallel.pp=8", "parallel.dp=1",
                                              "parallel.zero=3", "parallel.sequence_parallel=true",
                                              "training.global_batch_size=64"});
    const ExportResult e = export_torchtitan(job);
    std::string said;
    for (const auto& n : e.notes)
        if (n.setting == "parallel.zero") said = n.message;
    EXPECT_NE(said.find("shards nothing"), std::string::npos) << said;
    const ImportResult r = import_torchtitan(e.text, name + " (exported)");
    const Job back = parse_job(r.job_yaml, name + " (round trip)", {run_cluster_override(name), "cluster.num_gpus=64"});
    EXPECT_EQ(back.plan.zero, 0);
    const Calibration& cal = default_calibration();
    EXPECT_DOUBLE_EQ(estimate(back, cal).step_time_s, estimate(job, cal).step_time_s);
}

// Activation offload and the FSDP engine keys were priced and dropped without
// a word by export megatron (offload) and export torchtitan (both): an 8B
// plan that fit at 75 GiB came back from the launch at 140 GiB.
TEST(InteropRoundTrip, PricedKeysNoFlagCarriesAreNoted) {
    const std::string name = "torchtitan24-a100-llama3-8b-selective";
    const auto noted = [](const ExportResult& e, const std::string& key) {
        for (const auto& n : e.notes)
            if (n.setting == key && n.message.find("not written") != std::string::npos) return true;
        return false;
    };
    const Job off = load_job(run_path(name), {"parallel.offload_activations=true"});
    EXPECT_TRUE(noted(export_torchtitan(off), "parallel.offload_activations"));
    const Job off_mc = load_job(run_path(name), {"parallel.offload_activations=true", "training.framework=megatron-core",
                                                 "parallel.zero=1"});
    EXPECT_TRUE(noted(export_megatron(off_mc), "parallel.offload_activations"));
    const Job plain = load_job(run_path(name));
    EXPECT_FALSE(noted(export_torchtitan(plain), "parallel.offload_activations"));
    const Job engine = load_job(run_path(name), {"parallel.zero_prefetch=0"});
    ASSERT_EQ(engine.plan.zero, 3);
    EXPECT_TRUE(noted(export_torchtitan(engine), "parallel.zero_*"));
    EXPECT_FALSE(noted(export_torchtitan(plain), "parallel.zero_*"));
}

TEST(InteropRoundTrip, ExportRefusesWhatTheFrameworkCannotRun) {
    // The framework rules (lostflops/framework_rules.h): legacy Megatron-LM has no ZeRO-2,
    // torchtitan no full recompute of some layers only.
    const Job zero2 = load_job(run_path("megatron24-h100-gpt-70b"), {"parallel.zero=2", "training.framework=megatron-lm"});
    try {
        export_megatron(zero2);
        FAIL() << "ZeRO-2 exported for legacy Megatron-LM";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "parallel.zero");
        EXPECT_NE(std::string(e.what()).find("cannot launch in megatron-lm"), std::string::npos) << e.what();
    }
    try {
        export_torchtitan(load_job(run_path("torchtitan24-a100-llama3-70b-full"), {"parallel.recompute_layers=5"}));
        FAIL() << "partial recompute exported for torchtitan";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "parallel.recompute_layers");
    }
    try {
        export_torchtitan(load_job(run_path("megatron24-h100-gpt-70b")));
        FAIL() << "a GPT model exported as a torchtitan flavour";
    } catch (const InputError& e) {
        EXPECT_EQ(e.key(), "model");
    }
}

}  // namespace
}  // namespace lostflops::test
