// libFuzzer entry point for the MaxText config import (interop/maxtext_import)
// and the slice-type parser: any bytes give a job file or an InputError. The
// first line of the input is also tried as the slice type; the rest is the
// config, imported on a v5p-128 and on that slice type. The job file the
// import writes must be YAML with no control characters; loaded, its plan
// exported back as MaxText keys (maxtext_export) must be too.
// Seeds: tests/data/interop/maxtext.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "interop/maxtext_export.h"
#include "interop/maxtext_keys.h"
#include "lostflops/error.h"
#include "lostflops/interop.h"
#include "lostflops/job.h"

namespace {

void import_on(const std::string& text, const std::string& tpu) {
    try {
        lostflops::ImportOptions o;
        o.tpu = tpu;
        const auto r = lostflops::import_maxtext(text, "<fuzz>", o);
        lostflops::fuzz::check_written_text(r.job_yaml, "import maxtext", true);
        const lostflops::Job job = lostflops::parse_job(r.job_yaml, "<imported>");
        lostflops::fuzz::check_written_text(lostflops::export_maxtext(job).text, "export maxtext", true);
    } catch (const lostflops::InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::string first = text.substr(0, text.find('\n'));
    std::string why;
    (void)lostflops::interop::parse_tpu_slice(first, why);
    import_on(text, "v5p-128");
    if (first.size() < 32) import_on(text, first);
    return 0;
}
