// Reader of nccl-tests text output into measured bus-bandwidth curves.
//
// Runs, rows and rank lines are recognised line by line (nccl_tests_format.h);
// each run, once its lines are read, becomes a curve in nccl_tests_run.cpp
// (its collective, ranks and scope; busbw recomputed from size and time).
#include "lostflops/nccl_tests.h"

#include <cmath>

#include <fmt/format.h>

#include "calibrate/nccl_tests_parser.h"
#include "lostflops/error.h"
#include "job/text_input.h"

namespace lostflops {

namespace nccl_format {

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

}  // namespace nccl_format

NcclTestsResult read_nccl_tests(const std::string& path, const NcclTestsOptions& options) {
    const std::string text = read_file_bounded(path, kMaxBenchOutputBytes, "nccl-tests output");
    return parse_nccl_tests_text(text, input_name(path), options);
}

NcclTestsResult parse_nccl_tests_text(std::string_view text, const std::string& source,
                                      const NcclTestsOptions& options) {
    return nccl_format::Parser(text, source, options).run();
}

}  // namespace lostflops
