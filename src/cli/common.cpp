// Options shared by the subcommands: --format, and those of the commands that
// read a job; which --format the command line asked for (for main's errors);
// the --gpus list of search and report; an output file that is an input
// (compared by device and inode, stat(2)); the final check that standard
// output was written (fflush(3)/ferror(3): a write error is sticky).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/error_report.h"
#include "lostflops/pipeline_schedules.h"
#include "lostflops/error.h"
#include "lostflops/job.h"
#include "lostflops/search.h"
#include "lostflops/search_listing.h"
#include "lostflops/search_report.h"
#include "lostflops/terminal_text.h"

namespace lostflops::cli {

CLI::Option* add_format_option(CLI::App* cmd, Format& format) {
    // A string checked against the two names (not an enum transform, whose
    // help prints the map and which would also accept 0 and 1).
    return cmd
        ->add_option_function<std::string>(
            "--format", [&format](const std::string& v) { format = v == "json" ? Format::json : Format::table; },
            "output format (default: table)")
        ->check(CLI::IsMember({"table", "json"}).description(""))
        ->type_name("{table,json}");
}

Format requested_format(const CLI::App& app) {
    std::vector<const CLI::App*> chain{&app};
    while (!chain.back()->get_subcommands().empty()) chain.push_back(chain.back()->get_subcommands().front());
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const CLI::Option* opt = (*it)->get_option_no_throw("--format");
        if (opt == nullptr || opt->count() == 0 || opt->results().empty()) continue;
        return opt->results().back() == "json" ? Format::json : Format::table;
    }
    return Format::table;
}

void add_job_options(CLI::App* cmd, JobOptions& opts) {
    cmd->add_option("job", opts.job_path,
                    "job file (YAML or JSON; - for standard input); the built-in default job "
                    "(data/jobs/default.yaml) when absent")->check(file_name());
    // One value per --set, so `--set k=v JOB` leaves JOB to the positional.
    cmd->add_option("--set", opts.overrides, "override a key: section.key=value (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--calibration", opts.calibration_path, "calibration profile (YAML; default: built in)")
        ->check(file_name());
    add_format_option(cmd, opts.format);
    add_best_flag(cmd, opts.best);
    add_headroom_option(cmd, opts.overrides);
}

void add_headroom_option(CLI::App* cmd, std::vector<std::string>& overrides) {
    cmd->add_option_function<std::string>(
           "--headroom",
           [&overrides](const std::string& v) { overrides.push_back("cluster.memory_headroom=" + v); },
           "memory every GPU must keep free above the predicted peak: GiB (6) or a share of the usable memory "
           "(10%); the job key cluster.memory_headroom (default: none)")
        ->type_name("GIB|PCT%");
}

void add_best_flag(CLI::App* cmd, bool& best) {
    cmd->add_flag("--best", best,
                  "the best plan `lostflops search` finds for the job (by throughput; the job's parallel keys kept, its "
                  "framework's rules) instead of its own plan; a job without a parallel section is searched anyway");
}

std::vector<std::string> overrides_with_plan(const std::string& job_path, const std::vector<std::string>& overrides,
                                             const std::string& calibration_path, bool best) {
    bool missing = false;
    if (!best && job_path == "-") return overrides;  // standard input is read once
    if (!best) {
        try {
            (void)(job_path.empty() ? default_job(overrides) : load_job(job_path, overrides));
            return overrides;
        } catch (const InputError& e) {
            if (!is_missing_plan(e)) throw;
            missing = true;
        }
    }
    if (job_path == "-")
        throw InputError("-", "parallel", "searching the plan reads the job twice; give a file, not standard input");
    const SearchJob sj = job_path.empty() ? default_search_job(overrides) : load_search_job(job_path, overrides);
    check_model_keys(sj.job);  // --strict refuses an unmodelled key before the search, not after it
    const std::string source = job_path.empty() ? "data/jobs/default.yaml (built in)" : job_path;
    const SearchedPlan won = [&] {
        try {
            return searched_plan(sj, load_calibration_for(calibration_path), source);
        } catch (const InputError& e) {
            if (e.message().rfind(kNoPlanCanBeSearched, 0) != 0) throw;
            // The rule the fixed keys break, named as estimate names it.
            try {
                (void)(job_path.empty() ? default_job(overrides) : load_job(job_path, overrides));
            } catch (const InputError& rule) {
                if (!is_missing_plan(rule))
                    throw InputError(source, "parallel",
                                     std::string(kNoPlanCanBeSearched) + (rule.key().empty() ? "" : rule.key() + ": ") +
                                         rule.message());
            }
            throw;
        }
    }();
    for (const PlanNote& note : searched_plan_notes(won, source, missing))
        std::fprintf(stderr, "lostflops: note: %s\n", terminal_text(note.text).c_str());
    std::vector<std::string> out = overrides;
    out.insert(out.end(), won.sets.begin(), won.sets.end());
    return out;
}

bool g_strict = false;

const Job& check_model_keys(const Job& job) {
    if (!job.model.not_modelled) return job;
    static std::set<std::string> warned;
    using Kind = Model::NotModelled::Kind;
    for (const auto& n : *job.model.not_modelled) {
        // --strict refuses what is not modelled or guessed; a key the family's
        // own code leaves out is read as that code reads it, and only said.
        if (g_strict && n.kind == Kind::not_modelled)
            throw InputError(job.source, "model." + n.key, "not modelled: " + n.why + " (--strict)");
        if (g_strict && n.kind == Kind::assumed) throw InputError(job.source, "model." + n.key, n.why + " (--strict)");
        if (!warned.insert(n.key).second) continue;
        if (n.kind == Kind::not_modelled)
            std::fprintf(stderr, "lostflops: warning: not modelled: %s (%s)\n", terminal_text(n.key).c_str(),
                         terminal_text(n.why).c_str());
        else
            std::fprintf(stderr, "lostflops: warning: model.%s: %s\n", terminal_text(n.key).c_str(),
                         terminal_text(n.why).c_str());
    }
    return job;
}

Job load_job_for(const JobOptions& opts) {
    const std::vector<std::string> o = overrides_with_plan(opts.job_path, opts.overrides, opts.calibration_path, opts.best);
    if (opts.job_path.empty()) return check_model_keys(default_job(o));
    return check_model_keys(load_job(opts.job_path, o));
}

std::vector<int> gpu_list(const std::string& text) {
    // Each size is a whole search (up to seconds for a large job): a sweep
    // holds at most kMaxSweepSizes of them, 20 doublings (1..1000000) and
    // more than any scaling curve plots.
    constexpr size_t kMaxSweepSizes = 64;
    const auto num = [&](const std::string& s) {
        if (const auto v = strict_count(s, 1, 1'000'000)) return static_cast<int>(*v);
        throw InputError("--gpus", "", fmt::format("'{}': expected a GPU count from 1 to 1000000", s));
    };
    std::vector<int> out;
    if (const auto dots = text.find(".."); dots != std::string::npos) {
        const int lo = num(text.substr(0, dots)), hi = num(text.substr(dots + 2));
        if (lo > hi) throw InputError("--gpus", "", fmt::format("{}..{}: the first count is above the last", lo, hi));
        for (long n = lo; n <= hi; n *= 2) out.push_back(static_cast<int>(n));
        return out;
    }
    const size_t sizes = static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1;
    if (sizes > kMaxSweepSizes)
        throw InputError("--gpus", "",
                         fmt::format("{} sizes: a sweep searches each, at most {} (a range A..B doubles from A to B)",
                                     sizes, kMaxSweepSizes));
    size_t at = 0;
    while (at <= text.size()) {
        const size_t comma = text.find(',', at);
        out.push_back(num(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

std::optional<long> strict_count(const std::string& text, long lo, long hi) {
    // std::stol would skip leading space and take a sign: " 5" and "+5" were counts.
    long v = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || text.front() == '-' || ec != std::errc() || ptr != end || v < lo || v > hi) return std::nullopt;
    return v;
}

CLI::Validator whole_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
            return digits ? "" : fmt::format("'{}': expected a whole number (digits only)", text);
        },
        "");
}

CLI::Validator file_name() {
    return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "empty file name" : ""; }, "");
}

CLI::Validator not_empty(const std::string& expected) {
    return CLI::Validator(
        [expected](std::string& text) -> std::string {
            return text.find_first_not_of(" \t") == std::string::npos ? "empty; expected " + expected : "";
        },
        "");
}

CLI::Validator finite_range(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v))
                return fmt::format("'{}': expected a finite number from {:g} to {:g}", text, lo, hi);
            if (v < lo || v > hi) return fmt::format("{} is out of range; expected {:g} to {:g}", text, lo, hi);
            return "";
        },
        fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

void check_output_not_input(const std::string& output, const std::string& flag,
                            const std::vector<std::string>& inputs) {
    struct stat out {};
    if (output.empty() || output == "-" || ::stat(output.c_str(), &out) != 0) return;
    for (const auto& in : inputs) {
        struct stat st {};
        if (in.empty() || in == "-" || ::stat(in.c_str(), &st) != 0) continue;
        if (st.st_dev == out.st_dev && st.st_ino == out.st_ino)
            throw InputError(flag, "",
                             fmt::format("{} is the input {}: writing it would destroy what is read; give another file",
                                         output, in));
    }
}

int finish_stdout(int code) {
    errno = 0;
    std::cout.flush();
    const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout;
    if (!failed) return code;
    const int err = errno != 0 ? errno : EIO;
    std::fprintf(stderr, "lostflops: error: writing standard output: %s; the output is incomplete\n",
                 std::strerror(err));
    // An error the command already reported (2, 3, 130) keeps its code.
    return code >= static_cast<int>(ExitCode::bad_input) ? code : static_cast<int>(ExitCode::bad_input);
}

Calibration load_calibration_for(const std::string& path) {
    return path.empty() ? default_calibration() : load_calibration(path);
}

}  // namespace lostflops::cli
