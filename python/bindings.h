// Shared by the two translation units of the extension (module.cpp: estimate,
// search, trace, import and export; commands.cpp: the other commands): how a
// job, a calibration and text given in place of a file reach the library, as
// the command line reads them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "lostflops/calibration.h"
#include "lostflops/job.h"

namespace lostflops::pybind {

// Text given in place of a file gets the file's size bound (job/text_input.h).
const std::string& bounded_text(const std::string& text, const std::string& source, std::size_t max_bytes);
// job: None = the built-in default; else a path, or the job's text (JSON or
// YAML) when is_text. An empty path is an error (it was the default job).
Job job_from(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set);
SearchJob search_job_from(const std::optional<std::string>& job, bool is_text, const std::vector<std::string>& set);
Calibration calibration_from(const std::string& path);
// The overrides that load `job` with its plan: `set` as given, or under
// `best` (or when the job has no parallel section, as the command line:
// src/cli/common.cpp overrides_with_plan) with the search's best plan's
// --set arguments after them (search_listing.h searched_plan), and what the
// command line writes on stderr of it as notes ({kind, setting, message}
// dicts, appended to `notes`).
std::vector<std::string> planned_set(const std::optional<std::string>& job, bool is_text,
                                     const std::vector<std::string>& set, const Calibration& cal, bool best,
                                     pybind11::list& notes);

// The bindings of commands.cpp.
void add_command_bindings(pybind11::module_& m);

}  // namespace lostflops::pybind
