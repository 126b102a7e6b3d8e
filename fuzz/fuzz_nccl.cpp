// libFuzzer entry point for the nccl-tests output reader: the first byte
// picks the --op given (bit 1) and --scope (bit 2), the rest is the text.
// Any bytes give runs or an InputError; the curves made from the runs go
// into a profile that must read back. Seeds: tests/data/calibrate.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    lostflops::NcclTestsOptions opt;
    if (data[0] & 1) opt.op = lostflops::Collective::all_gather;
    if (data[0] & 2) opt.scope = lostflops::LinkScope::inter_node;
    try {
        auto r = lostflops::parse_nccl_tests_text(text, "<fuzz>", opt);
        std::vector<std::string> warnings;
        lostflops::Calibration c;
        lostflops::merge_curves(c, lostflops::curves_from_runs(r.runs, warnings));
        try {
            (void)lostflops::parse_calibration_text(lostflops::calibration_to_yaml(c), "<fuzz-roundtrip>");
        } catch (const lostflops::InputError& e) {
            lostflops::fuzz::finding(std::string("nccl: the profile of its curves does not read: ") + e.what());
        }
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
