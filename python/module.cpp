// pybind11 bindings of lostflops_core for the Python package (python/lostflops):
// each function takes plain strings and lists, calls the same library the CLI
// calls (no subprocess) and returns the JSON text the CLI would print, which
// the package turns into dicts. InputError becomes lostflops.LostflopsError, a
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

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"
#include "lostflops/report.h"
#include "lostflops/search.h"
#include "lostflops/search_report.h"
#include "lostflops/trace.h"
#include "lostflops/trace_merge.h"
#include "lostflops/trace_report.h"
#include "spec/hardware_bounds.h"
#include "spec/text_input.h"
#include "lostflops/trace_summary.h"
#include "lostflops/trace_triage.h"

namespace py = pybind11;
using namespace lostflops;

namespace {

// Text given in place of a file gets the file's size bound (spec/text_input.h):
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

// The text of an import: read from `input` when it is a path (the same bounds
// and checks as the command line), else `input` itself, bounded.
std::pair<std::string, std::string> import_input(const std::string& input, bool is_path, const char* what) {
    if (is_path) return {read_text_file(input, kMaxJobBytes, what), input_name(input)};
    return {bounded_text(input, "<text>", kMaxJobBytes), "<text>"};
}

ImportOptions import_options(int num_gpus) {
    if (num_gpus < 0 || num_gpus > bounds::kMaxGpus)
        throw InputError("num_gpus", "", fmt::format("{}: expected 0 (the input says) or 1 to {}", num_gpus,
                                                     bounds::kMaxGpus));
    ImportOptions o;
    o.num_gpus = num_gpus;
    return o;
}

Calibration calibration_from(const std::string& path) {
    return path.empty() ? default_calibration() : load_calibration(path);
}

// `lostflops estimate --format json`: the estimate and the job's warnings;
// with `advice`, when the plan does not fit, the advice of `estimate --advice`
// (without it none is computed: the verdict is in "memory").
std::string estimate_text(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set,
                          const std::string& calibration, const std::string& schedule, bool advice) {
    if (schedule != "closed" && schedule != "simulate")
        throw InputError("schedule", "", "expected closed or simulate, got '" + schedule + "'");
    const Job j = job_from(job, is_text, set);
    const Calibration cal = calibration_from(calibration);
    py::gil_scoped_release release;
    const Estimate e = estimate(j, cal, schedule == "simulate" ? ScheduleModel::simulation : ScheduleModel::closed_form);
    const std::optional<AdviceSearch> mode = advice ? std::optional(AdviceSearch::full) : std::nullopt;
    return estimate_json(j, e, estimate_extras(j, e, cal, mode)).dump(2);
}

RankBy rank_by(const std::string& by) {
    if (by == "throughput") return RankBy::throughput;
    if (by == "time-to-train") return RankBy::time_to_train;
    if (by == "cost") return RankBy::cost;
    if (by == "memory") return RankBy::memory;
    throw InputError("by", "", "expected throughput, time-to-train, cost or memory, got '" + by + "'");
}

// `lostflops search --format json --top N [--fix ...]`.
std::string search_text(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set,
                        const std::vector<std::string>& fixes, const std::string& by, size_t top,
                        const std::string& calibration) {
    const SearchJob sj = search_job_from(job, is_text, set);
    PlanFix fix = plan_fix_from(sj);
    for (const auto& f : fixes) add_plan_fix(fix, f, "--fix " + f);
    const Calibration cal = calibration_from(calibration);
    SearchOptions opts;
    opts.fix = fix;
    opts.by = rank_by(by);
    SearchView view;
    view.by = opts.by;
    view.limit = top;
    view.top = top == 0 ? 5 : std::min<size_t>(top, 5);
    keep_for_listing(opts, top, view.other_shapes);  // top 0: every plan, streamed as the CLI's --top all
    // Ctrl-C: Python sees SIGINT only when the interpreter runs, so the
    // progress callback (on this thread, about ten times a second) takes the
    // GIL and asks; a pending KeyboardInterrupt stops the search and is raised.
    std::atomic<bool> cancel{false};
    bool interrupted = false;
    opts.cancel = &cancel;
    opts.progress = [&](double) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
            interrupted = true;
            cancel = true;
        }
    };
    std::string out;
    {
        py::gil_scoped_release release;
        const SearchResult r = search_plans(sj.job, cal, opts);
        if (!interrupted)
            search_json(sj.job, cal, r, view, [&out](std::string_view s) { out.append(s); },
                        top == 0 ? every_plan(sj.job, cal, opts, r) : PlanChunks{});
    }
    if (interrupted) throw py::error_already_set();
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
          py::arg("schedule"), py::arg("advice"));
    m.def("search", &search_text, py::arg("job"), py::arg("is_text"), py::arg("set"), py::arg("fix"), py::arg("by"),
          py::arg("top"), py::arg("calibration"));
    m.def("trace", &trace_text, py::arg("paths"), py::arg("hta_compatible"));
    m.def("trace_summary", &trace_summary_text, py::arg("path"), py::arg("hta_compatible"));
    m.def("merge_summaries", &merge_summaries_text, py::arg("texts"), py::arg("sources"));
    m.def("import_megatron", [](const std::string& input, bool is_path, int num_gpus) {
        const ImportOptions o = import_options(num_gpus);
        const auto [text, source] = import_input(input, is_path, "Megatron launch script");
        const ImportResult r = import_megatron(text, source, o);
        return py::make_tuple(r.job_yaml, notes_list(r.notes));
    });
    m.def("import_torchtitan", [](const std::string& input, bool is_path, int num_gpus) {
        const ImportOptions o = import_options(num_gpus);
        const auto [text, source] = import_input(input, is_path, "torchtitan config");
        const ImportResult r = import_torchtitan(text, source, o);
        return py::make_tuple(r.job_yaml, notes_list(r.notes));
    });
    m.def("export", [](const std::string& framework, const std::optional<std::string>& job, bool is_text,
                       const std::vector<std::string>& set) {
        const Job j = job_from(job, is_text, set);
        if (framework != "megatron" && framework != "torchtitan")
            throw InputError("framework", "", "expected megatron or torchtitan, got '" + framework + "'");
        const ExportResult r = framework == "megatron" ? export_megatron(j) : export_torchtitan(j);
        return py::make_tuple(r.text, notes_list(r.notes));
    });
}
