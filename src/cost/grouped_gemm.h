// Time of a grouped GEMM: `count` groups (the local experts of an MoE layer)
// of m rows each against their own [k, n] weights, in one kernel. Seconds,
// without the launch overhead.
#pragma once

#include <span>

#include "cost/device_time.h"

namespace lostflops {

// One row of DeepGEMM's published grouped-GEMM table
// (data/calibration/grouped_gemm_deepgemm.csv).
struct GroupedGemmRow {
    double m_per_group, n, k, tflops;
};
std::span<const GroupedGemmRow> deepgemm_grouped_rows();

// Throughput of a group of m rows relative to groups of >= 4096 rows of the
// same (n, k), in (0, 1]: DeepGEMM's rows averaged over their two shapes,
// linear in log2(m) between 256 and 4096 rows, flat outside.
double grouped_gemm_row_factor(double m_per_group);

// The groups' rows are padded to 128 (the M block of Hopper GEMM tiles, and
// DeepGEMM's contiguous-layout alignment); their tiles fill the SMs
// together (one launch); compute at the device's GEMM efficiency of the
// concatenated shape times grouped_gemm_row_factor(m); memory: every group's
// weights read once.
double grouped_gemm_time_s(const DeviceModel& d, double m, double n, double k, double count);

}  // namespace lostflops
