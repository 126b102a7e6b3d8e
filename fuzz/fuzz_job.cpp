// libFuzzer entry point for the job parser: any bytes must either become a
// Job that estimate() and job_warnings() accept or raise InputError. Anything
// else (another exception, a crash, a sanitizer report) is a bug. Input: job
// text, optionally followed by a line "--set" and one override per line, so
// the --set path (apply, attribution) is fuzzed too. Run: make fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"

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
        if (!(lostflops::estimate(job, cal).step_time_s > 0)) std::abort();
        for (const auto& w : lostflops::job_warnings(job))
            if (w.key.empty() || w.message.empty()) std::abort();
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
