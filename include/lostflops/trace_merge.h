// `lostflops trace merge`: thousands of per-rank summaries (trace_summary.h)
// into the cross-rank answers (trace_cluster.h), one summary at a time, so
// that memory is one summary file and a fixed-size row per rank.
#pragma once

#include <string>
#include <vector>

#include "lostflops/trace_cluster.h"

namespace lostflops::trace {

// The regular files of directory `dir` (links followed; pipes, devices,
// sockets and broken links passed over) whose names end with one of
// `suffixes`, sorted by name. InputError when it cannot be listed or holds
// none (`what` names them: "*.json summaries").
std::vector<std::string> directory_files(const std::string& dir, const std::vector<std::string>& suffixes,
                                         const std::string& what);

// The summary files named by `inputs` and `list_file`: a directory gives its
// regular *.json files, sorted by name; a file is itself; `list_file` (""
// for none, "-" for standard input) holds one path per line (blank lines and
// lines starting with '#' skipped, paths relative to the list's directory).
// Throws InputError on a missing input, an empty directory, or no file at all.
std::vector<std::string> summary_paths(const std::vector<std::string>& inputs, const std::string& list_file);

// Reads each summary in order into one ClusterMerger (gpus_per_node as
// there), parsing `threads` files at a time (at most 2 x threads parsed files
// held; the result does not depend on it). Throws InputError naming the file
// on a bad summary (the first in `paths` order) or a rank given twice, and
// when the summaries hold no rank.
ClusterReport merge_summary_files(const std::vector<std::string>& paths, int gpus_per_node = 0, unsigned threads = 1);
// The same from summary texts in memory, `sources` naming them.
ClusterReport merge_summary_texts(const std::vector<std::string>& texts, const std::vector<std::string>& sources,
                                  int gpus_per_node = 0);

}  // namespace lostflops::trace
