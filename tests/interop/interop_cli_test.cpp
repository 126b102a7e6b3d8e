// `lostflops import` / `export` from the command line: the job file on
// standard output, notes on standard error, exit 2 naming the file and flag,
// devices and directories refused, the imported file completed by --set.
#include <gtest/gtest.h>

#include "cli/cli_util.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

TEST(InteropCli, ImportPrintsAJobThatEstimatesWithAClusterPreset) {
    const std::string script = source_path("tests/data/interop/megatron/megatron24-h100-gpt-462b.sh");
    const CliRun imp = run_cli("import megatron " + script);
    ASSERT_EQ(imp.code, 0) << imp.err;
    EXPECT_NE(imp.err.find("lostflops: warning: not modelled: --overlap-param-gather"), std::string::npos) << imp.err;
    EXPECT_NE(imp.err.find("lostflops: ignored: --lr"), std::string::npos);
    char path[] = "/tmp/lostflops-import-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, imp.out.data(), imp.out.size()), static_cast<ssize_t>(imp.out.size()));
    close(fd);
    const CliRun est = run_cli(std::string("estimate --format json ") + path + " --set cluster.preset=dgx-h100");
    const CliRun ref = run_cli("estimate --format json " + source_path("data/published/runs/megatron24-h100-gpt-462b.json"));
    std::remove(path);
    ASSERT_EQ(est.code, 0) << est.err;
    const auto step = [](const std::string& json) {
        const auto at = json.find("\"step_time_s\"");
        return json.substr(at, json.find(',', at) - at);
    };
    EXPECT_EQ(step(est.out), step(ref.out));
}

TEST(InteropCli, BadInputExitsTwoNamingTheFlag) {
    const CliRun r = run_cli("import megatron - < " + source_path("tests/data/interop/bad-missing-value.sh"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("<stdin>: --hidden-size: expects a value"), std::string::npos) << r.err;
    const CliRun p = run_cli("import megatron - < /dev/null");
    EXPECT_EQ(p.code, 2);
    const CliRun q = run_cli("import megatron /dev/zero");
    EXPECT_EQ(q.code, 2);
    EXPECT_NE(q.err.find("/dev/zero"), std::string::npos);
    const CliRun d = run_cli("import torchtitan " + source_path("tests/data"));
    EXPECT_EQ(d.code, 2);
    const CliRun f = run_cli("export megatron " + source_path("data/published/runs/megatron24-h100-gpt-70b.json") +
                             " --set parallel.zero=2 --set training.framework=megatron-lm");  // legacy: no ZeRO-2
    EXPECT_EQ(f.code, 2);
    EXPECT_NE(f.err.find("parallel.zero"), std::string::npos) << f.err;
}

TEST(InteropCli, LaunchScriptsWithTheirEnvironmentAndArguments) {
    const std::string script = source_path("tests/data/interop/sc21/table1.sh");
    const CliRun dflt = run_cli("import megatron " + script);
    ASSERT_EQ(dflt.code, 0) << dflt.err;
    EXPECT_NE(dflt.out.find("num_gpus: 32"), std::string::npos) << dflt.out;
    EXPECT_NE(dflt.err.find("lostflops: warning: not modelled: --DDP-impl torch:"), std::string::npos) << dflt.err;
    EXPECT_NE(dflt.err.find("lostflops: ignored: --lr:"), std::string::npos) << dflt.err;
    const CliRun env = run_cli("import megatron " + script + " --env MODEL_SIZE=3.6B");
    EXPECT_NE(env.out.find("num_gpus: 64"), std::string::npos) << env.err;
    const CliRun fixed = run_cli("import megatron " + script + " --var MODEL_SIZE=1T --num-gpus 4096");
    EXPECT_NE(fixed.out.find("num_gpus: 4096  # --num-gpus"), std::string::npos) << fixed.err;
    EXPECT_NE(fixed.out.find("pp: 64"), std::string::npos);
    const CliRun strict = run_cli("import megatron " + script + " --strict");
    EXPECT_EQ(strict.code, 2);
    EXPECT_NE(strict.err.find("--DDP-impl torch: not modelled (--strict)"), std::string::npos) << strict.err;
    const CliRun bad = run_cli("import megatron " + script + " --env MODEL_SIZE");
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("expected NAME=VALUE"), std::string::npos) << bad.err;
    const CliRun unknown = run_cli("import megatron " + script + " --var MODEL_SIZE=2T");
    EXPECT_EQ(unknown.code, 2);
    EXPECT_NE(unknown.err.find("exits here"), std::string::npos) << unknown.err;
    // The script's own arguments.
    char path[] = "/tmp/lostflops-args-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string text = "torchrun --nproc_per_node $1 pretrain_gpt.py --num-layers 2 --hidden-size 64 "
                             "--num-attention-heads 4 --seq-length 128 --micro-batch-size 1 --bf16 --vocab-size 256\n";
    ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    close(fd);
    const CliRun args = run_cli(std::string("import megatron ") + path + " --arg 4");
    const CliRun none = run_cli(std::string("import megatron ") + path);
    std::remove(path);
    EXPECT_NE(args.out.find("global_batch_size: 4  # Megatron's default"), std::string::npos) << args.err;
    EXPECT_EQ(none.code, 2);
    EXPECT_NE(none.err.find("the script's argument 1"), std::string::npos) << none.err;
}

TEST(InteropCli, ExportBestIsAPlanTheFrameworkRuns) {
    const CliRun r = run_cli("export megatron --best " + source_path("data/published/runs/megatron24-h100-gpt-70b.json") +
                             " --set parallel=null");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("#!/bin/bash\n# ", 0), 0u);
    EXPECT_NE(r.out.find("    --nnodes 96\n    --nproc-per-node 8\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\ntorchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py \\\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--tensor-model-parallel-size"), std::string::npos);
}

}  // namespace
}  // namespace lostflops::test
