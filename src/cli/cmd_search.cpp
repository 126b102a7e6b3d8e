// `lostflops search [JOB]`: every parallel plan of the job, pruned, evaluated
// and ranked (include/lostflops/search.h); --gpus sweeps the cluster size,
// --min-gpus finds the fewest GPUs that fit, --compare places a given plan;
// --by time-to-train | cost with train_tokens re-ranks the first plans by the
// whole run (report/search_run.cpp). What a listing keeps, sorts, streams and
// re-scores, and the sweeps, are the library's (lostflops/search_listing.h),
// shared with the Python module; this file reads options and prints.
// Exit 0 when at least one plan fits, 1 when none does.

#include <algorithm>
#include <atomic>
#include <csignal>
#include <limits>
#include <optional>
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/error_report.h"
#include "cli/progress.h"
#include "interop/maxtext_export.h"
#include "lostflops/accelerator.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "lostflops/search.h"
#include "lostflops/search_listing.h"
#include "lostflops/search_report.h"

namespace lostflops::cli {

namespace {

std::atomic<bool> g_interrupted{false};
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it
extern "C" void on_sigint(int) { g_interrupted.store(true); }

struct SearchArgs {
    std::string job_path, calibration_path, format = "table", by = "throughput", top = "", gpus, compare;
    std::vector<std::string> overrides, fixes;
    bool min_gpus = false, rank_plan = false;
    int threads = 0;
    double price = 0;
};

SearchJob load_for(const SearchArgs& a, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> o = a.overrides;
    o.insert(o.end(), extra.begin(), extra.end());
    SearchJob sj = a.job_path.empty() ? default_search_job(o) : load_search_job(a.job_path, o);
    check_model_keys(sj.job);
    return sj;
}

RankBy rank_by(const std::string& s) {
    if (s == "time-to-train") return RankBy::time_to_train;
    if (s == "cost") return RankBy::cost;
    if (s == "memory") return RankBy::memory;
    return RankBy::throughput;
}

// The job on n GPUs, as the sweeps load it. An error the size causes is the
// sweep's (--gpus, or --min-gpus trying it), not a --set the user never wrote;
// a size beyond one node of a job without an inter-node network (a one-node
// job need not give one) is said as the sweep's, not as a missing key.
JobOnGpus job_on(const SearchArgs& a) {
    return [&a](int n) {
        const std::string set = fmt::format("cluster.num_gpus={}", n);
        try {
            return load_for(a, {set}).job;
        } catch (const InputError& e) {
            if (e.key() == "cluster.inter_node")
                throw InputError(a.job_path.empty() ? std::string("search") : a.job_path, e.key(),
                                 fmt::format("missing: the search reaches {} GPUs, more than one node, and the job's "
                                             "cluster gives no inter-node network; expected {{bandwidth_GBps, "
                                             "latency_us}}, or a cluster preset (lostflops list clusters)",
                                             n));
            if (e.file() != "--set " + set) throw;
            throw InputError(fmt::format("{} {}", a.min_gpus ? "--min-gpus, at" : "--gpus", n), e.key(), e.message());
        }
    };
}

// A sweep (--gpus, --min-gpus) writes the best plan of each size as a table
// or JSON: the listing's options would be accepted and do nothing (a csv
// asked for came out as JSON).
void refuse_with_sweep(const SearchArgs& a) {
    if (a.gpus.empty() && !a.min_gpus) return;
    const std::string sweep = a.min_gpus ? "--min-gpus" : "--gpus";
    if (!a.gpus.empty() && a.min_gpus)
        throw InputError("--min-gpus", "", "not with --gpus: one sweep or the other");
    const auto refuse = [&sweep](const std::string& option, const std::string& why) {
        throw InputError(option, "", "not with " + sweep + ": " + why);
    };
    if (a.format == "csv") refuse("--format csv", "a sweep is written as a table or JSON (--format json)");
    if (!a.top.empty()) refuse("--top", "a sweep gives the best plan of each size; search one size for a listing");
    if (!a.compare.empty()) refuse("--compare", "a plan is placed in one size's ranking; search one size");
    if (a.rank_plan) refuse("--rank-plan", "a plan is placed in one size's ranking; search one size");
}

void write_stdout(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// A word for a POSIX shell: as it is when it holds only safe characters,
// else in single quotes (a quote inside closed, escaped and reopened).
std::string shell_word(const std::string& w) {
    if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:+@%") ==
                          std::string::npos)
        return w;
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Whether `lostflops export KIND` runs on the job with `sets`, as the printed
// line would run it (a model that is no torchtitan flavour, a mesh MaxText
// cannot write: no line). Standard input cannot be read again: assumed so.
bool export_runs(const SearchArgs& a, const std::vector<std::string>& sets, ExportResult (*run)(const Job&)) {
    if (a.job_path == "-") return true;
    try {
        (void)run(a.job_path.empty() ? default_job(sets) : load_job(a.job_path, sets));
        return true;
    } catch (const InputError&) {
        return false;
    }
}

// After the table: the best plan as --set arguments, and the commands that
// estimate it and write its launch configuration, each one that runs.
// --rank-plan searched without the job's parallel section: the commands drop
// it too (parallel=null first), or its other keys (dp, a dispatcher's
// settings) would apply to the searched plan.
std::string best_plan_commands(const SearchArgs& a, const Job& job, const PlanScore& best) {
    std::string args = a.job_path.empty() ? "" : " " + shell_word(a.job_path);
    std::vector<std::string> sets;
    if (a.rank_plan && !a.job_path.empty()) sets.push_back("parallel=null");
    sets.insert(sets.end(), a.overrides.begin(), a.overrides.end());
    for (std::string& s : plan_set_arguments(job, best)) sets.push_back(std::move(s));
    for (const std::string& s : sets) args += " --set " + shell_word(s);
    std::string out = "\nthe best plan:\n  lostflops estimate" + args + "\n";
    const Framework f = job.training.framework;
    if ((f == Framework::megatron_lm || f == Framework::megatron_core) && export_runs(a, sets, export_megatron))
        out += "  lostflops export megatron" + args + "\n";
    // A TPU job is JAX's: its launch configuration is MaxText's keys.
    const bool tpu = xla_compiled(job.cluster.gpu.arch);
    if (f == Framework::fsdp && export_runs(a, sets, tpu ? export_maxtext : export_torchtitan))
        out += std::string(tpu ? "  lostflops export maxtext" : "  lostflops export torchtitan") + args + "\n";
    return out;
}

}  // namespace

// A search that evaluates no layout because the fixed settings (--fix and the
// job's parallel keys) break a rule is bad input: the rule is named as
// estimate names it, by loading the job with the --fix settings as its keys.
[[noreturn]] void refuse_fixed(const SearchArgs& a, const Job& searched) {
    std::vector<std::string> o = a.overrides;
    std::string given;
    for (const std::string& text : a.fixes) {
        given += (given.empty() ? "" : ",") + text;
        size_t at = 0;
        while (at < text.size()) {
            const size_t comma = std::min(text.find(',', at), text.size());
            const std::string item = text.substr(at, comma - at);
            at = comma + 1;
            if (item.find('=') == std::string::npos) continue;  // add_plan_fix refused it already
            const std::string key = item.substr(0, item.find('='));
            const std::string section = key == "micro_batch_size" ? "training." : "parallel.";
            o.push_back(section + (key == "sp" ? std::string("sequence_parallel") + item.substr(key.size()) : item));
        }
    }
    // Blamed on the --fix settings when there are some, else on the job's
    // parallel section (its file named).
    const std::string job = a.job_path.empty() ? "data/jobs/default.yaml (built in)" : a.job_path;
    const std::string source = given.empty() ? job : "--fix " + given;
    const std::string key = given.empty() ? "parallel" : "";
    try {
        (void)(a.job_path.empty() ? default_job(o) : load_job(a.job_path, o));
    } catch (const InputError& e) {
        // A job without a parallel section fails to load for that alone: it
        // names no rule (the search was free), so the rules are named below.
        if (!is_missing_plan(e))
            throw InputError(source, key,
                             std::string(kNoPlanCanBeSearched) + (e.key().empty() ? "" : e.key() + ": ") + e.message());
        if (given.empty())
            throw InputError(source, "",
                             fmt::format("{}no layout of tp x cp x pp x dp = {} GPUs passes the "
                                         "divisibility rules (among them: dp x micro_batch_size divides the global batch "
                                         "of {} sequences, tp the attention heads, pp x vpp stages split the {} "
                                         "layers; docs/search.md)",
                                         kNoPlanCanBeSearched, searched.cluster.num_gpus,
                                         searched.training.global_batch, searched.model.layers));
    }
    throw InputError(source, key, "the fixed settings and the divisibility rules leave no layout to evaluate "
                                  "(lostflops estimate with them as --set parallel.KEY=VALUE names the rule)");
}

void add_search_command(CLI::App& app, int& exit_code) {
    auto a = std::make_shared<SearchArgs>();
    auto* cmd = app.add_subcommand("search", "search every parallel plan of a job and rank those that fit "
                                             "(exit 1 when none fits)");
    cmd->add_option("job", a->job_path,
                    "job file; keys under parallel: are fixed, the rest searched (default: the built-in job's "
                    "model, cluster and training)")->check(file_name());
    cmd->add_option("--set", a->overrides, "override a key: section.key=value (repeatable)")->allow_extra_args(false);
    add_headroom_option(cmd, a->overrides);
    cmd->add_option("--calibration", a->calibration_path, "calibration profile (YAML; default: built in)")
        ->check(file_name());
    cmd->add_option("--format", a->format, "output format (default: table)")
        ->check(CLI::IsMember({"table", "json", "csv"}).description(""))
        ->type_name("{table,json,csv}");
    cmd->add_option("--fix", a->fixes, "settings not to search, e.g. tp=8,zero=1 (repeatable)")
        ->check(not_empty("settings, e.g. tp=8,zero=1"))
        ->allow_extra_args(false);
    cmd->add_option("--by", a->by, "rank by (default: throughput = tokens/s per GPU)")
        ->check(CLI::IsMember({"throughput", "time-to-train", "cost", "memory"}).description(""))
        ->type_name("{throughput,time-to-train,cost,memory}");
    cmd->add_option("--top", a->top, "plans listed: N or all (default: 5)")->check(not_empty("a positive count or all"));
    cmd->add_option("--gpus", a->gpus, "sweep the cluster size: 512..16384 (doubling) or 512,1024,4096")
        ->check(not_empty("GPU counts, e.g. 512..16384 or 512,1024,4096"));
    cmd->add_flag("--min-gpus", a->min_gpus, "the fewest GPUs on which the job fits, and the best plan there");
    cmd->add_option("--compare", a->compare, "where this plan ranks and why, e.g. \"tp=8,pp=16,zero=1\"")
        ->check(not_empty("a plan, e.g. tp=8,pp=16,zero=1"));
    cmd->add_flag("--rank-plan", a->rank_plan,
                  "search every plan (the job's parallel section freed) and place the job's own plan, as --compare");
    cmd->add_option("--threads", a->threads, "worker threads (default: all cores)")
        ->check(whole_number())
        ->check(CLI::Range(0, 256));
    cmd->add_option("--gpu-hour-price", a->price, "money per GPU-hour, for --by cost")->check(finite_range(0, 1e6));
    cmd->callback([a, &exit_code] {
        // One price: --gpu-hour-price is the run's price too (cost per
        // billion tokens and the whole run's cost), else the job's own.
        if (a->price > 0) a->overrides.push_back(fmt::format("run.price_per_gpu_hour={}", a->price));
        refuse_with_sweep(*a);
        std::optional<PlanFix> compare;
        SearchJob sj;
        if (a->rank_plan) {
            // The job's own plan, checked as estimate checks it, then searched freely.
            const Job given = a->job_path.empty() ? default_job(a->overrides) : load_job(a->job_path, a->overrides);
            sj = a->job_path.empty()
                     ? default_search_job(a->overrides)
                     : load_search_job(a->job_path, a->overrides, SearchJobPlan::ignore);
            sj.job.plan = given.plan;  // engine keys (grad_fp32, zero_*) as the job gives them
            // but not its stage layout: the search tries its own beside the even split.
            sj.job.plan.layout = nullptr;
            sj.job.plan.first_stage_layers = sj.job.plan.last_stage_layers = -1;
            compare = plan_fix_all(given);
        } else {
            sj = load_for(*a);
        }
        PlanFix fix = plan_fix_from(sj);
        std::map<std::string, std::string> fixed;  // over every --fix: a setting given twice is refused
        for (const std::string& f : a->fixes) add_plan_fix(fix, f, "--fix " + f, &fixed);
        if (sj.micro_batch_given && !fix.micro_batch && !a->job_path.empty())
            std::fprintf(stderr, "lostflops: note: training.micro_batch_size is searched; "
                                 "--fix micro_batch_size=N keeps it\n");
        const Calibration cal = load_calibration_for(a->calibration_path);
        const bool table = a->format == "table";
        ListingRequest req;  // the listing's policy is the library's (lostflops/search_listing.h)
        req.by = rank_by(a->by);
        req.format = table ? ListingFormat::table : a->format == "json" ? ListingFormat::json : ListingFormat::csv;
        if (a->top == "all") {
            req.top = 0;
        } else if (!a->top.empty()) {
            const auto n = strict_count(a->top, 1, std::numeric_limits<long>::max());
            if (!n) throw InputError("--top", "", fmt::format("'{}': expected a positive count or all", a->top));
            req.top = static_cast<size_t>(*n);
        }
        SearchOptions opts;
        opts.fix = fix;
        opts.by = req.by;
        opts.threads = a->threads;
        g_interrupted = false;
        opts.cancel = &g_interrupted;
        const auto previous = std::signal(SIGINT, on_sigint);
        // Progress on stderr (cli/progress.h): after a second on a terminal, a line every 5 s otherwise.
        std::optional<Progress> progress;
        if (!g_quiet) {
            progress.emplace("search");
            opts.progress = [&progress](double share) { progress->set(share); };
        }
        const auto done_progress = [&progress] { progress.reset(); };
        if (!a->gpus.empty() || a->min_gpus) {
            std::vector<SweepPoint> points;
            if (a->min_gpus) {
                points = min_gpus_sweep(sj.job, job_on(*a), cal, opts);
            } else {
                const std::vector<int> sizes = gpu_list(a->gpus);
                // The share over the whole list: sizes done plus the share of
                // the one at; the line names the size it is at.
                const auto what = [&sizes](size_t i) {
                    return fmt::format("search: {} GPUs (size {} of {})", sizes[i], i + 1, sizes.size());
                };
                std::atomic<size_t> at{0};
                if (progress)
                    opts.progress = [&progress, &at, &sizes](double share) {
                        progress->set((static_cast<double>(at.load()) + share) / static_cast<double>(sizes.size()));
                    };
                points = sweep_sizes(job_on(*a), cal, opts, sizes, [&](size_t i) {
                    at = i;
                    if (progress) progress->rename(what(i));
                });
            }
            done_progress();
            std::signal(SIGINT, previous);
            if (a->format == "table") std::printf("%s", sweep_table(points).c_str());
            else std::printf("%s\n", sweep_json_text(points).c_str());
            bool any = false;
            for (const auto& p : points) any |= p.best.has_value();
            exit_code = static_cast<int>(any ? ExitCode::ok : ExitCode::does_not_fit);
            if (g_interrupted) exit_code = kExitInterrupted;
            return;
        }
        if (!a->compare.empty()) {
            compare = PlanFix{};
            add_plan_fix(*compare, a->compare, "--compare " + a->compare);
        }
        req.keep_every_plan = compare.has_value();
        const Listing listing = search_listing(sj.job, cal, opts, req);
        const SearchResult& r = listing.result;
        done_progress();
        std::signal(SIGINT, previous);
        if (r.ranked.empty() && r.counts.evaluated == 0 && r.counts.pruned_memory == 0 && !r.cancelled) refuse_fixed(*a, sj.job);
        const PlanChunks plans = listing_plans(sj.job, cal, listing);
        SearchView view = listing.view;
        if (a->rank_plan && !a->job_path.empty()) view.set_first = {"parallel=null"};  // as best_plan_commands
        if (table) {
            std::printf("%s", search_table(sj.job, cal, r, listing.view).c_str());
        } else if (a->format == "json") {
            search_json(sj.job, cal, r, view, write_stdout, plans);
        } else {
            search_csv(sj.job, r, listing.view, write_stdout, plans);
            std::fprintf(stderr, "lostflops: %lld enumerated, %lld pruned (divisibility), %lld pruned (memory), "
                                 "%lld evaluated, %lld skipped (floor)\n", static_cast<long long>(r.counts.enumerated),
                         static_cast<long long>(r.counts.pruned_divisibility),
                         static_cast<long long>(r.counts.pruned_memory), static_cast<long long>(r.counts.evaluated),
                         static_cast<long long>(r.counts.skipped));
        }
        if (table && !r.ranked.empty() && !r.cancelled)
            std::printf("%s", best_plan_commands(*a, sj.job, plan_score(sj.job, r, r.ranked.front())).c_str());
        if (compare) {
            const Comparison c = compare_plan(sj.job, cal, r, *compare, req.by);
            if (table) std::printf("\n%s", comparison_table(c).c_str());
            else std::fprintf(stderr, "%s", comparison_table(c).c_str());
        }
        exit_code = static_cast<int>(r.ranked.empty() ? ExitCode::does_not_fit : ExitCode::ok);
        if (r.cancelled) exit_code = kExitInterrupted;
    });
}

}  // namespace lostflops::cli
