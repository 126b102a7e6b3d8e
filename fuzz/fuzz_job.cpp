// libFuzzer entry point for the job reader: any bytes must either become a
// Job that estimate() and job_warnings() accept or raise InputError. Anything
// else (another exception, a crash, a sanitizer report) is a bug. Input: job
// text, optionally followed by a line "--set" and one override per line, so
// the --set path (apply, attribution) is fuzzed too. A job that loads is also
// exported (Megatron flags, torchtitan TOML): the launch files must keep their
// shape whatever the job's names hold. Run: make fuzz. Seeds: data/jobs,
// examples.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace {

// One line of the Megatron launch script (interop/megatron_export.cpp): the
// shebang, a comment, a blank line, an `export`, an array's opening "NAME=("
// or closing ")", a flag in an array ("    --flag value", or "    # --flag
// VALUE" left to the user), the torchrun line or one of its continuations
// ("    \"${NAME[@]}\" \\"). A name or value of the job that broke a line out
// of these shapes would change what the script runs.
bool megatron_line(const std::string& line) {
    const auto starts = [&](const char* p) { return line.rfind(p, 0) == 0; };
    if (line.empty() || starts("#") || starts("export ") || starts("torchrun ") || line == ")") return true;
    if (starts("    --") || starts("    # --") || starts("    \"${")) return true;
    const auto open = line.find("=(");
    if (open == std::string::npos || open + 2 != line.size() || open == 0) return false;
    for (std::size_t i = 0; i < open; ++i)
        if (!(std::isupper(static_cast<unsigned char>(line[i])) || line[i] == '_')) return false;
    return true;
}

// Exported launch files: a bash script of the lines above with one torchrun
// (Megatron), or TOML whose first table is [model] (torchtitan).
void check_exports(const lostflops::Job& job) {
    using lostflops::fuzz::require;
    try {
        const std::string script = lostflops::export_megatron(job).text;
        lostflops::fuzz::check_written_text(script, "export megatron", false);
        require(script.rfind("#!/bin/bash\n", 0) == 0, "export megatron: no #!/bin/bash first");
        std::istringstream lines(script);
        std::string line;
        int n = 0, torchruns = 0;
        while (std::getline(lines, line)) {
            require(megatron_line(line), "export megatron: unexpected line " + std::to_string(n) + ": " + line);
            torchruns += line.rfind("torchrun ", 0) == 0;
            ++n;
        }
        require(torchruns == 1, "export megatron: " + std::to_string(torchruns) + " torchrun lines");
    } catch (const lostflops::InputError&) {
    }
    try {
        const std::string toml = lostflops::export_torchtitan(job).text;
        lostflops::fuzz::check_written_text(toml, "export torchtitan", false);
        require(toml.find("\n[") == toml.find("\n[model]"), "export torchtitan: a table before [model]");
    } catch (const lostflops::InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const lostflops::Calibration cal = lostflops::default_calibration();
    std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> overrides;
    const auto cut = text.find("\n--set\n");
    if (cut != std::string::npos) {
        std::istringstream rest(text.substr(cut + 7));
        for (std::string line; std::getline(rest, line);) overrides.push_back(line);
        text.resize(cut + 1);
    }
    try {
        const lostflops::Job job = lostflops::parse_job(text, "<fuzz>", overrides);
        lostflops::fuzz::require(lostflops::estimate(job, cal).step_time_s > 0, "estimate: step time not > 0");
        for (const auto& w : lostflops::job_warnings(job))
            lostflops::fuzz::require(!w.key.empty() && !w.message.empty(), "job_warnings: an empty warning");
        check_exports(job);
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
