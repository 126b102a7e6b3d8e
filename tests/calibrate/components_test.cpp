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
                t.gemm.push_back({"h100-sxm", 700, dt, m, 8192, k, tflops, "synthetic", 0});
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
    // Blackwell's cuDNN backward is not measured: its forward times the
    // family's backward/forward ratio (FA2 on B200, head dim 64: 333.95/379.44 at 16k).
    const DeviceFamily& b = c.device("blackwell");
    const double fwd = attention_efficiency(b, AttentionImpl::cudnn, false, false, 64, 16384);
    EXPECT_NEAR(fwd, 1157 / 2500.0, 1e-12);
    EXPECT_NEAR(attention_efficiency(b, AttentionImpl::cudnn, true, false, 64, 16384), fwd * 333.95 / 379.44, 1e-12);
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
    EXPECT_LT(pf, 0.75);
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
