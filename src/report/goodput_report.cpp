// `lostflops goodput`: the whole run of a job (run_cost.h, closed form) and,
// with samples > 0, its seeded Monte Carlo (simulate_run), rendered as the
// command prints them; for the command line and the Python module alike.
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/accelerator.h"
#include "lostflops/command_reports.h"
#include "lostflops/error.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/run_report.h"
#include "lostflops/terminal_text.h"

namespace lostflops {

Goodput goodput(const Job& job, const Calibration& cal, int samples, uint64_t seed) {
    if (job.training.train_tokens <= 0)
        throw InputError(job.source, "training.train_tokens",
                         "missing; goodput costs a whole run of that many tokens "
                         "(e.g. --set training.train_tokens=15e12)");
    if (samples < 0) throw InputError("--simulate", "", fmt::format("{}: expected 0 or more runs", samples));
    Goodput g{estimate(job, cal), {}, std::nullopt};
    g.run = run_cost(job, g.estimate);
    if (samples > 0) g.simulation = simulate_run(g.run.inputs, g.run.inputs.checkpoint_interval_s, samples, seed);
    return g;
}

std::string goodput_json(const Job& job, const Goodput& g) {
    nlohmann::json j = run_json(g.run, g.simulation);
    j["schema_version"] = kJsonSchemaVersion;
    j["job"] = job_json(job);
    j["step_time_s"] = g.estimate.step_time_s;
    j["mfu"] = g.estimate.mfu;
    j["fits"] = g.estimate.memory.fits;
    // What the command prints as warnings on stderr: the model reader's, the
    // job's, and the plan that does not fit (as estimate's JSON carries them).
    nlohmann::json warnings = nlohmann::json::array();
    std::vector<JobWarning> all = model_warnings(job.model);
    for (auto& w : job_warnings(job)) all.push_back(std::move(w));
    if (!g.estimate.memory.fits) all.push_back({"memory", kGoodputDoesNotFit});
    for (const auto& w : all) warnings.push_back({{"key", w.key}, {"message", w.message}});
    j["warnings"] = warnings;
    return json_text(j);
}

std::string goodput_table(const Job& job, const Goodput& g) {
    return fmt::format("job        {}  ({})\n", terminal_text(job.name), terminal_text(job.source)) +
           fmt::format("step       {:.4f} s, MFU {:.1f} %, {} {}s, {:.4g} tokens\n\n", g.estimate.step_time_s,
                       100 * g.estimate.mfu, job.cluster.num_gpus, device_noun(job.cluster.gpu.arch),
                       job.training.train_tokens) +
           run_table(g.run, g.simulation, device_noun(job.cluster.gpu.arch));
}

}  // namespace lostflops
