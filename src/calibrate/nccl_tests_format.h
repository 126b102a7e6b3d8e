// Line-level pieces of the nccl-tests text format (NVIDIA/nccl-tests,
// src/common.cu and src/util.cu: writeDeviceReport, writeResultHeader,
// writeBenchmarkLinePreamble/Body, writeResultFooter), kept apart from the
// run assembly in nccl_tests.cpp and nccl_tests_run.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/calibration.h"

namespace lostflops::nccl_format {

std::vector<std::string_view> split_ws(std::string_view s);
std::optional<unsigned long long> parse_uint(std::string_view s);
std::optional<double> parse_double(std::string_view s);

// What a test binary measures: one of the five collectives of a profile, a
// recognised rooted test lostflops does not use, or not a test name at all.
struct TestKind {
    enum class Class { collective, unsupported, unknown } cls = Class::unknown;
    Collective op = Collective::all_reduce;
    std::string name;  // canonical "all_reduce_perf"
};
// "all_reduce_perf", "./build/all_reduce_perf", "all_reduce_perf_mpi".
TestKind classify_test(std::string_view token);

// Column positions from a header line such as
//   "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong"
// (first time/algbw/busbw group = out-of-place). -1 where absent.
struct Columns {
    int size = -1, count = -1, type = -1, redop = -1, root = -1;
    int time = -1, algbw = -1, busbw = -1;
    std::vector<int> wrong;  // "#wrong" columns (out-of-place, in-place): data-check failures per row
    int header_line = 0;
    int needed() const;  // tokens a data row must have
};
// nullopt unless the tokens (after '#') name a size and a busbw column.
std::optional<Columns> parse_header(const std::vector<std::string_view>& tokens);

// A "#  Rank  0 Group  0 Pid 123 on host1 device  0 [0x07] NVIDIA A100" line
// (older versions lack "Group"). Tokens after '#'.
struct RankLine {
    long rank = -1;
    std::string host;
    std::string device;
};
std::optional<RankLine> parse_rank_line(const std::vector<std::string_view>& tokens,
                                        std::string_view raw);

// What one data row (the largest) says about the collective, from NVIDIA/
// nccl-tests src/*.cu GetCollByteCount/GetBw and doc/PERFORMANCE.md: a
// reduction op other than "none" means all-reduce or reduce-scatter (and every
// layout prints the op of a reducing test); size = count * typesize for
// all-reduce and send-recv, count * typesize * n for all-gather,
// reduce-scatter and alltoall; busbw / algbw = F(op, n).
inline constexpr Collective kCollectives[] = {Collective::all_reduce, Collective::all_gather,
                                              Collective::reduce_scatter, Collective::all_to_all,
                                              Collective::send_recv};
struct RowShape {
    std::string redop, type;
    bool redop_column = false, type_column = false;
    unsigned long long size = 0, count = 0;  // count 0: no count column
    double algbw = -1, busbw = -1;           // < 0: not printed
};
struct ShapeFit {
    bool fit[5] = {true, true, true, true, true};  // by kCollectives order
    std::string evidence;                          // " redop 'sum' size/count=8 ..."
    bool fits(Collective c) const { return fit[static_cast<int>(c)]; }
};
ShapeFit fit_collectives(const RowShape& row, int ranks);
// For a run without rank lines: " (the bandwidths say N for all_reduce:
// busbw/algbw = q)" when busbw / algbw = F(op, n) gives one whole n for the
// collectives the row fits (the named one, when known); "" otherwise.
std::string ranks_hint(const RowShape& row, std::optional<Collective> named);

// Bytes per element of an nccl-tests type name ("float", "bfloat16"); 0 if unknown.
int type_size_bytes(std::string_view type);

// The text as one nccl-tests program printed it, before the line parser:
// mpirun --tag-output prefixes ("[1,0]<stdout>:") cut and its stderr lines
// dropped, srun --label prefixes ("3: ") cut, "[N]" rank tags removed
// (wherever a launcher glued them), Markdown quote marks ("> ") cut, and two
// outputs pasted side by side ("row | row") put one after the other.
// lines[k] is the 1-based input line of output line k + 1; `notes` says what
// was done, for the warnings.
struct CleanText {
    std::string text;
    std::vector<int> lines;
    std::vector<std::string> notes;
};
CleanText clean_nccl_text(std::string_view text);

// The columns of a data row printed without its header (an excerpt, or only
// the units line "(B) (elements) ... (us) (GB/s)" kept), from the row's
// shape in the nccl-tests 2.x layouts: size count type [redop [root]] time
// algbw busbw #wrong, then the in-place time algbw busbw #wrong (11, 12 or 13
// tokens). nullopt for any other shape.
std::optional<Columns> columns_from_row(const std::vector<std::string_view>& tokens);

}  // namespace lostflops::nccl_format
