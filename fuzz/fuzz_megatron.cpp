// libFuzzer entry point for the Megatron-LM launch-script reader (shell word
// splitting, the flag table, the job draft): any bytes give a job file or an
// InputError; the job file must be YAML with no control characters. The
// first byte, when it is a digit, is a --num-gpus hint (0: none).
// Seeds: tests/data/interop/megatron.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    lostflops::ImportOptions options;
    if (!text.empty() && text[0] >= '0' && text[0] <= '9') {
        options.num_gpus = (text[0] - '0') * 8;
        text.erase(0, 1);
    }
    try {
        const auto r = lostflops::import_megatron(text, "<fuzz>", options);
        lostflops::fuzz::check_written_text(r.job_yaml, "import megatron", true);
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
