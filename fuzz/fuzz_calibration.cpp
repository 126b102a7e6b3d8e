// libFuzzer entry point for the calibration profile reader: any bytes give a
// profile or an InputError; a profile read is written back and must read
// again to the same YAML (the writer and the reader share one table of
// keys), and every measured curve must answer a lookup.
// Seeds: data/calibration.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"
#include "lostflops/nccl_curve.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    lostflops::Calibration c;
    try {
        c = lostflops::parse_calibration_text(text, "<fuzz>");
    } catch (const lostflops::InputError&) {
        return 0;
    }
    for (const auto& curve : c.nccl)
        (void)lostflops::curve_time_s(c, curve.op, lostflops::curve_layout(curve), 1e6);
    const std::string yaml = lostflops::calibration_to_yaml(c);
    try {
        lostflops::Calibration again = lostflops::parse_calibration_text(yaml, "<fuzz-roundtrip>");
        again.source = c.source;  // the first line names where the profile came from
        lostflops::fuzz::require(lostflops::calibration_to_yaml(again) == yaml, "calibration: write, read, write differs");
    } catch (const lostflops::InputError& e) {
        lostflops::fuzz::finding(std::string("calibration: its own output does not read: ") + e.what());
    }
    return 0;
}
