// `lostflops explain [JOB]`: the MFU waterfall and the three biggest levers
// (lostflops/explain.h), as a table, Markdown or JSON; `lostflops report
// [JOB] -o FILE.html [--trace TRACE]`: the self-contained HTML report, with a
// trace's measured memory over the predicted. Exit 0, 2 on bad input.
#include <cstdio>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/error_report.h"
#include "cli/progress.h"
#include "lostflops/error.h"
#include "lostflops/explain.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/terminal_text.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_stack.h"

namespace lostflops::cli {

namespace {

enum class ExplainFormat { table, json, markdown };

struct ExplainOptions {
    std::string job_path;
    std::vector<std::string> overrides;
    std::string calibration_path;
    ExplainFormat format = ExplainFormat::table;
    std::string output_path;
    std::string gpus;  // report: scaling curve over these GPU counts
    std::string trace_path;  // report: a trace whose [memory] events are drawn over the predicted memory
    bool best = false;  // --best (commands.h overrides_with_plan)
};

void add_source_options(CLI::App* cmd, ExplainOptions& o) {
    cmd->add_option("job", o.job_path,
                    "job file (YAML or JSON); the built-in default job (data/jobs/default.yaml) when absent")
        ->check(file_name());
    cmd->add_option("--set", o.overrides, "override a key: section.key=value (repeatable)")->allow_extra_args(false);
    add_headroom_option(cmd, o.overrides);
    cmd->add_option("--calibration", o.calibration_path, "calibration profile (YAML; default: built in)")
        ->check(file_name());
    add_best_flag(cmd, o.best);
}

JobSource source_of(const ExplainOptions& o) {
    // The levers re-load the job with more --set overrides: standard input
    // cannot be read twice.
    if (o.job_path == "-")
        throw InputError("-", "job", "explain and report read the job more than once; give a file, not standard input");
    // --best or a job without a plan: the search's best plan, as overrides the
    // re-loads keep (overrides_with_plan returns the command line's, then the plan's).
    std::vector<std::string> all = overrides_with_plan(o.job_path, o.overrides, o.calibration_path, o.best);
    std::vector<std::string> plan(all.begin() + static_cast<std::ptrdiff_t>(o.overrides.size()), all.end());
    return JobSource{o.job_path, o.overrides, std::move(plan)};
}

}  // namespace

void add_explain_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<ExplainOptions>();
    auto* cmd = app.add_subcommand("explain", "MFU waterfall from dense peak to the prediction, and the levers "
                                              "that would win the most back");
    add_source_options(cmd, *o);
    cmd->add_option_function<std::string>(
           "--format",
           [o](const std::string& v) {
               o->format = v == "json" ? ExplainFormat::json : v == "markdown" ? ExplainFormat::markdown
                                                                               : ExplainFormat::table;
           },
           "output format (default: table)")
        ->check(CLI::IsMember({"table", "json", "markdown"}).description(""))
        ->type_name("{table,json,markdown}");
    cmd->callback([o, &exit_code] {
        const Calibration cal = load_calibration_for(o->calibration_path);
        const JobSource src = source_of(*o);
        // The model's keys as estimate says them (or refuses them, --strict); the rest of its warnings below.
        const Job job = load_job_source(src);
        check_model_keys(job);
        const Explanation x = explain(src, job, cal, estimate(job, cal));
        const size_t model_notes = job.model.not_modelled ? job.model.not_modelled->size() : 0;
        for (size_t i = model_notes; i < x.warnings.size(); ++i)
            std::fprintf(stderr, "lostflops: warning: %s: %s\n", terminal_text(x.warnings[i].key).c_str(),
                         terminal_text(x.warnings[i].message).c_str());
        if (o->format == ExplainFormat::json) {
            std::printf("%s\n", json_text(explain_json(x)).c_str());
        } else if (o->format == ExplainFormat::markdown) {
            std::printf("%s", explain_markdown(x).c_str());
        } else {
            std::printf("%s", explain_table(x).c_str());
        }
        exit_code = 0;
    });
}

void add_report_command(CLI::App& app, int& exit_code) {
    auto o = std::make_shared<ExplainOptions>();
    auto* cmd = app.add_subcommand("report", "write a self-contained HTML report (waterfall, roofline, pipeline "
                                             "timeline, memory per rank)");
    add_source_options(cmd, *o);
    cmd->add_option("-o,--output", o->output_path, "HTML file to write")->check(file_name())->required();
    cmd->add_option("--gpus", o->gpus,
                    "add the scaling curve: the best plan of the search at 512..16384 (doubling) or 512,1024,4096 GPUs")
        ->check(not_empty("GPU counts, e.g. 512..16384 or 512,1024,4096"));
    cmd->add_option("--trace", o->trace_path,
                    "a PyTorch profiler trace recorded with profile_memory=True (.json or .json.gz): its measured "
                    "allocated and reserved memory drawn over the predicted memory over the step");
    cmd->callback([o, &exit_code] {
        check_output_not_input(o->output_path, "-o", {o->job_path, o->calibration_path, o->trace_path});
        std::vector<trace::RankReport> traces;
        if (!o->trace_path.empty())
            for (const auto& data : trace::split_ranks(trace::read_trace(o->trace_path)))
                traces.push_back(trace::analyze(data));
        trace::assign_missing_ranks(traces);  // as `trace` numbers a file without distributedInfo
        const Calibration cal = load_calibration_for(o->calibration_path);
        const std::vector<int> gpus = o->gpus.empty() ? std::vector<int>{} : gpu_list(o->gpus);
        std::optional<Progress> progress;
        if (!gpus.empty()) progress.emplace(fmt::format("report: searching every plan on {} cluster sizes", gpus.size()));
        const JobSource src = source_of(*o);
        const Job job = check_model_keys(load_job_source(src));  // said (or refused, --strict) here; the HTML lists every warning
        const Estimate est = estimate(job, cal);
        // As `trace --job`: a trace whose GEMM and attention time is far from
        // the job's is of another run (model, batch, plan, GPU), said here.
        if (!traces.empty()) {
            for (const auto& w : trace::compare_with_job(traces, job, est, job.source).warnings)
                std::fprintf(stderr, "lostflops: warning: %s\n", terminal_text(w).c_str());
            // The stack the trace ran where the job says another (trace_stack.h): said, not applied.
            const auto reread = [&src](const std::vector<std::string>& found) {
                JobSource again = src;
                again.overrides.insert(again.overrides.end(), found.begin(), found.end());
                return load_job_source(again);
            };
            const trace::TracedStack stack = trace::traced_stack(
                job, traces, src.overrides,
                src.path == "-" ? nullptr : std::function<Job(const std::vector<std::string>&)>(reread));
            for (const auto& s : stack.found)
                std::fprintf(stderr, "lostflops: warning: stack: the trace shows %s where the job says %s (%s); "
                             "--set %s prices the run it recorded\n",
                             trace::to_override(s).c_str(), s.job.c_str(), terminal_text(s.why).c_str(),
                             trace::to_override(s).c_str());
            if (!stack.refused.empty())  // what was said stands; what follows from it is not looked for
                std::fprintf(stderr, "lostflops: warning: stack: the job cannot take the settings above together "
                             "(%s); settings that would follow from them are not looked for\n",
                             terminal_text(stack.refused).c_str());
            for (const auto& n : trace::traced_notes(job, traces))
                std::fprintf(stderr, "lostflops: warning: %s\n", terminal_text(n).c_str());
        }
        const std::string html = html_report(
            src, cal, gpus,
            [&progress](double share) {
                if (progress) progress->set(share);
            },
            traces);
        progress.reset();
        std::ofstream out(o->output_path, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError(o->output_path, "-o", "cannot open for writing");
        out << html;
        out.close();
        if (!out) throw InputError(o->output_path, "-o", "write failed");
        std::fprintf(stderr, "lostflops: wrote %s (%zu bytes)\n", terminal_text(o->output_path).c_str(), html.size());
        // As estimate: exit 1 when the plan does not fit (the report says so in a banner).
        const bool fits = est.memory.fits;
        if (!fits) std::fprintf(stderr, "lostflops: the plan does not fit in GPU memory (the report's banner says by how much)\n");
        exit_code = static_cast<int>(fits ? ExitCode::ok : ExitCode::does_not_fit);
    });
}

}  // namespace lostflops::cli
