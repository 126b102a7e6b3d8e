// Reader of nccl-tests text output (NVIDIA/nccl-tests: all_reduce_perf,
// all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf; the
// rooted broadcast/reduce/gather/scatter tests are recognised and skipped).
//
// One file may hold several runs (outputs concatenated); each run has a
// `# nThread ...` header, `#  Rank N ... on HOST device ...` lines (their
// count gives the ranks, the number of distinct hosts the scope), a column
// header (`size count type [redop [root]] time algbw busbw #wrong|error ...`,
// the first time/algbw/busbw group out-of-place), data rows and a
// `# Avg bus bandwidth` trailer. Launcher noise (MPI, NCCL INFO) is skipped;
// mpirun --tag-output and srun --label prefixes, "[N]" rank tags, Markdown
// quoting and side-by-side pastes are undone first; rows without a header
// take the nccl-tests 2.x columns their shape fits (an excerpt then needs
// --ranks N unless it kept its rank lines).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/calibration.h"

namespace lostflops {

struct NcclTestsOptions {
    std::optional<Collective> op;    // --op: when the file does not say
    std::optional<LinkScope> scope;  // --scope: overrides the host count
    std::optional<int> ranks;        // --ranks: for output without rank lines (overrides them)
};

struct NcclTestsRun {
    std::string test;               // "all_reduce_perf", or "" if not named
    Collective op = Collective::all_reduce;
    LinkScope scope = LinkScope::intra_node;
    int ranks = 0;
    int hosts = 0;                  // distinct host names in the rank lines
    bool uneven_hosts = false;      // the hosts hold different rank counts (8 + 4): no ranks per node
    std::string device;             // device name of rank 0, if given
    int first_line = 0;             // 1-based line of the run's first row
    std::vector<BusBwPoint> points; // out-of-place, sorted by size
    std::optional<double> avg_busbw_GBps;  // the trailer, if present
};

struct NcclTestsResult {
    std::vector<NcclTestsRun> runs;
    std::vector<std::string> warnings;  // "FILE: line N: ..." for the CLI to print
};

// Parses nccl-tests output held in memory; `source` names it in messages.
// Throws InputError (naming source and line) for malformed data rows, a
// collective it cannot identify, or text without any usable run (a run whose
// busbw prints 0.00 at every size measured latency only and is skipped); a
// row cut short at the end of the text is dropped with a warning.
NcclTestsResult parse_nccl_tests_text(std::string_view text, const std::string& source,
                                      const NcclTestsOptions& options = {});
NcclTestsResult read_nccl_tests(const std::string& path, const NcclTestsOptions& options = {});

// Curves for a calibration profile: one per (op, scope, ranks); runs with the
// same key are merged (the first run's point wins at a repeated size, with a
// warning appended to `warnings`).
std::vector<BusBwCurve> curves_from_runs(const std::vector<NcclTestsRun>& runs,
                                         std::vector<std::string>& warnings);

// Replaces or adds `curves` in `cal.nccl` (same op, scope and ranks replaced).
void merge_curves(Calibration& cal, const std::vector<BusBwCurve>& curves);

}  // namespace lostflops
