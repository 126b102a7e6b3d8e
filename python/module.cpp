// pybind11 bindings of lostflops_core for the Python package (python/lostflops):
// estimate, search, trace, import and export here, the other commands in
// commands.cpp. Each function takes plain strings and lists, calls the same
// library the CLI calls (no subprocess; search's listing policy is
// search_listing.h, as for the CLI) and returns the JSON text the CLI would
// print, which the package turns into dicts. InputError becomes lostflops.LostflopsError, a
// ValueError subclass carrying file, key and message. Sources: pybind11 2.10
// documentation, "Registering custom translators" (exceptions). Inputs are
// checked as the command line checks them: the same size bounds for text
// given in place of a file, ranges of counts, and Ctrl-C during a search
// (pybind11 FAQ, "How can I properly handle Ctrl-C in long-running functions?":
// PyErr_CheckSignals with the GIL held).
#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "interop/maxtext_export.h"
#include "lostflops/export_search.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/search.h"
#include "lostflops/search_listing.h"
#include "lostflops/search_report.h"
#include "lostflops/trace.h"
#include "lostflops/trace_merge.h"
#include "lostflops/trace_report.h"
#include "job/hardware_bounds.h"
#include "job/text_input.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_triage.h"

namespace py = pybind11;
using namespace lostflops;

namespace lostflops::pybind {

// Text given in place of a file gets the file's size bound (job/text_input.h):
// a 2-million-element list as a dict took 1.15 GB.
const std::string& bounded_text(const std::string& text, const std::string& source, std::size_t max_bytes) {
    if (text.size() > max_bytes)
        throw InputError(source, "", fmt::format("more than {} bytes ({} MiB), the bound of the file it stands for",
                                                 max_bytes, max_bytes >> 20));
    return text;
}

// job: None = the built-in default; else a path, or the job's text (JSON or
// YAML) when is_text. An empty path is an error (it was the default job).
Job job_from(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set) {
    if (!job) return default_job(set);
    if (is_text) return parse_job(bounded_text(*job, "<dict>", kMaxJobBytes), "<dict>", set);
    return load_job(*job, set);
}

SearchJob search_job_from(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set) {
    if (!job) return default_search_job(set);
    if (is_text)
        return parse_search_job(bounded_text(*job, "<dict>", kMaxJobBytes), "<dict>", set,
                                SearchJobPlan::fixed_where_given);
    return load_search_job(*job, set);
}

Calibration calibration_from(const std::string& path) {
    return path.empty() ? default_calibration() : load_calibration(path);
}

// A note of a searched plan as the module's warnings carry it: kind "note".
void append_note(py::list& notes, const PlanNote& note) {
    py::dict d;
    d["kind"] = "note";
    d["setting"] = note.setting;
    d["message"] = note.text;
    notes.append(d);
}

std::vector<std::string> planned_set(const std::optional<std::string>& job, bool is_text,
                                     const std::vector<std::string>& set, const Calibration& cal, bool best,
                                     py::list& notes) {
    bool missing = false;
    if (!best) {
        try {
            (void)job_from(job, is_text, set);
            return set;
        } catch (const InputError& e) {
            if (!is_missing_plan(e)) throw;
            missing = true;
        }
    }
    const SearchJob sj = search_job_from(job, is_text, set);
    const std::string source = !job ? "data/jobs/default.yaml (built in)" : is_text ? "<dict>" : *job;
    const SearchedPlan won = [&] {
        py::gil_scoped_release release;
        return searched_plan(sj, cal, source);
    }();
    for (const PlanNote& note : searched_plan_notes(won, source, missing)) append_note(notes, note);
    std::vector<std::string> out = set;
    out.insert(out.end(), won.sets.begin(), won.sets.end());
    return out;
}

// The text of an import: read from `input` when it is a path (the same bounds
// and checks as the command line), else `input` itself, bounded.
std::pair<std::string, std::string> import_input(const std::string& input, bool is_path, const char* what) {
    if (is_path) return {read_text_file(input, kMaxJobBytes, what), input_name(input)};
    return {bounded_text(input, "<text>", kMaxJobBytes), "<text>"};
}

}  // namespace lostflops::pybind

using namespace lostflops::pybind;

namespace {

ImportOptions import_options(int num_gpus) {
    if (num_gpus < 0 || num_gpus > bounds::kMaxGpus)
        throw InputError("num_gpus", "", fmt::format("{}: expected 0 (the input says) or 1 to {}", num_gpus,
                                                     bounds::kMaxGpus));
    ImportOptions o;
    o.num_gpus = num_gpus;
    return o;
}


py::list notes_list(const std::vector<ImportNote>& notes) {
    py::list l;
    for (const auto& n : notes) {
        py::dict d;
        d["kind"] = to_string(n.kind);
        d["setting"] = n.setting;
        d["message"] = n.message;
        l.append(d);
    }
    return l;
}

// `lostflops estimate [--best] --format json`: the estimate and the job's
// warnings, and the notes the command line writes to stderr (a searched
// plan); advice "if_cheap" (the command line's default), "full" (--advice)
// or "none".
py::tuple estimate_text(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set,
                        const std::string& calibration, const std::string& schedule, const std::string& advice,
                        bool best) {
    if (schedule != "closed" && schedule != "simulate")
        throw InputError("schedule", "", "expected closed or simulate, got '" + schedule + "'");
    if (advice != "none" && advice != "if_cheap" && advice != "full")
        throw InputError("advice", "", "expected False, 'if_cheap' or True, got '" + advice + "'");
    const Calibration cal = calibration_from(calibration);
    py::list notes;
    const Job j = job_from(job, is_text, planned_set(job, is_text, set, cal, best, notes));
    const std::string out = [&] {
        py::gil_scoped_release release;
        const Estimate e =
            estimate(j, cal, schedule == "simulate" ? ScheduleModel::simulation : ScheduleModel::closed_form);
        const std::optional<AdviceSearch> mode = advice == "none"   ? std::nullopt
                                                 : advice == "full" ? std::optional(AdviceSearch::full)
                                                                    : std::optional(AdviceSearch::if_cheap);
        return json_text(estimate_json(j, e, estimate_extras(j, e, cal, mode)));
    }();
    return py::make_tuple(out, notes);
}

RankBy rank_by(const std::string& by) {
    if (by == "throughput") return RankBy::throughput;
    if (by == "time-to-train") return RankBy::time_to_train;
    if (by == "cost") return RankBy::cost;
    if (by == "memory") return RankBy::memory;
    throw InputError("by", "", "expected throughput, time-to-train, cost or memory, got '" + by + "'");
}

// Ctrl-C: Python sees SIGINT only when the interpreter runs, so the progress
// callback (on this thread, about ten times a second) takes the GIL and asks;
// a pending KeyboardInterrupt stops the search and is raised after it.
struct Interruptible {
    std::atomic<bool> cancel{false};
    bool interrupted = false;
    void arm(SearchOptions& opts) {
        opts.cancel = &cancel;
        opts.progress = [this](double) {
            py::gil_scoped_acquire gil;
            if (PyErr_CheckSignals() != 0) {
                interrupted = true;
                cancel = true;
            }
        };
    }
};

// `lostflops search --format json --top N [--fix ...] [--by B]
// [--gpu-hour-price P] [--gpus LIST | --min-gpus]`, by the library's listing
// policy (search_listing.h) as the command line.
std::string search_text(const std::optional<std::string>& job, bool is_text, std::vector<std::string> set,
                        const std::vector<std::string>& fixes, const std::string& by, size_t top,
                        const std::string& calibration, const std::vector<int>& gpus, bool min_gpus, double price) {
    if (!(price >= 0 && price <= 1e6)) throw InputError("gpu_hour_price", "", "expected a price from 0 to 1e6");
    // One price: it is the run's price too, as --gpu-hour-price.
    if (price > 0) set.push_back(fmt::format("run.price_per_gpu_hour={}", price));
    const SearchJob sj = search_job_from(job, is_text, set);
    PlanFix fix = plan_fix_from(sj);
    for (const auto& f : fixes) add_plan_fix(fix, f, "--fix " + f);
    const Calibration cal = calibration_from(calibration);
    SearchOptions opts;
    opts.fix = fix;
    opts.by = rank_by(by);
    Interruptible stop;
    stop.arm(opts);
    std::string out;
    if (!gpus.empty() || min_gpus) {
        for (const int n : gpus)
            if (n < 1 || n > bounds::kMaxGpus)
                throw InputError("gpus", "", fmt::format("{}: expected a GPU count from 1 to 1000000", n));
        const JobOnGpus job_on = [&](int n) {
            std::vector<std::string> on = set;
            on.push_back(fmt::format("cluster.num_gpus={}", n));
            return search_job_from(job, is_text, on).job;
        };
        {
            py::gil_scoped_release release;
            const std::vector<SweepPoint> points =
                min_gpus ? min_gpus_sweep(sj.job, job_on, cal, opts) : sweep_sizes(job_on, cal, opts, gpus);
            out = sweep_json_text(points);
        }
        if (stop.interrupted) throw py::error_already_set();
        return out;
    }
    ListingRequest req;
    req.by = opts.by;
    req.top = top;
    req.format = ListingFormat::json;
    {
        py::gil_scoped_release release;
        const Listing listing = search_listing(sj.job, cal, opts, req);
        if (!stop.interrupted)
            search_json(sj.job, cal, listing.result, listing.view, [&out](std::string_view s) { out.append(s); },
                        listing_plans(sj.job, cal, listing));
    }
    if (stop.interrupted) throw py::error_already_set();
    return out;
}

// `lostflops trace --format json FILE...`: one rank per file (per pid with ranksByPid); files without a
// rank of their own get the lowest free rank in order, as the CLI does.
std::string trace_text(const std::vector<std::string>& paths, bool hta_compatible) {
    if (paths.empty()) throw InputError("trace", "", "no trace file given");
    py::gil_scoped_release release;
    std::vector<trace::RankReport> out;
    for (const auto& p : paths)  // a file with ranksByPid (estimate --timeline-out): one rank per pid
        for (const auto& d : trace::split_ranks(trace::read_trace(p)))
            out.push_back(trace::analyze(d, trace::AnalyzeOptions{hta_compatible}));
    trace::assign_missing_ranks(out);
    const auto ranks = trace::merge_summaries({std::move(out)});
    const auto cluster = trace::cluster_report(ranks);
    const auto items = trace::triage(cluster, nullptr, {});
    return trace::report_json(trace::TraceReport{&ranks, &cluster, &items, nullptr});
}

// `lostflops trace FILE --summary-out S`: the summary (JSON text) of one trace file.
std::string trace_summary_text(const std::string& path, bool hta_compatible) {
    py::gil_scoped_release release;
    std::vector<trace::RankReport> one{trace::analyze(trace::read_trace(path), trace::AnalyzeOptions{hta_compatible})};
    trace::assign_missing_ranks(one);
    return trace::summary_to_json(one, path);
}

// `lostflops trace merge --format json`: of summaries given as JSON texts.
std::string merge_summaries_text(const std::vector<std::string>& texts, const std::vector<std::string>& sources) {
    py::gil_scoped_release release;
    const auto cluster = trace::merge_summary_texts(texts, sources);
    const auto items = trace::triage(cluster, nullptr, {});
    return trace::report_json(trace::TraceReport{nullptr, &cluster, &items, nullptr});
}

}  // namespace

PYBIND11_MODULE(_lostflops, m) {
    m.doc() = "lostflops C++ core (use the `lostflops` package, not this module)";
    static py::exception<InputError> error(m, "LostflopsError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const InputError& e) {
            py::object inst = py::reinterpret_borrow<py::object>(error.ptr())(e.what());
            inst.attr("file") = e.file();
            inst.attr("key") = e.key();
            inst.attr("message") = e.message();
            PyErr_SetObject(error.ptr(), inst.ptr());
        }
    });
    m.def("estimate", &estimate_text, py::arg("job"), py::arg("is_text"), py::arg("set"), py::arg("calibration"),
          py::arg("schedule"), py::arg("advice"), py::arg("best"));
    m.def("search", &search_text, py::arg("job"), py::arg("is_text"), py::arg("set"), py::arg("fix"), py::arg("by"),
          py::arg("top"), py::arg("calibration"), py::arg("gpus"), py::arg("min_gpus"), py::arg("price"));
    m.def("trace", &trace_text, py::arg("paths"), py::arg("hta_compatible"));
    m.def("trace_summary", &trace_summary_text, py::arg("path"), py::arg("hta_compatible"));
    m.def("merge_summaries", &merge_summaries_text, py::arg("texts"), py::arg("sources"));
    m.def("import_", [](const std::string& kind, const std::string& input, bool is_path, int num_gpus,
                       const std::string& tpu, int slices, const std::vector<std::string>& set) {
        ImportOptions o = import_options(num_gpus);
        if (kind == "maxtext") {
            if (slices < 0 || slices > 65536)
                throw InputError("slices", "", fmt::format("{}: expected 0 (the config says) to 65536", slices));
            o.tpu = tpu;
            o.slices = slices;
            o.overrides = set;
        }
        const char* what = kind == "megatron" ? "Megatron launch script"
                           : kind == "torchtitan" ? "torchtitan config"
                                                  : "MaxText config";
        const auto [text, source] = import_input(input, is_path, what);
        if (is_path) o.script_path = input;  // $0 and the folder `source` reads from, as the command line
        const ImportResult r = kind == "megatron"     ? import_megatron(text, source, o)
                               : kind == "torchtitan" ? import_torchtitan(text, source, o)
                               : kind == "maxtext"
                                   ? import_maxtext(text, source, o)
                                   : throw InputError("kind", "", "expected megatron, torchtitan or maxtext, got '" +
                                                                      kind + "'");
        return py::make_tuple(r.job_yaml, notes_list(r.notes));
    });
    m.def("export", [](const std::string& framework, const std::optional<std::string>& job, bool is_text,
                       const std::vector<std::string>& set, bool best, const std::string& calibration) {
        ExportResult (*run)(const Job&) = framework == "megatron"     ? export_megatron
                                          : framework == "torchtitan" ? export_torchtitan
                                          : framework == "maxtext"    ? export_maxtext
                                                                      : nullptr;
        if (run == nullptr)
            throw InputError("framework", "", "expected megatron, torchtitan or maxtext, got '" + framework + "'");
        const std::string source = !job ? "data/jobs/default.yaml (built in)" : is_text ? "<dict>" : *job;
        py::list notes;
        if (!best) {
            std::optional<Job> own;
            try {
                own = job_from(job, is_text, set);
            } catch (const InputError& e) {
                if (!is_missing_plan(e)) throw;
            }
            if (own) {
                // The job's own plan, exported as it is; one that does not fit is said, as on the command line.
                const ExportResult r = run(*own);
                py::list out = notes_list(r.notes);
                const Calibration cal = calibration_from(calibration);
                const auto w = [&] {
                    py::gil_scoped_release release;
                    return own_plan_fit_warning(*own, cal, kExportWordsPython);
                }();
                if (w) {
                    py::dict d;
                    d["kind"] = "warning";
                    d["setting"] = w->setting;
                    d["message"] = w->text;
                    out.append(d);
                }
                return py::make_tuple(r.text, out);
            }
            // As the command line (src/cli/cmd_export.cpp job_to_export).
            append_note(notes, no_parallel_section_note(framework, source, kExportWordsPython));
        }
        const Calibration cal = calibration_from(calibration);
        const SearchJobLoader load = [&](const std::vector<std::string>& o) { return search_job_from(job, is_text, o); };
        const ExportSearch won = [&] {
            py::gil_scoped_release release;
            return export_search(framework, load, set, cal, source);
        }();
        for (const PlanNote& n : won.notes) append_note(notes, n);
        const ExportResult r = run(won.job);
        for (const py::handle n : notes_list(r.notes)) notes.append(n);
        return py::make_tuple(r.text, notes);
    });
    add_command_bindings(m);
}
