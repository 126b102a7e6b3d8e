// Calibrating the device families on component micro-benchmarks
// (`lostflops calibrate components`): GEMM, attention and memory-bound
// tables (data/calibration/*.csv, and a GPU's measured folder written by
// scripts/measure/gpu_components.py) -> the families' factors. Whole runs play
// no part: they judge the result (`validate`).
//
// The fit, per device family and GEMM format (calibration.h GemmDtype):
//  - each GEMM row is priced by the cost model itself (cost/device_time.h
//    gemm_time_s: roofline, tile and wave quantisation, the k loop's
//    k/(k + gemm_k_half)) on the catalog GPU it was measured on;
//  - gemm_max minimises the squared log error of predicted against measured
//    TFLOP/s over the family's rows of that format (grid of 0.001), with
//    gemm_k_half shared by all families (grid) and one power exponent shared
//    by all (grid of 0.01; only rows measured below their catalog TDP can set
//    it). The reference power of a family is the lowest W per dense bf16
//    TFLOP/s among its GPUs measured at their catalog TDP;
//  - gemm_max never exceeds the group's ceiling: a row marked best_of_sweep
//    (the best shape of a published sweep over shapes at the GPU's TDP,
//    stas00's Maximum Achievable Matmul FLOPS) bounds it at tflops / peak of
//    the format (the best such row of each GPU, the lowest over the family's
//    GPUs), since the model's fastest GEMM runs at gemm_max. Where the
//    unconstrained optimum lies above it (H100: the model's tile and wave
//    factors call the sweep's best shapes inefficient, yet the sweep measured
//    no larger shape faster), the fit is the
//    grid step at or below the ceiling; gemm_k_half and the power exponent are
//    fitted under the same bound. A best-of-sweep row measured below its TDP
//    is an error;
//  - memory_bound is the mean fraction of catalog HBM bandwidth of the
//    family's memory-bound rows;
//  - attention curves are the attention rows themselves (efficiency = TFLOP/s
//    over the GPU's bf16 dense peak).
// A family or format without rows keeps the base profile's value.
//
// Contract: pure function of its arguments; throws InputError for a row whose
// GPU is not in the catalog or whose architecture no family prices.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "lostflops/calibration.h"

namespace lostflops {

namespace calib {
struct ComponentTables;
}

struct GemmRowFit {
    std::string family;
    std::string gpu;
    GemmDtype dtype = GemmDtype::bf16;
    double m = 0, n = 0, k = 0;
    double power_w = 0;
    double measured_tflops = 0;
    double predicted_tflops = 0;  // by the fitted profile
    std::string source;
};

struct FamilyComponentFit {
    std::string family;
    std::array<double, kGemmDtypeCount> gemm_max{};
    std::array<int, kGemmDtypeCount> gemm_rows{};  // rows behind each value (0: kept from the base)
    std::array<double, kGemmDtypeCount> gemm_ceiling{};  // bound from best-of-sweep rows (1: none; fp8_row: fp8_tensor's)
    double memory_bound = 0;
    int memory_rows = 0;
    double reference_w_per_tflop = 0;
    int attention_points = 0;
};

struct ComponentFit {
    Calibration calibration;            // base with the fitted factors and the tables' attention curves
    double gemm_k_half = 0;
    double power_exponent = 0;
    int power_rows = 0;                 // rows measured below their catalog TDP
    std::vector<FamilyComponentFit> families;
    std::vector<GemmRowFit> gemm;       // every GEMM row, predicted by the fitted profile
    double gemm_rms_log_error = 0;      // over all GEMM rows
    std::vector<std::string> sources;   // the tables read
};

ComponentFit fit_components(const calib::ComponentTables& tables, const Calibration& base);

}  // namespace lostflops
