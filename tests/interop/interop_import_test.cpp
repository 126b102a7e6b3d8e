// Importing the published Megatron-based runs from launch scripts written from
// their papers' configurations (tests/data/interop/megatron/*.sh, by hand
// from the tables, not by `lostflops export`) and the torchtitan runs from
// their TOML configs: each imported job, completed with the run's cluster,
// must estimate exactly what the reference job file estimates.
#include <yaml-cpp/yaml.h>

#include "interop/interop_util.h"
#include "lostflops/calibration.h"
#include "lostflops/estimate.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace lostflops::test {
namespace {

void expect_same_estimate(const Job& imported, const Job& reference, const std::string& name) {
    SCOPED_TRACE(name);
    const Calibration cal = default_calibration();
    const Estimate a = estimate(imported, cal);
    const Estimate b = estimate(reference, cal);
    ASSERT_GT(b.step_time_s, 0);
    EXPECT_NEAR(a.step_time_s, b.step_time_s, 1e-12 * b.step_time_s);
    EXPECT_EQ(a.memory.peak_bytes, b.memory.peak_bytes);
    expect_same_job(imported, reference, name);
}

TEST(InteropImport, EveryMegatronRunEstimatesAsItsReferenceJob) {
    int runs = 0;
    for (const std::string& name : published_run_names()) {
        if (!is_megatron_run(name)) continue;
        ++runs;
        const std::string script = source_path("tests/data/interop/megatron/" + name + ".sh");
        ASSERT_TRUE(std::filesystem::exists(script)) << "no launch script for " << name;
        const ImportResult r = import_megatron(slurp(script), name + ".sh");
        const Job reference = load_job(run_path(name));
        // The world size comes from the launcher line.
        EXPECT_EQ(YAML::Load(r.job_yaml)["cluster"]["num_gpus"].as<int>(), reference.cluster.num_gpus) << name;
        const Job imported = parse_job(r.job_yaml, name + " (imported)", {run_cluster_override(name)});
        expect_same_estimate(imported, reference, name);
        // Nothing silently dropped: every flag is read or reported, and these
        // scripts hold no flag the table does not know.
        for (const auto& n : r.notes) EXPECT_NE(n.kind, NoteKind::unknown) << name << ": " << n.setting;
    }
    EXPECT_EQ(runs, 27);
}

// tests/data/interop/sc21: a launch written in the style of Megatron-LM's
// sc21 scripts (case per row, config sourced, sbatch of a batch script whose
// #SBATCH gives 8 tasks per node, srun sh -c). Every row gives the published
// run: full recompute from --activations-checkpoint-method uniform alone, the
// GPUs from sbatch --nodes x --ntasks-per-node. The vocabulary is Megatron's
// padding of GPT-2's 50,257 for the row's tp, where the published job uses
// the paper's V = 51,200 for every row; the two meet at tp 8.
TEST(InteropImport, Sc21TableOneScriptGivesThePublishedRuns) {
    const std::vector<std::pair<std::string, std::string>> rows = {
        {"1.7B", "1.7b"}, {"3.6B", "3.6b"}, {"7.5B", "7.5b"}, {"18B", "18.4b"}, {"39B", "39.1b"},
        {"76B", "76.1b"}, {"145B", "145.6b"}, {"310B", "310.1b"}, {"530B", "529.6b"}, {"1T", "1008b"}};
    const std::string script = source_path("tests/data/interop/sc21/table1.sh");
    for (const auto& [size, run] : rows) {
        const std::string name = "narayanan21-t1-gpt-" + run;
        ImportOptions o;
        o.script_path = script;
        o.vars = {{"MODEL_SIZE", size}};
        const ImportResult r = import_megatron(slurp(script), "table1.sh", o);
        const Job reference = load_job(run_path(name));
        const YAML::Node y = YAML::Load(r.job_yaml);
        EXPECT_EQ(y["cluster"]["num_gpus"].as<int>(), reference.cluster.num_gpus) << name;
        const int tp = reference.plan.tp;
        EXPECT_EQ(y["model"]["vocab_size"].as<int>(), (50257 + 128 * tp - 1) / (128 * tp) * (128 * tp)) << name;
        EXPECT_EQ(y["parallel"]["recompute"].as<std::string>(), "full") << name;
        const Job imported = parse_job(r.job_yaml, name + " (imported)",
                                       {run_cluster_override(name), "model.vocab_size=51200", "training.train_tokens=null"});
        expect_same_estimate(imported, reference, name);
        for (const auto& n : r.notes) EXPECT_NE(n.kind, NoteKind::unknown) << name << ": " << n.setting;
    }
}

TEST(InteropImport, TorchtitanRunsEstimateAsTheirReferenceJobs) {
    int runs = 0;
    for (const std::string& name : published_run_names()) {
        if (name.rfind("torchtitan", 0) != 0) continue;
        ++runs;
        const std::string config = source_path("tests/data/interop/torchtitan/" + name + ".toml");
        ASSERT_TRUE(std::filesystem::exists(config)) << "no TOML for " << name;
        ImportOptions o;
        o.num_gpus = 64;  // NGPU=8 on 8 nodes: torchtitan's config says -1
        const ImportResult r = import_torchtitan(slurp(config), name + ".toml", o);
        const Job imported = parse_job(r.job_yaml, name + " (imported)", {run_cluster_override(name)});
        // `steps = 1000` of 64 sequences of 8,192 tokens: training.train_tokens.
        expect_same_estimate(imported, load_job(run_path(name), {"training.train_tokens=524288000"}), name);
        for (const auto& n : r.notes) EXPECT_NE(n.kind, NoteKind::unknown) << name << ": " << n.setting;
    }
    EXPECT_EQ(runs, 2);
}

TEST(InteropImport, ReportsIgnoredNotModelledAndUnknownFlags) {
    const ImportResult r = import_megatron(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 "
        "--global-batch-size 8 --vocab-size 1024 --bf16 --lr 1e-4 --overlap-param-gather --frobnicate 3 --use-mcore-models",
        "flags");
    auto kind_of = [&r](const std::string& setting) {
        for (const auto& n : r.notes)
            if (n.setting == setting) return static_cast<int>(n.kind);
        return -1;
    };
    EXPECT_EQ(kind_of("--lr"), static_cast<int>(NoteKind::ignored));
    EXPECT_EQ(kind_of("--overlap-param-gather"), static_cast<int>(NoteKind::not_modelled));
    EXPECT_EQ(kind_of("--frobnicate 3"), static_cast<int>(NoteKind::unknown));
    // No torchrun line: the GPU count is asked for, not invented.
    EXPECT_FALSE(YAML::Load(r.job_yaml)["cluster"]["num_gpus"]);
    const Job j = parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100", "cluster.num_gpus=8"});
    EXPECT_EQ(j.training.framework, Framework::megatron_core);
    EXPECT_EQ(j.plan.dp, 8);
}

TEST(InteropImport, MegatronDefaultsFollowMegatron) {
    const std::string base =
        "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --micro-batch-size 2 --fp16 "
        "--tensor-model-parallel-size 2 --tokenizer-type GPT2BPETokenizer ";
    // SwiGLU width int(4h*2/3/64)*64, GPT-2 vocabulary padded to 128 x tp,
    // global batch = micro x dp from torchrun's world size.
    const ImportResult r = import_megatron("torchrun --nnodes=2 --nproc_per_node=8 pretrain_gpt.py " + base + "--swiglu",
                                           "launch");
    const Job j = parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-a100"});
    EXPECT_EQ(test::mlp_of(j.model).ffn, 10880);
    EXPECT_EQ(j.model.vocab, 50432);
    EXPECT_EQ(j.training.global_batch, 2 * 8);
    EXPECT_EQ(test::mlp_of(j.model).kind, MlpKind::gated);
    // No flag of legacy Megatron-LM: Megatron-Core, its default since core_r0.8, with TE's attention.
    EXPECT_EQ(j.training.framework, Framework::megatron_core);
    EXPECT_EQ(j.training.attention, AttentionKernel::flash);
    // A flag of the legacy era makes it legacy Megatron-LM, with its softmax attention.
    const Job legacy = parse_job(
        import_megatron("torchrun --nnodes=2 --nproc_per_node=8 pretrain_gpt.py " + base + "--data-impl mmap", "launch")
            .job_yaml,
        "imported", {"cluster.preset=dgx-a100"});
    EXPECT_EQ(legacy.training.framework, Framework::megatron_lm);
    EXPECT_EQ(legacy.training.attention, AttentionKernel::unfused);
    // Block recompute of N layers, GQA, vpp by either flag.
    const ImportResult r2 = import_megatron(
        "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py " + base +
            "--pipeline-model-parallel-size 2 --virtual-pipeline-model-parallel-size 2 "
            "--recompute-granularity full --recompute-method block --recompute-num-layers 1 "
            "--group-query-attention --num-query-groups 8 --global-batch-size 16",
        "launch");
    const Job j2 = parse_job(r2.job_yaml, "imported", {"cluster.preset=dgx-a100"});
    EXPECT_EQ(j2.plan.vpp, 2);
    EXPECT_EQ(j2.plan.recompute, Recompute::full);
    EXPECT_EQ(j2.plan.recompute_layers, 1);
    EXPECT_EQ(test::attention_of(j2.model).kv_heads, 8);
}

TEST(InteropImport, MegatronExpertFlagsAreRead) {
    // MoE parallel folding (README "Expert parallelism"): ep 16 over tp 2 x dp 8
    // with --expert-tensor-parallel-size 1, the flex (DeepEP) dispatcher, the
    // a2a overlap and a capacity factor (read; padding to it is read too).
    const ImportResult r = import_megatron(
        "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
        "--num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 --global-batch-size 16 --vocab-size 1024 "
        "--bf16 --use-mcore-models --num-experts 16 --moe-router-topk 4 --moe-ffn-hidden-size 512 "
        "--tensor-model-parallel-size 2 --sequence-parallel --expert-model-parallel-size 16 "
        "--expert-tensor-parallel-size 1 --moe-token-dispatcher-type flex --moe-enable-deepep "
        "--overlap-moe-expert-parallel-comm --moe-expert-capacity-factor 1.25",
        "launch");
    for (const auto& n : r.notes) EXPECT_NE(n.setting.rfind("--expert-tensor", 0), 0u) << n.setting;
    const Job j = parse_job(r.job_yaml, "imported", {"cluster.preset=dgx-h100"});
    EXPECT_EQ(j.plan.ep, 16);
    EXPECT_EQ(j.plan.expert_tp(), 1);
    EXPECT_EQ(j.plan.dp, 8);
    EXPECT_EQ(j.plan.moe_dispatcher, MoeDispatcher::deepep);
    EXPECT_TRUE(j.plan.moe_a2a_overlap);
    EXPECT_DOUBLE_EQ(j.plan.moe_capacity_factor, 1.25);
    EXPECT_FALSE(j.plan.moe_pad_to_capacity);
    // --moe-pad-expert-input-to-capacity (NeMo's MegatronTokenDropCallback sets it).
    const ImportResult padded = import_megatron(
        "--num-layers 4 --hidden-size 1024 --num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 "
        "--global-batch-size 16 --vocab-size 1024 --bf16 --num-experts 8 --moe-router-topk 2 "
        "--expert-model-parallel-size 8 --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity",
        "flags");
    const Job jp = parse_job(padded.job_yaml, "imported", {"cluster.preset=dgx-h100", "cluster.num_gpus=8"});
    EXPECT_TRUE(jp.plan.moe_pad_to_capacity);
    EXPECT_DOUBLE_EQ(jp.plan.moe_capacity_factor, 1.0);
    // An unknown dispatcher type names the flag.
    EXPECT_THROW(import_megatron("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
                                 "--micro-batch-size 1 --global-batch-size 8 --vocab-size 1024 "
                                 "--moe-token-dispatcher-type alltoal",
                                 "flags"),
                 InputError);
}

}  // namespace
}  // namespace lostflops::test
