// From one run of nccl-tests output, as the line parser gathered it
// (nccl_tests_parser.h), to a measured bus-bandwidth curve. The collective of
// a run comes from its name ("# Collective test starting: all_reduce_perf",
// or an echoed command line naming a *_perf binary), else from the column
// shape (fit_collectives in nccl_tests_format.h: redop, size/count,
// busbw/algbw), else from --op. busbw of each point is recomputed from size
// and time (the printed busbw has two decimals, 0.00 at small sizes):
// busbw = size / time * F(op, n). A run whose printed busbw is 0.00 at every
// size measured latency only and is skipped; rows whose sizes start over
// inside one table (processes' sweeps interleaved) are one run.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "calibrate/calibration_fields.h"
#include "calibrate/nccl_tests_parser.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"

namespace lostflops::nccl_format {

namespace {

double round_significant(double v, int digits) {
    if (!(v > 0) || !std::isfinite(v)) return v;
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(v))));
    const double r = std::round(v * scale) / scale;
    return r > 0 && std::isfinite(r) ? r : v;
}

// What the run's largest row says about its collective.
RowShape largest_row_shape(const RunBuilder& b) {
    const Row& big = *std::max_element(b.rows.begin(), b.rows.end(),
                                       [](const Row& x, const Row& y) { return x.size < y.size; });
    RowShape shape;
    shape.redop = big.redop;
    shape.redop_column = b.columns && b.columns->redop >= 0;
    shape.type_column = b.columns && b.columns->type >= 0;
    shape.type = big.type;
    shape.size = big.size;
    shape.count = big.has_count ? big.count : 0;
    shape.algbw = big.algbw;
    shape.busbw = big.busbw;
    return shape;
}

}  // namespace

Collective Parser::decide_op(const RunBuilder& b, int n, const std::string& where) {
    const RowShape shape = largest_row_shape(b);
    const ShapeFit fit_all = fit_collectives(shape, n);
    const std::string evidence =
        fit_all.evidence.empty() ? std::string("no redop/count columns") : fit_all.evidence.substr(1);
    std::vector<Collective> fit;
    for (Collective c : kCollectives)
        if (fit_all.fits(c)) fit.push_back(c);
    auto fits_op = [&](Collective c) { return fit_all.fits(c); };
    const int line = b.rows.front().line;
    if (b.name && b.name->cls == TestKind::Class::collective) {
        if (!fits_op(b.name->op))
            warn(line, fmt::format("the columns ({}) do not look like {}; trusting the test name",
                                   evidence, b.name->name));
        if (opt_.op && *opt_.op != b.name->op)
            warn(line, fmt::format("--op {} ignored: the output names {}", to_string(*opt_.op), b.name->name));
        return b.name->op;
    }
    if (fit.size() == 1) {
        if (opt_.op && *opt_.op != fit[0])
            warn(line, fmt::format("--op {} ignored: the columns ({}) say {}", to_string(*opt_.op),
                                   evidence, to_string(fit[0])));
        return fit[0];
    }
    if (opt_.op) {
        if (!fits_op(*opt_.op))
            warn(line, fmt::format("--op {} does not fit the columns ({}); using it anyway",
                                   to_string(*opt_.op), evidence));
        return *opt_.op;
    }
    std::string names;
    for (Collective c : fit) names += std::string(names.empty() ? "" : ", ") + to_string(c);
    throw InputError(source_, where,
                     fmt::format("cannot tell which collective this nccl-tests run measures "
                                 "(no test name; {}; fits: {}); pass --op",
                                 evidence, names.empty() ? "none" : names));
}

void Parser::finish_run() {
    RunBuilder& b = cur_;
    if (b.rows.empty()) {
        if (b.columns) warn(b.columns->header_line, "result table without data rows; skipped");
        return;
    }
    const int first = b.rows.front().line;
    const std::string where = fmt::format("line {}", first);
    if (b.name && b.name->cls != TestKind::Class::collective) {
        warn(first, fmt::format("{}: not a collective lostflops models (all_reduce, all_gather, "
                                "reduce_scatter, alltoall, sendrecv); skipped", b.name->name));
        return;
    }
    if (!b.name && std::any_of(b.rows.begin(), b.rows.end(), [](const Row& r) { return r.root >= 0; })) {
        warn(first, "rooted test (root >= 0: broadcast, reduce, gather or scatter); skipped");
        return;
    }
    std::set<long> ids;
    std::map<std::string, int> on_host;  // the hosts, and the ranks each holds
    for (const auto& r : b.ranks) {
        if (!ids.insert(r.rank).second) {
            warn(first, fmt::format("rank {} has two rank lines (a run's output pasted twice?); counted once", r.rank));
            continue;
        }
        ++on_host[r.host];
    }
    const bool uneven = std::any_of(on_host.begin(), on_host.end(),
                                    [&](const auto& h) { return h.second != on_host.begin()->second; });
    if (uneven) {
        std::string counts;
        for (const auto& [host, count] : on_host)
            counts += fmt::format("{}{} on {}", counts.empty() ? "" : ", ", count, host.substr(0, 64));
        warn(first, fmt::format("ranks spread unevenly over the hosts ({}): the run's ranks per node are left "
                                "unrecorded",
                                counts));
    }
    int n = static_cast<int>(ids.size());
    if (opt_.ranks) {
        if (n > 0 && n != *opt_.ranks) warn(first, fmt::format("--ranks {} overrides {} rank line(s)", *opt_.ranks, n));
        if (n == 0 && !opt_.scope)
            warn(first, fmt::format("--ranks {} without rank lines: taken as one host (--scope inter_node if they "
                                    "span nodes)", *opt_.ranks));
        n = *opt_.ranks;
    } else if (n == 0) {
        if (b.nthreads * b.ngpus <= 0)
            throw InputError(source_, where,
                             "cannot tell the number of ranks: no '#  Rank N ... on HOST device ...' "
                             "lines and no '# nThread T nGpus G' header; give --ranks N" +
                                 ranks_hint(largest_row_shape(b), b.name && b.name->cls == TestKind::Class::collective
                                                                      ? std::optional<Collective>(b.name->op)
                                                                      : std::nullopt));
        n = b.nthreads * b.ngpus;
        warn(first, fmt::format("no rank lines; assuming {} ranks on one host (nThread x nGpus)", n));
    }
    if (n < 2) {
        warn(first, "run on one rank measures no communication; skipped");
        return;
    }
    NcclTestsRun run;
    run.op = decide_op(b, n, where);
    run.test = b.name ? b.name->name : "";
    run.ranks = n;
    run.hosts = std::max<int>(1, static_cast<int>(on_host.size()));
    run.uneven_hosts = uneven;
    run.scope = run.hosts > 1 ? LinkScope::inter_node : LinkScope::intra_node;
    if (opt_.scope && *opt_.scope != run.scope && !on_host.empty())
        warn(first, fmt::format("--scope {} overrides {} host(s) in the rank lines",
                                to_string(*opt_.scope), run.hosts));
    if (opt_.scope) run.scope = *opt_.scope;
    if (!b.ranks.empty()) run.device = b.ranks.front().device;
    run.first_line = first;
    run.avg_busbw_GBps = b.avg_busbw;

    // nccl-tests prints busbw with two decimals: 0.00 at every size means the
    // sweep never left latency (an excerpt of the first rows, a run cut short)
    // and a curve through it would price gigabytes at bytes' bandwidth.
    if (std::all_of(b.rows.begin(), b.rows.end(), [](const Row& r) { return r.size == 0 || !(r.busbw > 0); })) {
        warn(first, fmt::format("busbw prints 0.00 GB/s at every size (up to {} B): the rows measure latency, "
                                "not bandwidth; a curve needs sizes large enough to show a bandwidth "
                                "(output cut short?); skipped",
                                std::max_element(b.rows.begin(), b.rows.end(),
                                                 [](const Row& x, const Row& y) { return x.size < y.size; })->size));
        return;
    }
    // A size smaller than the row before it, inside one table: the rows of
    // several processes' sweeps interleaved (each printed its own table).
    int restarts = 0, restart_line = 0;
    for (std::size_t i = 1; i < b.rows.size(); ++i)
        if (b.rows[i].size < b.rows[i - 1].size && restarts++ == 0) restart_line = b.rows[i].line;
    if (restarts)
        warn(restart_line, fmt::format("the sizes start over {} time(s) inside one table: the sweeps of several "
                                       "processes interleaved? read as one run, the first row of each size kept",
                                       restarts));
    std::stable_sort(b.rows.begin(), b.rows.end(), [](const Row& x, const Row& y) { return x.size < y.size; });
    const double factor = bus_factor(run.op, n);
    int repeated = 0, unusable = 0, implausible = 0, mismatch_line = 0;
    for (const Row& r : b.rows) {
        if (r.size == 0) continue;  // -b 0: no data moved, nothing to learn
        if (!(r.time_us > 0)) {
            ++unusable;
            continue;
        }
        if (!run.points.empty() && run.points.back().bytes == static_cast<double>(r.size)) {
            ++repeated;
            continue;
        }
        BusBwPoint p;
        p.bytes = static_cast<double>(r.size);
        p.time_us = r.time_us;
        // 6 significant digits: more than the printed time carries, and the
        // profile stays readable and round-trips exactly.
        p.busbw_GBps = round_significant(p.bytes / (r.time_us * 1e3) * factor, 6);
        if (r.busbw >= 1 && std::fabs(p.busbw_GBps - r.busbw) > 0.05 * r.busbw && !mismatch_line)
            mismatch_line = r.line;
        if (p.bytes > calib::kMaxCurveBytes || p.busbw_GBps > calib::kMaxCurveBusBwGBps ||
            p.time_us > calib::kMaxCurveTimeUs) {
            ++implausible;
            continue;
        }
        run.points.push_back(p);
    }
    if (implausible)
        warn(first, fmt::format("skipped {} row(s) beyond a plausible measurement (size over {:g} bytes, "
                                "busbw over {:g} GB/s or time over {:g} us)",
                                implausible, calib::kMaxCurveBytes, calib::kMaxCurveBusBwGBps,
                                calib::kMaxCurveTimeUs));
    if (repeated && !restarts)
        warn(first, fmt::format("{} row(s) repeat a size (several types, reduction ops or cycles); "
                                "kept the first of each", repeated));
    if (unusable) warn(first, fmt::format("skipped {} row(s) with a time <= 0", unusable));
    if (mismatch_line)
        warn(mismatch_line, fmt::format("printed busbw differs from size/time x {:.3f} ({} on {} ranks); "
                                        "is the op or the rank count right?", factor,
                                        to_string(run.op), n));
    if (!b.avg_busbw && !b.concluded)
        warn(b.rows.back().line, fmt::format("no '# Avg bus bandwidth' trailer: output truncated? "
                                             "using the {} row(s) read", b.rows.size()));
    if (run.points.empty()) {
        warn(first, "no row with a size > 0 and a time > 0; skipped");
        return;
    }
    result_.runs.push_back(std::move(run));
}

}  // namespace lostflops::nccl_format
