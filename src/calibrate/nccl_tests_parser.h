// The line parser of nccl-tests output (internal to src/calibrate), shared by
// its two parts: nccl_tests.cpp reads the lines into runs (rank lines,
// column header, data rows, trailer), nccl_tests_run.cpp turns each finished
// run into a bus-bandwidth curve (its collective, ranks and scope, busbw
// recomputed from size and time, the rows it skips and why).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "calibrate/nccl_tests_format.h"
#include "lostflops/nccl_tests.h"

namespace lostflops::nccl_format {

// One data row as printed (the out-of-place time/algbw/busbw group).
struct Row {
    unsigned long long size = 0, count = 0;
    bool has_count = false;
    std::string type, redop;
    long long root = -1;
    double time_us = 0, algbw = -1, busbw = -1;
    int line = 0;
};

// What the lines of one run said so far.
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

// Reads one text: run() gives its usable runs and warnings, or throws
// InputError (parse_nccl_tests_text's contract, lostflops/nccl_tests.h).
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
    void finish_run();  // nccl_tests_run.cpp
    Collective decide_op(const RunBuilder& b, int n, const std::string& where);  // nccl_tests_run.cpp
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

}  // namespace lostflops::nccl_format
