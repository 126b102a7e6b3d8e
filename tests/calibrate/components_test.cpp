// Device families from component micro-benchmarks (calibrate_components.h,
// component_tables.h, cost/device_time.h): the default profile is the fit of
// the published tables, a synthetic truth is recovered, the measured folder
// of scripts/measure/gpu_components.py is read, attention curves are looked
// up as documented (hand-computed), the power model, and bad tables are
// errors naming file and line.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/component_tables.h"
#include "cost/device_time.h"
#include "lostflops/calibrate_components.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"

namespace lostflops {
namespace {

using calib::ComponentTables;

const DeviceFamily& family(const Calibration& c, const char* name) { return *c.find_family(name); }

TEST(CalibrateComponents, DefaultProfileIsTheFitOfTheTables) {
    // scripts/fit-components.sh writes what default.yaml must say.
    const Calibration d = default_calibration();
    const ComponentFit fit = fit_components(calib::builtin_component_tables(), d);
    EXPECT_EQ(fit.gemm_k_half, d.gemm_k_half);
    for (const auto& f : d.devices) {
        const DeviceFamily& got = family(fit.calibration, f.name.c_str());
        EXPECT_EQ(got.gemm_max, f.gemm_max) << f.name << ": run scripts/fit-components.sh";
        EXPECT_EQ(got.memory_bound, f.memory_bound) << f.name;
        EXPECT_EQ(got.reference_w_per_tflop, f.reference_w_per_tflop) << f.name;
        EXPECT_EQ(got.power_exponent, f.power_exponent) << f.name;
    }
    EXPECT_GT(fit.power_rows, 0);
    EXPECT_LT(fit.gemm_rms_log_error, 0.15);  // the cost model prices the GEMM rows within ~15 %
    // No family prices a GEMM above the best of a published sweep: H100 bf16
    // 794.5 and fp8 1,402.6 TFLOP/s (stas00 MAMF, data/calibration/gemm.csv).
    const DeviceFamily& h = family(d, "hopper");
    EXPECT_LE(h.gemm_max[static_cast<int>(GemmDtype::bf16)], 794.5 / 989.4);
    EXPECT_LE(h.gemm_max[static_cast<int>(GemmDtype::fp8_tensor)], 1402.6 / 1978.9);
    for (const auto& f : fit.families)
        for (int dt = 0; dt < kGemmDtypeCount; ++dt) {
            if (f.gemm_rows[dt]) {
                EXPECT_LE(f.gemm_max[dt], f.gemm_ceiling[dt]) << f.family;
            }
        }
}

// Per-row fp8 runs the per-tensor GEMM's instructions, its scales in the
// epilogue: without a sweep of its own it takes the family's per-tensor
// bound (hopper: the H100 fp8 sweep's 1,402.6 of 1,978.9 TFLOP/s), and the
// fit keeps it there though its 500 W rows alone would say more.
TEST(CalibrateComponents, PerRowFp8TakesThePerTensorBound) {
    const ComponentFit fit = fit_components(calib::builtin_component_tables(), default_calibration());
    const int tensor = static_cast<int>(GemmDtype::fp8_tensor), row = static_cast<int>(GemmDtype::fp8_row);
    bool seen = false;
    for (const auto& f : fit.families) {
        if (f.family != "hopper") continue;
        seen = true;
        ASSERT_GT(f.gemm_rows[row], 0);
        EXPECT_NEAR(f.gemm_ceiling[tensor], 1402.6 / 1978.9, 1e-3);
        EXPECT_DOUBLE_EQ(f.gemm_ceiling[row], f.gemm_ceiling[tensor]);
        EXPECT_LE(f.gemm_max[row], f.gemm_ceiling[tensor]);
    }
    EXPECT_TRUE(seen);
}

TEST(CalibrateComponents, RecoversTheFamilyThatGeneratedTheRows) {
    Calibration truth = default_calibration();
    DeviceFamily& h = *truth.find_family("hopper");
    h.gemm_max[static_cast<int>(GemmDtype::bf16)] = 0.712;
    h.gemm_max[static_cast<int>(GemmDtype::fp8_tensor)] = 0.655;
    truth.gemm_k_half = 128;
    ComponentTables t;
    const Gpu gpu = *find_gpu("h100-sxm");
    for (const double m : {1024.0, 4096.0, 16384.0})
        for (const double k : {2048.0, 8192.0}) {
            for (GemmDtype dt : {GemmDtype::bf16, GemmDtype::fp8_tensor}) {
                const DeviceModel dev = make_device_model(gpu, dt == GemmDtype::bf16 ? Precision::bf16 : Precision::fp8,
                                                          truth);
                const double tflops = 2 * m * 8192 * k / gemm_time_s(dev, m, 8192, k) / 1e12;
                t.gemm.push_back({"h100-sxm", 700, dt, m, 8192, k, tflops, "synthetic", 0, false});
            }
        }
    Calibration start = default_calibration();
    start.sustained_compute = truth.sustained_compute;
    const ComponentFit fit = fit_components(t, start);
    EXPECT_EQ(fit.gemm_k_half, 128);
    // The sustained fraction scales the rows like gemm_max: the fit sees their product.
    const double s = truth.sustained_compute;
    EXPECT_NEAR(family(fit.calibration, "hopper").gemm_max[0], std::round(0.712 * s * 1000) / 1000, 0.0011);
    EXPECT_NEAR(family(fit.calibration, "hopper").gemm_max[1], std::round(0.655 * s * 1000) / 1000, 0.0011);
    EXPECT_LT(fit.gemm_rms_log_error, 0.003);
    // Families without rows keep the base's values.
    EXPECT_EQ(family(fit.calibration, "blackwell").gemm_max, family(start, "blackwell").gemm_max);
}

TEST(CalibrateComponents, BestOfSweepRowIsACeilingOfGemmMax) {
    // Rows made by a profile with hopper bf16 gemm_max 0.85 fit back to 0.85;
    // a best-of-sweep row at 75 % of the H100's bf16 peak caps it at 0.750,
    // though the unconstrained optimum with that row (six rows at 0.85, one
    // at 0.75 / (8192 / (8192 + 24 * 989.4 / 132)) = 0.7665: mean log
    // 0.836) lies above.
    Calibration truth = default_calibration();
    truth.sustained_compute = 1.0;
    truth.find_family("hopper")->gemm_max[0] = 0.85;
    ComponentTables t;
    const Gpu gpu = *find_gpu("h100-sxm");
    const DeviceModel dev = make_device_model(gpu, Precision::bf16, truth);
    for (const double m : {1024.0, 4096.0, 16384.0})
        for (const double k : {2048.0, 8192.0})
            t.gemm.push_back({"h100-sxm", 700, GemmDtype::bf16, m, 8192, k,
                              2 * m * 8192 * k / gemm_time_s(dev, m, 8192, k) / 1e12, "synthetic", 0, false});
    const auto bf16_max = [](const ComponentFit& f) { return family(f.calibration, "hopper").gemm_max[0]; };
    const auto hopper_fit = [](const ComponentFit& f) {
        for (const auto& ff : f.families)
            if (ff.family == "hopper") return ff;
        return FamilyComponentFit{};
    };
    ComponentFit free = fit_components(t, truth);
    EXPECT_NEAR(bf16_max(free), 0.85, 0.0011);
    EXPECT_EQ(hopper_fit(free).gemm_ceiling[0], 1.0);  // no best-of-sweep row: no ceiling
    t.gemm.push_back({"h100-sxm", 700, GemmDtype::bf16, 8192, 8192, 8192, 0.75 * 989.4, "sweep", 7, true});
    t.gemm.back().best_of_sweep = false;
    EXPECT_GT(bf16_max(fit_components(t, truth)), 0.80);  // the same row, not marked: it only pulls
    t.gemm.back().best_of_sweep = true;
    const ComponentFit capped = fit_components(t, truth);
    EXPECT_DOUBLE_EQ(bf16_max(capped), 0.75);
    EXPECT_DOUBLE_EQ(hopper_fit(capped).gemm_ceiling[0], 0.75);
    // The ceiling row itself is now priced below its measurement.
    EXPECT_LT(capped.gemm.back().predicted_tflops, capped.gemm.back().measured_tflops);
    // Each GPU is bounded by its best sweep (a lower one of the same GPU does
    // not bind); the family by the lowest of its GPUs' bounds.
    t.gemm.push_back({"h100-sxm", 700, GemmDtype::bf16, 4096, 4096, 4096, 0.70 * 989.4, "older sweep", 8, true});
    t.gemm.push_back({"h200-sxm", 700, GemmDtype::bf16, 4096, 8192, 8192, 0.78 * 989.4, "sweep", 9, true});
    EXPECT_DOUBLE_EQ(bf16_max(fit_components(t, truth)), 0.75);
    t.gemm.back().tflops = 0.72 * 989.4;  // the H200's sweep is now the lowest bound
    EXPECT_DOUBLE_EQ(bf16_max(fit_components(t, truth)), 0.72);
    // A sweep measured below the TDP bounds nothing: an error naming the row.
    t.gemm.push_back({"h100-sxm", 500, GemmDtype::bf16, 8192, 8192, 8192, 500, "capped sweep", 11, true});
    try {
        fit_components(t, truth);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("line 11: best_of_sweep"), std::string::npos) << e.what();
    }
}

TEST(CalibrateComponents, ReadsAMeasuredFolderAndItsVersions) {
    const std::string dir = test::calibrate_data("measured/h100-sxm");
    const ComponentTables m = calib::read_measured_tables(dir);
    ASSERT_EQ(m.gemm.size(), 3u);
    EXPECT_EQ(m.gemm[1].dtype, GemmDtype::fp8_tensor);
    EXPECT_EQ(m.gemm[2].dtype, GemmDtype::fp8_row);
    EXPECT_EQ(m.gemm[0].power_w, 500);  // nvidia-smi power.limit "500.00 W"
    EXPECT_NE(m.gemm[0].source.find("560.35.03"), std::string::npos) << m.gemm[0].source;
    EXPECT_NE(m.gemm[0].source.find("2.6.0+cu126"), std::string::npos);
    // The failed cuDNN row is skipped; each kept row gives a forward and a backward point.
    ASSERT_EQ(m.attention.size(), 4u);
    EXPECT_EQ(m.attention[0].kernel, AttentionImpl::fa2);
    EXPECT_FALSE(m.attention[0].backward);
    EXPECT_TRUE(m.attention[1].backward);
    EXPECT_EQ(m.attention[1].tflops, 245.5);
    EXPECT_TRUE(m.attention[0].causal);
    EXPECT_EQ(m.memory.size(), 2u);
    // Measured rows replace the published ones of the same GPU and kind.
    const ComponentTables b = calib::builtin_component_tables();
    const ComponentTables merged = calib::merge_tables(b, m);
    int h100_bf16 = 0, h100_fa2 = 0;
    for (const auto& g : merged.gemm) h100_bf16 += g.gpu == "h100-sxm" && g.dtype == GemmDtype::bf16;
    for (const auto& a : merged.attention) h100_fa2 += a.gpu == "h100-sxm" && a.kernel == AttentionImpl::fa2;
    EXPECT_EQ(h100_bf16, 1);
    EXPECT_EQ(h100_fa2, 4);
    // The measured fa2 curve is what the hopper family then prices.
    const ComponentFit fit = fit_components(merged, default_calibration());
    const DeviceFamily& h = family(fit.calibration, "hopper");
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::fa2, false, true, 128, 4096), 275.0 / 989.4, 1e-12);
    // A folder named after no catalog GPU needs --gpu.
    EXPECT_THROW(calib::read_measured_tables(test::calibrate_data("measured")), InputError);
    EXPECT_NO_THROW(calib::read_measured_tables(dir, "h800-sxm"));
}

TEST(CalibrateComponents, BadTablesNameFileLineAndColumn) {
    auto error_of = [](auto parse, const std::string& text) {
        try {
            parse(text, "t.csv");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string head = "# comment\ngpu,power_w,dtype,m,n,k,tflops,source\n";
    auto gemm = [](const std::string& t, const std::string& s) { return calib::parse_gemm_table(t, s); };
    EXPECT_NE(error_of(gemm, head + "h999,700,bf16,1,1,1,1,x\n").find("line 3: gpu"), std::string::npos);
    EXPECT_NE(error_of(gemm, head + "h100-sxm,700,bf17,1,1,1,1,x\n").find("line 3"), std::string::npos);
    EXPECT_NE(error_of(gemm, head + "h100-sxm,700,bf16,1,1,1,fast,x\n").find("tflops"), std::string::npos);
    EXPECT_NE(error_of(gemm, head + "h100-sxm,700,bf16,1,1,1,-5,x\n").find("tflops"), std::string::npos);
    EXPECT_NE(error_of(gemm, "gpu,dtype\nh100-sxm,bf16\n").find("missing column 'power_w'"), std::string::npos);
    const std::string swept = "gpu,power_w,dtype,m,n,k,tflops,best_of_sweep,source\n";
    EXPECT_NE(error_of(gemm, swept + "h100-sxm,700,bf16,1,1,1,1,yes,x\n").find("line 2: best_of_sweep"),
              std::string::npos);
    EXPECT_TRUE(calib::parse_gemm_table(swept + "h100-sxm,700,bf16,1,1,1,1,1,x\n", "t.csv")[0].best_of_sweep);
    EXPECT_FALSE(calib::parse_gemm_table(head + "h100-sxm,700,bf16,1,1,1,1,x\n", "t.csv")[0].best_of_sweep);
    auto attn = [](const std::string& t, const std::string& s) { return calib::parse_attention_table(t, s); };
    EXPECT_NE(error_of(attn, "gpu,kernel,pass,causal,head_dim,seq,tflops,source\nh100-sxm,fa2,up,0,128,1024,1,x\n")
                  .find("pass"),
              std::string::npos);
    EXPECT_EQ(calib::builtin_component_tables().gemm.size() > 30, true);
}

TEST(AttentionCurves, LookupIsAsDocumented) {
    const Calibration c = default_calibration();
    const DeviceFamily& h = c.device("hopper");
    const double peak = 989.4;
    // Measured point: cuDNN forward, causal, head dim 128, 4k: 518 TFLOP/s (FA3 paper fig. 5).
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::cudnn, false, true, 128, 4096), 518 / peak, 1e-12);
    // Halfway in log between 2k (484) and 4k (518).
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::cudnn, false, true, 128, std::sqrt(2048.0 * 4096)),
                (484 + 518) / 2.0 / peak, 1e-12);
    // Flat beyond the measured range (256k with cp 8: chunks of 32k).
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::fa2, false, true, 128, 32768), 335 / peak, 1e-12);
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::fa2, false, true, 128, 256), 191 / peak, 1e-12);
    // Nearest measured head dimension: 96 -> 128 (log distance 0.29 against 0.41 to 64).
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::fa3, false, false, 96, 8192), 646 / peak, 1e-12);
    // Backward with the causal mask is not measured: the non-causal backward
    // (FA2 hd128 16k: 322) times the mean causal/non-causal forward ratio of the
    // family's kernels at that length (hd 128: fa2 335/370, cudnn 539/595,
    // fa3 616/648; hd 256: 298/326, 509/581, 642/756).
    const double r = (335.0 / 370 + 539.0 / 595 + 616.0 / 648 + 298.0 / 326 + 509.0 / 581 + 642.0 / 756) / 6;
    EXPECT_NEAR(attention_efficiency(h, AttentionImpl::fa2, true, true, 128, 16384), 322 / peak * r, 1e-12);
    // Blackwell's cuDNN backward without the mask is not measured: its
    // forward times cuDNN's own backward/forward ratio on the family (the
    // causal head-dim-128 pair on B200 at 16k: 1074.499/1358.566), not
    // FlashAttention-2's (333.95/379.44), a different implementation.
    const DeviceFamily& b = c.device("blackwell");
    const double fwd = attention_efficiency(b, AttentionImpl::cudnn, false, false, 64, 16384);
    EXPECT_NEAR(fwd, 1157 / 2500.0, 1e-12);
    EXPECT_NEAR(attention_efficiency(b, AttentionImpl::cudnn, true, false, 64, 16384), fwd * 1074.499 / 1358.566,
                1e-12);
    // With the mask it is measured (B200 peak 2,250 TFLOP/s).
    EXPECT_NEAR(attention_efficiency(b, AttentionImpl::cudnn, true, true, 128, 8192), 945.44 / 2250.0, 1e-12);
    // FlashAttention-2 keeps its own ratio (no backward of its own is missing
    // there: measured); a kernel with no pair falls back to the family mean.
    EXPECT_NEAR(attention_efficiency(b, AttentionImpl::fa2, true, false, 64, 16384), 333.95 / 2250.0, 1e-12);
    // A kernel the family has no curve of.
    EXPECT_EQ(attention_efficiency(b, AttentionImpl::fa3, false, false, 128, 4096), 0.0);
}

TEST(DeviceModel, BlackwellHasItsOwnProfileAndPowerCapsSlowCompute) {
    const Calibration c = default_calibration();
    const DeviceModel b = make_device_model(*find_gpu("b200"), Precision::fp8, c);
    const DeviceModel h = make_device_model(*find_gpu("h100-sxm"), Precision::fp8, c);
    const double s = c.sustained_compute;
    EXPECT_DOUBLE_EQ(b.gemm_max, c.device("blackwell").gemm_max[static_cast<int>(GemmDtype::fp8_tensor)] * s);
    EXPECT_DOUBLE_EQ(h.gemm_max, c.device("hopper").gemm_max[static_cast<int>(GemmDtype::fp8_tensor)] * s);
    EXPECT_NE(b.gemm_max, h.gemm_max);
    EXPECT_EQ(b.attention_kernel, AttentionImpl::cudnn);  // megatron-core default use
    // torchtitan's H100s at 500 W: (500 W / 989.4 TFLOP/s / the reference 700 / 989.4)^exponent.
    Gpu capped = *find_gpu("h100-sxm");
    capped.tdp_w = 500;
    const DeviceFamily& hf = c.device("hopper");
    const double pf = std::pow(500 / 989.4 / hf.reference_w_per_tflop, hf.power_exponent);
    EXPECT_NEAR(power_factor(capped, hf), pf, 1e-12);
    EXPECT_LT(pf, 0.8);  // (500 / 700)^0.83 = 0.756
    EXPECT_EQ(power_factor(*find_gpu("h100-sxm"), hf), 1.0);
    EXPECT_EQ(power_factor(*find_gpu("gb200"), c.device("blackwell")), 1.0);  // more W per TFLOP/s than B200
    const DeviceModel hc = make_device_model(capped, Precision::bf16, c);
    EXPECT_NEAR(hc.gemm_max, hf.gemm_max[0] * pf * s, 1e-12);
    // An FSDP stack on Hopper runs FlashAttention-2 (PyTorch SDPA in 2024).
    DeviceUse u;
    u.framework = Framework::fsdp;
    EXPECT_EQ(make_device_model(*find_gpu("h100-sxm"), Precision::bf16, c, u).attention_kernel, AttentionImpl::fa2);
    // A GEMM format the family was never measured in is refused, not guessed.
    u.fp8 = GemmDtype::mxfp8;
    EXPECT_THROW(make_device_model(*find_gpu("h100-sxm"), Precision::fp8, c, u), InputError);
}

}  // namespace
}  // namespace lostflops
