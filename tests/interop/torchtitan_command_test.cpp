// torchtitan launched from a command line (src/interop/torchtitan_command.h):
// a TOML base with --job.config_file (before February 2026), a Python
// configuration by --module/--config (after), and tyro's --section.key
// overrides on either. Launch lines written for these tests.
#include <filesystem>
#include <functional>
#include <fstream>

#include <gtest/gtest.h>

#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "test_util.h"

namespace lostflops::test {
namespace {

class TorchtitanCommand : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("lostflops-tt-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_ / "configs");
        std::ofstream(dir_ / "configs/base.toml") << "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                                     "[training]\nlocal_batch_size = 2\nseq_len = 4096\nsteps = 10\n"
                                                     "[parallelism]\ndata_parallel_shard_degree = -1\n";
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    Job job(const std::string& script, ImportOptions o = {}) {
        o.script_path = (dir_ / "run.sh").string();
        last_ = import_torchtitan(script, "run.sh", o);
        return parse_job(last_.job_yaml, "imported", {"cluster.preset=dgx-h100"});
    }
    std::filesystem::path dir_;
    ImportResult last_;
};

TEST_F(TorchtitanCommand, TomlBaseAndOverrides) {
    const Job j = job("NGPU=${NGPU:-16}\ntorchrun --nproc_per_node=$NGPU -m torchtitan.train "
                      "--job.config_file ./configs/base.toml --parallelism.tensor-parallel-degree 2 "
                      "--training.local_batch_size=4 --activation_checkpoint.mode full\n");
    EXPECT_EQ(j.cluster.num_gpus, 16);
    EXPECT_EQ(j.plan.tp, 2);
    EXPECT_EQ(j.plan.dp, 8);
    EXPECT_EQ(j.training.global_batch, 4 * 8);
    EXPECT_EQ(j.training.seq_length, 4096);
    EXPECT_EQ(j.plan.recompute, Recompute::full);
    EXPECT_THROW(job("torchrun -m torchtitan.train --job.config_file ../elsewhere.toml\n"), InputError);
}

TEST_F(TorchtitanCommand, PythonConfigurationsSince2026) {
    const Job j = job("torchrun --nnodes 2 --nproc-per-node 8 -m torchtitan.train --module llama3 --config llama3_70b "
                      "--training.num_tokens_per_microbatch_per_dp_rank 16384 --training.max_context_length 8192\n");
    EXPECT_EQ(j.model.layers, 80);  // 70B
    EXPECT_EQ(j.plan.tp, 8);        // from llama3_70b
    EXPECT_EQ(j.plan.dp, 2);
    EXPECT_EQ(j.training.micro_batch, 2);  // 16,384 tokens of 8,192
    EXPECT_EQ(j.plan.recompute, Recompute::full);
    try {
        job("torchrun -m torchtitan.train --module qwen3 --config qwen3_32b\n");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("llama3_8b, llama3_70b, llama3_405b"), std::string::npos) << e.what();
    }
    EXPECT_THROW(job("torchrun -m torchtitan.train\n"), InputError);  // no base configuration
}

TEST_F(TorchtitanCommand, ContextLengthByBothNamesIsRefused) {
    // Issue 36 item 10: before, seq_len 2048 was taken without a word.
    const std::string e = error_of([&] {
        job("torchrun -m torchtitan.train --module llama3 --config llama3_8b --training.max_context_length 4096 "
            "--training.seq_len 2048\n");
    });
    EXPECT_NE(e.find("--training.max_context_length: '4096' and --training.seq_len '2048' are the same setting"),
              std::string::npos)
        << e;
}

TEST_F(TorchtitanCommand, MessagesNameWhatIsWrongAndTheBound) {
    // Issue 36 item 16: a configuration of another module blamed --config
    // while listing it as known; a local batch out of range gave no bound.
    const std::string module = error_of([&] { job("torchrun -m torchtitan.train --module qwen3 --config llama3_8b\n"); });
    EXPECT_NE(module.find("--module qwen3: --config llama3_8b is a configuration of module llama3"), std::string::npos)
        << module;
    const std::string batch = error_of([&] {
        job("torchrun -m torchtitan.train --module llama3 --config llama3_8b --training.local_batch_size 4294967296\n");
    });
    EXPECT_NE(batch.find("training.local_batch_size: expected an integer from 1 to 2147483647"), std::string::npos)
        << batch;
}

// An override given twice took the last value without a word (import
// megatron says it, megatron_args.cpp); the same value twice says nothing.
TEST_F(TorchtitanCommand, AnOverrideGivenTwiceIsSaid) {
    const std::string base = "torchrun --nnodes 2 --nproc-per-node 8 -m torchtitan.train --module llama3 --config llama3_8b ";
    const Job j = job(base + "--parallelism.tensor_parallel_degree 2 --parallelism.tensor-parallel-degree=4\n");
    EXPECT_EQ(j.plan.tp, 4);
    bool said = false;
    for (const auto& n : last_.notes)
        said |= n.setting == "--parallelism.tensor_parallel_degree" && n.kind == NoteKind::assumed &&
                n.message.find("given twice ('2', then '4'): the last counts") != std::string::npos;
    EXPECT_TRUE(said);
    (void)job(base + "--parallelism.tensor_parallel_degree 2 --parallelism.tensor_parallel_degree 2\n");
    for (const auto& n : last_.notes) EXPECT_EQ(n.message.find("given twice"), std::string::npos) << n.message;
}

}  // namespace
}  // namespace lostflops::test
