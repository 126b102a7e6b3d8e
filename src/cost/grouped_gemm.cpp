// Grouped GEMM of MoE experts. Mechanism: one kernel over the groups' tiles
// (tile and wave quantisation of the concatenated rows, cost/device_time.cpp),
// each group padded to the 128-row M block, and a loss for few rows per
// group measured as a component: DeepGEMM's README tables on H800, FP8
// (deepseek-ai/DeepGEMM README.md "Performance", commit 327ec92, 2025-04-09),
// masked layout with 256 / 512 / 1024 rows per group against contiguous
// layout with 4096 / 8192 rows, same (n, k) = (4096, 7168) and (7168, 2048):
//   rows    (4096,7168)      (7168,2048)      mean factor
//   256     932/1346=0.692   815/1214=0.671   0.682
//   512    1040/1346=0.773   916/1214=0.755   0.764
//   1024   1233/1346=0.916   925/1214=0.762   0.839
//   4096+  1                 1                1
// The same table is data/calibration/grouped_gemm_deepgemm.csv (tests hold
// the two equal).
#include "cost/grouped_gemm.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace lostflops {

namespace {

constexpr std::array<GroupedGemmRow, 10> kRows{{
    {8192, 4096, 7168, 1346}, {8192, 7168, 2048, 1214}, {4096, 4096, 7168, 1346}, {4096, 7168, 2048, 1214},
    {1024, 4096, 7168, 1233}, {1024, 7168, 2048, 925},  {512, 4096, 7168, 1040},  {512, 7168, 2048, 916},
    {256, 4096, 7168, 932},   {256, 7168, 2048, 815},
}};
constexpr double kRowBlock = 128;  // M block of Hopper GEMM tiles; DeepGEMM's contiguous-layout alignment

// Mean over the two (n, k) shapes of tflops(m) / tflops(4096 rows).
double factor_at(double m) {
    double sum = 0;
    int shapes = 0;
    for (const GroupedGemmRow& r : kRows) {
        if (r.m_per_group != m) continue;
        for (const GroupedGemmRow& base : kRows)
            if (base.m_per_group == 4096 && base.n == r.n && base.k == r.k) {
                sum += r.tflops / base.tflops;
                ++shapes;
            }
    }
    return sum / shapes;
}

}  // namespace

std::span<const GroupedGemmRow> deepgemm_grouped_rows() { return kRows; }

double grouped_gemm_row_factor(double m) {
    static const std::array<double, 4> rows{256, 512, 1024, 4096};
    static const std::array<double, 4> f{factor_at(256), factor_at(512), factor_at(1024), factor_at(4096)};
    if (m <= rows.front()) return f.front();
    if (m >= rows.back()) return f.back();
    for (size_t i = 1; i < rows.size(); ++i) {
        if (m > rows[i]) continue;
        const double x = (std::log2(m) - std::log2(rows[i - 1])) / (std::log2(rows[i]) - std::log2(rows[i - 1]));
        return f[i - 1] + x * (f[i] - f[i - 1]);
    }
    return f.back();
}

double grouped_gemm_time_s(const DeviceModel& d, double m, double n, double k, double count) {
    if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 0;
    const double padded = std::ceil(m / kRowBlock) * kRowBlock;
    const double rows = padded * count;
    const double eff = d.gemm_max * gemm_tile_efficiency(d, rows, n) * (k / (k + d.gemm_k_half)) *
                       grouped_gemm_row_factor(m);
    const double compute_s = 2.0 * rows * n * k / (d.peak_flops * eff);
    const double bytes = d.bytes_per_element * count * (m * k + k * n) + d.out_bytes_per_element * count * m * n;
    return std::max(compute_s, bytes / (d.hbm_Bps * d.memory_bound));
}

}  // namespace lostflops
