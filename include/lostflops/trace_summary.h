// Per-rank summaries of traces: the versioned JSON format `lostflops trace
// --summary-out` writes and `trace merge` reads (docs/trace-summary-format.md),
// so that each rank or node summarises its own traces where they are (a Slurm
// array task, a Dask worker) and only summaries travel.
//
// Version 2 (written), 1 (read): {"format": "lostflops-trace-summary",
// "version": 2, "ranks": [rank objects]}; "format" and "version" come before
// "ranks". A rank object holds the figures of RankReport; every key is known
// (an unknown key is an InputError naming it).
//
// Bounds, so that whatever is written can be read back and merging thousands
// of summaries holds one rank at a time: a written rank keeps at most
// kMaxSummarySteps iterations (the first; steps_total says how many the trace
// had), kMaxSummaryStreams streams of idle time (the longest), kMaxSummaryGroups
// process groups, kMaxSummaryWarnings warnings, names of at most
// kMaxSummaryNameBytes (longer ones cut, a hash of the whole appended so that
// distinct names stay distinct); a summary file is at most kMaxSummaryBytes
// (src/job/text_input.h, 64 MiB: summary_to_json refuses to write more, one
// rank is always far less). Reading is a SAX pass over the file: memory is
// the file and one rank object (at most kMaxSummaryRankValues JSON values).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lostflops/trace.h"

namespace lostflops::trace {

inline constexpr int kSummaryVersion = 2;
inline constexpr const char* kSummaryFormat = "lostflops-trace-summary";
inline constexpr std::size_t kMaxSummarySteps = 4096;
inline constexpr std::size_t kMaxSummaryStreams = 64;
inline constexpr std::size_t kMaxSummaryGroups = 64;
inline constexpr std::size_t kMaxSummaryWarnings = 32;
inline constexpr std::size_t kMaxSummaryNameBytes = 4096;
inline constexpr std::size_t kMaxSummaryRankValues = 1u << 20;

// The summary of `ranks` (version 2, one line per rank). Throws InputError
// naming `dest` when it would exceed kMaxSummaryBytes.
std::string summary_to_json(const std::vector<RankReport>& ranks, const std::string& dest = "summary");
// One rank object as JSON text (the objects of `trace --format json`'s "ranks").
std::string rank_json(const RankReport& r);
// `r` as written to a summary: cut to the bounds above (a warning says what was cut).
RankReport bounded_for_summary(const RankReport& r);

// Reads a summary (a leading UTF-8 byte-order mark is accepted), calling
// `each` with every rank in file order; InputError naming `source` and the
// key or byte on anything malformed, unknown or out of range (ranks in [0,
// kMaxRank], times and counts finite and not negative).
void read_summary(std::string_view text, const std::string& source, const std::function<void(RankReport&&)>& each);
std::vector<RankReport> summary_from_json(std::string_view text, const std::string& source);
// From a file: check_input_path, at most kMaxSummaryBytes.
void load_summary(const std::string& path, const std::function<void(RankReport&&)>& each);
std::vector<RankReport> load_summary(const std::string& path);

}  // namespace lostflops::trace
