// `lostflops estimate [JOB]`: step time, MFU, breakdown and memory of one job.
// Exit 0 when the plan fits in memory, 1 when it does not.
#include <cstdio>

#include "cli/commands.h"
#include "lostflops/estimate.h"
#include "lostflops/report.h"

namespace lostflops::cli {

void add_estimate_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<JobOptions>();
    auto* cmd = app.add_subcommand("estimate", "predict step time, MFU, breakdown and memory of one job");
    add_job_options(cmd, *opts);
    auto schedule = std::make_shared<ScheduleModel>(ScheduleModel::closed_form);
    cmd->add_option("--schedule", *schedule, "pipeline timing: closed (default) or simulate")
        ->transform(CLI::CheckedTransformer(std::map<std::string, ScheduleModel>{
            {"closed", ScheduleModel::closed_form}, {"simulate", ScheduleModel::simulation}}));
    cmd->callback([opts, schedule, &exit_code] {
        const Job job = load_job_for(*opts);
        const Calibration cal = load_calibration_for(opts->calibration_path);
        const Estimate e = estimate(job, cal, *schedule);
        if (opts->format == Format::json) {
            std::printf("%s\n", estimate_json(job, e).dump(2).c_str());
        } else {
            std::printf("%s", estimate_table(job, e).c_str());
        }
        exit_code = e.memory.fits ? 0 : 1;
    });
}

}  // namespace lostflops::cli
