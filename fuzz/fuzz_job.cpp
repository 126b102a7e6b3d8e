// libFuzzer entry point for the job reader: any bytes must either become a
// Job that estimate() and job_warnings() accept or raise InputError. Anything
// else (another exception, a crash, a sanitizer report) is a bug. Input: job
// text, optionally followed by a line "--set" and one override per line, so
// the --set path (apply, attribution) is fuzzed too. A job that loads is also
// exported (Megatron flags, torchtitan TOML): the launch files must keep their
// shape whatever the job's names hold. Run: make fuzz. Seeds: data/jobs,
// examples.
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

// Exported launch files: a comment line, then the command and its flags
// (Megatron), or TOML that the TOML reader takes back.
void check_exports(const lostflops::Job& job) {
    using lostflops::fuzz::require;
    try {
        const std::string script = lostflops::export_megatron(job).text;
        lostflops::fuzz::check_written_text(script, "export megatron", false);
        std::istringstream lines(script);
        std::string line;
        int n = 0;
        while (std::getline(lines, line)) {
            const bool ok = n == 0 ? line.rfind("# ", 0) == 0
                                   : n == 1 ? line.rfind("torchrun ", 0) == 0 : line.rfind("    --", 0) == 0;
            require(ok, "export megatron: unexpected line " + std::to_string(n));
            ++n;
        }
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
