// Text and JSON views of a whole-run cost (run_report.h): the run's wall time
// split into useful work, checkpoints, lost work, restarts and data stalls;
// failures, the checkpoint interval, GPU-hours, cost, energy; the effective
// compute utilisation table; the Monte Carlo's percentiles beside the closed
// form.
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lostflops/run_report.h"
#include "job/human_format.h"

namespace lostflops {

namespace {

std::string duration(double s) { return human_duration(s); }

double steps_per_interval(const RunInputs& in) {
    return std::round(in.checkpoint_interval_s / (in.step_time_s + in.data_stall_s));
}

}  // namespace

nlohmann::json run_json(const RunCost& r, const std::optional<RunSimulation>& sim) {
    const RunInputs& in = r.inputs;
    nlohmann::json j;
    j["wall_time_s"] = r.wall_time_s;
    j["time_to_train_days"] = r.wall_time_s / 86400;
    j["goodput"] = r.goodput;
    j["expected_failures"] = r.expected_failures;
    j["mtbf_s"] = std::isfinite(r.mtbf_s) ? nlohmann::json(r.mtbf_s) : nlohmann::json(nullptr);
    j["steps"] = in.steps;
    j["checkpoint_interval_s"] = in.checkpoint_interval_s;
    j["checkpoint_interval_steps"] = steps_per_interval(in);
    j["checkpoint_interval_auto"] = in.interval_auto;
    j["checkpoints"] = r.checkpoints;
    j["checkpoint_bytes"] = in.checkpoint_bytes;
    j["checkpoint_block_s"] = in.checkpoint_block_s;
    j["checkpoint_persist_s"] = in.checkpoint_persist_s;
    j["checkpoint_read_s"] = in.checkpoint_read_s;
    j["recovery_s"] = in.recovery_s;
    j["spare_wait_s"] = in.spare_wait_s;
    j["data_stall_per_step_s"] = in.data_stall_s;
    j["split"] = {{"useful_s", r.useful_s},
                  {"checkpoint_overhead_s", r.checkpoint_overhead_s},
                  {"lost_work_s", r.lost_work_s},
                  {"restart_s", r.restart_s},
                  {"data_stall_s", r.data_stall_s}};
    j["gpu_hours"] = r.gpu_hours;
    j["cost"] = r.cost_given ? nlohmann::json(r.cost) : nlohmann::json(nullptr);
    j["energy_kwh"] = r.energy_kwh;
    nlohmann::json u = nlohmann::json::array();
    for (const auto& f : r.utilisation) u.push_back({{"name", f.name}, {"definition", f.definition}, {"value", f.value}});
    j["utilisation"] = u;
    j["effective_utilisation"] = r.effective_utilisation;
    if (sim) {
        j["simulation"] = {{"samples", sim->samples},
                           {"seed", sim->seed},
                           {"checkpoint_interval_s", sim->interval_s},
                           {"mean_wall_time_s", sim->mean_wall_time_s},
                           {"p10_wall_time_s", sim->p10_wall_time_s},
                           {"p50_wall_time_s", sim->p50_wall_time_s},
                           {"p90_wall_time_s", sim->p90_wall_time_s},
                           {"mean_goodput", sim->mean_goodput},
                           {"p10_goodput", sim->p10_goodput},
                           {"p50_goodput", sim->p50_goodput},
                           {"p90_goodput", sim->p90_goodput},
                           {"mean_failures", sim->mean_failures},
                           {"closed_form_error_pct", 100 * (r.wall_time_s / sim->mean_wall_time_s - 1)}};
    }
    return j;
}

std::string run_table(const RunCost& r, const std::optional<RunSimulation>& sim, std::string_view device) {
    const RunInputs& in = r.inputs;
    std::string out;
    out += fmt::format("time to train        {:>12}   ({} steps, {} s of wall time)\n", duration(r.wall_time_s),
                       grouped(static_cast<double>(in.steps)), grouped(r.wall_time_s));
    out += fmt::format("goodput              {:10.1f} %   useful time / wall time\n", 100 * r.goodput);
    out += fmt::format("expected failures    {:10.1f}     job MTBF {}\n", r.expected_failures, duration(r.mtbf_s));
    out += fmt::format("checkpoint every     {:>12}   ({:.0f} steps{}; {:.3g} GB, blocks {}, {}read {})\n",
                       duration(in.checkpoint_interval_s), steps_per_interval(in),
                       in.interval_auto ? ", Young/Daly optimum" : "", in.checkpoint_bytes / 1e9,
                       duration(in.checkpoint_block_s),
                       in.checkpoint_persist_s > 0 ? "writes in the background " + duration(in.checkpoint_persist_s) + ", "
                                                   : std::string(),
                       duration(in.checkpoint_read_s));
    out += fmt::format("recovery per failure {:>12}   (restart overhead {}, checkpoint read{})\n", duration(in.recovery_s),
                       duration(in.restart_overhead_s),
                       in.spare_wait_s > 0 ? ", wait for a spare node " + duration(in.spare_wait_s) : std::string());
    if (in.data_stall_s > 0)
        out += fmt::format("data stall per step  {:10.4f} s   ({}storage supplies {:.4g} tokens/s, the step needs {:.4g})\n",
                           in.data_stall_s,
                           in.loader_stall_s > 0 ? fmt::format("the data loader {:.4f} s; ", in.loader_stall_s)
                                                 : std::string(),
                           in.storage_tokens_per_s, in.tokens_per_step / (in.step_time_s + in.loader_stall_s));
    out += fmt::format("{:<21}{:>12}   ({} {}s{})\n", fmt::format("{}-hours", device), grouped(r.gpu_hours),
                       grouped(in.num_gpus + in.spare_gpus), device,
                       in.spare_gpus > 0 ? fmt::format(", {} of them spare", in.spare_gpus) : std::string());
    if (r.cost_given)
        out += fmt::format("cost                 {:>12}   ({} per {}-hour)\n", money(r.cost), device,
                           money(r.gpu_hours > 0 ? r.cost / r.gpu_hours : 0));
    else
        out += "cost                            -   (give run.price_per_gpu_hour)\n";
    out += fmt::format("energy               {:>12}   ({}s, with PUE)\n", grouped(r.energy_kwh / 1000, 1) + " MWh", device);
    out += "\nwhere the wall time goes\n";
    const std::pair<const char*, double> rows[] = {{"useful", r.useful_s},
                                                   {"checkpoint overhead", r.checkpoint_overhead_s},
                                                   {"lost work", r.lost_work_s},
                                                   {"restarts", r.restart_s},
                                                   {"data stall", r.data_stall_s}};
    for (const auto& [name, s] : rows)
        out += fmt::format("  {:<20} {:>12}  {:5.1f} %\n", name, duration(s), 100 * s / r.wall_time_s);
    out += "\neffective compute utilisation\n";
    for (const auto& f : r.utilisation)
        out += fmt::format("  {:<28} {:6.1f} %   {}\n", f.name, 100 * f.value, f.definition);
    out += fmt::format("  {:<28} {:6.1f} %   the product\n", "effective utilisation", 100 * r.effective_utilisation);
    if (sim) {
        out += fmt::format("\nMonte Carlo ({} runs, seed {})       p10          p50          p90         mean\n",
                           sim->samples, sim->seed);
        out += fmt::format("  time to train          {:>12} {:>12} {:>12} {:>12}\n", duration(sim->p10_wall_time_s),
                           duration(sim->p50_wall_time_s), duration(sim->p90_wall_time_s),
                           duration(sim->mean_wall_time_s));
        out += fmt::format("  goodput                {:11.1f}% {:11.1f}% {:11.1f}% {:11.1f}%\n", 100 * sim->p10_goodput,
                           100 * sim->p50_goodput, 100 * sim->p90_goodput, 100 * sim->mean_goodput);
        out += fmt::format("  failures (mean)        {:12.1f}; closed form's wall time {:+.2f} % from the mean\n",
                           sim->mean_failures, 100 * (r.wall_time_s / sim->mean_wall_time_s - 1));
    }
    return out;
}

nlohmann::json run_spec_json(const Job& job) {
    const RunSpec& r = job.run;
    nlohmann::json j = {{"gpu_failure_rate", r.gpu_failure_rate_per_gpu_h},
                        {"checkpoint_bytes", checkpoint_bytes(job)},
                        {"checkpoint_write_GBps", r.checkpoint_write_GBps},
                        {"checkpoint_read_GBps", r.checkpoint_read_GBps},
                        {"checkpoint_interval", r.checkpoint_interval_s > 0 ? nlohmann::json(r.checkpoint_interval_s)
                                                                             : nlohmann::json("auto")},
                        {"async_checkpoint", r.checkpoint_mode == CheckpointMode::async},
                        {"snapshot_GBps", r.snapshot_GBps},
                        {"restart_overhead_s", r.restart_overhead_s},
                        {"spare_nodes", r.spare_nodes},
                        {"node_repair_h", r.node_repair_s / 3600},
                        {"price_per_gpu_hour", r.price_per_gpu_hour > 0 ? nlohmann::json(r.price_per_gpu_hour)
                                                                          : nlohmann::json(nullptr)},
                        {"gpu_power_w", r.gpu_power_w},
                        {"pue", r.pue},
                        {"bytes_per_token", r.bytes_per_token},
                        {"storage_read_GBps", r.storage_read_GBps}};
    return j;
}

}  // namespace lostflops
