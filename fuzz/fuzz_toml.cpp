// libFuzzer entry point for the torchtitan TOML reader (interop/toml_subset)
// and the import on top of it: any bytes give a table and a job file, or an
// InputError. The job file the import writes must be YAML with no control
// characters (a value from the TOML must not break out of its line).
// Seeds: tests/data/interop/torchtitan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "interop/toml_subset.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)lostflops::interop::parse_toml_subset(text, "<fuzz>");
    } catch (const lostflops::InputError&) {
    }
    try {
        const auto r = lostflops::import_torchtitan(text, "<fuzz>", {});
        lostflops::fuzz::check_written_text(r.job_yaml, "import torchtitan", true);
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
