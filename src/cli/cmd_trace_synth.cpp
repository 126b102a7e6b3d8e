// `lostflops trace synth DIR`: Kineto-shaped traces of a made-up training job
// with a slow rank and a slow node when asked (include/lostflops/trace_synth.h),
// one file per rank (DIR/rank00000.json, ...), to try `trace`, `trace merge`,
// the Slurm array of docs/ and the Dask path without a GPU.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "lostflops/trace_synth.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {
namespace {

struct SynthArgs {
    std::string dir;
    trace::SynthSpec spec;
    std::vector<int> only;  // --rank: these ranks only
};

int run_synth(const SynthArgs& a) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(a.dir, ec);
    if (ec || !fs::is_directory(a.dir)) throw InputError(a.dir, "", "cannot create the output directory");
    const trace::SynthJob job(a.spec);
    std::vector<int> ranks = a.only;
    // A rank given twice wrote its file once and was counted twice.
    std::vector<int> seen = ranks;
    std::sort(seen.begin(), seen.end());
    if (const auto twice = std::adjacent_find(seen.begin(), seen.end()); twice != seen.end())
        throw InputError("--rank", "", fmt::format("rank {} given twice", *twice));
    if (ranks.empty())
        for (int r = 0; r < a.spec.ranks; ++r) ranks.push_back(r);
    for (const int r : ranks) {
        if (r < 0 || r >= a.spec.ranks) throw InputError("--rank", "", "expected a rank below --ranks");
        const std::string path = (fs::path(a.dir) / trace::synth_file_name(r)).string();
        const std::string text = job.trace(r);
        std::ofstream f(path, std::ios::binary);
        f << text;
        f.close();
        if (!f) throw InputError(path, "", "cannot write the trace");
    }
    std::fprintf(stderr, "wrote %zu trace(s) to %s\n", ranks.size(), terminal_text(a.dir).c_str());
    return 0;
}

}  // namespace

void add_trace_synth_command(CLI::App* trace_cmd, int& exit_code) {
    auto a = std::make_shared<SynthArgs>();
    trace::SynthSpec& s = a->spec;
    auto* cmd = trace_cmd->add_subcommand(
        "synth", "Write Kineto-shaped traces of a made-up data/tensor-parallel job, one per rank (known answers; "
                 "a slow rank and a slow node on request)");
    cmd->add_option("dir", a->dir, "output directory (created; files rank00000.json, ...)")->required();
    cmd->add_option("--ranks", s.ranks, "world size (default 8)");
    cmd->add_option("--gpus-per-node", s.gpus_per_node, "ranks per node (default 8)");
    cmd->add_option("--tp", s.tp, "tensor-parallel group size, consecutive ranks (default 1)");
    cmd->add_option("--steps", s.steps, "ProfilerSteps (default 3)");
    cmd->add_option("--first-step", s.first_step, "number of the first ProfilerStep (default 10)");
    cmd->add_option("--layers", s.layers, "transformer layers per step (default 4)");
    cmd->add_option("--slow-rank", s.slow_rank, "this rank's compute kernels take --slow-rank-factor longer (none when absent)")
        ->check(CLI::Range(0, 1 << 20));
    cmd->add_option("--slow-rank-factor", s.slow_rank_factor, "(default 1.5)");
    cmd->add_option("--slow-node", s.slow_node,
                    "this node's ranks' compute kernels take --slow-node-factor longer (none when absent)")
        ->check(CLI::Range(0, 1 << 20));
    cmd->add_option("--slow-node-factor", s.slow_node_factor, "(default 1.25)");
    cmd->add_option("--jitter-pct", s.jitter_pct, "random spread of each rank's compute per step, percent (default 0)");
    cmd->add_option("--seed", s.seed, "seed of the jitter (default 1)");
    cmd->add_option("--rank", a->only, "write only these ranks (repeatable; e.g. one per Slurm array task)");
    cmd->callback([a, &exit_code] { exit_code = run_synth(*a); });
}

}  // namespace lostflops::cli
