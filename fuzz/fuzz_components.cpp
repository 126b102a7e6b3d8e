// libFuzzer entry point for the `calibrate components` folder reader
// (calibrate/component_tables read_measured_tables: meta.json and the
// gpu_components.py tables) and the fit of the device families on top of
// it (fit_components). The input is the folder's four files in this order,
// separated by NUL bytes: meta.json, gemm.csv, attention.csv,
// memory_bound.csv (a file absent when its part is); they are written to a
// folder named h100-sxm under the temporary folder, one per process. Any
// bytes give tables and a fit with finite figures, or an InputError.
// Seeds: tests/data/calibrate/components-fuzz.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibrate/component_tables.h"
#include "fuzz_check.h"
#include "lostflops/calibrate_components.h"
#include "lostflops/calibration.h"
#include "lostflops/error.h"

namespace {

const std::string& folder() {
    static const std::string dir = [] {
        const auto d = std::filesystem::temp_directory_path() /
                       ("lostflops-fuzz-components-" + std::to_string(::getpid())) / "h100-sxm";
        std::filesystem::create_directories(d);
        return d.string();
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const char* names[] = {"meta.json", "gemm.csv", "attention.csv", "memory_bound.csv"};
    size_t at = 0;
    for (const char* name : names) {
        const auto path = std::filesystem::path(folder()) / name;
        std::error_code ec;
        std::filesystem::remove(path, ec);
        if (at > text.size()) continue;
        const size_t end = std::min(text.find('\0', at), text.size());
        std::ofstream(path, std::ios::binary) << text.substr(at, end - at);
        at = end + 1;
    }
    try {
        const auto measured = lostflops::calib::read_measured_tables(folder());
        for (const auto& g : measured.gemm)
            lostflops::fuzz::require(std::isfinite(g.power_w) && g.power_w > 0 && std::isfinite(g.tflops),
                                     "a GEMM row with a power or rate that is not a positive finite number");
        const auto merged = lostflops::calib::merge_tables(lostflops::calib::builtin_component_tables(), measured);
        const lostflops::ComponentFit fit = lostflops::fit_components(merged, lostflops::default_calibration());
        lostflops::fuzz::require(std::isfinite(fit.power_exponent) && std::isfinite(fit.gemm_rms_log_error),
                                 "a fit that is not finite");
    } catch (const lostflops::InputError&) {
    }
    return 0;
}
