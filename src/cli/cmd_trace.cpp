// `lostflops trace FILE_OR_DIR...`: measured breakdown of PyTorch profiler
// (Kineto) traces, one per rank; `lostflops trace merge SUMMARIES...` combines
// per-node summaries. Definitions: include/lostflops/trace.h (conventions,
// HTA compatibility) and trace_compare.h (measured MFU, walls). A progress
// line goes to standard error, only when it is a terminal (isatty(3)), once
// reading has taken over a second.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/explain.h"
#include "lostflops/host_speed.h"
#include "lostflops/job.h"
#include "lostflops/trace.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_merge.h"
#include "lostflops/trace_report.h"
#include "lostflops/trace_triage.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_stack.h"
#include "job/text_input.h"
#include "lostflops/terminal_text.h"
#include "trace/trace_text.h"

namespace lostflops::cli {
namespace {

namespace fs = std::filesystem;

struct TraceOptions {
    std::vector<std::string> inputs;
    Format format = Format::table;
    bool hta = false;
    std::string job_path;
    std::vector<std::string> overrides;
    std::string calibration_path;
    std::string summary_out;
    std::string report_out;  // --report: HTML
    unsigned threads = 0;
    std::vector<std::string> summaries;
    std::string summary_list;      // merge --list FILE
    std::string merge_report_out;  // merge --report FILE.html
    int gpus_per_node = 0;         // --gpus-per-node (0: from the traces)
    Format merge_format = Format::table;
};

struct TraceFile {
    std::string path;
    bool from_directory = false;  // a bad one is skipped with a warning, not an error
};

// A directory contributes its regular *.json / *.json.gz files (links
// followed; FIFOs, devices, sockets and broken links in it are passed over);
// anything else goes through check_input_path.
std::vector<TraceFile> expand_inputs(const std::vector<std::string>& inputs) {
    std::vector<TraceFile> files;
    // Standard input is read once: a second '-' read it empty ("empty file").
    if (std::count(inputs.begin(), inputs.end(), "-") > 1)
        throw InputError("-", "", "standard input given twice: it is read once; give files for the others");
    for (const auto& in : inputs) {
        std::error_code ec;
        if (in != "-" && fs::is_directory(in, ec)) {
            for (auto& f : trace::directory_files(in, {".json", ".json.gz"}, "*.json or *.json.gz traces"))
                files.push_back({std::move(f), true});
        } else {
            check_input_path(in, "trace file (.json or .json.gz) or a directory of them");
            files.push_back({in, false});
        }
    }
    return files;
}

// "reading traces: 3/8 files, 1.2 GB" on standard error, rewritten in place
// twice a second once a second has passed; only on a terminal.
class Progress {
public:
    explicit Progress(std::size_t files) : files_(files) {
        if (isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { loop(); });
    }
    ~Progress() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
        if (shown_) std::fputs("\r\033[K", stderr);  // clear the line (ECMA-48 EL)
    }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    void add_bytes(uint64_t n) { bytes_ += n; }
    void file_done() { ++done_; }

private:
    void loop() {
        const auto start = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(mu_);
        while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
            if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) continue;
            std::fprintf(stderr, "\rreading traces: %zu/%zu files, %.2f GB\033[K", done_.load(), files_,
                         static_cast<double>(bytes_.load()) / 1e9);
            std::fflush(stderr);
            shown_ = true;
        }
    }
    std::size_t files_;
    std::atomic<uint64_t> bytes_{0};
    std::atomic<std::size_t> done_{0};
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    bool shown_ = false;
    std::thread thread_;
};

// Reads and analyses every file, several at a time; results in input order.
std::vector<trace::RankReport> analyze_all(const std::vector<TraceFile>& files, bool hta,
                                           unsigned threads) {
    std::vector<std::vector<trace::RankReport>> all(files.size());  // a file with ranksByPid: several
    std::vector<std::exception_ptr> errors(files.size());
    std::vector<std::string> skipped(files.size());
    std::atomic<std::size_t> next{0};
    auto progress = std::make_unique<Progress>(files.size());
    trace::ReadOptions read_opts;
    read_opts.on_bytes = [p = progress.get()](uint64_t n) { p->add_bytes(n); };
    const auto work = [&] {
        for (std::size_t i = next++; i < files.size(); i = next++) {
            try {
                for (const auto& data : trace::split_ranks(trace::read_trace(files[i].path, read_opts)))
                    all[i].push_back(trace::analyze(data, trace::AnalyzeOptions{hta}));
                progress->file_done();
            } catch (const InputError& e) {
                if (files[i].from_directory) skipped[i] = e.what();
                else errors[i] = std::current_exception();
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    unsigned n = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
    n = static_cast<unsigned>(std::min<std::size_t>(n, files.size()));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    progress.reset();
    for (const auto& e : errors) {
        if (e) std::rethrow_exception(e);
    }
    std::vector<trace::RankReport> out;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (skipped[i].empty()) {
            for (auto& r : all[i]) out.push_back(std::move(r));
        } else {
            std::fprintf(stderr, "warning: skipped (not a usable trace): %s\n", terminal_text(skipped[i]).c_str());
        }
    }
    if (out.empty()) throw InputError(files.front().path, "", "none of the inputs is a usable trace");
    // Traces without distributedInfo (nor a rank in their name): the lowest
    // rank not taken, in input order.
    trace::assign_missing_ranks(out);
    // One rank, one file: the rule of `trace merge` (a rank twice names both files).
    return trace::merge_summaries({std::move(out)});
}

void write_file(const std::string& path, const std::string& text, const char* what = "summary") {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw InputError(path, "", std::string("cannot write ") + what);
    f << text;
    if (!f) throw InputError(path, "", std::string("cannot write ") + what);
}

void print_warnings(const std::vector<trace::RankReport>& ranks) {
    for (const auto& r : ranks) {
        for (const auto& w : r.warnings)
            std::fprintf(stderr, "warning: %s: %s\n", terminal_text(r.source).c_str(), terminal_text(w).c_str());
    }
}

// Prints the report in the asked format; writes the HTML page when asked.
void print_report(const trace::TraceReport& t, Format format, const std::string& html_out) {
    if (!html_out.empty()) write_file(html_out, trace_html_report(t), "report");
    std::fputs((format == Format::json ? trace::report_json(t) : trace::report_table(t)).c_str(), stdout);
}

// The job as the traces ran it (lostflops/trace_stack.h): each setting the
// traces contradict and the command line does not --set, applied to a
// reloaded job (not from standard input, read once), each named in a
// warning of the comparison; `settings` gets them as overrides.
Job traced_job(const TraceOptions& o, const Job& job, const std::vector<trace::RankReport>& ranks,
               trace::JobComparison& cmp, std::vector<std::string>& settings) {
    const bool priced = o.job_path != "-";
    const auto reread = [&o](const std::vector<std::string>& found) {
        std::vector<std::string> all = o.overrides;
        all.insert(all.end(), found.begin(), found.end());
        return check_model_keys(load_job(o.job_path, all));
    };
    const trace::TracedStack stack =
        trace::traced_stack(job, ranks, o.overrides, priced ? std::function<Job(const std::vector<std::string>&)>(reread)
                                                             : nullptr);
    const std::string& refused = stack.refused;  // why the job could not take them, if it could not
    // Each setting said once, with what became of it.
    for (const auto& s : stack.found) {
        const std::string fate =
            !priced ? std::string("a job from standard input is not read again to price it")
            : refused.empty()
                ? fmt::format("the as-profiled column prices it so (--set {}={} keeps the job's)", s.key, s.job)
                : std::string("not priced: the job cannot take the traced stack (below)");
        cmp.warnings.push_back(
            fmt::format("stack: the traces show {}={} where the job says {} ({}); {}", s.key, s.value, s.job, s.why, fate));
    }
    for (auto& n : trace::traced_notes(stack.job, ranks)) cmp.warnings.push_back(std::move(n));
    if (!refused.empty()) {
        cmp.warnings.push_back("stack: the job cannot be priced under the stack the traces show (" + refused +
                               "); the as-profiled column prices the job as given");
        return job;
    }
    if (priced) settings = stack.overrides();
    return stack.job;
}

int run_trace(const TraceOptions& o) {
    const auto files = expand_inputs(o.inputs);
    std::vector<std::string> inputs{o.job_path, o.calibration_path};
    for (const auto& f : files) inputs.push_back(f.path);
    check_output_not_input(o.summary_out, "--summary-out", inputs);
    check_output_not_input(o.report_out, "--report", inputs);
    const auto ranks = analyze_all(files, o.hta, o.threads);
    std::optional<trace::JobComparison> cmp;
    std::vector<trace::LeverHint> levers;
    if (!o.job_path.empty()) {
        const Job job = check_model_keys(load_job(o.job_path, o.overrides));
        const Calibration cal =
            o.calibration_path.empty() ? default_calibration() : load_calibration(o.calibration_path);
        const Estimate est = estimate(job, cal);
        cmp = trace::compare_with_job(ranks, job, est, o.job_path);
        // The run the traces recorded: the job under the stack they show.
        std::vector<std::string> settings;
        const Job traced = traced_job(o, job, ranks, *cmp, settings);
        // The profiler's own host time, and the host's own speed: the traced step's host ran that much slower.
        const double host_s = trace::profiler_host_s(ranks, cal.profiler_event_us);
        // The host's speed applies to framework hf only (host_speed.h estimate_as_profiled),
        // step by step where every step measures it (trace_step_host_speeds).
        const bool hf = traced.training.framework == Framework::hf;
        const double speed = hf ? trace::trace_host_speed(ranks) : 0.0;
        const auto steps = hf ? trace::trace_step_host_speeds(ranks) : std::vector<trace::StepHostSpeed>{};
        // A step at the calibration's speeds without profiler time is the plain estimate.
        std::vector<std::optional<Estimate>> got;
        bool any = false;
        for (const auto& s : steps) {
            got.push_back(estimate_as_profiled(traced, cal, host_s, s.python, s.autograd));
            any = any || got.back().has_value();
        }
        std::vector<Estimate> per_step;
        for (auto& e : got) per_step.push_back(e ? std::move(*e) : estimate(traced, cal));
        if (any)
            trace::add_profiled_prediction(*cmp, per_step, steps, host_s, speed, settings);
        else if (const auto profiled = estimate_as_profiled(traced, cal, host_s, speed))
            trace::add_profiled_prediction(*cmp, *profiled, host_s, speed, settings);
        else if (!settings.empty())
            trace::add_profiled_prediction(*cmp, estimate(traced, cal), 0.0, 0.0, settings);
        if (o.job_path != "-") {  // the levers re-load the job: not from standard input
            for (const auto& l : mfu_levers(JobSource{o.job_path, o.overrides}, job, cal, est, 3))
                levers.push_back({l.change, l.mfu_after});
        }
    }
    if (!o.summary_out.empty()) write_file(o.summary_out, trace::summary_to_json(ranks, o.summary_out));
    print_warnings(ranks);
    if (cmp)
        for (const auto& w : cmp->warnings) std::fprintf(stderr, "warning: %s\n", terminal_text(w).c_str());
    const auto cluster = trace::cluster_report(ranks, o.gpus_per_node);
    const auto items = trace::triage(cluster, cmp ? &*cmp : nullptr, levers);
    print_report(trace::TraceReport{&ranks, &cluster, &items, cmp ? &*cmp : nullptr}, o.format, o.report_out);
    return 0;
}

int run_merge(const TraceOptions& o) {
    const unsigned threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
    const auto cluster =
        trace::merge_summary_files(trace::summary_paths(o.summaries, o.summary_list), o.gpus_per_node, threads);
    const auto items = trace::triage(cluster, nullptr, {});
    print_report(trace::TraceReport{nullptr, &cluster, &items, nullptr}, o.merge_format, o.merge_report_out);
    return 0;
}

}  // namespace

void add_trace_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<TraceOptions>();
    auto* cmd = app.add_subcommand(
        "trace", "Measured breakdown of PyTorch profiler (Kineto) traces, one file per rank");
    cmd->add_option("files", opts->inputs,
                    "trace files (.json, .json.gz; '-' for standard input) or directories of them");
    add_format_option(cmd, opts->format);
    cmd->add_flag("--hta-compatible", opts->hta,
                  "use Holistic Trace Analysis' conventions (rounding, last step and "
                  "uncorrelated kernels dropped)");
    auto* job = cmd->add_option("--job", opts->job_path,
                                "job file of the traced run: measured MFU and measured vs predicted")
        ->check(file_name());
    // Without --job there is no estimate for these to change: an error, not a silent no-op.
    cmd->add_option("--set", opts->overrides, "override a job key: section.key=value (with --job; repeatable)")
        ->allow_extra_args(false)
        ->needs(job);
    cmd->add_option("--calibration", opts->calibration_path, "calibration profile (YAML; with --job)")
        ->check(file_name())->needs(job);
    cmd->add_option("--summary-out", opts->summary_out, "write a compact per-rank summary (JSON)")->check(file_name());
    cmd->add_option("--report", opts->report_out,
                    "also write a self-contained HTML report (everything the text has, as charts and tables)")
        ->check(file_name());
    cmd->add_option("--threads", opts->threads,
                    "trace (or merge: summary) files read in parallel, one per thread (default: all cores)")
        ->check(whole_number())->check(CLI::Range(0u, 1024u));
    cmd->add_option("--gpus-per-node", opts->gpus_per_node,
                    "ranks per node, for the nodes that hold the others back (default: the traces' deviceProperties)")
        ->check(whole_number())->check(CLI::Range(1, 1024));
    cmd->require_subcommand(0, 1);

    auto* merge = cmd->add_subcommand("merge", "Combine per-rank summaries written by --summary-out (thousands: "
                                               "one at a time, in bounded memory)");
    merge->add_option("summaries", opts->summaries, "summary files or directories of them ('-' for standard input)");
    merge->add_option("--list", opts->summary_list, "a file listing summary files, one per line ('-': standard input)");
    merge->add_option("--report", opts->merge_report_out, "also write a self-contained HTML report")
        ->check(file_name());
    merge->add_option("--gpus-per-node", opts->gpus_per_node, "ranks per node (default: the summaries')")
        ->check(whole_number())->check(CLI::Range(1, 1024));
    add_format_option(merge, opts->merge_format);
    merge->callback([opts, merge, &exit_code] {
        // `trace --format json merge ...`: the parent's --format, unless merge has its own.
        if (merge->get_option("--format")->count() == 0) opts->merge_format = opts->format;
        exit_code = run_merge(*opts);
    });

    add_trace_diff_command(cmd, opts->format, exit_code);
    auto* diff = cmd->get_subcommand("diff");
    add_trace_synth_command(cmd, exit_code);
    auto* synth = cmd->get_subcommand("synth");

    cmd->callback([opts, merge, diff, synth, &exit_code] {
        if (merge->parsed() || diff->parsed() || synth->parsed()) return;
        if (opts->inputs.empty()) {
            throw CLI::RequiredError("files (or the merge subcommand)");
        }
        exit_code = run_trace(*opts);
    });
}

}  // namespace lostflops::cli
