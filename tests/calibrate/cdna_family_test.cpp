// The AMD CDNA 3 and CDNA 4 device families of the default profile
// (data/calibration/default.yaml; docs/calibration.md "AMD CDNA 3 and CDNA 4"):
// priced by their own families, bounded by the published MAMF sweeps of
// gemm.csv (stas00/ml-engineering: MI300X 781.9, MI325X 784.9 of 1,307.4;
// MI355X 1,565 of 2,516.6 TFLOP/s bf16), never above them; their rows leave
// the NVIDIA families and the shared gemm_k_half as they were; the MI355X
// attention curve is the table's rows; fp8 is refused, not guessed.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "calibrate/component_tables.h"
#include "cost/device_time.h"
#include "lostflops/calibrate_components.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"

namespace lostflops {
namespace {

constexpr int kBf16 = static_cast<int>(GemmDtype::bf16);

bool is_amd(const std::string& gpu) { return gpu.rfind("mi", 0) == 0; }

TEST(CdnaFamily, AmdGpusArePricedByTheirOwnGeneration) {
    const Calibration c = default_calibration();
    EXPECT_EQ(c.device(find_gpu("mi300x")->arch).name, "cdna3");
    EXPECT_EQ(c.device(find_gpu("mi325x")->arch).name, "cdna3");
    EXPECT_EQ(c.device(find_gpu("mi355x")->arch).name, "cdna4");
    // CDNA 2 (MI250X) has no measurement and stays with ampere.
    EXPECT_EQ(c.device("cdna2").name, "ampere");
}

TEST(CdnaFamily, GemmMaxIsBoundedByThePublishedSweeps) {
    const Calibration c = default_calibration();
    // A family's bound is the lowest of its GPUs' best sweeps: MI300X's best
    // (v1 table, 781.9) is below MI325X's 784.9.
    const double cdna3 = c.find_family("cdna3")->gemm_max[kBf16];
    const double cdna4 = c.find_family("cdna4")->gemm_max[kBf16];
    EXPECT_GT(cdna3, 0);
    EXPECT_LE(cdna3, 781.9 / 1307.4);
    EXPECT_GT(cdna4, 0);
    EXPECT_LE(cdna4, 1565.0 / 2516.6);
    // The fit of the tables says so too (the ceilings it reports).
    const ComponentFit fit = fit_components(calib::builtin_component_tables(), c);
    for (const auto& f : fit.families) {
        if (f.family == "cdna3") {
            EXPECT_NEAR(f.gemm_ceiling[kBf16], 781.9 / 1307.4, 1e-12);
            EXPECT_EQ(f.gemm_rows[kBf16], 3);
        }
        if (f.family == "cdna4") {
            EXPECT_NEAR(f.gemm_ceiling[kBf16], 1565.0 / 2516.6, 1e-12);
            EXPECT_EQ(f.gemm_rows[kBf16], 1);
        }
    }
    // No AMD row is priced above its measurement by more than the fit's
    // spread, and each is within 15 % of it.
    for (const auto& r : fit.gemm) {
        if (!is_amd(r.gpu)) continue;
        EXPECT_LT(std::abs(std::log(r.predicted_tflops / r.measured_tflops)), std::log(1.15)) << r.gpu;
    }
}

TEST(CdnaFamily, AmdRowsLeaveTheNvidiaFamiliesAsTheyWere) {
    // The AMD rows join the shared gemm_k_half and power-exponent fits: with
    // and without them every other family and both shared values agree.
    const calib::ComponentTables all = calib::builtin_component_tables();
    calib::ComponentTables nvidia = all;
    std::erase_if(nvidia.gemm, [](const calib::GemmRow& r) { return is_amd(r.gpu); });
    ASSERT_LT(nvidia.gemm.size(), all.gemm.size());
    const Calibration d = default_calibration();
    const ComponentFit with = fit_components(all, d), without = fit_components(nvidia, d);
    EXPECT_EQ(with.gemm_k_half, without.gemm_k_half);
    EXPECT_EQ(with.power_exponent, without.power_exponent);
    for (const char* name : {"ampere", "hopper", "blackwell", "tpu"}) {
        EXPECT_EQ(with.calibration.find_family(name)->gemm_max, without.calibration.find_family(name)->gemm_max)
            << name;
    }
}

TEST(CdnaFamily, DeviceModelRunsAtTheFamilyRateWithoutTheAmperePowerDerating) {
    const Calibration c = default_calibration();
    const double s = c.sustained_compute;
    // MI300X at 750 W draws 0.574 W per dense TFLOP/s: the cdna3 reference
    // (the leanest GPU measured at its TDP) itself, so no derating.
    const DeviceFamily& f3 = *c.find_family("cdna3");
    EXPECT_EQ(power_factor(*find_gpu("mi300x"), f3), 1.0);
    EXPECT_EQ(power_factor(*find_gpu("mi325x"), f3), 1.0);
    const DeviceModel d = make_device_model(*find_gpu("mi300x"), Precision::bf16, c);
    EXPECT_DOUBLE_EQ(d.gemm_max, f3.gemm_max[kBf16] * s);
    // Under ampere's reference (A100: 400 W / 312 TFLOP/s) the same GPU was
    // derated to (0.574 / 1.282)^e of the family rate: 0.43 at e = 1.04,
    // 0.51 at today's 0.83.
    const DeviceFamily& ampere = *c.find_family("ampere");
    const Gpu mi300x = *find_gpu("mi300x");
    EXPECT_NEAR(power_factor(mi300x, ampere),
                std::pow(mi300x.tdp_w / mi300x.peak_bf16_tflops / ampere.reference_w_per_tflop, ampere.power_exponent),
                1e-12);
    EXPECT_LT(power_factor(mi300x, ampere), 0.6);
    // A large GEMM on the MI355X runs near its measured best (1,565 TFLOP/s
    // at 12288 x 8192 x 8192), below it.
    const DeviceModel m = make_device_model(*find_gpu("mi355x"), Precision::bf16, c);
    const double tflops = 2.0 * 12288 * 8192 * 8192 / gemm_time_s(m, 12288, 8192, 8192) / 1e12 / s;
    EXPECT_LE(tflops, 1565.0);
    EXPECT_GT(tflops, 0.9 * 1565.0);
}

TEST(CdnaFamily, Mi355xAttentionIsTheTablesSdpaCurve) {
    // attention.csv's MI355X forward rows (PyTorch SDPA, head dim 128,
    // non-causal): 608.5 TFLOP/s at 4096 of the 2,516.6 peak; between 1024
    // (489.5) and 2048 (569.2) log-linear.
    const Calibration c = default_calibration();
    const DeviceFamily& f = *c.find_family("cdna4");
    EXPECT_NEAR(attention_efficiency(f, AttentionImpl::fa2, false, false, 128, 4096), 608.5 / 2516.6, 1e-12);
    const double mid = std::sqrt(1024.0 * 2048.0);
    EXPECT_NEAR(attention_efficiency(f, AttentionImpl::fa2, false, false, 128, mid),
                (489.5 + 569.2) / 2 / 2516.6, 1e-12);
    EXPECT_NEAR(attention_efficiency(f, AttentionImpl::fa2, true, false, 128, 4096), 512.6 / 2516.6, 1e-12);
    // cdna3: attention.csv's MI300X ASSUMPTION rows, ampere's FA2 efficiencies.
    const DeviceFamily& f3 = *c.find_family("cdna3");
    EXPECT_NEAR(attention_efficiency(f3, AttentionImpl::fa2, false, false, 128, 16384), 0.73, 1e-12);
    EXPECT_NEAR(attention_efficiency(f3, AttentionImpl::fa2, true, false, 128, 16384), 0.5, 1e-12);
}

TEST(CdnaFamily, Fp8IsRefusedUntilMeasured) {
    const Calibration c = default_calibration();
    for (const char* gpu : {"mi300x", "mi355x"}) {
        try {
            make_device_model(*find_gpu(gpu), Precision::fp8, c);
            ADD_FAILURE() << gpu << ": fp8 was priced";
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("gemm_max.fp8_tensor"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace lostflops
