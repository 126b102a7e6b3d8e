// Calibration profile I/O: defaults, overlay, round trip, names (each class
// of bad input: calibration_io_errors_test.cpp).
#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/calibration_fields.h"
#include "lostflops/calibration.h"
#include "lostflops/accelerator.h"
#include "lostflops/catalog.h"
#include "lostflops/error.h"

namespace lostflops {
namespace {

using test::TempFile;

void expect_same(const Calibration& a, const Calibration& b) {
    ASSERT_EQ(a.devices.size(), b.devices.size());
    for (std::size_t i = 0; i < a.devices.size(); ++i) {
        const DeviceFamily &x = a.devices[i], &y = b.devices[i];
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.archs, y.archs);
        EXPECT_EQ(x.gemm_max, y.gemm_max);
        EXPECT_EQ(x.memory_bound, y.memory_bound);
        EXPECT_EQ(x.reference_w_per_tflop, y.reference_w_per_tflop);
        EXPECT_EQ(x.power_exponent, y.power_exponent);
        EXPECT_EQ(x.attention_kernel, y.attention_kernel);
        ASSERT_EQ(x.attention.size(), y.attention.size()) << x.name;
        for (std::size_t j = 0; j < x.attention.size(); ++j) {
            EXPECT_EQ(x.attention[j].kernel, y.attention[j].kernel);
            EXPECT_EQ(x.attention[j].backward, y.attention[j].backward);
            EXPECT_EQ(x.attention[j].causal, y.attention[j].causal);
            EXPECT_EQ(x.attention[j].head_dim, y.attention[j].head_dim);
            EXPECT_EQ(x.attention[j].seq, y.attention[j].seq);
            EXPECT_EQ(x.attention[j].efficiency, y.attention[j].efficiency);
        }
    }
    EXPECT_EQ(a.gemm_k_half, b.gemm_k_half);
    EXPECT_EQ(a.kernel_overhead_us, b.kernel_overhead_us);
    EXPECT_EQ(a.collective_launch_us, b.collective_launch_us);
    EXPECT_EQ(a.bus_eff_intra, b.bus_eff_intra);
    EXPECT_EQ(a.bus_eff_inter, b.bus_eff_inter);
    EXPECT_EQ(a.p2p_eff, b.p2p_eff);
    EXPECT_EQ(a.dp_overlap, b.dp_overlap);
    EXPECT_EQ(a.tp_overlap, b.tp_overlap);
    EXPECT_EQ(a.overlap_slowdown, b.overlap_slowdown);
    EXPECT_EQ(a.optimizer_bytes_per_param, b.optimizer_bytes_per_param);
    EXPECT_EQ(a.memory_usable_fraction, b.memory_usable_fraction);
    EXPECT_EQ(a.memory_reserved_bytes, b.memory_reserved_bytes);
    ASSERT_EQ(a.nccl.size(), b.nccl.size());
    for (std::size_t i = 0; i < a.nccl.size(); ++i) {
        EXPECT_EQ(a.nccl[i].op, b.nccl[i].op);
        EXPECT_EQ(a.nccl[i].scope, b.nccl[i].scope);
        EXPECT_EQ(a.nccl[i].ranks, b.nccl[i].ranks);
        EXPECT_EQ(a.nccl[i].ranks_per_node, b.nccl[i].ranks_per_node);
        EXPECT_EQ(a.nccl[i].nodes, b.nccl[i].nodes);
        EXPECT_EQ(a.nccl[i].gpu, b.nccl[i].gpu);
        ASSERT_EQ(a.nccl[i].points.size(), b.nccl[i].points.size());
        for (std::size_t j = 0; j < a.nccl[i].points.size(); ++j) {
            EXPECT_EQ(a.nccl[i].points[j].bytes, b.nccl[i].points[j].bytes);
            EXPECT_EQ(a.nccl[i].points[j].busbw_GBps, b.nccl[i].points[j].busbw_GBps);
            EXPECT_EQ(a.nccl[i].points[j].time_us, b.nccl[i].points[j].time_us);
        }
    }
}

TEST(CalibrationIo, DefaultsAreTheEmbeddedFileWithTheAttentionTable) {
    const std::string path = std::string(LOSTFLOPS_SOURCE_DIR) + "/data/calibration/default.yaml";
    Calibration from_file = overlay_calibration(Calibration{}, test::read_text(path), path);
    Calibration builtin = default_calibration();
    // The file has no curves: they are the rows of data/calibration/attention.csv.
    for (auto& f : from_file.devices) {
        EXPECT_TRUE(f.attention.empty()) << f.name;
        f.attention = builtin.find_family(f.name)->attention;
    }
    expect_same(builtin, from_file);
    EXPECT_EQ(builtin.source, "<builtin>");
    // H100 cuDNN forward, head dim 128, causal, 16k: 539 TFLOP/s (FlashAttention-3
    // paper fig. 5) over 989.4 dense.
    const auto& h = builtin.find_family("hopper")->attention;
    const bool found = std::any_of(h.begin(), h.end(), [](const AttentionPoint& p) {
        return p.kernel == AttentionImpl::cudnn && !p.backward && p.causal && p.head_dim == 128 && p.seq == 16384 &&
               std::fabs(p.efficiency - 539 / 989.4) < 1e-12;
    });
    EXPECT_TRUE(found);
}

// One source of truth: a default-constructed Calibration (what tests and
// fuzz targets build from) prices as the default profile does, so a default
// in calibration.h cannot drift from data/calibration/default.yaml.
TEST(CalibrationIo, StructDefaultsAreTheDefaultProfile) {
    const Calibration plain;
    const Calibration profile = default_calibration();
    for (const auto& f : calib::kScalarFields) EXPECT_EQ(plain.*f.member, profile.*f.member) << f.key;
}

TEST(CalibrationIo, EveryGpuArchitectureOfTheCatalogHasAFamily) {
    const Calibration c = default_calibration();
    // Tile-and-wave GPUs (NVIDIA, AMD) and the TPUs' systolic arrays (the
    // tpu family, docs/tpu.md) each have one.
    for (const std::string& name : gpu_names()) EXPECT_NO_THROW(c.device(find_gpu(name)->arch)) << name;
    EXPECT_EQ(c.device("tpu_v5e").name, "tpu");
    EXPECT_EQ(c.device("blackwell").name, "blackwell");  // no longer priced as Hopper
}

TEST(CalibrationIo, DefaultsAreInRange) {
    const Calibration c = default_calibration();
    for (const DeviceFamily& d : c.devices) {
        for (double f : d.gemm_max) {
            EXPECT_GE(f, 0);
            EXPECT_LE(f, 1);
        }
        EXPECT_GT(d.gemm_max[static_cast<int>(GemmDtype::bf16)], 0) << d.name;
        EXPECT_GT(d.memory_bound, 0);
        EXPECT_LE(d.memory_bound, 1);
        for (const auto& p : d.attention) {
            EXPECT_GT(p.efficiency, 0);
            EXPECT_LE(p.efficiency, 1);
        }
    }
    for (double f : {c.bus_eff_intra, c.bus_eff_inter, c.p2p_eff, c.memory_usable_fraction}) {
        EXPECT_GT(f, 0);
        EXPECT_LE(f, 1);
    }
    EXPECT_GE(c.memory_reserved_bytes, 0);
}

TEST(CalibrationIo, DefaultsAreSafeFromManyThreads) {
    std::vector<std::thread> threads;
    std::vector<double> got(4, 0);
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&got, i] { got[i] = default_calibration().device("hopper").gemm_max[0]; });
    for (auto& t : threads) t.join();
    for (double g : got) EXPECT_EQ(g, default_calibration().device("hopper").gemm_max[0]);
}

TEST(CalibrationIo, FileOverlaysOnlyItsKeys) {
    const Calibration d = default_calibration();
    const double gemm = d.device("hopper").gemm_max[0] == 0.5 ? 0.55 : 0.5;
    const double p2p = d.p2p_eff == 0.6 ? 0.65 : 0.6;
    TempFile f("overlay.yaml", "devices:\n  hopper:\n    gemm_max: {bf16: " + std::to_string(gemm) +
                                   "}\np2p_eff: " + std::to_string(p2p) + "\n");
    Calibration c = load_calibration(f.path());
    EXPECT_EQ(c.source, f.path());
    EXPECT_DOUBLE_EQ(c.device("hopper").gemm_max[0], gemm);
    EXPECT_EQ(c.device("hopper").gemm_max[1], d.device("hopper").gemm_max[1]);
    EXPECT_DOUBLE_EQ(c.p2p_eff, p2p);
    EXPECT_EQ(c.device("hopper").attention.size(), d.device("hopper").attention.size());
    EXPECT_EQ(c.device("ampere").gemm_max, d.device("ampere").gemm_max);
    EXPECT_EQ(c.kernel_overhead_us, d.kernel_overhead_us);
    EXPECT_TRUE(c.nccl.empty());
}

Calibration unusual_calibration() {
    Calibration c = default_calibration();
    c.find_family("ampere")->gemm_max[0] = 0.731;
    // The points change by assignment (the family indexes its curves then).
    auto hopper = c.find_family("hopper")->attention.points();
    hopper[3].efficiency = 1.0 / 3.0;
    c.find_family("hopper")->attention = hopper;
    c.find_family("blackwell")->power_exponent = 0.123456789;
    // A new family (taking v5e from the default profile's tpu family).
    c.find_family("tpu")->archs = {"tpu_v4", "tpu_v5p", "tpu_v6e", "tpu_v7"};
    DeviceFamily tpu = c.devices[0];
    tpu.name = "tpu2";
    tpu.archs = {"tpu_v5e"};
    tpu.attention_kernel[2] = AttentionImpl::fa3;
    c.devices.push_back(tpu);
    c.gemm_k_half = 96.5;
    c.kernel_overhead_us = 3.25;
    c.dp_overlap = 0;
    c.tp_overlap = 0.123;
    c.overlap_slowdown = 1;
    c.memory_reserved_bytes = 3.1e9 + 7;
    BusBwCurve ar{Collective::all_reduce, LinkScope::intra_node, 8, {}};
    ar.points = {{8, 0.000777, 18.0}, {1048576, 75.5123456789, 24.3}, {1073741824, 341.03, 5509.93}};
    BusBwCurve a2a{Collective::all_to_all, LinkScope::inter_node, 64, {{4096, 0.1, 70}, {8e9, 40.25, 1e6 / 3}},
                   8, 8, "NVIDIA H100 80GB HBM3"};
    c.nccl = {ar, a2a};
    return c;
}

TEST(CalibrationIo, RoundTripsThroughYaml) {
    const Calibration c = unusual_calibration();
    const std::string yaml = calibration_to_yaml(c);
    expect_same(parse_calibration_text(yaml, "roundtrip.yaml"), c);
    TempFile f("roundtrip.yaml", yaml);
    expect_same(load_calibration(f.path()), c);
    // Every key is written, so the text does not depend on the defaults.
    expect_same(overlay_calibration(Calibration{}, yaml, "x"), c);
}

TEST(CalibrationIo, DefaultRoundTrips) {
    const Calibration d = default_calibration();
    expect_same(parse_calibration_text(calibration_to_yaml(d), "d.yaml"), d);
}

TEST(CalibrationIo, PointWithoutTimeGetsTimeFromBusBandwidth) {
    Calibration c = parse_calibration_text(
        "nccl:\n  - {op: all_reduce, scope: intra_node, ranks: 4, points: [[1e9, 150]]}\n", "p.yaml");
    ASSERT_EQ(c.nccl.size(), 1u);
    // algbw = busbw * n / (2(n-1)) = 150 * 4 / 6 = 100 GB/s -> 1e9 B take 10 ms.
    EXPECT_NEAR(c.nccl[0].points[0].time_us, 1e4, 1e-6);
}

TEST(CalibrationIo, NamesRoundTrip) {
    for (Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                         Collective::all_to_all, Collective::send_recv})
        EXPECT_EQ(collective_from_string(to_string(c)), c);
    for (LinkScope s : {LinkScope::intra_node, LinkScope::inter_node})
        EXPECT_EQ(link_scope_from_string(to_string(s)), s);
    EXPECT_FALSE(collective_from_string("broadcast"));
    EXPECT_FALSE(link_scope_from_string("intra"));
}

// Found by fuzz_nccl: a device name with bytes that are not UTF-8 (as a
// pasted nccl-tests output may carry) was written as is, and the profile did
// not read back.
TEST(CalibrationIo, DeviceNameThatIsNotTextIsWrittenAsText) {
    Calibration c = default_calibration();
    BusBwCurve curve;
    curve.ranks = 8;
    curve.points = {{1e6, 100, 10}};
    curve.gpu = std::string("NVIDIA H100\xff\xfe \"x\"\x01");
    c.nccl = {curve};
    Calibration back = parse_calibration_text(calibration_to_yaml(c), "p.yaml");
    back.source = c.source;  // the first line names where the profile came from
    ASSERT_EQ(back.nccl.size(), 1u);
    EXPECT_EQ(back.nccl[0].gpu.rfind("NVIDIA H100", 0), 0u) << back.nccl[0].gpu;
    EXPECT_EQ(calibration_to_yaml(back), calibration_to_yaml(c));
}

// Found by fuzz_calibration: a family's archs took any text, so a plain
// scalar folded over several lines was written back with its line breaks and
// read again as another name. Only an architecture a GPU can have prices one.
TEST(CalibrationIo, FamilyArchThatNoGpuCanHaveIsRefused) {
    const std::string overlay = "devices:\n  ampere:\n    archs: [ampere, hoppper]\n";
    try {
        (void)parse_calibration_text(overlay, "p.yaml");
        ADD_FAILURE() << "accepted an unknown architecture";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("p.yaml"), std::string::npos) << what;
        EXPECT_NE(what.find("devices.ampere.archs[1]"), std::string::npos) << what;
        EXPECT_NE(what.find("did you mean `hopper`"), std::string::npos) << what;
    }
    EXPECT_THROW((void)parse_calibration_text("devices:\n  ampere:\n    archs: [ampere, \"a\\nb\"]\n", "p.yaml"),
                 InputError);
    EXPECT_NO_THROW((void)parse_calibration_text("devices:\n  ampere:\n    archs: [ampere, volta]\n", "p.yaml"));
}

}  // namespace
}  // namespace lostflops
