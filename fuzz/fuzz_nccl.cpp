// libFuzzer entry point for the nccl-tests output reader and the calibration
// profile reader: the first byte picks the reader (and the --op given), the
// rest is the text. Anything but InputError escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"
#include "lostflops/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        if (data[0] & 1) {
            lostflops::Calibration c = lostflops::parse_calibration_text(text, "<fuzz>");
            for (const auto& curve : c.nccl)
                (void)lostflops::curve_time_s(c, curve.op, curve.scope, 1e6, curve.ranks);
            return 0;
        }
        lostflops::NcclTestsOptions opt;
        if (data[0] & 2) opt.op = lostflops::Collective::all_gather;
        auto r = lostflops::parse_nccl_tests_text(text, "<fuzz>", opt);
        std::vector<std::string> warnings;
        lostflops::Calibration c;
        lostflops::merge_curves(c, lostflops::curves_from_runs(r.runs, warnings));
        (void)lostflops::parse_calibration_text(lostflops::calibration_to_yaml(c), "<fuzz-roundtrip>");
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
