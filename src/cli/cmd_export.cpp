// `lostflops export {megatron,torchtitan,maxtext} [JOB] [--set k=v]... [--best]`: the
// launch settings of a job's plan in the framework's words, or with --best of
// the best plan `lostflops search` finds for the job (ranked by throughput)
// among the plans the framework can launch (lostflops/framework_rules.h).
// What the framework cannot say goes to standard error.
#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "interop/maxtext_export.h"
#include "lostflops/export_search.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "lostflops/search_listing.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

namespace {

struct ExportArgs {
    std::string job_path;
    std::vector<std::string> overrides;
    std::string calibration_path;
    bool best = false;
};

// --best: the search's best plan among those the target framework can launch
// (lostflops/export_search.h, the same as Python's export_*), with its notes
// on stderr. A job without a parallel section is searched as under --best, as
// estimate, explain, report and goodput do (commands.h overrides_with_plan);
// `searched` says so.
Job job_to_export(const ExportArgs& a, const std::string& kind, bool& searched) {
    searched = a.best;
    if (!a.best) {
        try {
            return check_model_keys(a.job_path.empty() ? default_job(a.overrides) : load_job(a.job_path, a.overrides));
        } catch (const InputError& e) {
            if (!is_missing_plan(e) || a.job_path == "-") throw;  // standard input is read once
        }
        searched = true;
        std::fprintf(stderr, "lostflops: note: %s\n",
                     terminal_text(no_parallel_section_note(kind, a.job_path, kExportWordsCli).text).c_str());
    }
    const SearchJobLoader load = [&](const std::vector<std::string>& o) {
        SearchJob sj = a.job_path.empty() ? default_search_job(o) : load_search_job(a.job_path, o);
        check_model_keys(sj.job);  // said once (and refused under --strict) before the search
        return sj;
    };
    const std::string source = a.job_path.empty() ? "data/jobs/default.yaml (built in)" : a.job_path;
    ExportSearch won = export_search(kind, load, a.overrides, load_calibration_for(a.calibration_path), source);
    for (const PlanNote& n : won.notes)
        std::fprintf(stderr, "lostflops: note: %s\n", terminal_text(n.text).c_str());
    return std::move(won.job);
}

void add_export_kind(CLI::App* parent, const char* kind, const char* what, ExportResult (*run)(const Job&)) {
    auto a = std::make_shared<ExportArgs>();
    auto* cmd = parent->add_subcommand(kind, what);
    cmd->add_option("job", a->job_path, "job file (- for standard input); the built-in default job when absent")
        ->check(file_name());
    cmd->add_option("--set", a->overrides, "override a key: section.key=value (repeatable)")->allow_extra_args(false);
    add_headroom_option(cmd, a->overrides);
    cmd->add_flag("--best", a->best, "export the best plan of `lostflops search` for the job instead of its own plan");
    cmd->add_option("--calibration", a->calibration_path,
                    "calibration profile for --best and the fit check (default: built in)")->check(file_name());
    cmd->callback([a, run, kind = std::string(kind)] {
        bool searched = false;
        const Job job = job_to_export(*a, kind, searched);
        // The job's own plan is exported as it is: one that does not fit is said
        // (estimate's verdict, under --calibration and --headroom; --best finds one that fits).
        if (!searched)
            if (const auto w = own_plan_fit_warning(job, load_calibration_for(a->calibration_path),
                                                    kExportWordsCli))
                std::fprintf(stderr, "lostflops: warning: %s: %s\n", w->setting.c_str(),
                             terminal_text(w->text).c_str());
        const ExportResult r = run(job);
        for (const auto& n : r.notes)
            std::fprintf(stderr, "lostflops: %s: %s: %s\n", to_string(n.kind), terminal_text(n.setting).c_str(),
                         terminal_text(n.message).c_str());
        std::fwrite(r.text.data(), 1, r.text.size(), stdout);
    });
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
    (void)exit_code;
    auto* cmd = app.add_subcommand("export", "a job's plan as another framework's launch settings");
    cmd->require_subcommand(1);
    add_export_kind(cmd, "megatron", "Megatron-LM / Megatron-Core launch command (torchrun, one flag per line)",
                    export_megatron);
    add_export_kind(cmd, "torchtitan", "torchtitan job config (TOML)", export_torchtitan);
    // --best: the search over mesh shapes of a TPU job, in ICI x DCN axes (docs/tpu.md).
    add_export_kind(cmd, "maxtext", "MaxText config keys: the ici_*/dcn_* mesh, batch, remat", export_maxtext);
}

}  // namespace lostflops::cli
