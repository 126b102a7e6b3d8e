// The training command of a launch script and the GPUs its launchers start
// (src/interop/launch_command.h), on launch lines written for these tests
// with the launchers' documented defaults: torchrun's --nnodes and
// --nproc-per-node default to 1, deepspeed without --num_gpus takes every
// GPU of the node, a plain python under srun runs one process per task.
#include <gtest/gtest.h>

#include "interop/launch_command.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

namespace lostflops::test {
namespace {

std::optional<interop::LaunchCommand> launch(const std::string& script) {
    return interop::find_launch(interop::evaluate_shell(script, "t.sh", {}), "t.sh");
}

int gpus(const std::string& script) {
    const auto l = launch(script);
    if (!l) return -1;
    return l->num_gpus.value_or(0);
}

TEST(LaunchCommand, TorchrunSpellingsAndDefaults) {
    EXPECT_EQ(gpus("torchrun --nproc_per_node 8 pretrain_gpt.py --a 1\n"), 8);       // --nnodes defaults to 1
    EXPECT_EQ(gpus("torchrun --nnodes=2 --nproc-per-node=4 pretrain_gpt.py\n"), 8);
    EXPECT_EQ(gpus("torchrun --nnodes 1:4 --nproc_per_node=8 pretrain_gpt.py\n"), 32);  // elastic: the largest
    EXPECT_EQ(gpus("torchrun pretrain_gpt.py\n"), 1);                                 // both default to 1
    EXPECT_EQ(gpus("python -m torch.distributed.run --nproc_per_node 4 --nnodes 2 train.py\n"), 8);
    EXPECT_EQ(gpus("python3 -u -m torch.distributed.launch --nproc_per_node=8 --use_env pretrain_gpt.py\n"), 8);
    EXPECT_EQ(gpus("deepspeed --num_nodes 2 --num_gpus 8 train.py --deepspeed_config c.json\n"), 16);
    EXPECT_EQ(gpus("deepspeed train.py\n"), 0);  // every GPU of the node: not known
    const auto l = launch("G=8\nuv run torchrun --nproc-per-node=$G --master_port 29500 ../pretrain_gpt.py --x 1 --y\n");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->program, "../pretrain_gpt.py");
    ASSERT_EQ(l->args.size(), 3u);
    EXPECT_EQ(l->args[0].text, "--x");
    EXPECT_EQ(l->gpus_per_node, 8);
}

TEST(LaunchCommand, SlurmAndMpiLaunchers) {
    EXPECT_EQ(gpus("srun -N 4 --ntasks-per-node=8 python pretrain_gpt.py\n"), 32);
    EXPECT_EQ(gpus("srun --ntasks 16 -l python pretrain_gpt.py\n"), 16);
    EXPECT_EQ(gpus("mpirun -np 8 --tag-output -x NCCL_DEBUG python pretrain_gpt.py\n"), 8);
    EXPECT_EQ(gpus("sbatch --nodes=3 <<EOF\n#SBATCH --ntasks-per-node=8\n#SBATCH --nodes=9\nsrun python train.py\nEOF\n"),
              24);  // the command line overrides the #SBATCH line
    EXPECT_EQ(gpus("python pretrain_gpt.py --a 1\n"), 0);  // started outside the script
    EXPECT_EQ(gpus("srun -N $NODES --ntasks-per-node=8 python pretrain_gpt.py\n"), 0);
}

TEST(LaunchCommand, WhichCommandTrains) {
    EXPECT_FALSE(launch("echo hi\npython -c 'print(1)'\n"));
    // Helpers that run Python are not the training command.
    const auto l = launch("python tools/preprocess_data.py --input x\ntorchrun --nproc_per_node 2 pretrain_gpt.py --n 1\n");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->program, "pretrain_gpt.py");
    // Different training commands: lostflops does not choose.
    EXPECT_THROW(launch("torchrun pretrain_gpt.py --a 1\ntorchrun pretrain_gpt.py --a 2\n"), InputError);
    // The only training command runs under a condition that cannot be decided.
    try {
        launch("if [ -f /x ]; then torchrun pretrain_gpt.py --a 1; fi\n");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot evaluate"), std::string::npos) << e.what();
    }
    // A known condition chooses: no ambiguity.
    EXPECT_EQ(gpus("D=0\nif [ $D = 1 ]; then torchrun --nproc_per_node 1 train.py; else torchrun --nproc_per_node 4 train.py; fi\n"),
              4);
}

TEST(LaunchCommand, AScriptThatExitsSaysWhatItNeeds) {
    // A required variable and a required argument: the import names each and
    // quotes what the script prints before it exits.
    const std::string env_script =
        "if [[ -z $WORKSPACE ]]; then\n  echo \"Please set WORKSPACE for checkpoints.\"\n  exit 1\nfi\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2\n";
    try {
        import_megatron(env_script, "t.sh");
        FAIL() << "imported a script that exits";
    } catch (const InputError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("line 3"), std::string::npos) << m;
        EXPECT_NE(m.find("WORKSPACE, not given (give --env NAME=VALUE)"), std::string::npos) << m;
        EXPECT_NE(m.find("it says \"Please set WORKSPACE for checkpoints.\""), std::string::npos) << m;
    }
    const std::string arg_script = "CFG=${1}\nif [ -z $1 ]; then\n  printf \"%s must be the first argument\\n\" Model\n"
                                   "  exit 1\nfi\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2\n";
    try {
        import_megatron(arg_script, "t.sh");
        FAIL() << "imported a script that exits";
    } catch (const InputError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("it tests the script's argument 1"), std::string::npos) << m;
        EXPECT_NE(m.find("it says \"Model must be the first argument\""), std::string::npos) << m;
    }
}

}  // namespace
}  // namespace lostflops::test
