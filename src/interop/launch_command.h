// The training command of an evaluated launch script (shell_eval.h) and the
// number of GPUs its launchers start: torchrun / python -m
// torch.distributed.run / torch.distributed.launch (--nnodes x
// --nproc-per-node, each 1 when not given), deepspeed (--num_nodes x
// --num_gpus), and a plain `python X.py` under srun (its tasks, or the
// batch allocation's from sbatch and #SBATCH lines) or mpirun (-np).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shell/shell_eval.h"

namespace lostflops::interop {

struct LaunchCommand {
    std::string program;            // the script ("pretrain_gpt.py", as written) or the module ("torchtitan.train")
    bool module = false;            // python -m MODULE
    std::vector<ShellField> args;   // the program's arguments
    std::string file;               // where the command is
    int line = 0;
    std::optional<int> num_gpus;    // processes started, one GPU each
    std::optional<int> gpus_per_node;
    std::string gpus_from;          // how num_gpus was found, for the job file's comment
    std::string gpus_unknown;       // why num_gpus is not known (when it is not)
    std::vector<std::pair<std::string, std::string>> notes;  // (what, message): assumptions
};

// The command that runs a Python program through a launcher, preferring a
// training entry point (pretrain_*, train*, finetune*, sft*) when there are
// several; nullopt when the script runs none. Throws InputError(source, "line
// N", "cannot evaluate: ...") when the only training command runs under a
// condition that cannot be decided, or when different training commands run.
std::optional<LaunchCommand> find_launch(const ShellRun& run, const std::string& source);

}  // namespace lostflops::interop
