// `lostflops estimate [JOB]`: step time, MFU, breakdown and memory of one job;
// the job's warnings on stderr; when the plan does not fit, the changes that
// would make it fit (fit_advice: its searches only when cheap, or with
// --advice). Exit 0 when the plan fits in memory, 1 when
// it does not. With training.train_tokens, the whole run (run_cost.h) too.
// --timeline-out FILE: the step as a Chrome trace (timeline_trace.h).
#include <cstdio>
#include <fstream>
#include <optional>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/error_report.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/framework_rules.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/timeline_trace.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

void add_estimate_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<JobOptions>();
    auto* cmd = app.add_subcommand("estimate", "predict step time, MFU, breakdown and memory of one job "
                                               "(exit 1 when the plan does not fit)");
    add_job_options(cmd, *opts);
    auto schedule = std::make_shared<ScheduleModel>(ScheduleModel::closed_form);
    cmd->add_option_function<std::string>(
           "--schedule",
           [schedule](const std::string& v) {
               *schedule = v == "simulate" ? ScheduleModel::simulation : ScheduleModel::closed_form;
           },
           "pipeline timing: closed form where it is exact, else the simulation (default), or the discrete-event simulation of the job's pipeline schedule for every plan")
        ->check(CLI::IsMember({"closed", "simulate"}).description(""))
        ->type_name("{closed,simulate}");
    auto advice = std::make_shared<bool>(false);
    cmd->add_flag("--advice", *advice,
                  "when the plan does not fit, also search every plan for the nearest fitting one and the fewest "
                  "GPUs (without it: only when that is cheap)");
    auto timeline_out = std::make_shared<std::string>();
    cmd->add_option("--timeline-out", *timeline_out,
                    "write the step's pipeline timeline as a Chrome trace (Perfetto, chrome://tracing; "
                    "`lostflops trace FILE` reads it back)")
        ->type_name("FILE");
    cmd->callback([opts, schedule, advice, timeline_out, &exit_code] {
        check_output_not_input(*timeline_out, "--timeline-out", {opts->job_path, opts->calibration_path});
        const Job job = load_job_for(*opts);
        // --strict: a plan its framework cannot launch is an error (else a warning below).
        if (g_strict)
            for (const RuleBreak& b : rule_breaks(job))
                throw InputError(job.source, b.rule->key, rule_break_text(b) + " (--strict)");
        const Calibration cal = load_calibration_for(opts->calibration_path);
        const Estimate e = estimate(job, cal, *schedule);
        if (!timeline_out->empty()) {
            const std::string text = timeline_trace_json(job, cal, e);
            std::ofstream out(*timeline_out, std::ios::binary | std::ios::trunc);
            if (!out) throw InputError(*timeline_out, "--timeline-out", "cannot open for writing");
            out << text;
            out.close();
            if (!out) throw InputError(*timeline_out, "--timeline-out", "write failed");
        }
        const ReportExtras extras = [&] {
            // The advice searches plans when the plan does not fit: say so while it runs.
            std::optional<Progress> progress;
            if (!e.memory.fits) progress.emplace("estimate: the plan does not fit; searching the plans that do");
            return estimate_extras(job, e, cal, *advice ? AdviceSearch::full : AdviceSearch::if_cheap, *schedule);
        }();
        // The model's warnings lead extras.warnings and were printed by load_job_for.
        const size_t model_notes = job.model.not_modelled ? job.model.not_modelled->size() : 0;
        for (size_t i = model_notes; i < extras.warnings.size(); ++i)
            std::fprintf(stderr, "lostflops: warning: %s: %s\n", terminal_text(extras.warnings[i].key).c_str(),
                         terminal_text(extras.warnings[i].message).c_str());
        if (opts->format == Format::json) {
            std::printf("%s\n", json_text(estimate_json(job, e, extras)).c_str());
        } else {
            std::printf("%s", estimate_table(job, e, extras).c_str());
        }
        exit_code = static_cast<int>(e.memory.fits ? ExitCode::ok : ExitCode::does_not_fit);
    });
}

}  // namespace lostflops::cli
