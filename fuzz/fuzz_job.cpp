// libFuzzer entry point for the job parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "lostflops/error.h"
#include "lostflops/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        lostflops::parse_job(std::string(reinterpret_cast<const char*>(data), size), "<fuzz>");
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
