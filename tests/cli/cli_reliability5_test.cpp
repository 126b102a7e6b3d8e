// Reliability, fifth pass, through the executable (the third hunt): each
// input here was answered wrongly before its fix. Exports that dropped a
// setting the plan was priced with, without a word (FP8 dispatch copies,
// 16-bit gradient reduction, a selective-recompute module list: the export
// read back by import and estimated gave a slower step than the job's).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "test_util.h"

namespace {

using lostflops::test::CliRun;
using lostflops::test::CliScratch;
using lostflops::test::run_cli;
using lostflops::test::source_path;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The DeepSeek-V3 job dispatches FP8 copies (moe_fp8_dispatch, precision
// fp8, DeepEP over ep 64): export megatron and export torchtitan wrote no
// setting for it and said nothing, so their launches dispatch 16-bit tokens
// (import megatron of the export, then estimate: 33.6 s against the job's
// 31.1 s for --best). torchtitan's export also dropped grad_fp32 false and
// the job's recompute_modules.
TEST(CliReliability5, ExportsSayTheSettingsTheyDoNotWrite) {
    const std::string job = source_path("examples/deepseek-v3-2048xh800-goodput.yaml");
    const CliRun m = run_cli("--quiet export megatron --set parallel.pipeline_schedule=1f1b " + job);
    ASSERT_EQ(m.code, 0) << m.all();
    EXPECT_TRUE(has(m.err, "not modelled: parallel.moe_fp8_dispatch: true: not written")) << m.err;
    const CliRun t = run_cli("--quiet export torchtitan --set model.num_nextn_predict_layers=0 "
                             "--set parallel.pipeline_layout=null --set parallel.pipeline_schedule=1f1b "
                             "--set parallel.zero=3 --set parallel.grad_fp32=false " + job);
    ASSERT_EQ(t.code, 0) << t.all();
    EXPECT_TRUE(has(t.err, "not modelled: parallel.moe_fp8_dispatch: true: not written")) << t.err;
    EXPECT_TRUE(has(t.err, "not modelled: parallel.grad_fp32: false: not written")) << t.err;
    EXPECT_TRUE(has(t.err, "not modelled: parallel.recompute_modules: not written")) << t.err;
    // Without FP8 training the copies are 16-bit anyway: nothing to say.
    const CliRun bf16 =
        run_cli("--quiet export megatron --set parallel.pipeline_schedule=1f1b --set training.precision=bf16 " + job);
    ASSERT_EQ(bf16.code, 0) << bf16.all();
    EXPECT_FALSE(has(bf16.err, "moe_fp8_dispatch: true: not written")) << bf16.err;
}

// export maxtext's refusals named the job's name where every other error
// names its file ("llama3.1-405b-16384xh100: parallel.vpp: ..."), and a
// mesh axis as the key "parallel: tensor", which no job has.
TEST(CliReliability5, ExportMaxTextErrorsNameTheFileAndTheKey) {
    const std::string job = source_path("examples/llama3.1-405b-16384xh100-goodput.yaml");
    const CliRun vpp = run_cli("--quiet export maxtext " + job);
    EXPECT_EQ(vpp.code, 2) << vpp.all();
    EXPECT_TRUE(has(vpp.err, "error: " + job + ": parallel.vpp: 126 layers over pp x vpp = 16 x 2")) << vpp.err;
    const std::string amd = source_path("tests/data/amd/llama3-8b-64xmi355x.yaml");
    const CliRun axis = run_cli("--quiet export maxtext --set cluster.gpus_per_node=6 --set cluster.num_gpus=48 "
                                "--set parallel.tp=4 --set training.global_batch_size=48 " + amd);
    EXPECT_EQ(axis.code, 2) << axis.all();
    EXPECT_TRUE(has(axis.err, "error: " + amd + ": parallel.tp: tensor parallelism of 4 neither fits")) << axis.err;
}

// search --by memory listed "simpler, within 1 % of the best: #617 tp 8 cp 1
// pp 2 ep 1 vpp 1, +35.5 % tokens/s per GPU; peak 57.7 vs 41.5 GiB": within
// 1 % of the best's step, which ranked by memory is no reach at all (the
// lowest-memory plan is slow); a plan that holds 39 % more is not near it.
TEST(CliReliability5, SearchByMemorySimplerPlanIsWithinThePeak) {
    const CliRun r =
        run_cli("--quiet search --by memory --top 10 " + source_path("examples/llama3-70b-64xmi300x.yaml"));
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_FALSE(has(r.out, "simpler, within 1 % of the best:")) << r.out;
    EXPECT_FALSE(has(r.out, "+35.5 % tokens/s per GPU; peak 57.7 vs 41.5 GiB")) << r.out;
}

// estimate --schedule simulate estimated the step by the simulation but its
// host-speed range by the closed form (a step of 0.26285 s given a range
// from 0.22211 s: the closed form's step at 0.79 x). The range's slower end
// is the step under the calibration with every scaled host cost 1.67 x.
class CliReliability5Scratch : public CliScratch {};
TEST_F(CliReliability5Scratch, HostSpeedRangeTakesTheSchedule) {
    std::string cal = slurp(source_path("data/calibration/default.yaml"));
    for (const char* key : {"host_op_us", "host_bwd_op_us", "hf_host_op_us", "hf_host_bwd_op_us",
                            "hf_optimizer_tensor_us", "hf_zero_grad_tensor_us", "hf_expert_loop_us",
                            "compiled_launch_us"}) {
        const std::string head = std::string("\n") + key + ": ";
        const size_t at = cal.find(head);
        ASSERT_NE(at, std::string::npos) << key;
        const size_t from = at + head.size(), to = cal.find_first_of(" \n", from);
        cal.replace(from, to - from, std::to_string(std::stod(cal.substr(from, to - from)) * 1.67));
    }
    const std::string slow = write("slow.yaml", cal);
    const std::string args = "--quiet estimate --format json --schedule simulate --set cluster.num_gpus=4 "
                             "--set cluster.gpus_per_node=4 --set parallel.pp=4 --set parallel.vpp=3 "
                             "--set training.global_batch_size=8 " +
                             source_path("tests/data/trace/job-h200-qwen05-like-s2048-b1-autocast.yaml");
    const CliRun r = run_cli(args);
    const CliRun at_slow = run_cli(args + " --calibration " + slow);
    ASSERT_EQ(r.code, 0) << r.all();
    ASSERT_EQ(at_slow.code, 0) << at_slow.all();
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("host_speed_range")) << r.out.substr(0, 400);
    const double hi = j["host_speed_range"]["step_time_s"][1];
    EXPECT_NEAR(hi, nlohmann::json::parse(at_slow.out)["step_time_s"].get<double>(), 1e-6 * hi);
    EXPECT_LE(j["host_speed_range"]["step_time_s"][0].get<double>(), j["step_time_s"].get<double>());
}

// import maxtext read any `attention` value as flash without a word
// ("attention: dot_prodcut" priced the fused kernel; "dot_product" is the
// unfused one): a value that is none of MaxText's kernels is said.
TEST_F(CliReliability5Scratch, ImportMaxTextSaysAnUnknownAttentionKernel) {
    std::string config = slurp(source_path("tests/data/interop/maxtext/v5e-16b.yml"));
    const size_t at = config.find("\nattention: flash\n");
    ASSERT_NE(at, std::string::npos);
    config.replace(at, 18, "\nattention: dot_prodcut\n");
    const CliRun r = run_cli("--quiet import maxtext --tpu v5e-16 " + write("typo.yml", config));
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_TRUE(has(r.err, "not modelled: attention: 'dot_prodcut': not one of MaxText's kernels")) << r.err;
    const CliRun known = run_cli("--quiet import maxtext --tpu v5e-16 " + source_path("tests/data/interop/maxtext/v5e-16b.yml"));
    ASSERT_EQ(known.code, 0) << known.all();
    EXPECT_FALSE(has(known.err, "not modelled: attention")) << known.err;
}

// import torchtitan ignored the whole [optimizer] table, so `implementation
// = "foreach"` (which export torchtitan writes for optimizer_kernel foreach)
// was read back as fused: the foreach temporary, the size of the fp32
// parameters, left out of the memory. An unknown kernel is refused.
TEST_F(CliReliability5Scratch, ImportTorchtitanReadsTheOptimizerKernel) {
    const CliRun e = run_cli("--quiet export torchtitan --set training.optimizer_kernel=foreach " +
                             source_path("tests/data/amd/llama3-8b-64xmi355x.yaml"));
    ASSERT_EQ(e.code, 0) << e.all();
    ASSERT_TRUE(has(e.out, "implementation = \"foreach\"")) << e.out;
    const CliRun i = run_cli("--quiet import torchtitan " + write("foreach.toml", e.out));
    ASSERT_EQ(i.code, 0) << i.all();
    EXPECT_TRUE(has(i.out, "optimizer_kernel: foreach")) << i.out;
    std::string bad = e.out;
    bad.replace(bad.find("\"foreach\""), 9, "\"fusd\"");
    const CliRun b = run_cli("--quiet import torchtitan " + write("bad.toml", bad));
    EXPECT_EQ(b.code, 2) << b.all();
    EXPECT_TRUE(has(b.err, "optimizer.implementation: expected for-loop, foreach or fused, got 'fusd'")) << b.err;
}

// import megatron wrote vpp 2 with pp 1 from a virtual-pipeline flag (or a
// layout of two stages) on a launch without a pipeline: a job that estimate
// then refused ("parallel.vpp: vpp > 1 needs pp > 1"), naming the imported
// file instead of the flag. Megatron's interleaved schedule asserts a pipeline.
TEST_F(CliReliability5Scratch, ImportMegatronRefusesVirtualStagesWithoutAPipeline) {
    const std::string base = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
                             "--num-attention-heads 8 --seq-length 1024 --micro-batch-size 1 --global-batch-size 8 "
                             "--bf16 --vocab-size 32000 --tensor-model-parallel-size 2 ";
    const CliRun v = run_cli("--quiet import megatron " +
                             write("v.sh", base + "--num-layers-per-virtual-pipeline-stage 2\n"));
    EXPECT_EQ(v.code, 2) << v.all();
    EXPECT_TRUE(has(v.err, "--num-layers-per-virtual-pipeline-stage: 2 virtual stages a rank need "
                           "--pipeline-model-parallel-size > 1")) << v.err;
    const CliRun l = run_cli("--quiet import megatron " +
                             write("l.sh", base + "--pipeline-model-parallel-layout 'Ett|ttL'\n"));
    EXPECT_EQ(l.code, 2) << l.all();
    EXPECT_TRUE(has(l.err, "--pipeline-model-parallel-layout: 2 stages on one rank need")) << l.err;
    const CliRun ok = run_cli("--quiet import megatron " +
                              write("ok.sh", base + "--pipeline-model-parallel-size 2 "
                                                    "--num-layers-per-virtual-pipeline-stage 1\n"));
    ASSERT_EQ(ok.code, 0) << ok.all();
    EXPECT_TRUE(has(ok.out, "vpp: 2")) << ok.out;
}

// search --min-gpus began at one node whatever the job's own parallel keys,
// so a job fixing tp 8 x pp 2 was refused at 8 GPUs (exit 2, "parallel:
// tp*pp*cp = 16 is more than num_gpus 8"): five of the six examples and the
// default job. The counts its plan cannot lay out are passed over.
TEST(CliReliability5, MinGpusPassesOverCountsTheJobsPlanCannotLayOut) {
    const CliRun r = run_cli("--quiet search --min-gpus " + source_path("examples/llama3-70b-64xmi300x.yaml"));
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_TRUE(has(r.out, "\n     16 ")) << r.out;  // tp 8 x pp 2: the first count that holds it
    EXPECT_TRUE(has(r.out, "tp 8, cp 1, pp 2")) << r.out;
    const CliRun moe =
        run_cli("--quiet search --min-gpus " + source_path("data/published/modern/runs/mbridge2509-h100-deepseek-v3-1024.json"));
    ASSERT_EQ(moe.code, 0) << moe.all();
}

// A sweep (--gpus, --min-gpus) took the listing's options and did nothing
// with them: --format csv wrote JSON, --top, --compare and --rank-plan were
// dropped, and --min-gpus silently won over --gpus. Each is refused.
TEST(CliReliability5, SweepRefusesTheListingsOptions) {
    const std::string job = " " + source_path("examples/llama3-70b-64xmi300x.yaml");
    for (const char* args : {"--gpus 32,64 --format csv", "--gpus 32,64 --top 10", "--gpus 32,64 --compare tp=8,pp=2",
                             "--gpus 32,64 --rank-plan", "--min-gpus --format csv", "--min-gpus --gpus 32,64"}) {
        const CliRun r = run_cli(std::string("--quiet search ") + args + job);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.all();
        EXPECT_TRUE(has(r.err, "not with --")) << args << "\n" << r.err;
        EXPECT_FALSE(has(r.out, "\"sweep\"")) << args;
    }
}

// export of the job's own plan wrote a plan that does not fit without a word
// (exit 0), and took --calibration and --headroom only for --best. The plan
// is still written; estimate's verdict is said, under both options.
TEST(CliReliability5, ExportOfAPlanThatDoesNotFitSaysSo) {
    const CliRun big = run_cli("--quiet export megatron " + source_path("examples/gpt3-175b-8xa100.yaml"));
    EXPECT_EQ(big.code, 0) << big.all();
    EXPECT_TRUE(has(big.err, "warning: memory: the plan exported does not fit")) << big.err;
    EXPECT_TRUE(has(big.out, "pretrain_gpt.py")) << big.out.substr(0, 300);
    const std::string job = " " + source_path("examples/llama3-70b-64xmi300x.yaml");
    const CliRun fits = run_cli("--quiet export megatron" + job);
    EXPECT_EQ(fits.code, 0) << fits.all();
    EXPECT_FALSE(has(fits.err, "does not fit")) << fits.err;
    const CliRun tight = run_cli("--quiet export megatron --headroom 90%" + job);
    EXPECT_EQ(tight.code, 0) << tight.all();
    EXPECT_TRUE(has(tight.err, "warning: memory: the plan exported does not fit")) << tight.err;
    EXPECT_EQ(run_cli("--quiet export megatron --calibration /nonexistent-calibration.yaml" + job).code, 2);
    EXPECT_EQ(run_cli("--quiet export megatron --best --headroom 10%" + job).code, 0);
}

// export torchtitan wrote nothing for training.compile (priced with the
// compiled blocks' fused elementwise kernels) and nothing, without a word,
// for an expert capacity factor.
TEST(CliReliability5, ExportTorchtitanWritesCompileAndSaysTheCapacity) {
    const std::string job = source_path("data/published/modern/runs/mbridge260201-b200-qwen3-30b-a3b-8.json");
    const CliRun r = run_cli("--quiet export torchtitan --set parallel.zero=3 --set parallel.grad_fp32=true "
                             "--set training.compile=true --set parallel.moe_capacity_factor=1.25 " + job);
    ASSERT_EQ(r.code, 0) << r.all();
    EXPECT_TRUE(has(r.out, "\n[compile]\nenable = true\n")) << r.out;
    EXPECT_TRUE(has(r.err, "not modelled: parallel.moe_capacity_factor: 1.25: not written")) << r.err;
    const CliRun plain = run_cli("--quiet export torchtitan --set parallel.zero=3 --set parallel.grad_fp32=true " + job);
    ASSERT_EQ(plain.code, 0) << plain.all();
    EXPECT_FALSE(has(plain.out, "[compile]")) << plain.out;
}

// import torchtitan read compile.enable (and 2024's training.compile) as
// not modelled, so torchtitan's FSDP + compile + Float8 run, exported and
// imported, came back uncompiled: the key the job prices is read.
TEST_F(CliReliability5Scratch, ImportTorchtitanReadsCompile) {
    const CliRun e =
        run_cli("--quiet export torchtitan " + source_path("data/published/modern/runs/tt2412-h100-llama3.1-8b-fsdp-compile-fp8-8.json"));
    ASSERT_EQ(e.code, 0) << e.all();
    const CliRun i = run_cli("--quiet import torchtitan " + write("compiled.toml", e.out));
    ASSERT_EQ(i.code, 0) << i.all();
    EXPECT_TRUE(has(i.out, "compile: true")) << i.out;
    EXPECT_FALSE(has(i.err, "compile.enable")) << i.err;
}

}  // namespace
