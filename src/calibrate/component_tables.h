// Component micro-benchmark tables: the data the device profiles are
// calibrated on (never end-to-end runs). Two layouts are read:
//  - the published tables of data/calibration/ (gemm.csv, attention.csv,
//    memory_bound.csv; '#' comment lines first, a `source` column on every
//    row), embedded in the binary;
//  - the folder scripts/measure/gpu_components.py writes on a GPU
//    (data/measured/<gpu>/: meta.json with the GPU, driver and library
//    versions, gemm.csv, attention.csv, memory_bound.csv in the script's own
//    columns), converted to the same rows with the folder as source.
// Throws InputError (file, line and column) for a malformed table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lostflops/calibration.h"

namespace lostflops::calib {

struct GemmRow {
    std::string gpu;       // catalog name
    double power_w = 0;    // board power during the measurement
    GemmDtype dtype = GemmDtype::bf16;
    double m = 0, n = 0, k = 0;
    double tflops = 0;     // 2*m*n*k / time
    std::string source;
    int line = 0;
    // The best shape of a published sweep over shapes on this GPU and format
    // (stas00's Maximum Achievable Matmul FLOPS, MAMF): no shape was measured
    // faster, so the fit may not price any shape above it
    // (calibrate_components.h). Column `best_of_sweep` (0/1), optional.
    bool best_of_sweep = false;
};

struct AttentionRow {
    std::string gpu;
    AttentionImpl kernel = AttentionImpl::fa2;
    bool backward = false;
    bool causal = false;
    int head_dim = 0;
    double seq = 0;
    double tflops = 0;     // FlashAttention convention (calibration.h AttentionPoint)
    std::string source;
    int line = 0;
};

struct MemoryRow {
    std::string gpu;
    std::string kernel;
    double GBps = 0;       // read + write bytes per second / 1e9
    std::string source;
    int line = 0;
};

struct ComponentTables {
    std::vector<GemmRow> gemm;
    std::vector<AttentionRow> attention;
    std::vector<MemoryRow> memory;
    std::vector<std::string> sources;  // the files read, for reports
};

// The published tables of data/calibration/ as embedded in the binary.
ComponentTables builtin_component_tables();

// One published-layout table from text; `source` names it in errors.
std::vector<GemmRow> parse_gemm_table(std::string_view text, const std::string& source);
std::vector<AttentionRow> parse_attention_table(std::string_view text, const std::string& source);
std::vector<MemoryRow> parse_memory_table(std::string_view text, const std::string& source);

// A gpu_components.py output folder measured on catalog GPU `gpu` (the
// folder's name when empty). Files the script did not write are skipped;
// meta.json is required (it names what was measured).
ComponentTables read_measured_tables(const std::string& dir, const std::string& gpu = "");

// Rows of `extra` replace those of `base` measured on the same GPU and of the
// same kind (GEMM dtype, attention kernel, memory); the rest are added.
ComponentTables merge_tables(const ComponentTables& base, const ComponentTables& extra);

}  // namespace lostflops::calib
