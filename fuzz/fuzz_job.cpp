// libFuzzer entry point for the job parser: any bytes must either become a
// Job that estimate() accepts or raise InputError. Anything else (another
// exception, a crash, a sanitizer report) is a bug. Run: make fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/estimate.h"
#include "lostflops/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const lostflops::Calibration cal = lostflops::default_calibration();
    try {
        const lostflops::Job job =
            lostflops::parse_job(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
        if (!(lostflops::estimate(job, cal).step_time_s > 0)) std::abort();
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
