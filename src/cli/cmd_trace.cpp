// `lostflops trace FILE_OR_DIR...`: measured breakdown of PyTorch profiler
// (Kineto) traces, one per rank; `lostflops trace merge SUMMARIES...` combines
// per-node summaries. Definitions: include/lostflops/trace.h (conventions,
// HTA compatibility) and trace_compare.h (measured MFU, walls).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"
#include "lostflops/trace.h"
#include "lostflops/trace_compare.h"
#include "lostflops/trace_report.h"

namespace lostflops::cli {
namespace {

namespace fs = std::filesystem;

struct TraceOptions {
    std::vector<std::string> inputs;
    std::string format = "table";
    bool hta = false;
    std::string job_path;
    std::vector<std::string> overrides;
    std::string calibration_path;
    std::string summary_out;
    unsigned threads = 0;
    std::vector<std::string> summaries;
    std::string merge_format = "table";
};

bool is_trace_name(const std::string& n) {
    const auto ends = [&](const char* s) {
        const std::string suf(s);
        return n.size() >= suf.size() && n.compare(n.size() - suf.size(), suf.size(), suf) == 0;
    };
    return ends(".json") || ends(".json.gz");
}

struct TraceFile {
    std::string path;
    bool from_directory = false;  // a bad one is skipped with a warning, not an error
};

std::vector<TraceFile> expand_inputs(const std::vector<std::string>& inputs) {
    std::vector<TraceFile> files;
    for (const auto& in : inputs) {
        std::error_code ec;
        if (fs::is_directory(in, ec)) {
            std::vector<std::string> found;
            for (const auto& e : fs::directory_iterator(in, ec)) {
                if (e.is_regular_file() && is_trace_name(e.path().filename().string())) {
                    found.push_back(e.path().string());
                }
            }
            if (ec) throw InputError(in, "", "cannot list directory: " + ec.message());
            if (found.empty()) throw InputError(in, "", "no *.json or *.json.gz traces in directory");
            std::sort(found.begin(), found.end());
            for (auto& f : found) files.push_back({std::move(f), true});
        } else if (fs::exists(in, ec)) {
            files.push_back({in, false});
        } else {
            throw InputError(in, "", "no such file or directory");
        }
    }
    return files;
}

// Reads and analyses every file, several at a time; results in input order.
std::vector<trace::RankReport> analyze_all(const std::vector<TraceFile>& files, bool hta,
                                           unsigned threads) {
    std::vector<trace::RankReport> all(files.size());
    std::vector<std::exception_ptr> errors(files.size());
    std::vector<std::string> skipped(files.size());
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
        for (std::size_t i = next++; i < files.size(); i = next++) {
            try {
                const auto data = trace::read_trace(files[i].path);
                all[i] = trace::analyze(data, trace::AnalyzeOptions{hta});
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
    for (const auto& e : errors) {
        if (e) std::rethrow_exception(e);
    }
    std::vector<trace::RankReport> out;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (skipped[i].empty()) {
            out.push_back(std::move(all[i]));
        } else {
            std::fprintf(stderr, "warning: skipped (not a usable trace): %s\n", skipped[i].c_str());
        }
    }
    if (out.empty()) throw InputError(files.front().path, "", "none of the inputs is a usable trace");
    // Traces without distributedInfo (nor a rank in their name): the lowest
    // rank not taken, in input order.
    std::set<int> taken;
    for (const auto& r : out) if (r.rank >= 0) taken.insert(r.rank);
    int free_rank = 0;
    for (auto& r : out) {
        if (r.rank >= 0) continue;
        while (taken.count(free_rank) > 0) ++free_rank;
        r.rank = free_rank;
        taken.insert(free_rank);
        r.warnings.push_back("rank " + std::to_string(free_rank) + " assigned by file order");
    }
    std::stable_sort(out.begin(), out.end(), [](const trace::RankReport& a, const trace::RankReport& b) {
        return a.rank < b.rank;
    });
    return out;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw InputError(path, "", "cannot write summary");
    f << text;
    if (!f) throw InputError(path, "", "cannot write summary");
}

void print_warnings(const std::vector<trace::RankReport>& ranks) {
    for (const auto& r : ranks) {
        for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s: %s\n", r.source.c_str(), w.c_str());
    }
}

int run_trace(const TraceOptions& o) {
    const auto files = expand_inputs(o.inputs);
    const auto ranks = analyze_all(files, o.hta, o.threads);
    std::optional<trace::JobComparison> cmp;
    if (!o.job_path.empty()) {
        const Job job = load_job(o.job_path, o.overrides);
        const Calibration cal =
            o.calibration_path.empty() ? default_calibration() : load_calibration(o.calibration_path);
        const Estimate est = estimate(job, cal);
        const double peak = job.cluster.gpu.peak_tflops(job.training.precision) * 1e12;
        cmp = trace::compare_with_estimate(ranks, est, job.cluster.num_gpus, peak, o.job_path);
    }
    if (!o.summary_out.empty()) write_file(o.summary_out, trace::summary_to_json(ranks));
    print_warnings(ranks);
    const auto stragglers = trace::find_stragglers(ranks);
    if (o.format == "json") {
        std::fputs(trace::report_json(ranks, stragglers, cmp ? &*cmp : nullptr).c_str(), stdout);
    } else {
        std::fputs(trace::report_table(ranks, stragglers, cmp ? &*cmp : nullptr).c_str(), stdout);
    }
    return 0;
}

int run_merge(const TraceOptions& o) {
    std::vector<std::vector<trace::RankReport>> parts;
    for (const auto& s : o.summaries) parts.push_back(trace::load_summary(s));
    const auto ranks = trace::merge_summaries(parts);
    if (ranks.empty()) throw InputError(o.summaries.front(), "ranks", "the summaries hold no ranks");
    const auto stragglers = trace::find_stragglers(ranks);
    if (o.merge_format == "json") {
        std::fputs(trace::report_json(ranks, stragglers, nullptr).c_str(), stdout);
    } else {
        std::fputs(trace::report_table(ranks, stragglers, nullptr).c_str(), stdout);
    }
    return 0;
}

}  // namespace

void add_trace_command(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<TraceOptions>();
    auto* cmd = app.add_subcommand(
        "trace", "Measured breakdown of PyTorch profiler (Kineto) traces, one file per rank");
    cmd->add_option("files", opts->inputs, "trace files (.json, .json.gz) or directories of them");
    cmd->add_option("--format", opts->format, "output format")
        ->check(CLI::IsMember({"table", "json"}))->capture_default_str();
    cmd->add_flag("--hta-compatible", opts->hta,
                  "use Holistic Trace Analysis' conventions (rounding, last step and "
                  "uncorrelated kernels dropped)");
    cmd->add_option("--job", opts->job_path, "job file of the traced run: measured MFU and measured vs predicted");
    cmd->add_option("--set", opts->overrides, "override a job key: section.key=value");
    cmd->add_option("--calibration", opts->calibration_path, "calibration profile (YAML)");
    cmd->add_option("--summary-out", opts->summary_out, "write a compact per-rank summary (JSON)");
    cmd->add_option("--threads", opts->threads, "files read in parallel (default: all cores)");
    cmd->require_subcommand(0, 1);

    auto* merge = cmd->add_subcommand("merge", "Combine per-rank summaries written by --summary-out");
    merge->add_option("summaries", opts->summaries, "summary files")->required();
    merge->add_option("--format", opts->merge_format, "output format")
        ->check(CLI::IsMember({"table", "json"}))->capture_default_str();
    merge->callback([opts, &exit_code] { exit_code = run_merge(*opts); });

    cmd->callback([opts, cmd, merge, &exit_code] {
        if (merge->parsed()) return;
        if (opts->inputs.empty()) {
            throw CLI::RequiredError("files (or the merge subcommand)");
        }
        exit_code = run_trace(*opts);
    });
    (void)cmd;
}

}  // namespace lostflops::cli
