// pybind11 bindings of the commands beyond estimate, search, trace, import and
// export (module.cpp): explain, report, goodput, validate, list, trace diff,
// trace merge, trace synth and the calibrate forms. Each calls the library
// function the command line calls (lostflops/command_reports.h, explain.h,
// trace_diff.h, trace_merge.h, trace_synth.h) and returns the text the
// command prints: JSON with --format json where it has one, else the YAML,
// CSV or HTML it writes. The GIL is released while the library works.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pybind11/stl.h>

#include "bindings.h"
#include "lostflops/command_reports.h"
#include "lostflops/error.h"
#include "lostflops/explain.h"
#include "lostflops/report.h"
#include "lostflops/trace.h"
#include "lostflops/trace_diff.h"
#include "lostflops/trace_merge.h"
#include "lostflops/trace_report.h"
#include "lostflops/trace_synth.h"
#include "lostflops/trace_triage.h"

namespace py = pybind11;

namespace lostflops::pybind {

namespace {

// explain and report re-load the job for each lever: a file or the built-in job.
JobSource job_source(const std::optional<std::string>& path, const std::vector<std::string>& set) {
    if (path && path->empty()) throw InputError("job", "", "empty file name; None is the built-in default job");
    return JobSource{path.value_or(""), set};
}

// The search's plan of a job without a parallel section as --set arguments
// after the given ones (JobSource::plan, which a lever's `set` repeats);
// none for a job with a plan, but under `best` (--best).
std::vector<std::string> plan_sets(const std::optional<std::string>& job, const std::vector<std::string>& set,
                                   const Calibration& cal, bool best, py::list& notes) {
    const std::vector<std::string> all = planned_set(job, false, set, cal, best, notes);
    return {all.begin() + static_cast<std::ptrdiff_t>(set.size()), all.end()};
}

// Each returns (text, notes): a job without a parallel section is searched
// as the command line searches it (bindings.h planned_set), said in the notes.
py::tuple explain_text(const std::optional<std::string>& job, const std::vector<std::string>& set,
                       const std::string& calibration, bool best) {
    const Calibration cal = calibration_from(calibration);
    py::list notes;
    JobSource src = job_source(job, set);
    src.plan = plan_sets(job, set, cal, best, notes);
    const std::string out = [&] {
        py::gil_scoped_release release;
        return json_text(explain_json(explain(src, cal)));
    }();
    return py::make_tuple(out, notes);
}

py::tuple report_text(const std::optional<std::string>& job, const std::vector<std::string>& set,
                      const std::string& calibration, const std::vector<int>& gpus, bool best) {
    const Calibration cal = calibration_from(calibration);
    py::list notes;
    JobSource src = job_source(job, set);
    src.plan = plan_sets(job, set, cal, best, notes);
    const std::string out = [&] {
        py::gil_scoped_release release;
        return html_report(src, cal, gpus);
    }();
    return py::make_tuple(out, notes);
}

py::tuple goodput_text(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set,
                       const std::string& calibration, int samples, uint64_t seed, bool best) {
    if (samples < 0 || samples > 10'000'000)
        throw InputError("simulate", "", fmt::format("{}: expected 0 to 10000000 runs", samples));
    const Calibration cal = calibration_from(calibration);
    py::list notes;
    const Job j = job_from(job, is_text, planned_set(job, is_text, set, cal, best, notes));
    const std::string out = [&] {
        py::gil_scoped_release release;
        return goodput_json(j, goodput(j, cal, samples, seed));
    }();
    return py::make_tuple(out, notes);
}

std::string validate_text(const std::string& table, const std::string& calibration,
                          const std::vector<std::string>& fit_on) {
    const Calibration cal = calibration_from(calibration);
    py::gil_scoped_release release;
    return validation_json(validation_report(table, cal, fit_on));
}

std::string trace_diff_text(const std::string& a, const std::string& b, bool hta, double threshold_pct) {
    if (!(threshold_pct >= 0 && threshold_pct <= 1e6))
        throw InputError("threshold_pct", "", "expected a percentage from 0 to 1e6");
    py::gil_scoped_release release;
    return trace::diff_json(trace::diff_traces(trace::read_trace(a), trace::read_trace(b), trace::DiffOptions{hta, threshold_pct}));
}

// `trace merge --format json SUMMARIES...`: files or directories of them.
std::string trace_merge_text(const std::vector<std::string>& inputs, int gpus_per_node) {
    if (gpus_per_node < 0 || gpus_per_node > 1024)
        throw InputError("gpus_per_node", "", "expected 0 (the summaries say) to 1024");
    py::gil_scoped_release release;
    const auto cluster = trace::merge_summary_files(trace::summary_paths(inputs, ""), gpus_per_node, 1);
    const auto items = trace::triage(cluster, nullptr, {});
    return trace::report_json(trace::TraceReport{nullptr, &cluster, &items, nullptr});
}

// `trace synth`: the traces of the given ranks (all when empty), as texts.
std::vector<std::string> synth_texts(const trace::SynthSpec& spec, const std::vector<int>& only) {
    py::gil_scoped_release release;
    const trace::SynthJob job(spec);
    std::vector<int> ranks = only;
    if (ranks.empty())
        for (int r = 0; r < spec.ranks; ++r) ranks.push_back(r);
    std::vector<std::string> out;
    for (const int r : ranks) {
        if (r < 0 || r >= spec.ranks) throw InputError("--rank", "", "expected a rank below --ranks");
        out.push_back(job.trace(r));
    }
    return out;
}

std::string calibrate_nccl_text(const std::vector<std::string>& files, const std::string& base,
                                const std::string& scope, const std::string& op, int ranks) {
    NcclTestsOptions o;
    if (!op.empty() && !(o.op = collective_from_string(op)))
        throw InputError("op", "", "'" + op + "': expected all_reduce, all_gather, reduce_scatter, all_to_all or send_recv");
    if (!scope.empty() && !(o.scope = link_scope_from_string(scope)))
        throw InputError("scope", "", "'" + scope + "': expected intra_node or inter_node");
    if (ranks < 0 || ranks > (1 << 20)) throw InputError("ranks", "", "expected 0 (the output says) or 2 to 1048576");
    if (ranks > 0) o.ranks = ranks;
    py::gil_scoped_release release;
    return calibrate_nccl(files, o, base).yaml;
}

}  // namespace

void add_command_bindings(py::module_& m) {
    m.def("explain", &explain_text, py::arg("job"), py::arg("set"), py::arg("calibration"), py::arg("best"));
    m.def("report", &report_text, py::arg("job"), py::arg("set"), py::arg("calibration"), py::arg("gpus"),
          py::arg("best"));
    m.def("goodput", &goodput_text, py::arg("job"), py::arg("is_text"), py::arg("set"), py::arg("calibration"),
          py::arg("samples"), py::arg("seed"), py::arg("best"));
    m.def("validate", &validate_text, py::arg("table"), py::arg("calibration"), py::arg("fit_on"));
    m.def("catalog", [](const std::string& kind) { return catalog_list(kind, true); }, py::arg("kind"));
    m.def("catalog_kinds", [] {
        std::vector<std::string> out;
        for (const CatalogKind& k : catalog_kinds()) out.emplace_back(k.name);
        return out;
    });
    m.def("trace_diff", &trace_diff_text, py::arg("a"), py::arg("b"), py::arg("hta_compatible"),
          py::arg("threshold_pct"));
    m.def("trace_merge", &trace_merge_text, py::arg("inputs"), py::arg("gpus_per_node"));
    m.def("trace_synth",
          [](int ranks, int gpus_per_node, int tp, int steps, int64_t first_step, int layers, int slow_rank,
             double slow_rank_factor, int slow_node, double slow_node_factor, double jitter_pct, uint64_t seed,
             const std::vector<int>& only) {
              trace::SynthSpec s;
              s.ranks = ranks;
              s.gpus_per_node = gpus_per_node;
              s.tp = tp;
              s.steps = steps;
              s.first_step = first_step;
              s.layers = layers;
              s.slow_rank = slow_rank;
              s.slow_rank_factor = slow_rank_factor;
              s.slow_node = slow_node;
              s.slow_node_factor = slow_node_factor;
              s.jitter_pct = jitter_pct;
              s.seed = seed;
              return synth_texts(s, only);
          });
    m.def("synth_file_name", &trace::synth_file_name);
    m.def("calibrate_nccl", &calibrate_nccl_text, py::arg("files"), py::arg("base"), py::arg("scope"), py::arg("op"),
          py::arg("ranks"));
    m.def("calibrate_runs", [](const std::string& table, const std::string& base, std::optional<int> folds) {
        py::gil_scoped_release release;
        return calibrate_runs(table, base, folds).yaml;
    });
    m.def("calibrate_components", [](const std::vector<std::string>& measured, const std::vector<std::string>& gpus,
                                     const std::string& base) {
        py::gil_scoped_release release;
        return calibrate_components(measured, gpus, base).yaml;
    });
    m.def("calibrate_residuals", [](const std::vector<std::string>& tables, const std::string& calibration,
                                    const std::vector<std::string>& fit_on) {
        py::gil_scoped_release release;
        return residual_table(tables, calibration, fit_on).csv;
    });
}

}  // namespace lostflops::pybind
