// Options shared by the commands that read a job.
#include "cli/commands.h"
#include "lostflops/job.h"

namespace lostflops::cli {

void add_format_option(CLI::App* cmd, Format& format) {
    cmd->add_option("--format", format, "output format")
        ->transform(CLI::CheckedTransformer(std::map<std::string, Format>{{"table", Format::table},
                                                                          {"json", Format::json}}));
}

void add_job_options(CLI::App* cmd, JobOptions& opts) {
    cmd->add_option("job", opts.job_path, "job file (YAML or JSON); built-in default job when absent");
    cmd->add_option("--set", opts.overrides, "override a key: section.key=value (repeatable)");
    cmd->add_option("--calibration", opts.calibration_path, "calibration profile (YAML)");
    add_format_option(cmd, opts.format);
}

Job load_job_for(const JobOptions& opts) {
    if (opts.job_path.empty()) return default_job(opts.overrides);
    return load_job(opts.job_path, opts.overrides);
}

Calibration load_calibration_for(const std::string& path) {
    return path.empty() ? default_calibration() : load_calibration(path);
}

}  // namespace lostflops::cli
