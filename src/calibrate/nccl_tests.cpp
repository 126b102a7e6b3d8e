// Reader of nccl-tests text output into measured bus-bandwidth curves.
//
// Runs, rows and rank lines are recognised line by line (nccl_tests_format.h).
// The collective of a run comes from its name ("# Collective test starting:
// all_reduce_perf", or an echoed command line naming a *_perf binary), else
// from the column shape (fit_collectives in nccl_tests_format.h: redop,
// size/count, busbw/algbw), else from --op. busbw of each point is
// recomputed from size and time (the printed busbw has two decimals, 0.00 at
// small sizes): busbw = size / time * F(op, n). A run whose printed busbw is
// 0.00 at every size measured latency only and is skipped; rows whose sizes
// start over inside one table (processes' sweeps interleaved) are one run.
#include "lostflops/nccl_tests.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "calibrate/calibration_fields.h"
#include "calibrate/nccl_tests_format.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"
#include "job/text_input.h"

namespace lostflops {

namespace {

using namespace nccl_format;

double round_significant(double v, int digits) {
    if (!(v > 0) || !std::isfinite(v)) return v;
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(v))));
    const double r = std::round(v * scale) / scale;
    return r > 0 && std::isfinite(r) ? r : v;
}

struct Row {
    unsigned long long size = 0, count = 0;
    bool has_count = false;
    std::string type, redop;
    long long root = -1;
    double time_us = 0, algbw = -1, busbw = -1;
    int line = 0;
};

struct RunBuilder {
    std::optional<TestKind> name;   // from the "starting" line or an echoed command
    int nthreads = 0, ngpus = 0;
    std::vector<RankLine> ranks;
    std::optional<Columns> columns;
    std::vector<Row> rows;
    std::optional<double> avg_busbw;
    bool concluded = false;
    bool empty() const { return !columns && rows.empty() && ranks.empty() && nthreads == 0; }
};

class Parser {
public:
    Parser(std::string_view text, const std::string& source, const NcclTestsOptions& opt)
        : text_(text), source_(source), opt_(opt) {}
    NcclTestsResult run();

private:
    void line(std::string_view raw, int number, bool last);
    void comment(std::string_view raw, const std::vector<std::string_view>& t, int number);
    void row(const std::vector<std::string_view>& t, int number, bool last);
    void start_new_run();
    void finish_run();
    Collective decide_op(const RunBuilder& b, int n, const std::string& where);
    void warn(int line, const std::string& msg) {
        result_.warnings.push_back(line > 0 ? fmt::format("{}: line {}: {}", source_, line, msg)
                                            : fmt::format("{}: {}", source_, msg));
    }

    std::string_view text_;
    const std::string& source_;
    const NcclTestsOptions& opt_;
    RunBuilder cur_;
    std::optional<TestKind> pending_name_;
    int orphan_rows_ = 0;
    NcclTestsResult result_;
};

NcclTestsResult Parser::run() {
    if (text_.find('\0') != std::string_view::npos)
        throw InputError(source_, "", "binary data; expected nccl-tests text output");
    // Launcher prefixes, rank tags and pasted panes off first (format
    // detection, nccl_tests_format.h); messages keep the input's lines.
    const CleanText clean = clean_nccl_text(text_);
    for (const auto& n : clean.notes) warn(0, n);
    const std::string_view text = clean.text;
    // The last non-empty line may be cut short (a truncated log).
    std::size_t end = text.size();
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) --end;
    std::size_t pos = 0;
    std::size_t index = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        const int number = index < clean.lines.size() ? clean.lines[index] : static_cast<int>(index + 1);
        ++index;
        line(text.substr(pos, nl - pos), number, nl >= end);
        pos = nl + 1;
    }
    finish_run();
    if (orphan_rows_ > 0)
        warn(0, fmt::format("skipped {} numeric line(s) outside a result table", orphan_rows_));
    if (result_.runs.empty() && !result_.warnings.empty()) {
        // Runs were found but none was usable: say why, not "expected a header".
        std::string why;
        for (std::size_t i = 0; i < result_.warnings.size() && i < 5; ++i)
            why += (why.empty() ? "" : "; ") + result_.warnings[i];
        if (result_.warnings.size() > 5) why += fmt::format("; and {} more", result_.warnings.size() - 5);
        throw InputError(source_, "", "no usable nccl-tests results: " + why);
    }
    if (result_.runs.empty())
        throw InputError(source_, "",
                         "no usable nccl-tests results (expected a '#  size count type ... busbw' "
                         "header followed by data rows)");
    return std::move(result_);
}

void Parser::line(std::string_view raw, int number, bool last) {
    const auto t = split_ws(raw);
    if (t.empty()) return;
    if (t[0].front() == '#') {
        std::string_view body = raw.substr(raw.find('#') + 1);
        comment(body, split_ws(body), number);
        return;
    }
    if (cur_.columns && static_cast<int>(t.size()) > cur_.columns->count &&
        parse_uint(t[cur_.columns->size]) &&
        (cur_.columns->count < 0 || parse_uint(t[cur_.columns->count]))) {
        row(t, number, last);
        return;
    }
    if (parse_uint(t[0])) {
        // A row without a header (an excerpt, or only the units line): the
        // nccl-tests 2.x layout its shape fits (columns_from_row).
        if (!cur_.columns && cur_.rows.empty()) {
            if (auto c = columns_from_row(t)) {
                c->header_line = number;
                cur_.columns = c;
                warn(number, fmt::format("no column header: the columns of nccl-tests 2.x taken from the row's {} fields "
                                         "(size count type{}{} time algbw busbw #wrong, then in place)",
                                         t.size(), c->redop >= 0 ? " redop" : "", c->root >= 0 ? " root" : ""));
                row(t, number, last);
                return;
            }
        }
        ++orphan_rows_;
        return;
    }
    // Launcher noise; an echoed command line may name the test binary.
    for (auto tok : t) {
        TestKind k = classify_test(tok);
        if (k.cls == TestKind::Class::unknown) continue;
        if (cur_.rows.empty() && !cur_.columns) {
            if (!cur_.name) cur_.name = k;
        } else if (!pending_name_) {
            pending_name_ = k;
        }
        break;
    }
}

void Parser::comment(std::string_view raw, const std::vector<std::string_view>& t, int number) {
    if (t.empty()) return;
    const bool starting = t.size() >= 4 && t[0] == "Collective" && t[1] == "test" && t[2] == "starting:";
    if (starting || t[0] == "nThread" || (t[0] == "nccl-tests" && t.size() > 1 && t[1] == "version")) {
        if (cur_.columns || !cur_.rows.empty() || cur_.concluded) start_new_run();
        if (starting) {
            TestKind k = classify_test(t[3]);
            if (k.cls == TestKind::Class::unknown) k.name = std::string(t[3].substr(0, 80));
            cur_.name = k;
        }
        if (t[0] == "nThread" && t.size() >= 4 && t[2] == "nGpus") {
            auto th = parse_uint(t[1]), g = parse_uint(t[3]);
            if (th && g && *th < 10000 && *g < 1000) {
                cur_.nthreads = static_cast<int>(*th);
                cur_.ngpus = static_cast<int>(*g);
            }
        }
        return;
    }
    if (t.size() >= 2 && t[0] == "Collective" && t[1] == "test") {
        cur_.concluded = true;
        return;
    }
    if (auto r = parse_rank_line(t, raw)) {
        if (cur_.columns || !cur_.rows.empty()) start_new_run();
        cur_.ranks.push_back(std::move(*r));
        return;
    }
    if (auto c = parse_header(t)) {
        if (!cur_.rows.empty()) {
            // A header repeated by the same program: same name, same ranks.
            RunBuilder same = cur_;
            start_new_run();
            cur_.name = same.name;
            cur_.ranks = std::move(same.ranks);
            cur_.nthreads = same.nthreads;
            cur_.ngpus = same.ngpus;
        }
        c->header_line = number;
        cur_.columns = c;
        return;
    }
    if (t.size() >= 3 && t[0] == "Avg" && t[1] == "bus" && t[2] == "bandwidth") {
        const auto colon = raw.find(':');
        if (colon != std::string_view::npos) {
            auto v = split_ws(raw.substr(colon + 1));
            if (!v.empty()) cur_.avg_busbw = parse_double(v[0]);
        }
        cur_.concluded = true;
    }
}

void Parser::row(const std::vector<std::string_view>& t, int number, bool last) {
    const Columns& c = *cur_.columns;
    auto malformed = [&](const std::string& what) {
        if (last) {
            warn(number, "last data row is incomplete (" + what + "); output truncated? dropped it");
            return;
        }
        throw InputError(source_, fmt::format("line {}", number),
                         fmt::format("malformed nccl-tests data row: {} (columns from the header "
                                     "at line {})", what, c.header_line));
    };
    if (static_cast<int>(t.size()) < c.needed())
        return malformed(fmt::format("{} columns, the header needs {}", t.size(), c.needed()));
    Row r;
    r.line = number;
    r.size = *parse_uint(t[c.size]);
    if (c.count >= 0) {
        r.count = *parse_uint(t[c.count]);
        r.has_count = true;
    }
    if (c.type >= 0) r.type = std::string(t[c.type].substr(0, 32));
    if (c.redop >= 0) r.redop = std::string(t[c.redop].substr(0, 32));
    if (c.root >= 0) {
        auto v = parse_double(t[c.root]);
        if (!v || *v != std::floor(*v) || std::fabs(*v) > 1e9) return malformed("root is not an integer");
        r.root = static_cast<long long>(*v);
    }
    auto time = parse_double(t[c.time]);
    auto busbw = parse_double(t[c.busbw]);
    if (!time) return malformed("time '" + std::string(t[c.time].substr(0, 32)) + "' is not a number");
    if (!busbw) return malformed("busbw '" + std::string(t[c.busbw].substr(0, 32)) + "' is not a number");
    r.time_us = *time;
    r.busbw = *busbw;
    if (c.algbw >= 0 && c.algbw < static_cast<int>(t.size()))
        r.algbw = parse_double(t[c.algbw]).value_or(-1);
    // #wrong counts the elements that failed nccl-tests' data check (-c 1,
    // the default; "N/A" with -c 0): a run with wrong results measured a
    // broken collective, not the links.
    for (const int w : c.wrong) {
        if (w >= static_cast<int>(t.size())) continue;
        const auto wrong = parse_uint(t[w]);
        if (wrong && *wrong > 0)
            throw InputError(source_, fmt::format("line {}", number),
                             fmt::format("#wrong is {}: nccl-tests found wrong results in this row, so the run "
                                         "measured a broken collective; fix and rerun it",
                                         *wrong));
    }
    // nccl-tests sweeps sizes by a factor (-f 2 from 8 B to 16 GiB: 32 rows)
    // or a step (-i); ten thousand rows is far beyond any sweep, and bounds
    // the curves written to the profile (whose reader takes 4 MiB).
    constexpr std::size_t kMaxRowsPerRun = 10'000;
    if (cur_.rows.size() >= kMaxRowsPerRun)
        throw InputError(source_, fmt::format("line {}", number),
                         fmt::format("more than {} data rows in one run (header at line {}); an nccl-tests "
                                     "sweep prints tens of rows — is this the right file?",
                                     kMaxRowsPerRun, c.header_line));
    cur_.rows.push_back(std::move(r));
}

void Parser::start_new_run() {
    finish_run();
    cur_ = RunBuilder{};
    cur_.name = pending_name_;
    pending_name_.reset();
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
    std::set<std::string> hosts;
    for (const auto& r : b.ranks) {
        ids.insert(r.rank);
        hosts.insert(r.host);
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
    run.hosts = std::max<int>(1, static_cast<int>(hosts.size()));
    run.scope = run.hosts > 1 ? LinkScope::inter_node : LinkScope::intra_node;
    if (opt_.scope && *opt_.scope != run.scope && !hosts.empty())
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

}  // namespace

NcclTestsResult read_nccl_tests(const std::string& path, const NcclTestsOptions& options) {
    const std::string text = read_file_bounded(path, kMaxBenchOutputBytes, "nccl-tests output");
    return parse_nccl_tests_text(text, input_name(path), options);
}

NcclTestsResult parse_nccl_tests_text(std::string_view text, const std::string& source,
                                      const NcclTestsOptions& options) {
    return Parser(text, source, options).run();
}

}  // namespace lostflops
