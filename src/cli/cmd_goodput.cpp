// `lostflops goodput [JOB]`: the whole training run of a job (run_cost.h):
// time to train with failures, checkpoints, restarts and data stalls,
// goodput, GPU-hours, cost, energy and the effective compute utilisation;
// with --simulate N a seeded Monte Carlo of the run beside the closed form.
// Needs training.train_tokens. Exit 0, or 1 when the plan does not fit in
// memory (the run is still costed, as estimate still estimates).
#include <charconv>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/error_report.h"
#include "lostflops/error.h"
#include "lostflops/command_reports.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

namespace {

struct GoodputArgs {
    JobOptions job;
    int samples = 0;
    uint64_t seed = 0;
};

}  // namespace

void add_goodput_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<GoodputArgs>();
    auto* cmd = app.add_subcommand("goodput", "cost the whole run: failures, checkpoints, restarts, data stalls, "
                                              "time to train, GPU-hours, cost and energy (needs training.train_tokens)");
    add_job_options(cmd, a->job);
    cmd->add_option("--simulate", a->samples, "Monte Carlo runs of the whole run (0: closed form only)")
        ->check(whole_number())->check(CLI::Range(0, 10'000'000));
    // Parsed here: CLI11 saturates an unsigned 64-bit value (2^64 read as 2^64 - 1).
    auto* seed = cmd->add_option_function<std::string>(
                        "--seed",
                        [a](const std::string& text) {
                            const char* end = text.data() + text.size();
                            const auto [ptr, ec] = std::from_chars(text.data(), end, a->seed);
                            if (text.empty() || ec != std::errc() || ptr != end)
                                throw InputError("--seed", "",
                                                 fmt::format("'{}': expected an integer from 0 to 2^64 - 1 "
                                                             "(18446744073709551615)",
                                                             text));
                        },
                        "seed of the Monte Carlo (default 0); same seed, same figures")
                     ->type_name("UINT64");
    cmd->callback([a, seed, &exit_code] {
        if (seed->count() > 0 && a->samples == 0)
            throw InputError("--seed", "", "seeds the Monte Carlo: give --simulate N too (N runs)");
        const Job job = load_job_for(a->job);
        const Calibration cal = load_calibration_for(a->job.calibration_path);
        const Goodput g = goodput(job, cal, a->samples, a->seed);
        for (const auto& w : job_warnings(job))
            std::fprintf(stderr, "lostflops: warning: %s: %s\n", terminal_text(w.key).c_str(),
                         terminal_text(w.message).c_str());
        if (!g.estimate.memory.fits)
            std::fprintf(stderr, "lostflops: warning: %s\n", kGoodputDoesNotFit);
        if (a->job.format == Format::json) std::printf("%s\n", goodput_json(job, g).c_str());
        else std::printf("%s", goodput_table(job, g).c_str());
        exit_code = static_cast<int>(g.estimate.memory.fits ? ExitCode::ok : ExitCode::does_not_fit);
    });
}

}  // namespace lostflops::cli
